package metrics

import (
	"slices"
	"sort"
	"time"

	"cclab/clock"
)

type binner struct {
	start    clock.Time
	interval time.Duration
	series   bool // time series are kept
}

func (b binner) index(t clock.Time) int {
	if t < b.start {
		return -1
	}
	return int(t.Sub(b.start) / b.interval)
}

// grow returns s extended with zeros to hold index i.
func grow(s []float64, i int) []float64 {
	for len(s) <= i {
		s = append(s, 0)
	}
	return s
}

// twAcc accumulates the time-weighted mean and variance of a piecewise
// constant quantity v (cwnd, queue length), overall and per interval, and
// the time-weighted mean of a companion quantity w that changes at the same
// instants (bytes in flight, queue bytes), overall and, if wSeries, per
// interval: one pass over the time (and one conversion of each step to
// seconds) serves both.
type twAcc struct {
	set     bool
	wSeries bool // keep bins.w
	v, w    float64
	t       clock.Time
	integ   float64 // ∫v dt, value·s
	integSq float64 // ∫v² dt
	integW  float64 // ∫w dt
	dur     float64 // seconds covered
	bins    *twBins // per interval, if series are kept
}

// twBins are a twAcc's per-interval sums (made when the first is taken, so
// that without series a twAcc is the few numbers every update touches).
type twBins struct {
	v     []float64 // ∫v dt per interval
	w     []float64 // ∫w dt per interval (if wSeries)
	cover []float64 // seconds covered per interval
}

// advance integrates the current value up to t.
func (a *twAcc) advance(b *binner, t clock.Time) {
	if a.set && t > a.t {
		a.step(b, t)
	}
}

// step integrates the current value from a.t up to t > a.t (from the
// window's start if a.t is before it); on a twAcc not set yet it only sets
// the time to t.
func (a *twAcc) step(b *binner, t clock.Time) {
	if !a.set {
		a.set, a.t = true, t
		return
	}
	from := max(a.t, b.start)
	if t > from {
		d := seconds(t.Sub(from))
		a.integ += a.v * d
		a.integSq += a.v * a.v * d
		a.integW += a.w * d
		a.dur += d
		if b.series {
			a.stepBins(b, from, t)
		}
	}
	a.t = t
}

// stepBins adds the current value's integral from from to t to the
// per-interval sums.
func (a *twAcc) stepBins(b *binner, from, t clock.Time) {
	if a.bins == nil {
		a.bins = &twBins{}
	}
	for cur := from; cur < t; {
		k := b.index(cur)
		end := b.start.Add(time.Duration(k+1) * b.interval)
		if end > t {
			end = t
		}
		seg := seconds(end.Sub(cur))
		s := a.bins
		s.v = grow(s.v, k)
		s.cover = grow(s.cover, k)
		s.v[k] += a.v * seg
		s.cover[k] += seg
		if a.wSeries {
			s.w = grow(s.w, k)
			s.w[k] += a.w * seg
		}
		cur = end
	}
}

// update sets the value to v (and its companion to w) at t. A value set
// before the window (t before b.start) is held into it. An update dated
// before the latest (another emitter's clock) changes the value from the
// latest time on. It is small enough to be inlined (the queue and sender
// state take it at every queue event and ACK); the maximum, which only the
// queue length needs, is the caller's (linkAcc.qmax).
func (a *twAcc) update(b *binner, t clock.Time, v, w float64) {
	if t > a.t || !a.set {
		a.step(b, t)
	}
	a.v, a.w = v, w
}

// seconds is d.Seconds(), with the same float64 result: below one second
// Seconds computes 0 + float64(d)/1e9, which is float64(d)/1e9 (d is then
// exact in a float64); this path skips Seconds' integer division and
// remainder. TestSeconds checks it.
func seconds(d time.Duration) float64 {
	if uint64(d) < uint64(time.Second) {
		return float64(d) / 1e9
	}
	return d.Seconds()
}

func (a *twAcc) mean() (float64, bool) {
	if a.dur <= 0 {
		return 0, false
	}
	return a.integ / a.dur, true
}

