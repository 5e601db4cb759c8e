// Package simrun is the harness's simulator backend: it builds a plan
// (package plan) on the discrete-event simulator, runs its flows with the
// shared transport in virtual time, and computes metrics from the emitted
// events with metrics.Collector, the same code that measures live runs
// (docs/architecture.md).
package simrun

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"cclab/clock"
	"cclab/event"
	"cclab/internal/qlog"
	"cclab/link"
	"cclab/metrics"
	"cclab/plan"
	"cclab/scenario"
	"cclab/sim"
	"cclab/traffic"
	"cclab/transport"
)

// Runner runs scenario points in the simulator. It is safe for concurrent
// use: every run builds its own engine.
type Runner struct{}

// Run simulates one run of spec's point with spec's seed.
func (Runner) Run(ctx context.Context, spec scenario.RunSpec) (metrics.RunResult, error) {
	p, err := plan.New(spec.Point.Scenario, spec.Seed)
	if err != nil {
		return metrics.RunResult{}, err
	}
	r, err := Build(p, Options{})
	if err != nil {
		return metrics.RunResult{}, err
	}
	return r.Run(ctx)
}

// Options are settings of one simulated run beyond its plan.
type Options struct {
	// Hash makes the run hash every event it sees (Sim.TraceHash), for
	// determinism checks.
	Hash bool
	// QlogDir, if set, receives one qlog file (JSON-SEQ) per stream flow,
	// named after the flow, with its sending side's events.
	QlogDir string
	// Sink, if set, also receives every measured event, with flow numbers
	// and link IDs of the plan (as metrics.Collector gets them).
	Sink event.Sink
	// NoSeries computes no time series, only the summary metrics
	// (metrics.RunInfo.NoSeries): for runs of thousands of flows.
	NoSeries bool
	// Generator, if set, may wrap each flow's traffic generator (tests
	// record the draws with it); it must return a generator of the same
	// kind (stream or datagram).
	Generator func(f *plan.Flow, g traffic.Generator) traffic.Generator
}

// cancelCheck is how often (virtual time) a run checks its context.
const cancelCheck = 100 * time.Millisecond

// Port of the first raw UDP flow; flow i uses UDPPort+i.
const UDPPort = 10000

// Sim is a plan built on the simulator, ready to run.
type Sim struct {
	Plan  *plan.Plan
	E     *sim.Engine
	Net   *sim.Network
	Sim   *sim.Sim
	Dgram *sim.Dgram // datagram-mode flows; nil if there are none
	// Links are the simulator links of the plan's hops, by link ID.
	Links []*sim.Link
	// Senders and Receivers are the hosts of the plan's flows (index: flow
	// number − 1).
	Senders, Receivers []*sim.Node
	// TCP, UDP and DgramFlows hold each flow's simulator flow of its mode
	// (index: flow number − 1; nil for the other modes).
	TCP   []*sim.TCPFlow
	UDP   []*sim.UDPFlow
	DFlow []*sim.DgramFlow

	opt   Options
	start clock.Time
	col   *metrics.Collector
	// keys map the simulator flow key of a flow's data packets to its
	// number: keys[src node ID] holds the key and the number (each flow
	// has a sender host of its own).
	keys []flowKey
	// conns maps the ID of a datagram-mode flow's connection (its
	// receiving side reports to endpointSink) to the flow's number: at
	// most one entry per datagram-mode flow, which dials once
	// (sim.DgramFlow).
	conns map[uint64]uint64
	dgram []int // indices of the datagram-mode flows
	// lastConn and lastNum are the latest connection looked up in conns
	// and its flow number.
	lastConn, lastNum uint64
	hops              int32 // link IDs below hops are the plan's hops
	// plain[k] is set for the link event kinds that linkSink gives the
	// collector as they are: those whose Flow (the simulator's flow key)
	// the collector does not use (metrics.UsesFlow), none with Options.Sink
	// (which gets every event with flow numbers). A table lookup: a
	// variable shift of a bit mask costs a few instructions more.
	plain [256]bool
	// noTee: Options.Sink is nil.
	noTee bool
	// ev is the copy of an event whose Flow a sink changes (a sink does
	// not change the emitter's event: event.Sink).
	ev      event.Event
	hash    hasher
	closers []interface{ Close() error }
}

