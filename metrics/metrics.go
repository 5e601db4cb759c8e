// Package metrics computes a run's metrics from the shared event vocabulary
// by one code path for both backends (docs/metrics.md): the Collector, the
// metric catalog, DDSketch quantiles, packet traces, and statistics over
// repeated runs.
package metrics

import (
	"math"
	"slices"
	"sort"
	"sync"
	"time"

	"cclab/ccalgo"
	"cclab/clock"
	"cclab/event"
	"cclab/qdisc"
	"cclab/scenario"
)

// RunInfo tells the metrics code what it cannot learn from events: the
// measurement window, the sampling interval and the configured topology.
type RunInfo struct {
	Start      clock.Time    // start of the measurement window; Never: the first event's time
	End        clock.Time    // end of the window; Never: the last event's time
	Interval   time.Duration // time-series interval; 0 means 100 ms
	Flows      []FlowInfo    // configured flows (events of other flows are measured too)
	Links      []LinkInfo    // configured links (events of other links are measured too)
	Bottleneck int32         // index of the bottleneck link; -1: the slowest link in Links
	// BottleneckRate is the bottleneck's rate, bits/s, for runs whose links
	// emit no events (then Links is empty); 0: the bottleneck link's rate.
	BottleneckRate float64
	// NoSeries computes the summary metrics only, no time series (a run of
	// thousands of flows saves their per-interval memory); var_throughput
	// and cov_throughput are still computed.
	NoSeries bool
	// Trace selects the flow and window of the packet trace
	// (Metrics.Trace); nil: none.
	Trace *TraceWindow
}

// FlowInfo describes one configured flow.
type FlowInfo struct {
	ID             uint64        // event.Event.Flow of the flow's events
	Name           string        // label for reports
	Size           int64         // bytes the flow sends; 0 means unlimited (no completion time)
	Stop           clock.Time    // when the flow is stopped; Never: at End
	BottleneckRate float64       // bits/s; 0: the bottleneck link's rate
	BaseRTT        time.Duration // propagation round-trip time; 0: the smallest MinRTT seen
}

// LinkInfo describes one configured link.
type LinkInfo struct {
	Index      int32         // event.Event.Link of the link's events
	Name       string        // label for reports
	Rate       float64       // bits/s; 0 if unknown (no utilization)
	QueueLimit int           // queue limit, packets; 0 if unknown (the largest length seen is used)
	BaseRTT    time.Duration // round-trip propagation time of the paths through it (loss events); 0 means 100 ms
	// EpochThreshold is the queue length that starts a congestion epoch, as
	// a fraction of QueueLimit (or of the largest length seen if the limit
	// is unknown); 0 means DefaultEpochThreshold (docs/metrics.md).
	EpochThreshold float64
}

// defaultLossEventRTT groups drops into loss events when no base RTT is known.
const defaultLossEventRTT = 100 * time.Millisecond

// defaultInterval is the time-series interval when RunInfo.Interval is 0.
const defaultInterval = 100 * time.Millisecond

// maxQueueLens caps the queue-length changes kept for counting congestion
// epochs when the threshold is only known at the end (no queue limit).
const maxQueueLens = 1 << 20

// Series is one time series: V[i] is the value over [T[i], T[i]+interval),
// T in seconds from the run's start. Intervals without a value are omitted.
type Series struct {
	Name string
	Unit string
	T    []float64
	V    []float64
}

// Result holds the metrics of one scope (a flow, a link or the network).
type Result struct {
	Scope  Scope
	ID     int64              // flow ID or link index; 0 for the network
	Name   string             // label
	Values map[string]float64 // summary metrics by name (see Catalog)
	Series []Series           // time series (see SeriesCatalog)
}

// Get returns the named value and whether it is present.
func (r Result) Get(name string) (float64, bool) {
	v, ok := r.Values[name]
	return v, ok
}

// Metrics is everything measured in one run.
type Metrics struct {
	Start, End clock.Time
	Interval   time.Duration
	Flows      []Result // sorted by ID
	Links      []Result // sorted by index
	Network    Result
	// Trace is the packet trace of RunInfo.Trace's flow, in event order
	// (at most MaxTracePoints).
	Trace     []TracePoint
	TraceFlow int64 // the traced flow's number (0: no trace)
}

// binner maps times to time-series intervals.
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

