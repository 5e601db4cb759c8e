package transport

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

// patternStream returns seed's stream, its first n bytes and a random
// source for the test's offsets.
func patternStream(seed uint64, n int) (*PatternSource, []byte, *rand.Rand) {
	s := NewPatternSource(seed)
	all := make([]byte, n)
	s.Fill(0, all)
	return s, all, rand.New(rand.NewPCG(seed, 1))
}

// TestPatternSourceOffsets: any [off, off+n) equals the same range of one
// long Fill, so retransmissions regenerate identical bytes.
func TestPatternSourceOffsets(t *testing.T) {
	s, all, r := patternStream(7, 10000)
	for i := 0; i < 1000; i++ {
		off := r.IntN(len(all))
		n := r.IntN(len(all) - off + 1)
		p := make([]byte, n)
		s.Fill(int64(off), p)
		if !bytes.Equal(p, all[off:off+n]) {
			t.Fatalf("Fill(%d, %d bytes) differs from the stream", off, n)
		}
	}
	other := make([]byte, 64)
	NewPatternSource(8).Fill(0, other)
	if bytes.Equal(other, all[:64]) {
		t.Errorf("seeds 7 and 8 give the same stream")
	}
}

// TestPatternSourceEqual: Equal accepts exactly the stream's bytes at an
// offset: it agrees with Fill, and rejects any single corrupted byte and
// the same bytes checked at another offset (a reordered or duplicated
// segment) at every alignment.
func TestPatternSourceEqual(t *testing.T) {
	s, all, r := patternStream(11, 4096)
	for i := 0; i < 2000; i++ {
		off := r.IntN(len(all) - 1)
		n := 1 + r.IntN(min(len(all)-off, 1500))
		p := bytes.Clone(all[off : off+n])
		if !s.Equal(int64(off), p) {
			t.Fatalf("Equal(%d, %d stream bytes) = false, want true", off, n)
		}
		j := r.IntN(n)
		p[j] ^= byte(1 + r.IntN(255))
		if s.Equal(int64(off), p) {
			t.Fatalf("Equal(%d, %d bytes, byte %d corrupted) = true, want false", off, n, j)
		}
		p[j] = all[off+j]
		if n >= 8 {
			// The same bytes claimed for another offset (misordered or
			// duplicated data): a segment of 8 or more bytes never matches.
			other := r.IntN(len(all) - n)
			if other != off && s.Equal(int64(other), p) {
				t.Fatalf("Equal(%d, the %d bytes at %d) = true, want false", other, n, off)
			}
		}
	}
	if !s.Equal(123, nil) {
		t.Errorf("Equal of no bytes = false, want true")
	}
}

// TestPatternSourceWordsDistinct: the 8-byte aligned words of the first
// 4 MiB of a stream are all distinct (the detection argument of
// PatternSource), and so are a stream's keys.
func TestPatternSourceWordsDistinct(t *testing.T) {
	s := NewPatternSource(3)
	keys := map[uint64]bool{}
	for _, k := range s.key {
		keys[k] = true
	}
	if len(keys) != len(s.key) {
		t.Fatalf("%d distinct keys of %d", len(keys), len(s.key))
	}
	const n = 4 << 20
	buf := make([]byte, n)
	s.Fill(0, buf)
	seen := make(map[uint64]int, n/8)
	for i := 0; i < n; i += 8 {
		w := binary.LittleEndian.Uint64(buf[i:])
		if j, ok := seen[w]; ok {
			t.Fatalf("the words at offsets %d and %d are equal", j, i)
		}
		seen[w] = i
	}
}

// BenchmarkPatternEqual checks 1165-byte segments in one pass;
// BenchmarkPatternFillCompare does the same check as the simulator did
// before Equal: Fill a scratch buffer and bytes.Equal.
func BenchmarkPatternEqual(b *testing.B) {
	benchmarkPatternCheck(b, func(s *PatternSource, off int64, p, _ []byte) bool { return s.Equal(off, p) })
}

func BenchmarkPatternFillCompare(b *testing.B) {
	benchmarkPatternCheck(b, func(s *PatternSource, off int64, p, want []byte) bool {
		s.Fill(off, want)
		return bytes.Equal(p, want)
	})
}

func benchmarkPatternCheck(b *testing.B, check func(s *PatternSource, off int64, p, scratch []byte) bool) {
	const seg, segs = 1165, 16
	s := NewPatternSource(1)
	stream := make([]byte, seg*segs)
	s.Fill(0, stream)
	scratch := make([]byte, seg)
	b.SetBytes(seg)
	for i := 0; i < b.N; i++ {
		off := int64(i%segs) * seg
		if !check(s, off, stream[off:off+seg], scratch) {
			b.Fatal("mismatch")
		}
	}
}

func BenchmarkPatternFill(b *testing.B) {
	s := NewPatternSource(1)
	p := make([]byte, 1165)
	b.SetBytes(int64(len(p)))
	for i := 0; i < b.N; i++ {
		s.Fill(int64(i)*1165, p)
	}
}
