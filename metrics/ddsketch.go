package metrics

import (
	"math"
	"slices"
	"sync"
	"time"
)

// DDSketch (Masson, Rim and Lee, "DDSketch: A Fast and Fully-Mergeable
// Quantile Sketch with Relative-Error Guarantees", VLDB 2019) estimates
// quantiles of positive values with bounded relative error in bounded
// memory: value x counts in bucket i = ⌈log_γ x⌉, γ = (1+α)/(1−α), and a
// quantile is reported as 2γ^i/(γ+1), within a factor (1 ± α) of the true
// sample quantile. The delay percentiles (p50_rtt, p95_queue_delay, ...)
// come from it, so a long run's millions of samples take a few hundred
// buckets.
type DDSketch struct {
	n       float64
	offset  int            // bucket index of counts[0]
	counts  []float64      // dense buckets from offset
	durs    *durationIndex // buckets of durations (addDuration); nil: none
	zeros   float64        // values ≤ 0 (kept apart: log undefined)
	gamma   float64
	lnGamma float64
}

// sketchAlpha is the sketches' relative accuracy α: 0.5 %.
const sketchAlpha = 0.005

// NewDDSketch returns an empty sketch with relative accuracy alpha (0 < alpha < 1).
func NewDDSketch(alpha float64) *DDSketch {
	g := (1 + alpha) / (1 - alpha)
	return &DDSketch{gamma: g, lnGamma: math.Log(g)}
}

// Add counts x once.
func (s *DDSketch) Add(x float64) {
	s.n++
	if !(x > 0) || math.IsInf(x, 0) {
		s.zeros++
		return
	}
	s.count(bucketOf(x, s.lnGamma), 1)
}

// bucketOf is the bucket ⌈log_γ x⌉ of x > 0, lnGamma = ln γ.
func bucketOf(x, lnGamma float64) int {
	return int(math.Ceil(math.Log(x) / lnGamma))
}

// count adds c to bucket i.
//
// The dense buckets grow by at least as many again in the direction
// needed, below counts[0] as above the last, so that values creeping
// downwards (an RTT sketch's minimum as the queue drains) reallocate the
// array a logarithmic number of times, not once per new bucket. The empty
// buckets this leaves below the lowest value count nothing: Quantile's sum
// and Merge pass them without effect.
func (s *DDSketch) count(i int, c float64) {
	switch {
	case len(s.counts) == 0:
		s.offset = i
		s.counts = append(s.counts, 0)
	case i < s.offset:
		pad := max(s.offset-i, len(s.counts))
		grown := make([]float64, pad+len(s.counts))
		copy(grown[pad:], s.counts)
		s.counts, s.offset = grown, s.offset-pad
	}
	if n := i - s.offset + 1; n > len(s.counts) {
		if n > cap(s.counts) {
			s.counts = slices.Grow(s.counts, max(n, 2*len(s.counts))-len(s.counts))
		}
		s.counts = s.counts[:n] // the room beyond len is zero: grown, and never written
	}
	s.counts[i-s.offset] += c
}

// Merge adds o's counts (a sketch of the same accuracy) to s.
func (s *DDSketch) Merge(o *DDSketch) {
	if o == nil || o.n == 0 {
		return
	}
	s.n += o.n
	s.zeros += o.zeros
	for k, c := range o.counts {
		if c != 0 {
			s.count(o.offset+k, c)
		}
	}
}

// Count returns the number of values added.
func (s *DDSketch) Count() int { return int(s.n) }

// Quantile returns the estimate of the q-quantile (0 ≤ q ≤ 1): the value of
// rank ⌊q·(n−1)⌋ in sorted order (0-based), within a factor 1 ± α; 0 when
// that value is ≤ 0; NaN for an empty sketch.
func (s *DDSketch) Quantile(q float64) float64 {
	if s.n == 0 {
		return math.NaN()
	}
	rank := math.Floor(q * (s.n - 1))
	if rank < s.zeros {
		return 0
	}
	cum := s.zeros
	for k, c := range s.counts {
		cum += c
		if cum > rank {
			i := s.offset + k
			return 2 * math.Pow(s.gamma, float64(i)) / (s.gamma + 1)
		}
	}
	return 2 * math.Pow(s.gamma, float64(s.offset+len(s.counts)-1)) / (s.gamma + 1)
}

// putPercentiles sets v["p50_"+name], v["p95_"+name] and v["p99_"+name]
// from sk, if it holds values.
func putPercentiles(v map[string]float64, name string, sk *DDSketch) {
	if sk == nil || sk.Count() == 0 {
		return
	}
	v["p50_"+name] = sk.Quantile(0.50)
	v["p95_"+name] = sk.Quantile(0.95)
	v["p99_"+name] = sk.Quantile(0.99)
}

// addDuration counts d.Seconds() once, as Add(d.Seconds()) does, with the
// bucket from s.durs (if set and d is in its range) instead of a logarithm.
// A duration ≤ 0 (a packet that found its queue empty) counts as a value
// ≤ 0, as in Add.
func (s *DDSketch) addDuration(d time.Duration) {
	if d <= 0 {
		s.n++
		s.zeros++
		return
	}
	if s.durs == nil || d >= maxIndexedDuration {
		s.Add(d.Seconds())
		return
	}
	s.n++
	i := s.durs.bucket(d)
	if k := i - s.offset; k >= 0 && k < len(s.counts) {
		s.counts[k]++ // a bucket the sketch holds already: count's common case
		return
	}
	s.count(i, 1)
}