// Collector computes metrics from a stream of events. It is an event.Sink;
// feed it every event of a run (in time order per emitter), then call Finish.
// It is not safe for concurrent use: wrap it with Locked for that.
type Collector struct {
	info    RunInfo
	b       binner
	started bool
	begun   bool // the window has begun (state held from before it marked as seen)
	last    clock.Time
	flows   map[uint64]*flowAcc
	links   map[int32]*linkAcc
	// byID holds the flows of small IDs (1..len-1), so that the per-event
	// lookup is a slice index. byIndex[k] holds link linkSlot[k], the
	// first made of the links whose indices have the low byte k (any other
	// takes the map); an empty slot's linkSlot is k+1, an index whose low
	// byte is not k. The lookup is then two array loads and a comparison,
	// small enough to be inlined.
	byID     []*flowAcc
	byIndex  [256]*linkAcc
	linkSlot [256]int32
	trace    []TracePoint
	durs     *durationIndex // the delay sketches' buckets (durationBuckets, shared)
	// Events from steadyFrom to steadyTo (an empty range until the window
	// has begun; always empty with a packet trace) are measured without
	// admit's checks.
	steadyFrom, steadyTo clock.Time
	// cur is the latest interval looked up (interval): number curK, from
	// curFrom to before curTo.
	curK           int
	curFrom, curTo clock.Time
}

// smallIDs bounds the flow IDs looked up by slice.
const smallIDs = 1 << 16

// NewCollector returns a Collector for a run described by info.
func NewCollector(info RunInfo) *Collector {
	if info.Interval <= 0 {
		info.Interval = defaultInterval
	}
	c := &Collector{info: info, flows: map[uint64]*flowAcc{}, links: map[int32]*linkAcc{}, durs: durationBuckets()}
	c.b = binner{start: info.Start, interval: info.Interval, series: !info.NoSeries}
	c.started = info.Start != clock.Never
	c.steadyFrom, c.steadyTo = 1, 0 // empty until the window begins (admit)
	for k := range c.linkSlot {
		c.linkSlot[k] = int32(k) + 1 // empty: no index with low byte k
	}
	for _, l := range info.Links {
		c.link(l.Index)
	}
	return c
}

// SetEnd ends the measurement window at t (a run that stopped early, e.g.
// when every flow had finished); events after t are ignored.
func (c *Collector) SetEnd(t clock.Time) {
	c.info.End = t
	c.steadyFrom, c.steadyTo = 1, 0 // the next event sets them anew (admit)
}

// Compute returns the metrics of a recorded run.
func Compute(info RunInfo, events []event.Event) Metrics {
	c := NewCollector(info)
	for _, e := range events {
		c.Observe(&e)
	}
	return c.Finish()
}

// flow returns the accumulators of flow id, made at its first event. The
// lookup of a small ID is a slice index (inlined); others, and new flows,
// take newFlow.
func (c *Collector) flow(id uint64) *flowAcc {
	if id < uint64(len(c.byID)) {
		if f := c.byID[id]; f != nil {
			return f
		}
	}
	return c.newFlow(id)
}

// newFlow returns flow id's accumulators from the map, or makes them.
func (c *Collector) newFlow(id uint64) *flowAcc {
	f := c.flows[id]
	if f == nil {
		f = &flowAcc{id: id}
		f.cwnd.wSeries = true // the inflight series
		c.initSketch(&f.rtts)
		c.flows[id] = f
		if id < smallIDs {
			for uint64(len(c.byID)) <= id {
				c.byID = append(c.byID, nil)
			}
			c.byID[id] = f
		}
	}
	return f
}

// link returns the accumulators of link i, made at its first event; as
// flow, the lookup of its slot in byIndex is inlined.
func (c *Collector) link(i int32) *linkAcc {
	if k := uint8(i); c.linkSlot[k] == i {
		return c.byIndex[k]
	}
	return c.newLink(i)
}

// newLink returns link i's accumulators from the map, or makes them.
func (c *Collector) newLink(i int32) *linkAcc {
	l := c.links[i]
	if l == nil {
		info, _ := c.linkInfo(i)
		l = &linkAcc{index: i, info: info, drops: map[uint8]int64{}}
		c.initSketch(&l.sojourns)
		frac := info.EpochThreshold
		if frac <= 0 {
			frac = scenario.DefaultEpochThreshold
		}
		if info.QueueLimit > 0 {
			l.epochs.high = frac * float64(info.QueueLimit)
		}
		c.links[i] = l
		if k := uint8(i); c.byIndex[k] == nil {
			c.byIndex[k], c.linkSlot[k] = l, i
		}
	}
	return l
}

