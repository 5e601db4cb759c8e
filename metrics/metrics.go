// Package metrics computes a run's metrics from the shared event vocabulary
// by one code path for both backends (docs/metrics.md): the Collector, the
// metric catalog, DDSketch quantiles, packet traces, and statistics over
// repeated runs.
package metrics

import (
	"math"
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
	Series []Series           // time series (see seriesCatalog)
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
