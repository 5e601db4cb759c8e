package relay

import (
	"math/bits"
	"time"
)

// Latency is one of the relay's latency statistics (Counters): a
// fine-grained histogram, the largest sample, and the median, 99th and
// 99.9th percentiles (upper bounds of their buckets), set in every
// snapshot (Relay.Counters, stats lines).
type Latency struct {
	Hist LateHist      `json:"-"`
	Max  time.Duration `json:"max_ns"`
	P50  time.Duration `json:"p50_ns"`
	P99  time.Duration `json:"p99_ns"`
	P999 time.Duration `json:"p999_ns"`
}

// Add counts one sample of d.
func (l *Latency) Add(d time.Duration) {
	l.Hist.Add(d)
	l.Max = max(l.Max, d)
}

// LateHist is a fine-grained histogram of one of the relay's latencies
// (Latency): log-linear buckets as in HdrHistogram (Tene), exact
// below 16 ns and above that lateHistSub buckets per power of two, so a
// quantile read from it is within 1/lateHistSub (6.25 %) of the sample's
// true value. Lateness up to 2^40 ns (about 18 minutes) is kept; longer
// counts in the last bucket. Adding a value is a few instructions and
// never allocates.
type LateHist [lateHistLen]int64

// lateHistSub is the number of buckets per power of two (a power of two).
const (
	lateHistSubBits = 4
	lateHistSub     = 1 << lateHistSubBits
	lateHistMaxExp  = 40 // values up to 2^lateHistMaxExp ns
	lateHistLen     = lateHistSub + (lateHistMaxExp-lateHistSubBits)*lateHistSub
)

// lateBucket returns the bucket index of v ns (v ≥ 0).
func lateBucket(v uint64) int {
	if v < lateHistSub {
		return int(v)
	}
	e := bits.Len64(v) - lateHistSubBits - 1 // v >> e is in [lateHistSub, 2·lateHistSub)
	i := lateHistSub + e*lateHistSub + int(v>>e) - lateHistSub
	return min(i, lateHistLen-1)
}

// lateUpper returns the largest value (ns) that falls in bucket i.
func lateUpper(i int) time.Duration {
	if i < lateHistSub {
		return time.Duration(i)
	}
	e := (i - lateHistSub) / lateHistSub
	m := uint64(i-lateHistSub)%lateHistSub + lateHistSub
	return time.Duration((m+1)<<e - 1)
}

// Add counts one write that was d late (d ≤ 0 counts as 0).
func (h *LateHist) Add(d time.Duration) {
	h[lateBucket(uint64(max(d, 0)))]++
}

// Count returns the number of values added.
func (h *LateHist) Count() int64 {
	var n int64
	for _, c := range h {
		n += c
	}
	return n
}

// Quantile returns the q-quantile (0 ≤ q ≤ 1) of the lateness: the upper
// bound of the bucket holding the value of rank ⌈q·n⌉ (1-based) in sorted
// order, so at least a fraction q of the writes were at most that late and
// the true sample quantile is within 6.25 % below it; 0 for an empty
// histogram.
func (h *LateHist) Quantile(q float64) time.Duration {
	n := h.Count()
	if n == 0 {
		return 0
	}
	rank := int64(q * float64(n))
	if float64(rank) < q*float64(n) || rank == 0 {
		rank++
	}
	var acc int64
	for i, c := range h {
		acc += c
		if acc >= rank {
			return lateUpper(i)
		}
	}
	return lateUpper(lateHistLen - 1)
}

// Percentiles returns the median, 99th and 99.9th percentiles (Quantile).
func (h *LateHist) Percentiles() (p50, p99, p999 time.Duration) {
	return h.Quantile(0.5), h.Quantile(0.99), h.Quantile(0.999)
}

// Above returns the number of values added that were certainly larger
// than d: those in buckets whose every value exceeds d (a bucket holding d
// is left out, so the count errs low by at most one bucket, 6.25 %).
func (h *LateHist) Above(d time.Duration) int64 {
	var n int64
	for i := lateHistLen - 1; i > 0 && lateUpper(i-1) >= d; i-- {
		n += h[i]
	}
	return n
}