// Build builds p on a new engine: the plan's routers and hops (link IDs and
// names as the plan gives them), a sender and a receiver host per flow with
// their access links, the flows and the hops' cross traffic.
func Build(p *plan.Plan, opt Options) (*Sim, error) {
	for _, f := range p.Flows {
		if f.Kernel != nil {
			return nil, fmt.Errorf("simrun: flow %s: stack kernel runs on the live backend only", f.Name)
		}
	}
	e := sim.NewEngine()
	s := &Sim{Plan: p, E: e, opt: opt, start: e.Now(), conns: map[uint64]uint64{},
		hops: int32(2 * len(p.Hops[plan.Fwd]))}
	s.hash.on = opt.Hash
	s.noTee = opt.Sink == nil
	if opt.Sink == nil {
		for k := range s.plain {
			s.plain[k] = !metrics.UsesFlow(event.Kind(k))
		}
	}
	info := p.RunInfo(s.start)
	info.NoSeries = opt.NoSeries
	s.col = metrics.NewCollector(info)
	quiet := func(id int32) bool { return !opt.Hash && id >= s.hops } // access links: not measured, only hashed
	net, err := sim.Build(e, Description(p), sim.Options{Seed: p.Seed, Sink: linkSink{s}, Quiet: quiet,
		PayloadOnly: p.PayloadOnly, BufSize: max(2048, p.MaxDatagram())})
	if err != nil {
		return nil, err
	}
	s.Net = net
	s.keys = make([]flowKey, len(net.Nodes))
	for _, h := range p.Links() {
		l := net.Links[h.ID]
		if l.Name != h.Name {
			return nil, fmt.Errorf("simrun: link %d is %q, the plan's hop %q", h.ID, l.Name, h.Name)
		}
		s.Links = append(s.Links, l)
	}
	s.Sim = sim.New(net, endpointSink{s})
	// Receiving endpoints accept the largest datagram a flow uses: the
	// handshake settles on the smaller of the two sides' sizes, so with
	// the transport's default of 1200 bytes on the receiving side a flow's
	// larger datagram (cclab sim -mss, a scenario's datagram:) was silently
	// cut to 1200.
	for _, f := range p.Flows {
		s.Sim.Transport.MaxDatagram = max(s.Sim.Transport.MaxDatagram, f.Datagram, f.PLPMTUMax)
	}
	for i := range p.Flows {
		s.Senders = append(s.Senders, net.Node(senderName(i)))
		s.Receivers = append(s.Receivers, net.Node(receiverName(i)))
	}
	s.TCP = make([]*sim.TCPFlow, len(p.Flows))
	s.UDP = make([]*sim.UDPFlow, len(p.Flows))
	s.DFlow = make([]*sim.DgramFlow, len(p.Flows))
	for i := range p.Flows {
		if err := s.addFlow(i); err != nil {
			s.close()
			return nil, fmt.Errorf("flow %s: %v", p.Flows[i].Name, err)
		}
	}
	for _, h := range p.Links() {
		for _, c := range h.Cross {
			if err := s.addCross(h, c); err != nil {
				return nil, fmt.Errorf("%s: %v", c.Name, err)
			}
		}
	}
	if p.Warmup > 0 {
		// The simulator reports a link's dequeues when the link is next
		// called (sim.Link): run every link up to the last instant before
		// the window, so that the collector has every queue event from
		// before the window when the window opens (the queue length held
		// into it).
		e.Schedule(info.Start-1, sim.HandlerFunc(func(now clock.Time, _ uint64) { net.Advance(now) }), 0)
	}
	return s, nil
}

func senderName(i int) string   { return "s" + strconv.Itoa(i) }
func receiverName(i int) string { return "r" + strconv.Itoa(i) }

// Description returns the simulator topology of a plan: its routers, its
// hops first (so that a hop's link index is its plan ID), then per flow
// i a sender host s<i> with an access link to the router before its first
// hop, and a receiver host r<i> behind the router after its last hop.
func Description(p *plan.Plan) sim.Description {
	var d sim.Description
	for _, r := range p.Routers {
		d.AddNode(r, sim.Router)
	}
	k := len(p.Hops[plan.Fwd])
	for i := 0; i < k; i++ {
		f, b := p.Hops[plan.Fwd][i], p.Hops[plan.Rev][k-1-i]
		d.Links = append(d.Links,
			sim.LinkDesc{Name: f.Name, From: f.From, To: f.To, Config: f.Link, Stream: f.Stream},
			sim.LinkDesc{Name: b.Name, From: b.From, To: b.To, Config: b.Link, Stream: b.Stream})
	}
	rcv := link.Config{Rate: p.Access.Rate, Queue: p.Access.Queue, MTU: p.MTU}
	for i, f := range p.Flows {
		snd := rcv
		snd.Delay = f.AccessDelay
		src, dst := d.AddNode(senderName(i), sim.Host), d.AddNode(receiverName(i), sim.Host)
		d.AddDuplex(src, p.Routers[f.First], snd, snd)
		d.AddDuplex(p.Routers[f.Last+1], dst, rcv, rcv)
	}
	return d
}