// meanW is the time-weighted mean of the companion quantity w.
func (a *twAcc) meanW() (float64, bool) {
	if a.dur <= 0 {
		return 0, false
	}
	return a.integW / a.dur, true
}

func (a *twAcc) variance() (float64, bool) {
	m, ok := a.mean()
	if !ok {
		return 0, false
	}
	v := a.integSq/a.dur - m*m
	if v < 0 {
		v = 0 // rounding
	}
	return v, true
}

func (a *twAcc) series(name, unit string, b binner) Series {
	if a.bins == nil {
		return ratioSeries(name, unit, b, nil, nil)
	}
	return ratioSeries(name, unit, b, a.bins.v, a.bins.cover)
}

// seriesW is the per-interval series of the companion quantity w.
func (a *twAcc) seriesW(name, unit string, b binner) Series {
	if a.bins == nil {
		return ratioSeries(name, unit, b, nil, nil)
	}
	return ratioSeries(name, unit, b, a.bins.w, a.bins.cover)
}

// ratioSeries is the per-interval series sum[k]/weight[k], at each interval's
// start time (seconds from the start), skipping intervals of weight 0.
func ratioSeries(name, unit string, b binner, sum, weight []float64) Series {
	s := Series{Name: name, Unit: unit}
	for k := range sum {
		if weight[k] > 0 {
			s.T = append(s.T, (time.Duration(k) * b.interval).Seconds())
			s.V = append(s.V, sum[k]/weight[k])
		}
	}
	return s
}

// sampleAcc accumulates the mean and variance of samples (Welford), overall
// and per interval.
type sampleAcc struct {
	n     int
	mean  float64
	m2    float64
	sum   []float64
	count []float64
}

func (a *sampleAcc) add(k int, x float64) {
	a.welford(x)
	if k >= 0 {
		a.sum = grow(a.sum, k)
		a.count = grow(a.count, k)
		a.sum[k] += x
		a.count[k]++
	}
}

// welford adds x to the overall mean and variance.
func (a *sampleAcc) welford(x float64) {
	a.n++
	d := x - a.mean
	a.mean += d / float64(a.n)
	a.m2 += d * (x - a.mean)
}

// addZeros adds n samples 0 to the overall mean and variance, with the
// same result as n calls add(-1, 0).
func (a *sampleAcc) addZeros(n int) {
	for ; n > 0; n-- {
		a.welford(0)
	}
}

// variance is the population variance of the samples.
func (a *sampleAcc) variance() float64 {
	if a.n == 0 {
		return 0
	}
	return a.m2 / float64(a.n)
}

func (a *sampleAcc) series(name, unit string, b binner) Series {
	return ratioSeries(name, unit, b, a.sum, a.count)
}

// counterSeries is a per-interval sum.
type counterSeries []float64

func (c *counterSeries) add(k int, x float64) {
	if k < 0 {
		return
	}
	*c = grow(*c, k)
	(*c)[k] += x
}

// sparseCounter is a per-interval sum kept only for the intervals that had
// events (a flow idle most of the time, or thousands of flows, stay small),
// in increasing order of interval.
type sparseCounter []sparseSum

// sparseFirst is a sparseCounter's first capacity, intervals.
const sparseFirst = 16

// sparseSum is the sum v of interval k.
type sparseSum struct {
	k int32
	v float64
}

func (c *sparseCounter) add(k int, x float64) {
	if k < 0 {
		return
	}
	s := *c
	n := len(s)
	switch {
	case n > 0 && int(s[n-1].k) == k:
		s[n-1].v += x
	case n == 0 || int(s[n-1].k) < k:
		if n == cap(s) {
			// Doubling (from sparseFirst): append's growth of a long
			// slice, a quarter at a time, would copy it twice as often.
			s = slices.Grow(s, max(n, sparseFirst))
		}
		*c = append(s, sparseSum{int32(k), x})
	default: // an event out of time order (another emitter's clock)
		i := sort.Search(n, func(i int) bool { return int(s[i].k) >= k })
		if int(s[i].k) == k {
			s[i].v += x
			return
		}
		*c = slices.Insert(s, i, sparseSum{int32(k), x})
	}
}