// Record adds the event *e (Observe).
func (c *Collector) Record(e *event.Event) { c.Observe(e) }

// Observe adds the event *e; it keeps no reference to e and does not
// change *e.
func (c *Collector) Observe(e *event.Event) {
	if e.Time < c.steadyFrom || e.Time > c.steadyTo {
		if !c.admit(e) {
			return
		}
	}
	if e.Time > c.last {
		c.last = e.Time
	}
	switch e.Kind {
	case event.Enqueue:
		l := c.link(e.Link)
		l.enqueued++
		c.queueState(l, e, true)
	case event.Dequeue:
		l := c.link(e.Link)
		l.sojourn.add(c.seriesIndex(e.Time), seconds(e.Sojourn))
		l.sojourns.addDuration(e.Sojourn)
		c.queueState(l, e, true)
	case event.Departure:
		l := c.link(e.Link)
		l.departed += int64(e.Bytes)
		l.departedS.add(c.seriesIndex(e.Time), float64(e.Bytes))
	case event.Drop:
		l := c.link(e.Link)
		l.drops[e.Reason]++
		l.dropS.add(c.seriesIndex(e.Time), 1)
		if qdisc.DropReason(e.Reason) != qdisc.DropRandom { // a loss stage, not the queue: QueueLen is meaningless
			c.lossEvent(l, e.Time)
			c.queueState(l, e, true)
		}
		if e.Flow != 0 {
			c.flow(e.Flow).linkDrops++
		}
	case event.Mark:
		l := c.link(e.Link)
		l.marks++
		c.lossEvent(l, e.Time)
		c.queueState(l, e, true)
	default:
		c.recordFlow(e, c.flow(e.Flow))
	}
}

// ObserveFlow adds the event *e as if its Flow were flow: the same as
// Observe of a copy of *e with Flow set to flow, without the copy in the
// common case (an event of a flow's sender or receiver inside the
// window), for a sink that numbers the flows of the events it passes on.
func (c *Collector) ObserveFlow(e *event.Event, flow uint64) {
	if e.Time < c.steadyFrom || e.Time > c.steadyTo || queueKinds[e.Kind] {
		ev := *e
		ev.Flow = flow
		c.Observe(&ev)
		return
	}
	if e.Time > c.last {
		c.last = e.Time
	}
	c.recordFlow(e, c.flow(flow))
}

// queueKinds[k] is set for the kinds of queue and link events: those
// Observe does not pass to recordFlow.
var queueKinds = [256]bool{event.Enqueue: true, event.Dequeue: true, event.Departure: true, event.Drop: true, event.Mark: true}

// admit takes the part of an event that Observe's steady window (the
// measurement window once it has begun, with no packet trace) skips: the
// start of the window at the first event, the packet trace, the state
// held from before the window and the end of the window. It reports
// whether the event is measured.
func (c *Collector) admit(e *event.Event) bool {
	if !c.started {
		c.info.Start = e.Time
		c.b.start = e.Time
		c.started = true
	}
	if c.info.Trace != nil && len(c.trace) < MaxTracePoints {
		if p, ok := c.info.Trace.tracePoint(e); ok {
			c.trace = append(c.trace, p)
		}
	}
	if e.Time < c.info.Start {
		c.hold(e)
		return false
	}
	if c.info.End != clock.Never && e.Time > c.info.End {
		return false
	}
	if !c.begun {
		c.begin()
	}
	if c.info.Trace == nil {
		c.steadyFrom, c.steadyTo = c.info.Start, c.info.End
		if c.info.End == clock.Never {
			c.steadyTo = math.MaxInt64
		}
	}
	return true
}

// UsesFlow reports whether the Collector uses the Flow field of events of
// kind k: of the queue and link events only that of drops (a flow's
// link drops, total_link_drops).
func UsesFlow(k event.Kind) bool {
	return flowlessKinds>>k&1 == 0 // a shift by 32 or more gives 0
}

// flowlessKinds has bit k set for the event kinds whose Flow the Collector
// does not use.
const flowlessKinds uint32 = 1<<event.Enqueue | 1<<event.Dequeue | 1<<event.Departure | 1<<event.Mark

// seriesIndex is the time-series interval of t, or -1 if no series are kept.
func (c *Collector) seriesIndex(t clock.Time) int {
	if !c.b.series {
		return -1
	}
	return c.seriesInterval(t)
}

