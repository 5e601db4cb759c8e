// Package simrun is the harness's simulator backend: it builds a scenario
// point's topology with the simulator's dumbbell and chain builders, runs
// its flows with the shared transport in virtual time, and computes metrics
// from the emitted events with eval.Collector.
package simrun

import (
	"context"
	"fmt"
	"reflect"
	"time"

	"cclab/clock"
	"cclab/eval"
	"cclab/event"
	"cclab/internal/units"
	"cclab/qdisc"
	"cclab/sim"
	"cclab/traffic"
	"cclab/transport"
)

// Runner runs scenario points in the simulator. It is safe for concurrent
// use: every run builds its own engine.
type Runner struct{}

var _ eval.Runner = Runner{}

// cancelCheck is how often (virtual time) a run checks its context.
const cancelCheck = 100 * time.Millisecond

// flowSink remaps connection IDs to the scenario's flow numbers (1-based, in
// the order of the scenario's flows and their counts) and keeps only the
// events of measured links.
type flowSink struct {
	next  event.Sink
	flows map[uint64]uint64 // connection ID → flow number
	links map[int32]bool    // measured links
	// resolve maps a connection ID not in flows (a datagram-mode receiver's
	// connection, accepted inside the simulator) to its flow number.
	resolve func(id uint64) (uint64, bool)
}

// fixedSink gives every connection event of one sender the flow's number.
type fixedSink struct {
	fs  *flowSink
	num uint64
}

func (f fixedSink) Record(e event.Event) {
	if e.Flow != 0 {
		e.Flow = f.num
	}
	f.fs.next.Record(e)
}

func (s *flowSink) Record(e event.Event) {
	if e.Link >= 0 {
		switch e.Kind {
		case event.Enqueue, event.Drop, event.Mark, event.Dequeue, event.Departure:
			if !s.links[e.Link] {
				return
			}
		}
	}
	if e.Flow != 0 {
		n, ok := s.flows[e.Flow]
		if !ok && e.Link < 0 && s.resolve != nil {
			if n, ok = s.resolve(e.Flow); ok {
				s.flows[e.Flow] = n
			}
		}
		if !ok && e.Link < 0 {
			return // a connection that is not a measured flow
		}
		e.Flow = n // 0 for packets of no measured flow (e.g. ACKs)
	}
	s.next.Record(e)
}

// QueueLimit returns a queue spec's packet limit, or 0 if it has none (or is
// limited in bytes).
func QueueLimit(spec string) int {
	_, cfg, err := qdisc.Registry.Config(spec)
	if err != nil {
		return 0
	}
	v := reflect.ValueOf(cfg)
	if v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return 0
	}
	f := v.FieldByName("Limit")
	if f.IsValid() && f.Type() == reflect.TypeFor[qdisc.Limit]() {
		return f.Interface().(qdisc.Limit).Packets
	}
	return 0
}

// flowSize returns the bytes of a "greedy:N" spec, 0 for unlimited or other
// generators.
func flowSize(spec string) int64 {
	e, cfg, err := traffic.Registry.Config(spec)
	if err != nil || e.Name != "greedy" {
		return 0
	}
	if c, ok := cfg.(*traffic.GreedyConfig); ok {
		return int64(c.Bytes)
	}
	return 0
}

// built is a topology ready for flows.
type built struct {
	net        *sim.Network
	senders    []*sim.Node
	receivers  []*sim.Node
	measured   []*sim.Link // hop links, both directions
	bottleneck *sim.Link
	baseRTT    time.Duration // round-trip propagation delay of the end-to-end path
	minRate    float64       // the slowest hop's rate, bits/s
}