// dense returns the sums as a per-interval counter.
func (c *sparseCounter) dense() counterSeries {
	var d counterSeries
	for _, s := range *c {
		d.add(int(s.k), s.v)
	}
	return d
}

// flowAcc holds a flow's accumulators; those the most frequent events
// (data sent, acknowledged, delivered; sender state) take come first, close
// together.
type flowAcc struct {
	id                uint64
	firstSent         clock.Time
	sent, packetsSent int64 // bytes, packets
	acked, delivered  int64 // bytes
	retransFlagged    int64
	lastDelivered     clock.Time
	minRTT            time.Duration
	deliveredS        sparseCounter // kept even without series: the throughput variance
	cwnd              twAcc         // bytes; companion: bytes in flight
	srtt              twAcc         // seconds
	rtts              DDSketch      // RTT samples, for p50/p95/p99_rtt (ddsketch.go)
	retransEvents     int64
	spurious          int64
	lost              int64
	linkDrops         int64
	rtos              map[uint8]int64 // by cause; made at the first RTO
	recoveries        int64
	recoveryOpen      clock.Time
	recoveryTime      float64
	recoveriesEnded   int64
	congestionSignals int64
	delayReductions   int64 // congestion signals of Reason ccalgo.Delay
	sentS             counterSeries
	ackedS            counterSeries
	lostS, retransS   counterSeries
	rtoS              counterSeries
}

type linkAcc struct {
	index      int32
	info       LinkInfo // as configured (RunInfo.Links), or just the index
	qlen       twAcc    // packets; companion: bytes
	qmax       float64  // largest queue length in the window (the one held into it included), packets
	sojourn    sampleAcc
	enqueued   int64
	drops      map[uint8]int64
	marks      int64
	departed   int64
	departedS  counterSeries
	dropS      counterSeries
	lastCong   clock.Time
	lossEvents int64
	epochs     epochCounter
	sojourns   DDSketch // sojourn times, for p50/p95/p99_queue_delay (ddsketch.go)
}

// epochCounter counts congestion epochs (docs/metrics.md): an epoch starts
// when the queue length rises above the threshold high and ends when it
// falls back to high/2 or below. With the threshold unknown until the end
// (no queue limit: a fraction of the largest length seen), the queue
// lengths are kept (changes only, at most maxQueueLens) and counted at the end.
type epochCounter struct {
	high    float64 // threshold, packets; 0: not known yet
	in      bool    // inside an epoch
	n       int64   // epochs started in the window
	lens    []int32 // queue lengths (changes) in the window, when high is unknown
	last    int     // latest length
	started bool    // a length was seen
}

// observe takes the queue length v; inWindow says whether it counts.
func (c *epochCounter) observe(v int, inWindow bool) {
	if c.started && v == c.last {
		return
	}
	c.started, c.last = true, v
	if c.high == 0 {
		if inWindow && len(c.lens) < maxQueueLens {
			c.lens = append(c.lens, int32(v))
		}
		return
	}
	c.step(v, inWindow)
}

func (c *epochCounter) step(v int, inWindow bool) {
	switch {
	case !c.in && float64(v) > c.high:
		c.in = true
		if inWindow {
			c.n++
		}
	case c.in && float64(v) <= c.high/2:
		c.in = false
	}
}

// count returns the epochs; with the threshold unknown so far it is set to
// fraction × the largest length seen and the kept lengths are replayed.
func (c *epochCounter) count(fraction float64) int64 {
	if c.high > 0 {
		return c.n
	}
	largest := 0
	for _, v := range c.lens {
		largest = max(largest, int(v))
	}
	if largest == 0 {
		return 0
	}
	c.high = fraction * float64(largest)
	c.in = float64(c.lens[0]) > c.high // an epoch in progress when the window begins is not counted
	for _, v := range c.lens[1:] {
		c.step(int(v), true)
	}
	return c.n
}
