package ns3

import (
	"context"

	"cclab/clock"
	"cclab/event"
	"cclab/metrics"
	"cclab/plan"
	"cclab/qdisc"
	"cclab/scenario"
)

// Runner runs scenario points in ns-3: the harness backend "ns3"
// (scenario.BackendNS3). It is safe for concurrent use: every run is its
// own ns-3 process.
type Runner struct{}

// Run runs one run of spec's point with spec's seed in ns-3.
func (Runner) Run(ctx context.Context, spec scenario.RunSpec) (metrics.RunResult, error) {
	p, err := plan.New(spec.Point.Scenario, spec.Seed)
	if err != nil {
		return metrics.RunResult{}, err
	}
	res, err := Run(ctx, p)
	if err != nil {
		return metrics.RunResult{}, err
	}
	return Collect(p, res), nil
}

// Collect gives a run's series to metrics.Collector, the collector of
// every backend, as events at the sampling instants: per flow and interval
// one Delivered event with the bytes delivered in it, one Retransmit, RTO
// and RecoveryStart event per retransmission, timeout and recovery, and a
// MetricsUpdated event with cwnd, ssthresh and the smoothed RTT; per hop
// direction one Departure with the bytes sent and one Drop per packet
// dropped (queue: overflow; loss stage: random). Metrics of single packets
// (delays, sojourn times) are not available from ns-3's series and are
// absent.
func Collect(p *plan.Plan, r *Result) metrics.RunResult {
	start := clock.Start
	info := p.RunInfo(start)
	col := metrics.NewCollector(info)
	n := 0
	for _, s := range r.Flows {
		n = max(n, len(s))
	}
	for _, s := range r.Links {
		n = max(n, len(s))
	}
	prevF := map[uint64]FlowSample{}
	prevL := map[int32]LinkSample{}
	emit := func(e event.Event, times int64) {
		for range times {
			col.Observe(&e)
		}
	}
	for k := range n {
		for i := range p.Flows {
			id := p.Flows[i].ID
			s := r.Flows[id]
			if k >= len(s) {
				continue
			}
			cur, prev := s[k], prevF[id]
			t := start.Add(cur.T)
			emit(event.Event{Time: t, Kind: event.Delivered, Flow: id, Bytes: int(cur.Delivered - prev.Delivered)}, 1)
			emit(event.Event{Time: t, Kind: event.Retransmit, Flow: id}, cur.Retransmits-prev.Retransmits)
			emit(event.Event{Time: t, Kind: event.RTO, Flow: id}, cur.RTOs-prev.RTOs)
			emit(event.Event{Time: t, Kind: event.RecoveryStart, Flow: id}, cur.Recoveries-prev.Recoveries)
			emit(event.Event{Time: t, Kind: event.MetricsUpdated, Flow: id, Cwnd: cur.Cwnd, Ssthresh: cur.Ssthresh,
				SRTT: cur.SRTT}, 1)
			prevF[id] = cur
		}
		for _, h := range p.Links() {
			s := r.Links[h.ID]
			if k >= len(s) {
				continue
			}
			cur, prev := s[k], prevL[h.ID]
			t := start.Add(cur.T)
			emit(event.Event{Time: t, Kind: event.Departure, Link: h.ID, Bytes: int(cur.TxBytes - prev.TxBytes)}, 1)
			emit(event.Event{Time: t, Kind: event.Drop, Link: h.ID, Reason: uint8(qdisc.DropOverflow), QueueLen: cur.QueueLen},
				cur.QueueDrops-prev.QueueDrops)
			emit(event.Event{Time: t, Kind: event.Drop, Link: h.ID, Reason: uint8(qdisc.DropRandom)}, cur.LossDrops-prev.LossDrops)
			prevL[h.ID] = cur
		}
	}
	col.SetEnd(start.Add(p.Duration))
	return metrics.RunResult{Info: info, Metrics: col.Finish(), Notes: map[string]float64{"ns3_cpu_seconds": r.CPU.Seconds()}}
}
