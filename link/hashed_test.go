package link

import (
	"math"
	"testing"

	"strconv"

	"cclab/internal/mix"
)

// TestHashedSequence checks the hash against the first outputs of the
// reference SplitMix64 generator (Vigna, prng.di.unimi.it/splitmix64.c,
// compiled with gcc and started at state key): the n-th packet's value is the
// generator's (n+1)-th output. The key-0 row is also the published sequence
// of SplitMix64 seeded with 0.
func TestHashedSequence(t *testing.T) {
	for _, tc := range []struct {
		key  uint64
		want [4]uint64
	}{
		{0, [4]uint64{0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4, 0x06c45d188009454f, 0xf88bb8a8724c81ec}},
		{1234567, [4]uint64{0x599ed017fb08fc85, 0x2c73f08458540fa5, 0x883ebce5a3f27c77, 0x3fbef740e9177b3f}},
		{0xdeadbeefcafebabe, [4]uint64{0x0d7d93560d1929d2, 0x491dfb740e50d43f, 0x42722bf4473e5e7d, 0xd6ca8a0790fffc45}},
	} {
		for n, want := range tc.want {
			u := mix.SplitMix64(tc.key + uint64(n)*mix.Golden)
			if u != want {
				t.Errorf("key %#x n %d: hash %#016x, want %#016x", tc.key, n, u, want)
			}
			// The loss threshold sits exactly at the value's top 53 bits.
			f := float64(want>>11) / (1 << 53)
			if HashedLost(tc.key, uint64(n), f) || !HashedLost(tc.key, uint64(n), math.Nextafter(f, 2)) {
				t.Errorf("key %#x n %d: loss threshold not at %v", tc.key, n, f)
			}
		}
	}
}

// TestHashedRate checks the loss rate over 1e6 packets against a binomial
// bound of 5 standard deviations, and that the stage is deterministic: two
// stages with one key drop the same packets, another key other ones.
func TestHashedRate(t *testing.T) {
	const n = 1_000_000
	for _, p := range []float64{0.005, 0.01, 0.05, 0.5} {
		a, _ := parseLoss("hashed:p="+strconv.FormatFloat(p, 'g', -1, 64), HashedKey(1, "link/a>b"))
		b, _ := parseLoss("hashed:p="+strconv.FormatFloat(p, 'g', -1, 64), HashedKey(1, "link/a>b"))
		c, _ := parseLoss("hashed:p="+strconv.FormatFloat(p, 'g', -1, 64), HashedKey(2, "link/a>b"))
		lost, differ := 0, 0
		for range n {
			la, lb, lc := a.lose(nil, 0), b.lose(nil, 0), c.lose(nil, 0)
			if la != lb {
				t.Fatalf("p=%v: two stages with one key disagree", p)
			}
			if la {
				lost++
			}
			if la != lc {
				differ++
			}
		}
		sd := math.Sqrt(n * p * (1 - p))
		if got := float64(lost); math.Abs(got-n*p) > 5*sd {
			t.Errorf("p=%v: %d of %d lost, want %v ± %.0f", p, lost, n, n*p, 5*sd)
		}
		if differ == 0 {
			t.Errorf("p=%v: seeds 1 and 2 drop the same packets", p)
		}
	}
}

// TestHashedKey checks that the key depends on seed and link.
func TestHashedKey(t *testing.T) {
	k := HashedKey(1, "link/a>b")
	for _, other := range []uint64{HashedKey(2, "link/a>b"), HashedKey(1, "link/b>a")} {
		if other == k {
			t.Errorf("HashedKey collides: %#x", k)
		}
	}
	if got := HashedKey(1, "link/a>b"); got != k {
		t.Errorf("HashedKey(1, link/a>b) = %#x then %#x", k, got)
	}
}
