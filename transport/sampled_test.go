package transport

import (
	"bytes"
	"testing"
)

// TestSampledSource: the stamps are the pattern's bytes at multiples of
// SampleStride, Fill writes nothing else (a segment split anywhere gets each
// part of a stamp), Equal accepts the full pattern and the stamps alone, and
// rejects a corrupted stamp byte and a segment of SampleStride+7 bytes or
// more checked at another offset.
func TestSampledSource(t *testing.T) {
	const n = 8192
	s := NewSampledSource(3)
	_, all, r := patternStream(3, n)
	stamped := bytes.Repeat([]byte{0xa5}, n)
	for off := 0; off < n; { // in random pieces, as segments
		k := min(n-off, 1+r.IntN(1500))
		s.Fill(int64(off), stamped[off:off+k])
		off += k
	}
	for i := range n {
		isStamp := i%SampleStride < 8
		if got, want := stamped[i], byte(0xa5); isStamp {
			want = all[i]
			if got != want {
				t.Fatalf("byte %d (a stamp's) = %#x, want the pattern's %#x", i, got, want)
			}
		} else if got != want {
			t.Fatalf("byte %d (between stamps) = %#x, want it untouched %#x", i, got, want)
		}
	}
	for i := 0; i < 2000; i++ {
		off := r.IntN(n - 1)
		k := 1 + r.IntN(min(n-off, 1500))
		for _, p := range [][]byte{all[off : off+k], stamped[off : off+k]} {
			if !s.Equal(int64(off), p) {
				t.Fatalf("Equal(%d, %d bytes) = false, want true", off, k)
			}
		}
		p := bytes.Clone(stamped[off : off+k])
		if j := (off + SampleStride - 1) &^ (SampleStride - 1); j < off+k { // a stamp byte in range
			p[j-off] ^= 0x40
			if s.Equal(int64(off), p) {
				t.Fatalf("Equal(%d, %d bytes, stamp byte %d corrupted) = true, want false", off, k, j)
			}
			p[j-off] ^= 0x40
		}
		if k >= SampleStride+7 {
			for _, d := range []int{-1, 1, 8, 64, SampleStride, -SampleStride} {
				if o := off + d; o >= 0 && s.Equal(int64(o), p) {
					t.Fatalf("Equal(%d, the %d bytes at %d) = true, want false", o, k, off)
				}
			}
		}
	}
}