// initSketch makes *sk an empty sketch of the collector's accuracy
// (sketchAlpha) with its table of duration buckets.
func (c *Collector) initSketch(sk *DDSketch) {
	*sk = DDSketch{gamma: c.durs.gamma, lnGamma: c.durs.lnGamma, durs: c.durs}
}

// durationBuckets is the table of duration buckets of sketchAlpha, built at
// its first use and then only read: every Collector of the process shares it
// (it takes 80 KiB). Never nil: sketchAlpha ≥ 2^−8 (newDurationIndex).
var durationBuckets = sync.OnceValue(func() *durationIndex { return newDurationIndex(sketchAlpha) })

// durationIndex gives the bucket ⌈log_γ x⌉ of a duration's seconds
// x = d.Seconds() (d in whole nanoseconds, 0 < d < maxIndexedDuration)
// without a logarithm per value, and exactly as bucketOf computes it.
// Durations are grouped in cells by the exponent and the top
// durationCellBits mantissa bits of float64(d): a cell spans a factor of at
// most 1 + 2^−durationCellBits, no more than a bucket (a factor
// γ = (1+α)/(1−α) > 1 + 2α) if α ≥ 2^−8, so it then holds at most two
// buckets, and the cell keeps the first of them and the first duration of
// the second. Every cell is filled when the table is built, with bucketOf
// at its ends and a binary search for the split between them (a cell that
// holds no whole duration, below 128 ns, is never looked up). For a smaller α, whose buckets are narrower
// than a cell, there is no table: newDurationIndex returns nil and the
// sketch computes bucketOf.
//
// The search, and bucketOf's values at the ends bounding those inside, rest
// on bucketOf(d.Seconds()) never decreasing from one whole nanosecond to the
// next below maxIndexedDuration: there the computed ln x/ln γ grows by at
// least 1/(2^40 ln γ) ≈ 9e-11 per nanosecond while its rounding error (a few
// units in the last place of values below 2,100: d.Seconds(), math.Log
// within 1 ulp, the division) stays below 1e-12. TestDurationIndex checks
// the table against bucketOf.
type durationIndex struct {
	gamma   float64
	lnGamma float64
	cells   []durationCell // by cell key
}

// durationCell is one cell of a durationIndex.
type durationCell struct {
	split int64 // first duration, ns, of bucket lo+1; past the cell if none
	lo    int32 // bucket of the cell's first duration
}

// durationCellBits is the mantissa bits of a durationIndex cell key.
const durationCellBits = 7

// maxIndexedDuration bounds the durations a durationIndex covers: 2^40 ns,
// about 18 minutes (longer ones take bucketOf).
const maxIndexedDuration = 1 << 40

// newDurationIndex returns the duration buckets of sketches of accuracy
// alpha, every cell filled; nil if a cell holds more than two buckets
// (which happens for alpha < 2^−8: from 1/300 on).
func newDurationIndex(alpha float64) *durationIndex {
	sk := NewDDSketch(alpha)
	x := &durationIndex{gamma: sk.gamma, lnGamma: sk.lnGamma, cells: make([]durationCell, cellKey(maxIndexedDuration))}
	for k := range x.cells {
		if !x.fill(&x.cells[k], uint64(k)) {
			return nil
		}
	}
	return x
}

// cellKey is the cell of d ≥ 1: float64(d)'s biased exponent and top
// mantissa bits, from 1 ns (key 0) up.
func cellKey(d int64) uint64 {
	return math.Float64bits(float64(d))>>(52-durationCellBits) - 1023<<durationCellBits
}

// cellStart is the first whole duration, ns, of cell k (cellKey).
func cellStart(k uint64) int64 {
	return int64(math.Ceil(math.Float64frombits((k + 1023<<durationCellBits) << (52 - durationCellBits))))
}

// bucket returns bucketOf(d.Seconds()), 0 < d < maxIndexedDuration: a
// table lookup and a comparison, small enough to be inlined.
func (x *durationIndex) bucket(d time.Duration) int {
	c := &x.cells[cellKey(int64(d))]
	if int64(d) >= c.split {
		return int(c.lo) + 1
	}
	return int(c.lo)
}

// formula is bucketOf(d.Seconds()) computed.
func (x *durationIndex) formula(d int64) int {
	return bucketOf(time.Duration(d).Seconds(), x.lnGamma)
}

// fill computes cell c of key k; it reports false if the cell holds more
// than two buckets.
func (x *durationIndex) fill(c *durationCell, k uint64) bool {
	first, last := cellStart(k), cellStart(k+1)-1
	if first > last { // no whole duration in the cell: never looked up
		return true
	}
	lo, hi := x.formula(first), x.formula(last)
	switch {
	case hi == lo:
		c.split = last + 1
	case hi == lo+1:
		a, b := first, last // formula(a) = lo, formula(b) = hi
		// The split is near γ^lo seconds: bracket it there when the
		// formula agrees (it never decreases), to search a few
		// durations instead of the whole cell.
		if m := int64(math.Exp(float64(lo)*x.lnGamma) * 1e9); m-4 > a && m+4 < b &&
			x.formula(m-4) == lo && x.formula(m+4) == hi {
			a, b = m-4, m+4
		}
		for b-a > 1 {
			if m := a + (b-a)/2; x.formula(m) == hi {
				b = m
			} else {
				a = m
			}
		}
		c.split = b
	default:
		return false
	}
	c.lo = int32(lo)
	return true
}

// pooledRTTs merges the RTT samples of every flow (the network's delay
// percentiles weigh each sample once, so busier flows weigh more).
func (c *Collector) pooledRTTs() *DDSketch {
	all := NewDDSketch(sketchAlpha)
	for _, f := range c.flows {
		all.Merge(&f.rtts)
	}
	return all
}
