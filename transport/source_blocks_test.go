package transport

import (
	"bytes"
	"testing"
)

// patternByte is byte pos of s's stream straight from PatternSource's
// definition: byte pos%8 (little-endian) of word pos%64/8 of block pos/64,
// mix(block*golden) XOR key[word].
func patternByte(s *PatternSource, pos uint64) byte {
	w := s.mix(pos/64*golden) ^ s.key[pos%64/8]
	return byte(w >> (8 * (pos % 8)))
}

// checkPatternRange runs Fill, Equal, fillBlocks and equalBlocks of s's
// block loop path (forEachBlockPath) at [off, off+n) against the definition
// (patternByte) and the pure-Go loops, and checks that Equal rejects the
// range with byte j (j < n) XORed with flip (flip != 0).
func checkPatternRange(t *testing.T, s *PatternSource, off uint64, n, j int, flip byte) {
	t.Helper()
	want := make([]byte, n)
	for i := range want {
		want[i] = patternByte(s, off+uint64(i))
	}
	got := make([]byte, n)
	s.Fill(int64(off), got)
	if !bytes.Equal(got, want) {
		t.Fatalf("Fill(%d, %d bytes) differs from the definition", off, n)
	}
	if !s.Equal(int64(off), want) {
		t.Fatalf("Equal(%d, %d stream bytes) = false, want true", off, n)
	}
	// The block loops on their own, from block off/64, whole blocks only.
	b, whole := off/64, n&^63
	gen := make([]byte, whole)
	s.fillBlocksGeneric(b, gen)
	clear(got)
	s.fillBlocks(b, got[:whole])
	if !bytes.Equal(got[:whole], gen) {
		t.Fatalf("fillBlocks(block %d, %d bytes) differs from fillBlocksGeneric", b, whole)
	}
	if got, want := s.equalBlocks(b, gen), true; got != want {
		t.Fatalf("equalBlocks(block %d, %d stream bytes) = %v, want %v", b, whole, got, want)
	}
	if n == 0 || flip == 0 {
		return
	}
	want[j] ^= flip
	if s.Equal(int64(off), want) {
		t.Fatalf("Equal(%d, %d bytes, byte %d ^ %#x) = true, want false", off, n, j, flip)
	}
	if j < whole {
		gen[j] ^= flip
		if got, want := s.equalBlocks(b, gen), s.equalBlocksGeneric(b, gen); got || want {
			t.Fatalf("equalBlocks(block %d, %d bytes, byte %d ^ %#x) = %v, generic %v, want false", b, whole, j, flip, got, want)
		}
	}
}

// TestPatternBlocks: for every block loop path (AVX2, SSE2 or generic) and
// a table of seeds, offsets and lengths (whole and partial blocks, empty,
// large offsets), Fill and Equal give the definition's bytes, the block
// loops those of the pure-Go loops, and a corrupted byte is caught.
func TestPatternBlocks(t *testing.T) {
	seeds := []uint64{0, 1, 12345, 1<<64 - 1}
	offs := []uint64{0, 1, 8, 63, 64, 100, 1<<40 + 3, 1<<62 - 64, 1<<63 - 1000}
	lens := []int{0, 1, 7, 63, 64, 65, 127, 128, 129, 1165, 4096 + 17}
	for _, path := range blockPaths(t) {
		t.Run(path, func(t *testing.T) {
			defer selectBlockPath(path)()
			for _, seed := range seeds {
				s := NewPatternSource(seed)
				for _, off := range offs {
					for _, n := range lens {
						checkPatternRange(t, s, off, n, n*7/8, 0x5a)
					}
				}
			}
		})
	}
}

// TestPatternEqualEveryByte: equalBlocks rejects a buffer of 7 blocks with
// any single bit flipped in its first, second and last block: every byte
// position of a block and every lane of the vector registers is checked.
func TestPatternEqualEveryByte(t *testing.T) {
	for _, path := range blockPaths(t) {
		t.Run(path, func(t *testing.T) {
			defer selectBlockPath(path)()
			s := NewPatternSource(99)
			const b = 1000
			p := make([]byte, 7*64)
			s.fillBlocks(b, p)
			if !s.equalBlocks(b, p) {
				t.Fatalf("equalBlocks of the stream's blocks = false, want true")
			}
			for _, blk := range []int{0, 1, 6} {
				for i := blk * 64; i < blk*64+64; i++ {
					for bit := 0; bit < 8; bit++ {
						p[i] ^= 1 << bit
						if s.equalBlocks(b, p) {
							t.Fatalf("equalBlocks with byte %d bit %d flipped = true, want false", i, bit)
						}
						p[i] ^= 1 << bit
					}
				}
			}
			if !s.equalBlocks(b, p) {
				t.Fatalf("equalBlocks after restoring = false, want true")
			}
		})
	}
}

// FuzzPatternBlocks: random seeds, offsets, lengths and corruptions, on
// every block loop path, as TestPatternBlocks.
func FuzzPatternBlocks(f *testing.F) {
	f.Add(uint64(1), uint64(0), uint16(1165), uint16(3), byte(1))
	f.Add(uint64(7), uint64(63), uint16(130), uint16(129), byte(0x80))
	f.Add(uint64(1<<64-1), uint64(1<<62+5), uint16(4000), uint16(2000), byte(0xff))
	f.Fuzz(func(t *testing.T, seed, off uint64, n, j uint16, flip byte) {
		off %= 1<<63 - 1<<16 // a non-negative int64 offset with room for n bytes
		s := NewPatternSource(seed)
		for _, path := range blockPaths(t) {
			restore := selectBlockPath(path)
			checkPatternRange(t, s, off, int(n), int(j)%max(int(n), 1), flip)
			restore()
		}
	})
}

// BenchmarkPatternPaths times Fill and Equal of 1165-byte segments (as
// BenchmarkPatternFill and BenchmarkPatternEqual) on each block loop path.
func BenchmarkPatternPaths(b *testing.B) {
	const seg = 1165
	s := NewPatternSource(1)
	p := make([]byte, seg)
	s.Fill(0, p)
	for _, path := range blockPaths(b) {
		restore := selectBlockPath(path)
		b.Run(path+"/Fill", func(b *testing.B) {
			b.SetBytes(seg)
			for i := 0; i < b.N; i++ {
				s.Fill(int64(i%16)*seg, p)
			}
		})
		s.Fill(0, p)
		b.Run(path+"/Equal", func(b *testing.B) {
			b.SetBytes(seg)
			for i := 0; i < b.N; i++ {
				if !s.Equal(0, p) {
					b.Fatal("mismatch")
				}
			}
		})
		restore()
	}
}