// seriesInterval is interval, kept out of line so that seriesIndex is
// inlined: without series (thousands of flows) it costs no call.
//
//go:noinline
func (c *Collector) seriesInterval(t clock.Time) int { return c.interval(t) }

// interval is the time-series interval of t (binner.index), without a
// division while events stay in the one looked up last.
func (c *Collector) interval(t clock.Time) int {
	if t >= c.curFrom && t < c.curTo {
		return c.curK
	}
	k := c.b.index(t)
	if k >= 0 {
		c.curK, c.curFrom = k, c.b.start.Add(time.Duration(k)*c.b.interval)
		c.curTo = c.curFrom.Add(c.b.interval)
	}
	return k
}

// recordFlow adds an event of a flow's sender or receiver, whose
// accumulators are f.
func (c *Collector) recordFlow(e *event.Event, f *flowAcc) {
	switch e.Kind {
	case event.PacketSent:
		if f.firstSent == clock.Never {
			f.firstSent = e.Time
		}
		f.sent += int64(e.Bytes)
		f.packetsSent++
		f.sentS.add(c.seriesIndex(e.Time), float64(e.Bytes))
		if e.Reason == event.SentRetransmission {
			f.retransFlagged++
		}
	case event.PacketAcked:
		f.acked += int64(e.Bytes)
		f.ackedS.add(c.seriesIndex(e.Time), float64(e.Bytes))
	case event.Retransmit:
		f.retransEvents++
		f.retransS.add(c.seriesIndex(e.Time), 1)
	case event.SpuriousRetransmit:
		f.spurious++
	case event.PacketLost:
		f.lost++
		f.lostS.add(c.seriesIndex(e.Time), 1)
	case event.RTO:
		f.rtoCount(e.Reason, 1)
		f.rtoS.add(c.seriesIndex(e.Time), 1)
	case event.SpuriousRTO:
		f.rtoCount(e.Reason, -1)
		f.rtoCount(rtoSpurious, 1)
	case event.RecoveryStart:
		f.recoveries++
		f.recoveryOpen = e.Time
	case event.RecoveryEnd:
		if f.recoveryOpen != clock.Never {
			f.recoveryTime += e.Time.Sub(f.recoveryOpen).Seconds()
			f.recoveriesEnded++
			f.recoveryOpen = clock.Never
		}
	case event.CongestionSignal:
		f.congestionSignals++
		if e.Reason == uint8(ccalgo.Delay) {
			f.delayReductions++
		}
	case event.Delivered:
		f.delivered += int64(e.Bytes)
		f.lastDelivered = e.Time
		f.deliveredS.add(c.interval(e.Time), float64(e.Bytes)) // kept without series too: the throughput variance
	case event.MetricsUpdated:
		c.senderState(f, e, true)
	}
}

// rtoCount adds n to the RTOs of cause r (the map is made at the flow's
// first RTO).
func (f *flowAcc) rtoCount(r uint8, n int64) {
	if f.rtos == nil {
		f.rtos = map[uint8]int64{}
	}
	f.rtos[r] += n
}

// senderState takes a MetricsUpdated event: the state variables cwnd, bytes
// in flight and srtt (time-weighted: each value holds until the next), the
// minimum RTT and, if inWindow, the RTT sample (a sample taken before the
// window, as a queue's sojourn times then, is not counted).
func (c *Collector) senderState(f *flowAcc, e *event.Event, inWindow bool) {
	f.cwnd.update(&c.b, e.Time, float64(e.Cwnd), float64(e.InFlight))
	if e.SRTT > 0 {
		f.srtt.update(&c.b, e.Time, seconds(e.SRTT), 0)
	}
	if e.MinRTT > 0 && (f.minRTT == 0 || e.MinRTT < f.minRTT) {
		f.minRTT = e.MinRTT
	}
	if e.RTT > 0 && inWindow {
		f.rtts.addDuration(e.RTT)
	}
}

// hold takes an event from before the window: only the state variables it
// sets (a sender's state, a queue's length) carry into the window.
func (c *Collector) hold(e *event.Event) {
	switch e.Kind {
	case event.MetricsUpdated:
		c.senderState(c.flow(e.Flow), e, false)
	case event.Enqueue, event.Dequeue, event.Mark:
		c.queueState(c.link(e.Link), e, false)
	case event.Drop:
		if qdisc.DropReason(e.Reason) != qdisc.DropRandom {
			c.queueState(c.link(e.Link), e, false)
		}
	}
}

