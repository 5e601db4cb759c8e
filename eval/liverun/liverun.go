// Package liverun is the harness's live backend: it runs a scenario point in
// real time over loopback UDP sockets, in-process. The path is the
// bottleneck relay (relay, what cmd/bottleneck runs) shaping each
// hop with the link model; each flow is a real transport connection driven
// by the socket driver (transport/udp, what cmd/sender and cmd/receiver use)
// from its own socket to one receiving endpoint. The connections' events and
// the relay's link events go to eval.Collector, the same code that computes
// simulated metrics; the relay's hops carry the simulator's link IDs and
// names for the same topology, and link events carry flow numbers as in the
// simulator, so per-link metrics compare link by link.
package liverun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"cclab/clock"
	"cclab/eval"
	"cclab/eval/simrun"
	"cclab/event"
	"cclab/internal/units"
	"cclab/link"
	"cclab/relay"
	"cclab/sim"
	"cclab/traffic"
	"cclab/transport"
	"cclab/transport/udp"
)

// Runner runs scenario points live on loopback. Live runs take real time and
// share the machine: run them one at a time (eval.Sweep does).
type Runner struct {
	// Host is the loopback address to bind; "" means 127.0.0.1.
	Host string
	// Drain is how long to wait after the end of a run for the flows to
	// close before giving up on them; 0 means 5 s.
	Drain time.Duration

	onRelay func(*relay.Relay) // tests: called with the run's relay once it is running
}

var _ eval.Runner = Runner{}

// common is the run's clock: every endpoint's events are shifted onto it.
type common struct{ t0 time.Time }

func (c common) now() clock.Time { return clock.Start.Add(time.Since(c.t0)) }

// shiftSink moves an endpoint's event times onto the common clock and maps
// connection IDs to flow numbers.
type shiftSink struct {
	mu      *sync.Mutex
	col     *eval.Collector
	off     time.Duration     // common − endpoint clock
	fixed   uint64            // if set, every connection's events belong to this flow (a sender's own endpoint)
	flows   map[uint64]uint64 // otherwise: connection ID → flow number (the shared receiver)
	pending *[]event.Event    // events of connections not yet mapped (receiver side)
}

func (s *shiftSink) Record(e event.Event) {
	s.mu.Lock() // off and col are set under mu when the measurement starts
	defer s.mu.Unlock()
	e.Time = e.Time.Add(s.off)
	if e.Flow != 0 && s.fixed != 0 {
		e.Flow = s.fixed
	} else if e.Flow != 0 {
		n, ok := s.flows[e.Flow]
		if !ok {
			if s.pending != nil && len(*s.pending) < 1<<16 {
				*s.pending = append(*s.pending, e)
			}
			return
		}
		e.Flow = n
	}
	s.col.Record(e)
}

// linkSink is the relay's Config.Sink: it moves link events onto the common
// clock and replaces the relay's flow keys by flow numbers, as the
// simulator's runner does: a measured flow's data packets carry its number,
// every other packet (ACKs, unknown sources) 0. The relay calls it with its
// own lock held; mu serializes it with the endpoints' sinks.
type linkSink struct {
	mu    *sync.Mutex
	col   *eval.Collector
	off   time.Duration     // common − relay clock
	flows map[uint64]uint64 // relay flow key (forward direction) → flow number
}

func (s *linkSink) Record(e event.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.col == nil {
		return // before the measurement starts
	}
	e.Time = e.Time.Add(s.off)
	e.Flow = s.flows[e.Flow]
	s.col.Record(e)
}

