package metrics

import (
	"sort"
	"sync"
	"time"

	"cclab/clock"
	"cclab/event"
	"cclab/qdisc"
	"cclab/scenario"
)

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
	tput := c.activeThroughput(f, from, to)
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
	r.Series = c.flowSeries(f, nbins)
	return r
}

// activeThroughput returns the throughput samples of f's active intervals
// from..to: the intervals with deliveries (deliveredS, in increasing order)
// and zeros between them.
func (c *Collector) activeThroughput(f *flowAcc, from, to clock.Time) sampleAcc {
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
	return tput
}

// flowSeries returns f's time series over nbins intervals.
func (c *Collector) flowSeries(f *flowAcc, nbins int) []Series {
	iv := c.info.Interval.Seconds()
	return []Series{
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