// begin marks the values held from before the window as seen in it.
func (c *Collector) begin() {
	c.begun = true
	for _, l := range c.links {
		if l.qlen.set && l.qlen.v > l.qmax { // the length held into the window is seen in it
			l.qmax = l.qlen.v
		}
		if l.epochs.started && l.epochs.high == 0 {
			// The length held into the window starts the replay (an
			// epoch in progress then is not counted).
			l.epochs.lens = append(l.epochs.lens[:0], int32(l.epochs.last))
		}
	}
}

// queueState takes a queue's length after a queue event.
func (c *Collector) queueState(l *linkAcc, e *event.Event, inWindow bool) {
	q := float64(e.QueueLen)
	l.qlen.update(&c.b, e.Time, q, float64(e.QueueBytes))
	if q > l.qmax && inWindow {
		l.qmax = q
	}
	l.epochs.observe(e.QueueLen, inWindow)
}

func (c *Collector) linkInfo(i int32) (LinkInfo, bool) {
	for _, l := range c.info.Links {
		if l.Index == i {
			return l, true
		}
	}
	return LinkInfo{Index: i}, false
}

// lossEvent counts loss events: a drop or mark more than one base RTT after
// the previous one starts a new loss event (RFC 5348 §5.2).
func (c *Collector) lossEvent(l *linkAcc, t clock.Time) {
	rtt := l.info.BaseRTT
	if rtt <= 0 {
		rtt = defaultLossEventRTT
	}
	if l.lastCong == clock.Never || t.Sub(l.lastCong) > rtt {
		l.lossEvents++
	}
	l.lastCong = t
}

// rtoCauseNames names RTO causes (event.Event.Reason of RTO events) in metric
// names total_rtos_<cause>; see the transport's RTOCause.
var rtoCauseNames = map[uint8]string{
	0: "unknown", 1: "lost_retransmission", 2: "too_few_dupacks", 3: "burst_loss", 4: "handshake", rtoSpurious: "spurious",
}

// rtoSpurious is the RTO cause "spurious" (transport.RTOSpurious): an RTO
// counted under another cause moves there on a SpuriousRTO event.
const rtoSpurious = 5

func rtoCauseName(r uint8) string {
	if n, ok := rtoCauseNames[r]; ok {
		return n
	}
	return "cause" + itoa(int(r))
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	neg := n < 0
	if neg {
		n = -n
	}
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}

// cov returns sd/mean, or false if the mean is 0.
func cov(mean, variance float64) (float64, bool) {
	if mean == 0 {
		return 0, false
	}
	return math.Sqrt(variance) / math.Abs(mean), true
}

// putSpread sets v["var_"+name] and, unless the mean is 0, v["cov_"+name].
func putSpread(v map[string]float64, name string, mean, variance float64) {
	v["var_"+name] = variance
	if cv, ok := cov(mean, variance); ok {
		v["cov_"+name] = cv
	}
}

// Finish integrates the state variables up to the end of the window and
// returns the metrics.
func (c *Collector) Finish() Metrics {
	end := c.info.End
	if end == clock.Never {
		end = c.last
	}
	m := Metrics{Start: c.info.Start, End: end, Interval: c.info.Interval, Trace: c.trace}
	if c.info.Trace != nil {
		m.TraceFlow = int64(c.info.Trace.Flow)
	}
	nbins := 0
	if end > c.info.Start {
		nbins = int((end.Sub(c.info.Start) + c.info.Interval - 1) / c.info.Interval)
	}
	// Links first: flows need the bottleneck's rate.
	for _, li := range c.info.Links {
		c.link(li.Index)
	}
	var linkIDs []int32
	for i := range c.links {
		linkIDs = append(linkIDs, i)
	}
	sort.Slice(linkIDs, func(a, b int) bool { return linkIDs[a] < linkIDs[b] })
	bneck := c.bottleneck()
	var bneckResult *Result
	for _, i := range linkIDs {
		r := c.finishLink(c.links[i], end, nbins)
		m.Links = append(m.Links, r)
	}
	for i := range m.Links {
		if m.Links[i].ID == int64(bneck.Index) {
			bneckResult = &m.Links[i]
		}
	}
	infos := make(map[uint64]FlowInfo, len(c.info.Flows)) // the configured flows by ID; of one given twice, the first
	for _, fi := range c.info.Flows {
		c.flow(fi.ID)
		if _, ok := infos[fi.ID]; !ok {
			infos[fi.ID] = fi
		}
	}
	var flowIDs []uint64
	for id := range c.flows {
		if id == 0 && c.flows[id].packetsSent == 0 && c.flows[id].delivered == 0 {
			continue // endpoint-level events without a flow
		}
		flowIDs = append(flowIDs, id)
	}
	sort.Slice(flowIDs, func(a, b int) bool { return flowIDs[a] < flowIDs[b] })
	for _, id := range flowIDs {
		info, ok := infos[id]
		if !ok {
			info = FlowInfo{ID: id}
		}
		m.Flows = append(m.Flows, c.finishFlow(c.flows[id], info, end, nbins, bneck))
	}
	m.Network = c.finishNetwork(m.Flows, m.Links, bneck, bneckResult)
	putPercentiles(m.Network.Values, "rtt", c.pooledRTTs())
	return m
}