// simLinks returns the simulator's link IDs and names of the scenario's hops
// in the relay's order (forward hops first to last, reverse hops last to
// first), looked up in the description the simulator builds for the same
// topology, and the ID of the bottleneck as the simulator's runner picks it
// (the first forward hop of the lowest rate).
func simLinks(t eval.Topology) (ids [2][]int32, names [2][]string, bottleneck int32, err error) {
	var d sim.Description
	n := len(t.Hops)
	fwd := func(i int) string { return fmt.Sprintf("q%d>q%d", i, i+1) }
	rev := func(i int) string { return fmt.Sprintf("q%d>q%d", i+1, i) }
	switch t.Kind {
	case eval.KindDumbbell:
		h := t.Hops[0]
		d, err = sim.DumbbellConfig{Flows: 1, Rate: h.Rate, Delay: h.Delay, Queue: h.Queue}.Description()
		fwd = func(int) string { return "left>right" }
		rev = func(int) string { return "right>left" }
	case eval.KindChain:
		h := t.Hops[0]
		d, err = sim.ChainConfig{Hops: n, Flows: 1, Rate: h.Rate, Delay: h.Delay, Queue: h.Queue}.Description()
	default:
		err = fmt.Errorf("topology kind %q not supported", t.Kind)
	}
	if err != nil {
		return ids, names, 0, fmt.Errorf("liverun: %v", err)
	}
	id := func(name string) (int32, error) {
		for i, l := range d.Links {
			if l.Name == name {
				return int32(i), nil
			}
		}
		return 0, fmt.Errorf("liverun: the simulator's %s topology has no link %q", t.Kind, name)
	}
	minRate := 0.0
	for i := 0; i < n; i++ {
		for dir, name := range [2]string{fwd(i), rev(n - 1 - i)} {
			x, err := id(name)
			if err != nil {
				return ids, names, 0, err
			}
			ids[dir] = append(ids[dir], x)
			names[dir] = append(names[dir], name)
		}
		if i == 0 || t.Hops[i].Rate < minRate {
			minRate, bottleneck = t.Hops[i].Rate, ids[0][i]
		}
	}
	return ids, names, bottleneck, nil
}

// offset estimates common − endpoint clock.
func offset(c common, ep *udp.Endpoint) time.Duration {
	a := c.now()
	b := ep.Now()
	return a.Sub(b)
}

func (r Runner) host() string {
	if r.Host == "" {
		return "127.0.0.1"
	}
	return r.Host
}

// hops returns the relay's per-direction hops for a scenario topology; the
// sender access delay is folded into the first hop of each direction.
func hops(t eval.Topology) ([2][]link.Config, float64, time.Duration, error) {
	var h [2][]link.Config
	minRate := 0.0
	rtt := 2 * t.Access.Delay
	for i, hop := range t.Hops {
		fwd := link.Config{Rate: hop.Rate, Delay: hop.Delay, Queue: hop.Queue, Loss: hop.Loss, MTU: t.MTU}
		rev := link.Config{Rate: hop.Rate, Delay: hop.Delay, Queue: hop.Queue, MTU: t.MTU}
		if i == 0 {
			fwd.Delay += t.Access.Delay
			rev.Delay += t.Access.Delay
		}
		h[0] = append(h[0], fwd)
		h[1] = append([]link.Config{rev}, h[1]...)
		if minRate == 0 || hop.Rate < minRate {
			minRate = hop.Rate
		}
		rtt += 2 * hop.Delay
	}
	if t.Access.Rate > 0 && t.Access.Rate < minRate {
		return h, 0, 0, fmt.Errorf("liverun: access rate %s below the bottleneck is not modelled live", units.FormatRate(t.Access.Rate))
	}
	return h, minRate, rtt, nil
}