// addFlow adds flow i in its mode, starting and stopping at its offsets.
func (s *Sim) addFlow(i int) error {
	f := &s.Plan.Flows[i]
	src, dst := s.Senders[i], s.Receivers[i]
	start := s.start.Add(f.Start)
	g, err := traffic.New(f.Traffic, traffic.Env{Rand: s.Plan.Rand(f.TrafficStream), MSS: f.Datagram})
	if err != nil {
		return err
	}
	if s.opt.Generator != nil {
		g = s.opt.Generator(f, g)
	}
	var stop func(now clock.Time)
	switch f.Mode {
	case scenario.ModeUDP:
		dg, ok := g.(traffic.DatagramGen)
		if !ok {
			return fmt.Errorf("traffic %q is not a datagram generator (cbr, udponoff, layered)", f.Traffic)
		}
		port := uint16(UDPPort + i)
		u := s.Sim.AddUDPFlow(f.Name, src, dst, port, dg, start)
		u.Sink, u.Flow = s.flowSink(f), f.MetricID()
		s.UDP[i] = u
		s.keys[src.ID] = flowKey{sim.FlowKey(src.ID, dst.ID, port), f.MetricID()}
		stop = u.Stop
	case scenario.ModeDatagram:
		if s.Dgram == nil {
			s.Dgram = sim.NewDgram(s.Sim)
		}
		cfg := transport.DgramConfig{CC: f.CC, Rate: f.Rate, MaxDatagram: f.Datagram, PLPMTUMax: f.PLPMTUMax, Sink: s.flowSink(f)}
		df := s.Dgram.AddFlow(f.Name, src, dst, cfg, start)
		s.DFlow[i] = df
		s.dgram = append(s.dgram, i)
		s.keys[src.ID] = flowKey{sim.FlowKey(src.ID, dst.ID, sim.DgramPort), f.MetricID()}
		stop = func(now clock.Time) {
			if df.Conn != nil {
				df.Conn.Close(now)
			}
		}
	default:
		sg, ok := g.(traffic.StreamGen)
		if !ok {
			return fmt.Errorf("traffic %q is not a stream generator", f.Traffic)
		}
		sink := s.flowSink(f)
		if s.opt.QlogDir != "" && !f.Background { // background flows are measured through the links only
			w, err := s.qlog(f)
			if err != nil {
				return err
			}
			sink = event.Tee{w, sink}
		}
		cfg := transport.Config{CC: f.CC, Recovery: f.Recovery, MaxDatagram: cmp.Or(f.Datagram, transport.DefaultMaxDatagram),
			ECN: f.ECN, MinRTO: f.MinRTO, MaxWindow: f.Window, PLPMTUMax: f.PLPMTUMax, TCPHandshake: f.TCPHandshake, Sink: sink}
		full := s.Sim.Transport
		full.CC, full.Recovery = f.CC, f.Recovery
		if f.Datagram > 0 {
			full.MaxDatagram = f.Datagram
		}
		if err := full.Validate(); err != nil {
			return err
		}
		if f.SetsReceiving() || !f.Background {
			// The flow's receiving host accepts only its connections:
			// they report to the flow's sink (the endpoint's sink,
			// endpointSink, takes the events of the others).
			var recv event.Sink
			if !f.Background {
				recv = &flowSink{s, f.ID}
			}
			s.Sim.ConfigureReceiver(dst, func(rc *transport.Config) {
				if f.SetsReceiving() {
					rc.MaxDatagram = cfg.MaxDatagram // the flow's size (the one negotiated), so its window holds two
					f.Receive(rc)
				}
				rc.Sink = recv
			})
		}
		tf := s.Sim.AddTCPFlow(f.Name, src, dst, sg, cfg, start)
		s.TCP[i] = tf
		s.keys[src.ID] = flowKey{sim.FlowKey(src.ID, dst.ID, sim.TransportPort), f.MetricID()}
		stop = tf.Stop
	}
	if f.Stop > 0 {
		s.E.Schedule(s.start.Add(f.Stop), sim.HandlerFunc(func(now clock.Time, _ uint64) { stop(now) }), 0)
	}
	return nil
}

// qlog opens flow f's qlog file.
func (s *Sim) qlog(f *plan.Flow) (*qlog.Writer, error) {
	file, err := os.Create(filepath.Join(s.opt.QlogDir, f.Name+".qlog"))
	if err != nil {
		return nil, err
	}
	w := qlog.NewWriter(file, qlog.Header{Title: "cclab sim " + f.Name, VantagePoint: "client", GroupID: f.Name,
		CC: f.CC, Reference: clock.Start})
	s.closers = append(s.closers, w)
	return w, nil
}

