package mix

import "testing"

// TestSplitMix64 checks the finalizer against the reference SplitMix64
// generator (Vigna's splitmix64.c): with state s starting at 0, the n-th output
// is SplitMix64((n-1)·Golden), and the first outputs for seed 0 are the
// published values below.
func TestSplitMix64(t *testing.T) {
	want := []uint64{0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4, 0x06c45d188009454f}
	var s uint64
	for i, w := range want {
		if got := SplitMix64(s); got != w {
			t.Errorf("output %d: got %#x, want %#x", i, got, w)
		}
		s += Golden
	}
}
