package transport

import "encoding/binary"

// SampleStride is the distance between a SampledSource's stamps, bytes: a
// 1200-byte segment carries two or three of them.
const SampleStride = 512

// SampledSource is a PatternSource that writes only samples of it, stamps: the pattern's 8
// bytes at every stream offset that is a multiple of SampleStride (the first
// word of every eighth 64-byte block), leaving the other bytes of a datagram
// as they are. A sender that fills its datagrams from it touches two or three
// of a full-sized datagram's cache lines instead of all of them, and a
// receiver that checks them (Equal) reads as few: what the simulator uses
// when the bytes between the stamps cannot differ from the pattern but by a
// transport bug that also misplaces the stamps (it copies whole segments).
//
// What Equal detects: a stamp's bytes delivered at another offset, since the
// stamps are words of the pattern (see PatternSource: no aligned word recurs
// elsewhere in the stream but by a 64-bit coincidence), so any segment of
// SampleStride+7 bytes or more that is misplaced, reordered or duplicated, and
// any corrupted stamp byte; not a corrupted byte between the stamps. A stream
// filled by PatternSource passes it (the stamps are its bytes).
type SampledSource struct {
	p PatternSource
}

// NewSampledSource returns the stamps of the pattern stream for seed.
func NewSampledSource(seed uint64) *SampledSource {
	return &SampledSource{p: *NewPatternSource(seed)}
}

// Pattern returns the full pattern stream the stamps are taken from.
func (s *SampledSource) Pattern() *PatternSource { return &s.p }

// stamp returns the stamp at offset o, a multiple of SampleStride (word 0
// of block o/64), as bytes.
func (s *SampledSource) stamp(o uint64) (w [8]byte) {
	binary.LittleEndian.PutUint64(w[:], s.word(o))
	return w
}

// word returns the stamp at offset o as a little-endian word.
func (s *SampledSource) word(o uint64) uint64 { return s.p.mix(o/64*golden) ^ s.p.key[0] }

// Fill writes the stamps' bytes that fall in [off, off+len(p)) into p (a
// stamp split between two datagrams is written half in each) and leaves the
// rest of p unchanged.
func (s *SampledSource) Fill(off int64, p []byte) {
	lo, end := uint64(off), uint64(off)+uint64(len(p))
	for o := lo &^ (SampleStride - 1); o < end; o += SampleStride {
		if o >= lo && o+8 <= end { // the whole stamp: one store
			binary.LittleEndian.PutUint64(p[o-lo:], s.word(o))
			continue
		}
		if a, b := max(o, lo), min(o+8, end); a < b {
			w := s.stamp(o)
			copy(p[a-lo:b-lo], w[a-o:b-o])
		}
	}
}

// Equal reports whether p, the stream bytes at [off, off+len(p)), holds the
// stamps' bytes that fall in that range (the bytes between them are not
// read).
func (s *SampledSource) Equal(off int64, p []byte) bool {
	lo, end := uint64(off), uint64(off)+uint64(len(p))
	for o := lo &^ (SampleStride - 1); o < end; o += SampleStride {
		if o >= lo && o+8 <= end { // the whole stamp: one load
			if binary.LittleEndian.Uint64(p[o-lo:]) != s.word(o) {
				return false
			}
			continue
		}
		if a, b := max(o, lo), min(o+8, end); a < b {
			w := s.stamp(o)
			if string(p[a-lo:b-lo]) != string(w[a-o:b-o]) {
				return false
			}
		}
	}
	return true
}