// bottleneck returns the configured bottleneck link, or the slowest known link.
func (c *Collector) bottleneck() LinkInfo {
	if c.info.Bottleneck >= 0 {
		if li, ok := c.linkInfo(c.info.Bottleneck); ok {
			return li
		}
	}
	best := LinkInfo{Index: -1}
	for _, l := range c.info.Links {
		if l.Rate > 0 && (best.Rate == 0 || l.Rate < best.Rate) {
			best = l
		}
	}
	return best
}

// bottleneckRate is the bottleneck link's rate, else RunInfo.BottleneckRate.
func (c *Collector) bottleneckRate(bneck LinkInfo) float64 {
	if bneck.Rate > 0 {
		return bneck.Rate
	}
	return c.info.BottleneckRate
}

// finishFlow computes the metrics of flow f, configured as info.
func (c *Collector) finishFlow(f *flowAcc, info FlowInfo, end clock.Time, nbins int, bneck LinkInfo) Result {
	r := Result{Scope: ScopeFlow, ID: int64(f.id), Name: info.Name, Values: map[string]float64{}}
	if r.Name == "" {
		r.Name = "flow " + itoa(int(f.id))
	}
	v := r.Values
	f.cwnd.advance(&c.b, end)
	f.srtt.advance(&c.b, end)

	// Active time: first data sent to the stop, completion or end of the window.
	from := f.firstSent
	if from == clock.Never {
		from = c.info.Start
	}
	to := end
	if info.Stop != clock.Never && info.Stop < to {
		to = info.Stop
	}
	completed := info.Size > 0 && f.delivered >= info.Size && f.lastDelivered != clock.Never
	if completed {
		to = f.lastDelivered
		v["fct"] = f.lastDelivered.Sub(from).Seconds()
	}
	active := to.Sub(from).Seconds()
	v["total_delivered"] = float64(f.delivered)
	v["total_sent"] = float64(f.sent)
	v["total_packets_sent"] = float64(f.packetsSent)
	if active > 0 {
		v["mean_throughput"] = float64(f.delivered) * 8 / active
		v["mean_send_rate"] = float64(f.sent) * 8 / active
		v["mean_delivery_rate"] = float64(f.acked) * 8 / active
	}
	// Throughput series over the active intervals: the intervals with
	// deliveries (deliveredS, in increasing order) and zeros between them.
	var tput sampleAcc
	kFrom, kTo := c.b.index(from), c.b.index(to.Add(-1))
	if kFrom >= 0 && kFrom <= kTo {
		iv := c.info.Interval.Seconds()
		k := kFrom // the next interval to add
		for _, d := range f.deliveredS {
			dk := int(d.k)
			if dk < k {
				continue
			}
			if dk > kTo {
				break
			}
			tput.addZeros(dk - k)
			tput.welford(d.v * 8 / iv)
			k = dk + 1
		}
		tput.addZeros(kTo - k + 1)
	}
	if tput.n > 0 {
		putSpread(v, "throughput", tput.mean, tput.variance())
	}
	if mean, ok := f.cwnd.mean(); ok {
		vr, _ := f.cwnd.variance()
		v["mean_cwnd"] = mean
		putSpread(v, "cwnd", mean, vr)
	}
	if mean, ok := f.cwnd.meanW(); ok {
		v["mean_inflight"] = mean
	}
	srtt, haveSRTT := f.srtt.mean()
	if haveSRTT {
		vr, _ := f.srtt.variance()
		v["mean_srtt"] = srtt
		putSpread(v, "srtt", srtt, vr)
	}
	if f.minRTT > 0 {
		v["min_rtt"] = f.minRTT.Seconds()
		if haveSRTT {
			v["mean_qdelay_est"] = max(srtt-f.minRTT.Seconds(), 0)
		}
	}
	putPercentiles(v, "rtt", &f.rtts)
	v["total_lost"] = float64(f.lost)
	v["total_link_drops"] = float64(f.linkDrops)
	if f.packetsSent > 0 {
		v["loss_rate"] = float64(f.linkDrops) / float64(f.packetsSent)
		v["declared_loss_rate"] = float64(f.lost) / float64(f.packetsSent)
	}
	v["total_retransmissions"] = float64(max(f.retransEvents, f.retransFlagged))
	v["total_spurious_retransmissions"] = float64(f.spurious)
	var rtos int64
	for cause, n := range f.rtos {
		rtos += n
		v["total_rtos_"+rtoCauseName(cause)] = float64(n)
	}
	v["total_rtos"] = float64(rtos)
	v["total_recoveries"] = float64(f.recoveries)
	if f.recoveriesEnded > 0 {
		v["mean_recovery_time"] = f.recoveryTime / float64(f.recoveriesEnded)
	}
	v["total_congestion_signals"] = float64(f.congestionSignals)
	v["total_delay_reductions"] = float64(f.delayReductions)
	rate := info.BottleneckRate
	if rate <= 0 {
		rate = c.bottleneckRate(bneck)
	}
	if tp, ok := v["mean_throughput"]; ok && rate > 0 {
		v["bw_utilization"] = tp / rate
	}
	base := info.BaseRTT
	if base <= 0 {
		base = f.minRTT
	}
	if inf, ok := v["mean_inflight"]; ok && rate > 0 && base > 0 {
		v["bdp_utilization"] = inf / (rate * base.Seconds() / 8)
	}
	if tp, ok := v["mean_throughput"]; ok && haveSRTT && srtt > 0 {
		v["power"] = tp / srtt
	}

	if !c.b.series {
		return r
	}
	iv := c.info.Interval.Seconds()
	r.Series = []Series{
		counterToSeries("throughput", "bit/s", f.deliveredS.dense(), nbins, c.b, 8/iv),
		counterToSeries("send_rate", "bit/s", f.sentS, nbins, c.b, 8/iv),
		counterToSeries("delivery_rate", "bit/s", f.ackedS, nbins, c.b, 8/iv),
		f.cwnd.series("cwnd", "byte", c.b),
		f.cwnd.seriesW("inflight", "byte", c.b),
		f.srtt.series("srtt", "s", c.b),
		counterToSeries("losses", "packet", f.lostS, nbins, c.b, 1),
		counterToSeries("retransmissions", "packet", f.retransS, nbins, c.b, 1),
		counterToSeries("rtos", "1", f.rtoS, nbins, c.b, 1),
	}
	return r
}