func build(e *sim.Engine, sc eval.Scenario, nflows int, seed uint64, sink event.Sink) (*built, error) {
	t := sc.Topology
	b := &built{}
	var d sim.Description
	var err error
	acc := t.Access
	switch t.Kind {
	case eval.KindDumbbell:
		h := t.Hops[0]
		cfg := sim.DumbbellConfig{Flows: nflows, Rate: h.Rate, Delay: h.Delay, Queue: h.Queue,
			AccessDelays: []time.Duration{acc.Delay}, AccessRate: acc.Rate, AccessQueue: acc.Queue, MTU: t.MTU}
		if d, err = cfg.Description(); err != nil {
			return nil, err
		}
		for i := range d.Links {
			if d.Links[i].Name == "left>right" {
				d.Links[i].Config.Loss = h.Loss
			}
		}
		b.baseRTT = cfg.BaseRTT(0)
	case eval.KindChain:
		h0 := t.Hops[0]
		cfg := sim.ChainConfig{Hops: len(t.Hops), Rate: h0.Rate, Delay: h0.Delay, Queue: h0.Queue, Flows: nflows,
			AccessDelay: acc.Delay, AccessRate: acc.Rate, AccessQueue: acc.Queue, MTU: t.MTU}
		if d, err = cfg.Description(); err != nil {
			return nil, err
		}
		b.baseRTT = 2 * acc.Delay
		for i, h := range t.Hops {
			fwd, rev := fmt.Sprintf("q%d>q%d", i, i+1), fmt.Sprintf("q%d>q%d", i+1, i)
			for j := range d.Links {
				switch d.Links[j].Name {
				case fwd:
					d.Links[j].Config.Rate, d.Links[j].Config.Delay, d.Links[j].Config.Queue, d.Links[j].Config.Loss = h.Rate, h.Delay, h.Queue, h.Loss
				case rev:
					d.Links[j].Config.Rate, d.Links[j].Config.Delay, d.Links[j].Config.Queue = h.Rate, h.Delay, h.Queue
				}
			}
			b.baseRTT += 2 * h.Delay
		}
	default:
		return nil, fmt.Errorf("simrun: topology kind %q not supported", t.Kind)
	}
	if b.net, err = sim.Build(e, d, sim.Options{Seed: seed, Sink: sink}); err != nil {
		return nil, err
	}
	switch t.Kind {
	case eval.KindDumbbell:
		for i := 0; i < nflows; i++ {
			b.senders = append(b.senders, b.net.Node(fmt.Sprintf("s%d", i)))
			b.receivers = append(b.receivers, b.net.Node(fmt.Sprintf("r%d", i)))
		}
		b.bottleneck = b.net.LinkByName("left>right")
		b.measured = []*sim.Link{b.bottleneck, b.net.LinkByName("right>left")}
		b.minRate = t.Hops[0].Rate
	case eval.KindChain:
		for i := 0; i < nflows; i++ {
			b.senders = append(b.senders, b.net.Node(fmt.Sprintf("m_s%d", i)))
			b.receivers = append(b.receivers, b.net.Node(fmt.Sprintf("m_r%d", i)))
		}
		for i, h := range t.Hops {
			fwd := b.net.LinkByName(fmt.Sprintf("q%d>q%d", i, i+1))
			b.measured = append(b.measured, fwd)
			if b.bottleneck == nil || h.Rate < b.minRate {
				b.bottleneck, b.minRate = fwd, h.Rate
			}
		}
		for i := range t.Hops {
			b.measured = append(b.measured, b.net.LinkByName(fmt.Sprintf("q%d>q%d", i+1, i)))
		}
	}
	return b, nil
}

