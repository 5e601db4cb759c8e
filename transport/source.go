package transport

import (
	"encoding/binary"
	"math/bits"
)

// Source produces stream bytes on demand, as an alternative to Conn.Write
// for bulk senders: no send buffer is needed and retransmissions regenerate
// the bytes. Fill must write the stream bytes at offsets [off, off+len(p))
// into p and must return the same bytes every time it is asked for an offset.
type Source interface {
	Fill(off int64, p []byte)
}

// PatternSource is a deterministic pseudo-random byte stream: the 8-byte word
// at offset 8k is mix(seed, k) (little-endian), where mix is one 64x64->128
// bit multiply folded (wyhash-style). It is cheap (one multiply per 8 bytes)
// and any offset can be generated independently. Not cryptographic.
type PatternSource struct{ seed uint64 }

// NewPatternSource returns the pattern stream for seed.
func NewPatternSource(seed uint64) *PatternSource {
	return &PatternSource{seed: seed*golden ^ 0xa0761d6478bd642f}
}

// golden is the 64-bit golden-ratio constant of splitmix64 (Steele, Lea &
// Flood 2014); mixK is wyhash's secret[1].
const (
	golden = 0x9e3779b97f4a7c15
	mixK   = 0xe7037ed1a0b428db
)

func (s *PatternSource) word(k uint64) uint64 {
	hi, lo := bits.Mul64(k*golden^s.seed, mixK)
	return hi ^ lo
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
	for len(p) >= 32 {
		binary.LittleEndian.PutUint64(p, s.word(k))
		binary.LittleEndian.PutUint64(p[8:], s.word(k+1))
		binary.LittleEndian.PutUint64(p[16:], s.word(k+2))
		binary.LittleEndian.PutUint64(p[24:], s.word(k+3))
		p = p[32:]
		k += 4
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

// Equal reports whether p holds the stream bytes at [off, off+len(p)): the
// same answer as filling a buffer with Fill and comparing, but in one pass
// over p that writes nothing (a receiver's check of what it read).
func (s *PatternSource) Equal(off int64, p []byte) bool {
	if len(p) == 0 {
		return true
	}
	k := uint64(off) / 8
	var w [8]byte
	if r := uint64(off) % 8; r != 0 {
		binary.LittleEndian.PutUint64(w[:], s.word(k))
		n := min(len(p), 8-int(r))
		if string(p[:n]) != string(w[r:int(r)+n]) {
			return false
		}
		p = p[n:]
		k++
	}
	for len(p) >= 32 {
		d := binary.LittleEndian.Uint64(p) ^ s.word(k)
		d |= binary.LittleEndian.Uint64(p[8:]) ^ s.word(k+1)
		d |= binary.LittleEndian.Uint64(p[16:]) ^ s.word(k+2)
		d |= binary.LittleEndian.Uint64(p[24:]) ^ s.word(k+3)
		if d != 0 {
			return false
		}
		p = p[32:]
		k += 4
	}
	for len(p) >= 8 {
		if binary.LittleEndian.Uint64(p) != s.word(k) {
			return false
		}
		p = p[8:]
		k++
	}
	if len(p) > 0 {
		binary.LittleEndian.PutUint64(w[:], s.word(k))
		return string(p) == string(w[:len(p)])
	}
	return true
}