// counterToSeries turns per-interval sums into a series over nbins intervals,
// multiplied by scale.
func counterToSeries(name, unit string, c counterSeries, nbins int, b binner, scale float64) Series {
	s := Series{Name: name, Unit: unit}
	for k := 0; k < nbins; k++ {
		x := 0.0
		if k < len(c) {
			x = c[k]
		}
		s.T = append(s.T, (time.Duration(k) * b.interval).Seconds())
		s.V = append(s.V, x*scale)
	}
	return s
}

func (c *Collector) finishLink(l *linkAcc, end clock.Time, nbins int) Result {
	info, _ := c.linkInfo(l.index)
	r := Result{Scope: ScopeLink, ID: int64(l.index), Name: info.Name, Values: map[string]float64{}}
	if r.Name == "" {
		r.Name = "link " + itoa(int(l.index))
	}
	v := r.Values
	l.qlen.advance(&c.b, end)
	frac := info.EpochThreshold
	if frac <= 0 {
		frac = scenario.DefaultEpochThreshold
	}
	if mean, ok := l.qlen.mean(); ok {
		vr, _ := l.qlen.variance()
		v["mean_queue_len"] = mean
		putSpread(v, "queue_len", mean, vr)
	}
	v["max_queue_len"] = l.qmax
	if mean, ok := l.qlen.meanW(); ok {
		v["mean_queue_bytes"] = mean
	}
	if l.sojourn.n > 0 {
		v["mean_queue_delay"] = l.sojourn.mean
		putSpread(v, "queue_delay", l.sojourn.mean, l.sojourn.variance())
		putPercentiles(v, "queue_delay", &l.sojourns)
	}
	v["total_enqueued"] = float64(l.enqueued)
	var drops int64
	for reason, n := range l.drops {
		drops += n
		v["total_drops_"+qdisc.DropReason(reason).String()] = float64(n)
	}
	v["total_drops"] = float64(drops)
	v["total_marks"] = float64(l.marks)
	if l.enqueued+drops > 0 {
		v["drop_rate"] = float64(drops) / float64(l.enqueued+drops)
	}
	v["total_departed"] = float64(l.departed)
	window := end.Sub(c.info.Start).Seconds()
	if info.Rate > 0 && window > 0 {
		v["utilization"] = float64(l.departed) * 8 / (info.Rate * window)
	}
	v["total_queue_oscillations"] = float64(l.epochs.count(frac))
	v["total_loss_events"] = float64(l.lossEvents)
	if !c.b.series {
		return r
	}
	r.Series = []Series{
		l.qlen.series("queue_len", "packet", c.b),
		l.sojourn.series("queue_delay", "s", c.b),
		counterToSeries("drops", "packet", l.dropS, nbins, c.b, 1),
	}
	if info.Rate > 0 {
		r.Series = append(r.Series, counterToSeries("utilization", "1", l.departedS, nbins, c.b, 8/(info.Rate*c.info.Interval.Seconds())))
	}
	return r
}

