package transport

import "encoding/binary"

// Source produces stream bytes on demand, as an alternative to Conn.Write
// for bulk senders: no send buffer is needed and retransmissions regenerate
// the bytes. Fill must write the stream bytes at offsets [off, off+len(p))
// into p and must return the same bytes every time it is asked for an offset.
type Source interface {
	Fill(off int64, p []byte)
}

// PatternSource is a deterministic pseudo-random byte stream: the 8-byte word
// at offset 8k is splitmix64(seed + k*golden), little-endian. It is cheap
// (about one multiply-xorshift per 8 bytes) and any offset can be generated
// independently.
type PatternSource struct{ seed uint64 }

// NewPatternSource returns the pattern stream for seed.
func NewPatternSource(seed uint64) *PatternSource { return &PatternSource{seed: seed} }

// splitmix64 golden-ratio increment (Steele, Lea & Flood 2014).
const golden = 0x9e3779b97f4a7c15

func (s *PatternSource) word(k uint64) uint64 {
	z := s.seed + k*golden
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// Fill writes the stream bytes at [off, off+len(p)) into p.
func (s *PatternSource) Fill(off int64, p []byte) {
	if len(p) == 0 {
		return
	}
	k := uint64(off) / 8
	var w [8]byte
	if r := uint64(off) % 8; r != 0 {
		binary.LittleEndian.PutUint64(w[:], s.word(k))
		n := copy(p, w[r:])
		p = p[n:]
		k++
	}
	for len(p) >= 8 {
		binary.LittleEndian.PutUint64(p, s.word(k))
		p = p[8:]
		k++
	}
	if len(p) > 0 {
		binary.LittleEndian.PutUint64(w[:], s.word(k))
		copy(p, w[:])
	}
}