// Run simulates one run of spec's point with spec's seed.
func (Runner) Run(ctx context.Context, spec eval.RunSpec) (eval.RunResult, error) {
	sc := spec.Point.Scenario
	nflows := 0
	for _, f := range sc.Flows {
		nflows += f.Count
	}
	e := sim.NewEngine()
	start := e.Now()
	end := start.Add(sc.Duration)
	info := eval.RunInfo{Start: start, End: end, Interval: sc.Interval}
	var col *eval.Collector // built once the topology and flows are known; nothing is emitted before
	fs := &flowSink{flows: map[uint64]uint64{}, links: map[int32]bool{}}
	fs.next = event.Func(func(ev event.Event) { col.Record(ev) })
	b, err := build(e, sc, nflows, spec.Seed, fs)
	if err != nil {
		return eval.RunResult{}, err
	}
	var res eval.RunResult
	for _, l := range b.measured {
		fs.links[l.ID] = true
		cfg := l.Config()
		info.Links = append(info.Links, eval.LinkInfo{Index: l.ID, Name: l.Name, Rate: cfg.Rate,
			QueueLimit: QueueLimit(cfg.Queue), BaseRTT: b.baseRTT})
		desc := fmt.Sprintf("rate=%s delay=%v queue=%s loss=%s", units.FormatRate(cfg.Rate), cfg.Delay, cfg.Queue, lossText(cfg.Loss))
		if l == b.bottleneck {
			desc = "bottleneck " + desc
		}
		res.Links = append(res.Links, eval.ScopeRecord{ID: int64(l.ID), Name: l.Name, Info: desc})
	}
	info.Bottleneck = b.bottleneck.ID
	s := sim.New(b.net, fs)
	s.Transport.Sink = fs
	k := 0
	var dg *sim.Dgram
	var dgramNums []uint64 // flow numbers of dg.Flows
	for _, f := range sc.Flows {
		for j := 0; j < f.Count; j++ {
			name := f.Name
			if f.Count > 1 {
				name = fmt.Sprintf("%s.%d", f.Name, j)
			}
			num := uint64(k + 1)
			g, err := traffic.New(f.Traffic, traffic.Env{Rand: traffic.Stream(spec.Seed, "traffic/"+name), MSS: f.Datagram})
			if err != nil {
				return eval.RunResult{}, fmt.Errorf("flow %s: %v", name, err)
			}
			switch f.Mode {
			case eval.ModeUDP:
				// Background traffic: the simulator's raw UDP flows emit no
				// transport events, so they have no flow metrics; their
				// packets count in the link metrics.
				dg, ok := g.(traffic.DatagramGen)
				if !ok {
					return eval.RunResult{}, fmt.Errorf("flow %s: traffic %q is not a datagram generator (cbr, udponoff, layered)", name, f.Traffic)
				}
				s.AddUDPFlow(name, b.senders[k], b.receivers[k], uint16(10000+k), dg, start.Add(f.Start))
				k++
				continue
			case eval.ModeDatagram:
				rate, err := eval.DatagramRate(f.Traffic)
				if err != nil {
					return eval.RunResult{}, fmt.Errorf("flow %s: %v", name, err)
				}
				if dg == nil {
					dg = sim.NewDgram(s)
					fs.resolve = func(id uint64) (uint64, bool) {
						for i, df := range dg.Flows {
							if df.Conn != nil && df.Conn.ID() == id {
								return dgramNums[i], true
							}
						}
						return 0, false
					}
				}
				cfg := transport.DgramConfig{CC: f.CC, Rate: rate, MaxDatagram: f.Datagram, Sink: fixedSink{fs, num}}
				df := dg.AddFlow(name, b.senders[k], b.receivers[k], cfg, start.Add(f.Start))
				dgramNums = append(dgramNums, num)
				fs.flows[sim.FlowKey(b.senders[k].ID, b.receivers[k].ID, sim.DgramPort)] = num
				fi := eval.FlowInfo{ID: num, Name: name, BottleneckRate: b.minRate, BaseRTT: b.baseRTT}
				if f.Stop > 0 {
					fi.Stop = start.Add(f.Stop)
					e.Schedule(fi.Stop, sim.HandlerFunc(func(now clock.Time, _ uint64) {
						if df.Conn != nil {
							df.Conn.Close(now)
						}
					}), 0)
				}
				info.Flows = append(info.Flows, fi)
				res.Flows = append(res.Flows, eval.ScopeRecord{ID: int64(num), Name: name,
					Info: fmt.Sprintf("mode=datagram cc=%s traffic=%s", f.CC, f.Traffic)})
				k++
				continue
			}
			sg, ok := g.(traffic.StreamGen)
			if !ok {
				return eval.RunResult{}, fmt.Errorf("flow %s: traffic %q is not a stream generator", name, f.Traffic)
			}
			cfg := transport.Config{CC: f.CC, Recovery: f.Recovery, MaxDatagram: f.Datagram, Sink: fs}
			tf := s.AddTCPFlow(name, b.senders[k], b.receivers[k], sg, cfg, start.Add(f.Start))
			tf.OnConn = func(_ *sim.TCPFlow, c *transport.Conn) { fs.flows[c.ID()] = num }
			// Data packets carry the simulator's flow key in links.
			fs.flows[sim.FlowKey(b.senders[k].ID, b.receivers[k].ID, sim.TransportPort)] = num
			fi := eval.FlowInfo{ID: num, Name: name, Size: flowSize(f.Traffic), BottleneckRate: b.minRate, BaseRTT: b.baseRTT}
			if f.Stop > 0 {
				fi.Stop = start.Add(f.Stop)
				e.Schedule(fi.Stop, sim.HandlerFunc(func(now clock.Time, _ uint64) {
					if c := tf.Conn(); c != nil {
						c.CloseWrite(now)
					}
				}), 0)
			}
			info.Flows = append(info.Flows, fi)
			res.Flows = append(res.Flows, eval.ScopeRecord{ID: int64(num), Name: name,
				Info: fmt.Sprintf("cc=%s recovery=%s traffic=%s", f.CC, f.Recovery, f.Traffic)})
			k++
		}
	}
	col = eval.NewCollector(info)
	for t := start; t < end; {
		if err := ctx.Err(); err != nil {
			return eval.RunResult{}, err
		}
		t = min(t.Add(cancelCheck), end)
		e.RunUntilTime(t)
	}
	res.Info = info
	res.Metrics = col.Finish()
	return res, nil
}

func lossText(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
