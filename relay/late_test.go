package relay

import (
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"cclab/clock"
)

// TestLateHistBuckets checks the bucket bounds: every value falls in a
// bucket whose upper bound is at least the value and within 1/16 of it,
// and bounds increase.
func TestLateHistBuckets(t *testing.T) {
	prev := time.Duration(-1)
	for i := 0; i < lateHistLen; i++ {
		u := lateUpper(i)
		if u <= prev {
			t.Fatalf("bucket %d: upper bound %d, want above the previous %d", i, u, prev)
		}
		prev = u
	}
	for _, v := range []uint64{0, 1, 15, 16, 17, 31, 32, 33, 1000, 1023, 1024, 999_999, 1 << 39, 1<<40 - 1} {
		i := lateBucket(v)
		u := uint64(lateUpper(i))
		if u < v || float64(u-v) > float64(v)/lateHistSub {
			t.Errorf("value %d: bucket %d bound %d, want within [v, v·(1+1/%d)]", v, i, u, lateHistSub)
		}
		if i > 0 && uint64(lateUpper(i-1)) >= v {
			t.Errorf("value %d: bucket %d, but the previous bucket's bound %d holds it", v, i, lateUpper(i-1))
		}
	}
	if got, want := lateBucket(1<<62), lateHistLen-1; got != want {
		t.Errorf("huge value: bucket %d, want the last, %d", got, want)
	}
}

// TestLateHistQuantile compares the histogram's quantiles with the exact
// sample quantiles of random lateness values.
func TestLateHistQuantile(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var h LateHist
	vals := make([]time.Duration, 100_000)
	for i := range vals {
		vals[i] = time.Duration(rng.ExpFloat64() * float64(50*time.Microsecond))
		if i%500 == 0 {
			vals[i] = time.Duration(rng.Int64N(int64(20 * time.Millisecond)))
		}
		h.Add(vals[i])
	}
	slices.Sort(vals)
	if got, want := h.Count(), int64(len(vals)); got != want {
		t.Fatalf("count %d, want %d", got, want)
	}
	for _, q := range []float64{0, 0.5, 0.9, 0.99, 0.999, 1} {
		rank := max(int(q*float64(len(vals)))-1, 0)
		if float64(rank+1) < q*float64(len(vals)) {
			rank++
		}
		want := vals[rank]
		got := h.Quantile(q)
		if got < want || float64(got-want) > float64(want)/lateHistSub+1 {
			t.Errorf("q %v: got %v, want %v (at most 1/%d above)", q, got, want, lateHistSub)
		}
	}
	var empty LateHist
	if got := empty.Quantile(0.99); got != 0 {
		t.Errorf("empty histogram p99 %v, want 0", got)
	}
	before := h[0]
	h.Add(-time.Second)
	if got, want := h[0], before+1; got != want {
		t.Errorf("bucket 0 holds %d after a negative lateness, want %d", got, want)
	}
}

// TestLatencyJSON: each latency statistic is one object in the counters'
// JSON (docs/bottleneck.md), and Add keeps the largest sample.
func TestLatencyJSON(t *testing.T) {
	var c Counters
	c.ReadLate.Add(3 * time.Microsecond)
	c.ReadLate.Add(time.Microsecond)
	if got, want := c.ReadLate.Max, 3*time.Microsecond; got != want {
		t.Errorf("Max = %v, want %v", got, want)
	}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"write_late", "read_late", "sleep_late", "lock_wait", "send_time", "loop"} {
		if want := `"` + key + `":{"max_ns":`; !strings.Contains(string(b), want) {
			t.Errorf("counters JSON lacks %s: %s", want, b)
		}
	}
}

// TestArrivalAt: a datagram enters the links at its kernel receive instant
// (the read's instant less its read lateness), never in the links' past
// (the floor) nor after the read.
func TestArrivalAt(t *testing.T) {
	const ms = time.Millisecond
	now := clock.Start.Add(100 * ms)
	for _, tc := range []struct {
		name  string
		late  time.Duration
		floor clock.Time
		want  clock.Time
	}{
		{"read at once", 0, clock.Start, now},
		{"stamp after the read (clock step)", -2 * ms, clock.Start, now},
		{"waited 16 ms in the socket", 16 * ms, clock.Start, now.Add(-16 * ms)},
		{"links moved on past the stamp", 16 * ms, now.Add(-5 * ms), now.Add(-5 * ms)},
		{"floor at the read", 16 * ms, now, now},
		{"floor after the read", 16 * ms, now.Add(ms), now},
	} {
		if got := arrivalAt(now, tc.late, tc.floor); got != tc.want {
			t.Errorf("%s: arrivalAt(now, %v, floor) = now%+v, want now%+v", tc.name, tc.late, got.Sub(now), tc.want.Sub(now))
		}
	}
}
