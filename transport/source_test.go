package transport

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestPatternSourceOffsets: any [off, off+n) equals the same range of one
// long Fill, so retransmissions regenerate identical bytes.
func TestPatternSourceOffsets(t *testing.T) {
	s := NewPatternSource(7)
	all := make([]byte, 10000)
	s.Fill(0, all)
	r := rand.New(rand.NewPCG(1, 2))
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

func BenchmarkPatternFill(b *testing.B) {
	s := NewPatternSource(1)
	p := make([]byte, 1165)
	b.SetBytes(int64(len(p)))
	for i := 0; i < b.N; i++ {
		s.Fill(int64(i)*1165, p)
	}
}