// crossSource injects a datagram generator's packets into one hop's queue
// at their instants; after the hop they leave the network (the packets are
// addressed to the hop's far router).
type crossSource struct {
	s     *Sim
	l     *sim.Link
	gen   traffic.DatagramGen
	key   uint64
	timer sim.Timer
	next  clock.Time
	size  int
}

func (s *Sim) addCross(h *plan.Hop, c plan.Cross) error {
	g, err := traffic.New(c.Traffic, traffic.Env{Rand: s.Plan.Rand(c.Stream)})
	if err != nil {
		return err
	}
	dg, ok := g.(traffic.DatagramGen)
	if !ok {
		return fmt.Errorf("traffic %q is not a datagram generator (cbr, udponoff, layered)", c.Traffic)
	}
	src := &crossSource{s: s, l: s.Links[h.ID], gen: dg, key: c.Key}
	s.E.InitTimer(&src.timer, src, 0)
	src.next, src.size = dg.NextDatagram(s.start)
	src.timer.Set(src.next)
	return nil
}

// Fire injects the due datagram and schedules the next.
func (c *crossSource) Fire(now clock.Time, _ uint64) {
	pool := c.s.Net.Pool()
	p := pool.Get()
	p.Size = c.size + c.s.Net.Overhead
	p.Flow = c.key
	*pool.Meta(p) = sim.Meta{Src: c.l.From.ID, Dst: c.l.To.ID, Sent: now}
	c.l.Inject(now, p)
	c.next, c.size = c.gen.NextDatagram(now)
	c.timer.Set(c.next)
}

// Run runs the simulation to the end of the plan's duration (or, with
// UntilDone, until every stream flow has finished) and returns the metrics.
func (s *Sim) Run(ctx context.Context) (metrics.RunResult, error) {
	defer s.close()
	end := s.start.Add(s.Plan.Duration)
	for t := s.start; t < end; {
		if err := ctx.Err(); err != nil {
			return metrics.RunResult{}, err
		}
		t = min(t.Add(cancelCheck), end)
		if s.Plan.UntilDone {
			if s.E.RunUntilOrTimeout(s.Sim.AllFinished, t) {
				s.col.SetEnd(s.E.Now())
				break
			}
			continue
		}
		s.E.RunUntilTime(t)
	}
	s.Net.Advance(s.E.Now()) // the queue events up to the end of the window (sim.Link)
	if err := s.close(); err != nil {
		return metrics.RunResult{}, err
	}
	res := metrics.RunResult{Info: s.Plan.RunInfo(s.start), Metrics: s.col.Finish(), Notes: s.notes()}
	res.Info.End, res.Info.NoSeries = res.Metrics.End, s.opt.NoSeries
	res.Flows, res.Links = s.Plan.Describe()
	return res, nil
}

// Keys of a simulated run's notes (metrics.RunResult.Notes).
const (
	NoteEvents     = "sim_events"           // events the engine fired
	NoteTransfers  = "transfers_started"    // stream transfers (connections) started
	NoteCompleted  = "transfers_completed"  // stream transfers that finished
	NoteVerified   = "transfers_verified"   // finished connections whose received stream matched the sent one
	NoteMismatched = "transfers_mismatched" // finished connections whose streams differed (a transport bug)
)

func (s *Sim) notes() map[string]float64 {
	var started, completed int
	for _, f := range s.TCP {
		if f != nil {
			started += f.Stats.Transfers
			completed += f.Stats.Completed
		}
	}
	return map[string]float64{
		NoteEvents: float64(s.E.Fired()), NoteTransfers: float64(started), NoteCompleted: float64(completed),
		NoteVerified: float64(s.Sim.Integrity.Verified), NoteMismatched: float64(s.Sim.Integrity.Mismatched),
	}
}

// close closes the qlog writers once.
func (s *Sim) close() error {
	var first error
	for _, c := range s.closers {
		if err := c.Close(); err != nil && first == nil {
			first = err
		}
	}
	s.closers = nil
	return first
}

// TraceHash returns the hash of every event of the run (transport, queue
// and link events, in the order they were emitted) as 16 hex digits, and
// the number of events; "" if Options.Hash was off.
func (s *Sim) TraceHash() (string, uint64) {
	if !s.opt.Hash {
		return "", s.hash.n
	}
	h, _ := s.hash.h.Sum()
	return fmt.Sprintf("%016x", h), s.hash.n
}