// Run runs spec's point live: duration plus set-up and drain time.
func (r Runner) Run(ctx context.Context, spec eval.RunSpec) (eval.RunResult, error) {
	sc := spec.Point.Scenario
	for _, f := range sc.Flows {
		switch f.Mode {
		case eval.ModeStream:
			if _, cfg, err := traffic.Registry.Config(f.Traffic); err != nil {
				return eval.RunResult{}, err
			} else if _, ok := cfg.(*traffic.GreedyConfig); !ok {
				return eval.RunResult{}, fmt.Errorf("liverun: flow %s: traffic %q is not supported live (stream flows: greedy)", f.Name, f.Traffic)
			}
		case eval.ModeDatagram:
			if _, err := eval.DatagramRate(f.Traffic); err != nil {
				return eval.RunResult{}, fmt.Errorf("liverun: flow %s: %v", f.Name, err)
			}
		default:
			return eval.RunResult{}, fmt.Errorf("liverun: flow %s: mode %q is not supported live (stream, datagram)", f.Name, f.Mode)
		}
	}
	hopCfg, minRate, baseRTT, err := hops(sc.Topology)
	if err != nil {
		return eval.RunResult{}, err
	}
	linkIDs, linkNames, bneck, err := simLinks(sc.Topology)
	if err != nil {
		return eval.RunResult{}, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	var mu sync.Mutex
	flows := map[uint64]uint64{}
	var pending []event.Event
	var col *eval.Collector
	links := &linkSink{mu: &mu, flows: map[uint64]uint64{}}

	// Receiver.
	recvSink := &shiftSink{mu: &mu, flows: flows, pending: &pending}
	rcfg := transport.DefaultConfig()
	rcfg.MaxDatagram = 9000 // a connection uses the smaller of the two ends' sizes
	rcfg.Sink = recvSink
	recv, err := udp.Listen(netip.AddrPortFrom(netip.MustParseAddr(r.host()), 0).String(), udp.Config{
		Endpoint: transport.EndpointConfig{Server: true, Defaults: rcfg, Sink: recvSink}})
	if err != nil {
		return eval.RunResult{}, fmt.Errorf("liverun: receiver: %v", err)
	}
	defer recv.Close()

	// Relay.
	rl, err := relay.New(relay.Config{Listen: r.host() + ":0", Target: recv.LocalAddr().String(), Hops: hopCfg, Seed: spec.Seed,
		Sink: links, Links: linkIDs})
	if err != nil {
		return eval.RunResult{}, fmt.Errorf("liverun: relay: %v", err)
	}
	rl.Start()
	defer rl.Close()
	if r.onRelay != nil {
		r.onRelay(rl)
	}

	// Receiver: read every accepted connection (stream and datagram) to its end.
	var rwg sync.WaitGroup
	serveAll(ctx, &rwg, recv.Accept, func(c *udp.Conn, buf []byte) {
		for {
			if _, err := c.Read(buf); err != nil {
				if errors.Is(err, io.EOF) {
					c.CloseWrite() // our direction has no data: close it so the sender's Wait returns
				}
				return
			}
		}
	})
	serveAll(ctx, &rwg, recv.AcceptDgram, func(c *udp.DgramConn, buf []byte) {
		for {
			if _, _, err := c.Recv(ctx, buf); err != nil {
				return
			}
		}
	})

	// Senders: one socket each, all through the relay.
	type sender struct {
		name string
		num  uint64
		cfg  eval.Flow
		ep   *udp.Endpoint
		sink *shiftSink
	}
	var senders []*sender
	info := eval.RunInfo{Interval: sc.Interval, Bottleneck: bneck, BottleneckRate: minRate}
	var res eval.RunResult
	for dir := range hopCfg {
		for i, hc := range hopCfg[dir] {
			id := linkIDs[dir][i]
			info.Links = append(info.Links, eval.LinkInfo{Index: id, Name: linkNames[dir][i], Rate: hc.Rate,
				QueueLimit: simrun.QueueLimit(hc.Queue), BaseRTT: baseRTT})
			desc := fmt.Sprintf("rate=%s delay=%v queue=%s loss=%s (relay %s hop %d)", units.FormatRate(hc.Rate), hc.Delay, hc.Queue,
				lossText(hc.Loss), [2]string{"fwd", "rev"}[dir], i)
			if id == bneck {
				desc = "bottleneck " + desc
			}
			res.Links = append(res.Links, eval.ScopeRecord{ID: int64(id), Name: linkNames[dir][i], Info: desc})
		}
	}
	k := 0
	for _, f := range sc.Flows {
		for j := 0; j < f.Count; j++ {
			name := f.Name
			if f.Count > 1 {
				name = fmt.Sprintf("%s.%d", f.Name, j)
			}
			num := uint64(k + 1)
			k++
			s := &sender{name: name, num: num, cfg: f}
			s.sink = &shiftSink{mu: &mu, fixed: num}
			ep, err := udp.DialSocket(rl.Addr().String(), udp.Config{Endpoint: transport.EndpointConfig{Sink: s.sink}})
			if err != nil {
				return eval.RunResult{}, fmt.Errorf("liverun: flow %s: %v", name, err)
			}
			defer ep.Close()
			s.ep = ep
			mu.Lock()
			links.flows[rl.FlowKey(ep.LocalAddr(), relay.Fwd)] = num
			mu.Unlock()
			senders = append(senders, s)
			fi := eval.FlowInfo{ID: num, Name: name, BottleneckRate: minRate, BaseRTT: baseRTT}
			if f.Mode == eval.ModeStream {
				fi.Size = greedyBytes(f.Traffic) // as the simulator's runner: a sized flow has a completion time
			}
			info.Flows = append(info.Flows, fi)
			res.Flows = append(res.Flows, eval.ScopeRecord{ID: int64(num), Name: name,
				Info: fmt.Sprintf("mode=%s cc=%s recovery=%s traffic=%s", f.Mode, f.CC, f.Recovery, f.Traffic)})
		}
	}

	load1 := loadAverage()
	// Start the clock: the measurement window is [t0, t0+duration].
	cm := common{t0: time.Now()}
	info.Start = cm.now()
	info.End = info.Start.Add(sc.Duration)
	for i := range info.Flows {
		if f := senders[i].cfg; f.Stop > 0 {
			info.Flows[i].Stop = info.Start.Add(f.Stop)
		}
	}
	mu.Lock()
	col = eval.NewCollector(info)
	recvSink.col, recvSink.off = col, offset(cm, recv)
	links.col, links.off = col, cm.now().Sub(rl.Now())
	for _, s := range senders {
		s.sink.col, s.sink.off = col, offset(cm, s.ep)
	}
	mu.Unlock()

	errs := make(chan error, len(senders))
	var swg sync.WaitGroup
	for i, s := range senders {
		swg.Add(1)
		go func() {
			defer swg.Done()
			errs <- r.flow(ctx, cm, info, rl.Addr(), s.ep, s.cfg, s.num, spec.Seed+uint64(i), &mu, s.sink, recvSink, &pending)
		}()
	}
	swg.Wait()
	close(errs)
	var first error
	for err := range errs {
		if err != nil && first == nil {
			first = err
		}
	}
	res.Notes = notes(rl.Counters(), load1)
	cancel()
	rl.Close()
	recv.Close()
	rwg.Wait()
	if err := context.Cause(ctx); first == nil && err != nil && !errors.Is(err, context.Canceled) {
		first = err
	}
	if first != nil {
		return eval.RunResult{}, first
	}
	mu.Lock()
	res.Metrics = col.Finish()
	mu.Unlock()
	res.Info = info
	return res, nil
}

// flow runs one greedy flow: start at its offset, send until its stop (or
// the end of the run), close, and wait for the close to complete.
func (r Runner) flow(ctx context.Context, cm common, info eval.RunInfo, to netip.AddrPort, ep *udp.Endpoint, f eval.Flow,
	num, seed uint64, mu *sync.Mutex, sendSink, recvSink *shiftSink, pending *[]event.Event) error {
	if err := sleepUntil(ctx, cm, info.Start.Add(f.Start)); err != nil {
		return err
	}
	dctx, dcancel := context.WithTimeout(ctx, 10*time.Second)
	defer dcancel()
	stop := info.End
	if f.Stop > 0 {
		stop = info.Start.Add(f.Stop)
	}
	drain := r.Drain
	if drain <= 0 {
		drain = 5 * time.Second
	}
	if f.Mode == eval.ModeDatagram {
		rate, _ := eval.DatagramRate(f.Traffic)
		dc, err := ep.DialDgram(dctx, to, transport.DgramConfig{CC: f.CC, Rate: rate, MaxDatagram: f.Datagram, Sink: sendSink})
		if err != nil {
			return fmt.Errorf("flow %d: %v", num, err)
		}
		mapReceiver(mu, recvSink, pending, dc.ID(), num)
		dc.Do(func(now clock.Time, tc *transport.DgramConn) { tc.SetSource(now, &transport.StampSource{}) })
		if err := sleepUntil(ctx, cm, stop); err != nil {
			dc.Abort()
			return err
		}
		cctx, ccancel := context.WithTimeout(ctx, drain)
		defer ccancel()
		if err := dc.Close(cctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("flow %d: %v", num, err)
		}
		return nil
	}
	cfg := transport.Config{CC: f.CC, Recovery: f.Recovery, MaxDatagram: f.Datagram, Sink: sendSink}
	conn, err := ep.Dial(dctx, to, cfg)
	if err != nil {
		return fmt.Errorf("flow %d: %v", num, err)
	}
	mapReceiver(mu, recvSink, pending, conn.ID(), num)
	if size := greedyBytes(f.Traffic); size > 0 {
		conn.SetSource(transport.NewPatternSource(seed), size)
	} else {
		conn.SetSource(transport.NewPatternSource(seed), -1)
		if err := sleepUntil(ctx, cm, stop); err != nil {
			return err
		}
		conn.CloseWrite()
	}
	wctx, wcancel := context.WithTimeout(ctx, drain)
	defer wcancel()
	if err := conn.Wait(wctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("flow %d: %v", num, err)
	}
	return nil
}

// mapReceiver maps a connection ID to its flow at the shared receiver and
// replays the receiver's events that arrived before the mapping.
func mapReceiver(mu *sync.Mutex, recvSink *shiftSink, pending *[]event.Event, id, num uint64) {
	mu.Lock()
	defer mu.Unlock()
	recvSink.flows[id] = num
	// Replay the receiver's events that arrived before the mapping.
	keep := (*pending)[:0]
	for _, e := range *pending {
		if e.Flow == id {
			e.Flow = num
			recvSink.col.Record(e)
		} else {
			keep = append(keep, e)
		}
	}
	*pending = keep
}

func lossText(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// greedyBytes returns the bytes of a "greedy:N" spec, 0 for unlimited.
func greedyBytes(spec string) int64 {
	if _, cfg, err := traffic.Registry.Config(spec); err == nil {
		if c, ok := cfg.(*traffic.GreedyConfig); ok {
			return int64(c.Bytes)
		}
	}
	return 0
}

// Keys of a live run's notes (eval.RunResult.Notes).
const (
	NoteLoadStart = "host_load1_start" // 1-minute load average of the host when the run started (Linux)
	NoteLoadEnd   = "host_load1_end"   // the same when the flows ended
	NoteLate1ms   = "relay_late_1ms"   // fraction of the relay's writes more than 1 ms after their modelled instant
	NoteLateMax   = "relay_late_max_s" // the relay's largest write lateness, s
	NoteRelayPkts = "relay_packets"    // datagrams the relay wrote, both directions
)

// notes summarizes the run's conditions: host load and the relay's timing
// fidelity (how late it wrote packets against the link model's instants).
func notes(c relay.Counters, load1 float64) map[string]float64 {
	n := map[string]float64{}
	if load1 >= 0 {
		n[NoteLoadStart] = load1
	}
	if l := loadAverage(); l >= 0 {
		n[NoteLoadEnd] = l
	}
	var total, late int64
	for i, k := range c.Late {
		total += k
		if i >= len(relay.LateBuckets) || relay.LateBuckets[i] > time.Millisecond {
			late += k
		}
	}
	if total > 0 {
		n[NoteLate1ms] = float64(late) / float64(total)
	}
	n[NoteLateMax] = c.LateMax.Seconds()
	n[NoteRelayPkts] = float64(c.Sent[0] + c.Sent[1])
	return n
}

// loadAverage returns the host's 1-minute load average, or -1 if unknown.
func loadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return -1
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return -1
	}
	return v
}

func sleepUntil(ctx context.Context, cm common, t clock.Time) error {
	d := t.Sub(cm.now())
	if d <= 0 {
		return ctx.Err()
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// serveAll accepts connections until accept fails (the context ends or the
// endpoint closes) and drains each in its own goroutine, all tracked by wg.
func serveAll[C any](ctx context.Context, wg *sync.WaitGroup, accept func(context.Context) (C, error), drain func(c C, buf []byte)) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := accept(ctx)
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				drain(c, make([]byte, 64<<10))
			}()
		}
	}()
}
