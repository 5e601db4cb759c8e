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

// PatternSource is a deterministic pseudo-random byte stream, made of
// 64-byte blocks: word i (0..7) of block b, the 8 bytes at offset 64b+8i, is
// mix(b) XOR key[i] (little-endian). mix(b) is one 64x64->128-bit multiply
// of b's golden-ratio multiple XOR the seed, folded (wyhash-style); key[0..7]
// are eight distinct words drawn from the seed with splitmix64. A block costs
// one multiply and eight XORs and stores (checking it, eight loads and
// XORs), and any offset can be generated independently. Not cryptographic.
//
// What a receiver that compares every byte with the stream (Equal) detects:
// any corrupted byte, since the comparison is exact whatever the pattern; and
// stream bytes delivered at the wrong offset (reordered, duplicated or
// misplaced data), since no 8 aligned bytes of the stream recur elsewhere in
// it but by a 64-bit coincidence: words i != j of one block differ by key[i]
// XOR key[j], never 0 (splitmix64 is a bijection); words of blocks b != b'
// agree only if mix(b) XOR mix(b') equals key[i] XOR key[j], odds of about
// 2^-64 per word for a pseudo-random mix. Bytes shifted by a distance that is
// not a multiple of 8 meet straddling words, with the same odds. Any segment
// of 15 bytes or more holds an aligned word, so a misplaced full-sized
// segment is caught (TestPatternSourceEqual, TestPatternSourceWordsDistinct).
type PatternSource struct {
	seed uint64
	key  [8]uint64
}

// NewPatternSource returns the pattern stream for seed.
func NewPatternSource(seed uint64) *PatternSource {
	s := &PatternSource{seed: seed*golden ^ wyP0}
	x := s.seed
	for i := range s.key {
		x += golden
		s.key[i] = splitmix64(x)
	}
	return s
}

// golden is the 64-bit golden-ratio increment of splitmix64, and smixA,
// smixB its output mixer's multipliers (Steele, Lea & Flood, "Fast
// splittable pseudorandom number generators", OOPSLA 2014); wyP0 and mixK
// are wyhash's secret[0] and secret[1] (Wang Yi, wyhash final version 4).
const (
	golden = 0x9e3779b97f4a7c15
	smixA  = 0xbf58476d1ce4e5b9
	smixB  = 0x94d049bb133111eb
	wyP0   = 0xa0761d6478bd642f
	mixK   = 0xe7037ed1a0b428db
)

// splitmix64 is splitmix64's output function: a bijection of x.
func splitmix64(x uint64) uint64 {
	x = (x ^ x>>30) * smixA
	x = (x ^ x>>27) * smixB
	return x ^ x>>31
}

// mix returns mix(b), block b's word before its key, from x = b*golden
// (fillBlocks and equalBlocks advance x by addition).
func (s *PatternSource) mix(x uint64) uint64 {
	hi, lo := bits.Mul64(x^s.seed, mixK)
	return hi ^ lo
}

// put writes block b into q (a partial block's bytes, Fill and Equal).
func (s *PatternSource) put(b uint64, q *[64]byte) { s.fillBlocks(b, q[:]) }

// Fill writes the stream bytes at [off, off+len(p)) into p.
func (s *PatternSource) Fill(off int64, p []byte) {
	if len(p) == 0 {
		return
	}
	b := uint64(off) / 64
	if r := uint64(off) % 64; r != 0 || len(p) < 64 {
		var t [64]byte
		s.put(b, &t) // a partial first block
		p = p[copy(p, t[r:]):]
		b++
	}
	n := len(p) &^ 63
	s.fillBlocks(b, p[:n])
	if p = p[n:]; len(p) > 0 {
		var t [64]byte
		s.put(b+uint64(n/64), &t) // a partial last block
		copy(p, t[:])
	}
}

// fillBlocksGeneric writes the whole blocks b, b+1, ... into p, len(p) a
// multiple of 64: the pure-Go definition of fillBlocks (Fill's hot loop; put
// for one block), which amd64 runs in assembly (source_amd64.s) and other
// architectures as is (source_generic.go).
func (s *PatternSource) fillBlocksGeneric(b uint64, p []byte) {
	k := &s.key
	x := b * golden
	for i := 0; i+64 <= len(p); i += 64 {
		m := s.mix(x)
		q := (*[64]byte)(p[i : i+64])
		binary.LittleEndian.PutUint64(q[0:], m^k[0])
		binary.LittleEndian.PutUint64(q[8:], m^k[1])
		binary.LittleEndian.PutUint64(q[16:], m^k[2])
		binary.LittleEndian.PutUint64(q[24:], m^k[3])
		binary.LittleEndian.PutUint64(q[32:], m^k[4])
		binary.LittleEndian.PutUint64(q[40:], m^k[5])
		binary.LittleEndian.PutUint64(q[48:], m^k[6])
		binary.LittleEndian.PutUint64(q[56:], m^k[7])
		x += golden
	}
}

// Equal reports whether p holds the stream bytes at [off, off+len(p)): the
// same answer as filling a buffer with Fill and comparing, but in one pass
// over p that writes nothing (a receiver's check of what it read).
func (s *PatternSource) Equal(off int64, p []byte) bool {
	if len(p) == 0 {
		return true
	}
	b := uint64(off) / 64
	if r := uint64(off) % 64; r != 0 || len(p) < 64 {
		var t [64]byte
		s.put(b, &t) // a partial first block
		n := min(len(p), 64-int(r))
		if string(p[:n]) != string(t[r:int(r)+n]) {
			return false
		}
		p = p[n:]
		b++
	}
	n := len(p) &^ 63
	if !s.equalBlocks(b, p[:n]) {
		return false
	}
	if p = p[n:]; len(p) > 0 {
		var t [64]byte
		s.put(b+uint64(n/64), &t) // a partial last block
		return string(p) == string(t[:len(p)])
	}
	return true
}

// equalBlocksGeneric reports whether p, len(p) a multiple of 64, holds the
// whole blocks b, b+1, ...: the pure-Go definition of equalBlocks (Equal's
// hot loop, as fillBlocks: eight loads and XORs a block; the differences of
// all blocks are gathered into one word, tested once at the end), which
// amd64 runs in assembly (source_amd64.s) and other architectures as is.
func (s *PatternSource) equalBlocksGeneric(b uint64, p []byte) bool {
	k := &s.key
	x := b * golden
	var d uint64
	for i := 0; i+64 <= len(p); i += 64 {
		m := s.mix(x)
		q := (*[64]byte)(p[i : i+64])
		d |= binary.LittleEndian.Uint64(q[0:]) ^ k[0] ^ m
		d |= binary.LittleEndian.Uint64(q[8:]) ^ k[1] ^ m
		d |= binary.LittleEndian.Uint64(q[16:]) ^ k[2] ^ m
		d |= binary.LittleEndian.Uint64(q[24:]) ^ k[3] ^ m
		d |= binary.LittleEndian.Uint64(q[32:]) ^ k[4] ^ m
		d |= binary.LittleEndian.Uint64(q[40:]) ^ k[5] ^ m
		d |= binary.LittleEndian.Uint64(q[48:]) ^ k[6] ^ m
		d |= binary.LittleEndian.Uint64(q[56:]) ^ k[7] ^ m
		x += golden
	}
	return d == 0
}