// flowSink returns the sink of flow f's sending side: its events carry its
// number, or, for a background flow (measured through the links only), are
// hashed and dropped.
func (s *Sim) flowSink(f *plan.Flow) event.Sink {
	if f.Background {
		return hashSink{s}
	}
	return &flowSink{s, f.ID}
}

// hashSink hashes and counts events and drops them.
type hashSink struct{ s *Sim }

func (h hashSink) Record(e *event.Event) { h.s.hash.add(e) }

// flowSink gives every event of a flow's sending side (and of its
// receiving connections) the flow's number. It is used by pointer (a
// value in an interface is called through a wrapper).
type flowSink struct {
	s   *Sim
	num uint64
}

func (f *flowSink) Record(e *event.Event) {
	s := f.s
	s.hash.add(e)
	if e.Flow != 0 {
		if s.noTee { // the common case
			s.col.ObserveFlow(e, f.num)
			return
		}
		e = s.renumber(e, f.num)
	}
	s.col.Observe(e)
	s.tee(e)
}

// endpointSink takes the endpoints' events (and those of receiving
// connections without a flow sink: datagram-mode flows'): it maps
// connection IDs to flow numbers and drops the events of unknown connections.
type endpointSink struct{ s *Sim }

func (es endpointSink) Record(e *event.Event) {
	s := es.s
	s.hash.add(e)
	if e.Flow != 0 {
		n := s.lastNum
		if e.Flow != s.lastConn { // a connection's events come in runs
			var ok bool
			n, ok = s.conns[e.Flow]
			if !ok {
				if n, ok = s.dgramFlow(e.Flow); !ok {
					return // a connection that is not a measured flow (background)
				}
				s.conns[e.Flow] = n
			}
			s.lastConn, s.lastNum = e.Flow, n
		}
		if s.noTee {
			s.col.ObserveFlow(e, n)
			return
		}
		e = s.renumber(e, n)
	}
	s.col.Observe(e)
	s.tee(e)
}

// dgramFlow finds the datagram-mode flow whose connection has ID id (its
// receiver accepts it inside the simulator). It searches the datagram-mode
// flows only: the events of connections of no measured flow (a background
// flow's receiving side) come here one by one.
func (s *Sim) dgramFlow(id uint64) (uint64, bool) {
	for _, i := range s.dgram {
		if df := s.DFlow[i]; df.Conn != nil && df.Conn.ID() == id {
			return s.Plan.Flows[i].ID, true
		}
	}
	return 0, false
}

// linkSink takes every link's events: it keeps those of the plan's hops and
// replaces the simulator's flow keys by flow numbers (0 for packets of no
// flow: ACKs, cross traffic) where they are used (metrics.UsesFlow, or all for
// Options.Sink).
type linkSink struct{ s *Sim }

func (ls linkSink) Record(e *event.Event) {
	s := ls.s
	s.hash.add(e)
	if uint32(e.Link) >= uint32(s.hops) { // not a hop (a negative Link too)
		return
	}
	if s.plain[e.Kind] { // the common case: a queue event, no Options.Sink
		s.col.Observe(e)
		return
	}
	e = s.renumber(e, s.flowOf(e.Flow))
	s.col.Observe(e)
	s.tee(e)
}

// renumber returns a copy of *e (s.ev) whose Flow is flow: a sink does not
// change the emitter's event (event.Sink).
func (s *Sim) renumber(e *event.Event, flow uint64) *event.Event {
	s.ev = *e
	s.ev.Flow = flow
	return &s.ev
}

// tee gives a measured event (one the sinks gave the collector) to
// Options.Sink, if set. The sinks call the collector themselves: a function
// making both calls would not be inlined, and its call cost more per event
// than the collector's lookups.
func (s *Sim) tee(e *event.Event) {
	if s.opt.Sink != nil {
		s.opt.Sink.Record(e)
	}
}

// flowKey is a flow's data packets' simulator flow key and its number.
type flowKey struct {
	key, num uint64
}

// flowOf returns the number of the flow whose data packets carry the
// simulator flow key k, or 0 (ACKs, cross traffic).
func (s *Sim) flowOf(k uint64) uint64 {
	src := sim.FlowKeySource(k)
	if src >= 0 && int(src) < len(s.keys) && s.keys[src].key == k {
		return s.keys[src].num
	}
	return 0
}

// hasher hashes the run's events (event.Hasher) when on, and counts them.
type hasher struct {
	on bool
	n  uint64
	h  event.Hasher
}

func (h *hasher) add(e *event.Event) {
	h.n++
	if h.on {
		h.h.Record(e)
	}
}