// JainIndex returns Jain's fairness index (Σx)² / (n Σx²) of xs: 1 when all
// are equal, 1/n when one takes everything. It returns 0 for no values or
// all zeros.
func JainIndex(xs []float64) float64 {
	var s, s2 float64
	for _, x := range xs {
		s += x
		s2 += x * x
	}
	if len(xs) == 0 || s2 == 0 {
		return 0
	}
	return s * s / (float64(len(xs)) * s2)
}

func (c *Collector) finishNetwork(flows, links []Result, bneck LinkInfo, bl *Result) Result {
	r := Result{Scope: ScopeNetwork, Name: "network", Values: map[string]float64{}}
	v := r.Values
	var tputs []float64
	var agg, send, srttSum, lost, drops, pkts, retrans, rtos float64
	nsrtt := 0
	for _, f := range flows {
		tp := f.Values["mean_throughput"]
		tputs = append(tputs, tp)
		agg += tp
		send += f.Values["mean_send_rate"]
		if s, ok := f.Values["mean_srtt"]; ok {
			srttSum += s
			nsrtt++
		}
		lost += f.Values["total_lost"]
		drops += f.Values["total_link_drops"]
		pkts += f.Values["total_packets_sent"]
		retrans += f.Values["total_retransmissions"]
		rtos += f.Values["total_rtos"]
	}
	v["agg_throughput"] = agg
	v["agg_send_rate"] = send
	if len(flows) > 0 {
		v["jain_fairness"] = JainIndex(tputs)
	}
	if rate := c.bottleneckRate(bneck); rate > 0 {
		v["bw_utilization"] = agg / rate
	}
	if nsrtt > 0 {
		v["mean_srtt"] = srttSum / float64(nsrtt)
		if v["mean_srtt"] > 0 {
			v["power"] = agg / v["mean_srtt"]
		}
	}
	v["total_retransmissions"] = retrans
	v["total_rtos"] = rtos
	v["total_lost"] = lost
	v["total_link_drops"] = drops
	if pkts > 0 {
		v["loss_rate"] = drops / pkts
		v["declared_loss_rate"] = lost / pkts
	}
	var linkDrops, marks float64
	for _, l := range links {
		linkDrops += l.Values["total_drops"]
		marks += l.Values["total_marks"]
	}
	v["total_drops"] = linkDrops
	v["total_marks"] = marks
	if bl != nil {
		for _, name := range []string{"utilization", "mean_queue_delay", "mean_queue_len", "p50_queue_delay", "p95_queue_delay", "p99_queue_delay"} {
			if x, ok := bl.Values[name]; ok {
				v[name] = x
			}
		}
	}
	return r
}

// Locked wraps a Collector (or any Sink) with a mutex so several goroutines
// (a live run's sender, receiver and relay) can record into it.
type Locked struct {
	mu   sync.Mutex
	Sink event.Sink
}

// Record forwards e under the lock.
func (l *Locked) Record(e *event.Event) {
	l.mu.Lock()
	l.Sink.Record(e)
	l.mu.Unlock()
}
