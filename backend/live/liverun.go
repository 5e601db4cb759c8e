// Package liverun is the harness's live backend: it runs a scenario point in
// real time over loopback UDP sockets, in-process. It turns the point into a
// plan (package plan) and configures the bottleneck relay (relay, what
// cmd/bottleneck runs) from it: every hop of each direction with the link
// model, the hops' cross traffic, and an entry address per partial path.
// Each flow is a real transport connection driven by the socket driver
// (transport/udp, what cmd/sender and cmd/receiver use) from its own socket
// to one receiving endpoint. The connections' events and the relay's link
// events go to metrics.Collector, the same code that measures simulated runs,
// under the plan's link IDs and flow numbers (docs/architecture.md).
package liverun

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"slices"
	"sync"
	"time"

	"cclab/clock"
	"cclab/event"
	"cclab/internal/units"
	"cclab/metrics"
	"cclab/netio"
	"cclab/plan"
	"cclab/relay"
	"cclab/scenario"
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
	// injectLate starves the run deliberately (tests of the host-limited
	// mark): added to every relay write's and timed wake-up's lateness
	// (relay.Config.InjectWriteLate, udp.Config.InjectTimerLate).
	injectLate time.Duration
}

// common is the run's clock: every endpoint's events are shifted onto it.
type common struct{ t0 time.Time }

func (c common) now() clock.Time { return clock.Start.Add(time.Since(c.t0)) }

// wall returns the wall-clock instant of t on the common clock.
func (c common) wall(t clock.Time) time.Time { return c.t0.Add(t.Sub(clock.Start)) }

// errNotConnected is a flow's result when its handshake had no answer
// (the transport gave up, transport.ErrHandshakeTimeout, or the flow's stop
// came first): under an unresponsive flow at the link rate a
// connection's handshake packets may all be dropped (as in the simulator,
// where it retries to the end). The run goes on; the flow delivered
// nothing, and the run's note NoteUnconnected counts it.
var errNotConnected = errors.New("no answer to the handshake before the flow's stop")

// errResetUnconfirmed is an unconnected flow's result (errNotConnected)
// when the receiver answered it with a stateless reset
// (transport.ErrStatelessReset) before confirming the handshake: the client
// had the Accept but heard nothing after it, every packet it sent since
// was lost until the receiver no longer held the half-open connection. The
// run's note NoteUnconnectedReset counts these among NoteUnconnected.
var errResetUnconfirmed = fmt.Errorf("%w: reset by the receiver before it confirmed the handshake", errNotConnected)

// streamEnd classifies the end of stream flow name: err is its
// connection's error (nil, or context.DeadlineExceeded when its drain
// ran out) and confirmed whether the receiver answered after the Accept
// (the client received a packet from it). A stateless reset of an
// unconfirmed connection is errResetUnconfirmed, with the reset kept in the
// message; any other error fails the run.
func streamEnd(name string, err error, confirmed bool) error {
	switch {
	case err == nil || errors.Is(err, context.DeadlineExceeded):
		return nil
	case !confirmed && errors.Is(err, transport.ErrStatelessReset):
		return fmt.Errorf("flow %s: %w (%v)", name, errResetUnconfirmed, err)
	}
	return fmt.Errorf("flow %s: %v", name, err)
}

// shiftSink moves an endpoint's event times onto the common clock and maps
// connection IDs to flow numbers.
type shiftSink struct {
	mu      *sync.Mutex
	col     *metrics.Collector
	off     time.Duration     // common − endpoint clock
	fixed   uint64            // if set, every connection's events belong to this flow (a sender's own endpoint)
	flows   map[uint64]uint64 // otherwise: connection ID → flow number (the shared receiver)
	pending *[]event.Event    // events of connections not yet mapped (receiver side)
}

// dropFlow is the flow number of a background flow's connections: their
// endpoint events are dropped (a background flow is measured through the
// links only, as in the simulator: plan.Flow.MetricID).
const dropFlow = ^uint64(0)

func (s *shiftSink) Record(ep *event.Event) {
	s.mu.Lock() // off and col are set under mu when the measurement starts
	defer s.mu.Unlock()
	if s.fixed == dropFlow {
		return
	}
	e := *ep // the emitter's: changed in a copy (event.Sink)
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
		if n == dropFlow {
			return
		}
		e.Flow = n
	}
	s.col.Record(&e)
}

// linkSink is the relay's Config.Sink: it moves link events onto the common
// clock and replaces the relay's flow keys by flow numbers, as the
// simulator's runner does: a measured flow's data packets carry its number,
// every other packet (ACKs, unknown sources) 0. The relay calls it with its
// own lock held; mu serializes it with the endpoints' sinks.
type linkSink struct {
	mu    *sync.Mutex
	col   *metrics.Collector
	off   time.Duration     // common − relay clock
	flows map[uint64]uint64 // relay flow key (forward direction) → flow number
	// drops counts the links' drops by relay flow key over the whole run
	// (the collector counts only the measurement window's): the raw UDP
	// flows' accounting (udpAccount).
	drops map[uint64]int64
}

func (s *linkSink) Record(ep *event.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.col == nil {
		return // before the measurement starts
	}
	e := *ep // the emitter's: changed in a copy (event.Sink)
	if e.Kind == event.Drop {
		s.drops[e.Flow]++
	}
	e.Time = e.Time.Add(s.off)
	e.Flow = s.flows[e.Flow]
	s.col.Record(&e)
}

// RelayConfig returns the relay configuration of a plan: its hops per
// direction with the plan's link IDs and random streams, the hops' cross
// traffic, and an entry for every distinct partial path of its flows. The
// sender access delay is folded into the first forward hop and the last
// reverse hop (the relay has no access links), so every flow entering the
// path at hop 0 must have the same access delay and the others none. Listen
// addresses are host:0. entry[i] is the index in Config.Entries of the
// address flow i (Plan.Flows[i]) dials; -1 for Listen. Raw UDP flows
// (mode udp) always dial an entry of their own kind, whose Target the
// caller sets to their receiver.
func RelayConfig(p *plan.Plan, host string) (cfg relay.Config, entry []int, err error) {
	k := len(p.Hops[plan.Fwd])
	cfg = relay.Config{Listen: net.JoinHostPort(host, "0"), Seed: p.Seed, PayloadOnly: p.PayloadOnly}
	// Every live flow is a client of the relay from one host (loopback):
	// the relay's per-host bound, made against port floods, must not evict
	// the run's own sessions. Two sessions a flow leave room for a
	// connection's control exchanges.
	cfg.MaxClients = max(relay.DefaultMaxClients, 2*len(p.Flows)+16)
	cfg.MaxClientsPerHost = cfg.MaxClients
	acc := time.Duration(-1)
	for _, f := range p.Flows {
		switch {
		case f.First > 0 && f.AccessDelay != 0:
			return cfg, nil, fmt.Errorf("liverun: flow %s enters at hop %d with an access delay of %v: the relay folds access delay into hop 0 only", f.Name, f.First, f.AccessDelay)
		case f.First == 0 && acc >= 0 && f.AccessDelay != acc:
			return cfg, nil, fmt.Errorf("liverun: flows with different access delays (%v and %v) are not modelled live", acc, f.AccessDelay)
		case f.First == 0:
			acc = f.AccessDelay
		}
	}
	if p.Access.Rate > 0 && p.Access.Rate < p.BottleneckRate {
		return cfg, nil, fmt.Errorf("liverun: access rate %s below the bottleneck is not modelled live", units.FormatRate(p.Access.Rate))
	}
	acc = max(acc, 0)
	for dir := range p.Hops {
		for i, h := range p.Hops[dir] {
			lc := h.Link
			if (dir == plan.Fwd && i == 0) || (dir == plan.Rev && i == k-1) {
				lc.Delay += acc
			}
			cfg.Hops[dir] = append(cfg.Hops[dir], lc)
			cfg.Links[dir] = append(cfg.Links[dir], h.ID)
			cfg.Streams[dir] = append(cfg.Streams[dir], h.Stream)
			for _, c := range h.Cross {
				cfg.Cross = append(cfg.Cross, relay.CrossConfig{Gen: c.Traffic, Hop: i, Dir: plan.DirNames[dir], Stream: c.Stream, Flow: c.Key})
			}
		}
	}
	// Raw UDP flows go to their own receiver: through entries of their own
	// (Run sets their Target), on every path.
	entries := map[[3]int]int{}
	for _, f := range p.Flows {
		udpFlow := 0
		if f.Mode == scenario.ModeUDP {
			udpFlow = 1
		}
		if f.EndToEnd(k) && udpFlow == 0 {
			entry = append(entry, -1)
			continue
		}
		key := [3]int{f.First, f.Last, udpFlow}
		e, ok := entries[key]
		if !ok {
			e = len(cfg.Entries)
			entries[key] = e
			cfg.Entries = append(cfg.Entries, relay.Entry{Listen: cfg.Listen, First: f.First, Last: f.Last})
		}
		entry = append(entry, e)
	}
	return cfg, entry, nil
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

// Run runs spec's point live: duration plus set-up and drain time.
func (r Runner) Run(ctx context.Context, spec scenario.RunSpec) (metrics.RunResult, error) {
	p, err := plan.New(spec.Point.Scenario, spec.Seed)
	if err != nil {
		return metrics.RunResult{}, err
	}
	if err := checkLive(p); err != nil {
		return metrics.RunResult{}, err
	}
	relayCfg, entries, err := RelayConfig(p, r.host())
	if err != nil {
		return metrics.RunResult{}, err
	}
	ctx, cancel := context.WithCancel(ctx)
	lr := &liveRun{r: r, p: p, ctx: ctx, cancel: cancel, flowOf: map[uint64]uint64{}, host: r.host()}
	lr.links = &linkSink{mu: &lr.mu, flows: map[uint64]uint64{}, drops: map[uint64]int64{}}
	lr.recvSink = &shiftSink{mu: &lr.mu, flows: lr.flowOf, pending: &lr.pending}
	defer lr.close()
	shell := hasKernel(p)
	if shell { // the whole run crosses a link shell (shell.go)
		if err := lr.startShell(relayCfg, entries); err != nil {
			return metrics.RunResult{}, err
		}
	}
	if err := lr.listen(); err != nil {
		return metrics.RunResult{}, err
	}
	if !shell {
		if err := lr.startRelay(relayCfg, entries); err != nil {
			return metrics.RunResult{}, err
		}
	}
	lr.serveReceivers()
	if err := lr.serveKernel(); err != nil {
		return metrics.RunResult{}, err
	}
	if err := lr.dialSenders(entries); err != nil {
		return metrics.RunResult{}, err
	}
	load1 := loadAverage()
	info := lr.startClock()
	unconnected, reset, first := lr.runSenders(info)
	var udpAcc udpAccount
	if len(lr.udpFlows) > 0 {
		udpAcc = lr.drainUDP(udpDrain)
	}
	res := metrics.RunResult{Info: info}
	res.Flows, res.Links = p.Describe()
	res.Notes = notes(lr.rl.Counters(), load1)
	hostNotes(res.Notes, hostReport(lr.rl, lr.endpoints()))
	res.Notes[NoteUnconnected] = float64(unconnected)
	if reset > 0 {
		res.Notes[NoteUnconnectedReset] = float64(reset)
	}
	lr.stop()
	if len(lr.udpFlows) > 0 {
		res.Notes[NoteUDPBad] = float64(lr.badUDP)
		res.Notes[NoteUDPUnaccounted] = float64(udpAcc.unaccounted())
		res.Notes[NoteUDPRecvDrops] = float64(udpAcc.recvDrops)
		var late time.Duration
		for _, u := range lr.udpFlows {
			late = max(late, u.late.Max)
		}
		res.Notes[NoteUDPSendLate] = late.Seconds()
	}
	if err := context.Cause(ctx); first == nil && err != nil && !errors.Is(err, context.Canceled) {
		first = err
	}
	if first != nil {
		return metrics.RunResult{}, first
	}
	lr.mu.Lock()
	res.Metrics = lr.col.Finish()
	lr.mu.Unlock()
	return res, nil
}

// checkLive refuses what the live backend does not model: stream flows of
// a generator other than greedy, until_done, and tcp_handshake (its
// unpadded Initial gives a server no amplification budget, RFC 9000 §8.1
// and §14.1: cclab's receivers reject it, docs/compat.md "Handshake
// timing").
func checkLive(p *plan.Plan) error {
	for _, f := range p.Flows {
		if f.TCPHandshake {
			return fmt.Errorf("liverun: flow %s: tcp_handshake is simulation-only: its Initial is unpadded, and a receiver on a real network rejects an Initial not padded to its datagram size (the amplification rule, RFC 9000 §8.1 and §14.1); leave it out for live runs", f.Name)
		}
		if f.Mode == scenario.ModeStream && f.Size == 0 {
			if _, cfg, err := traffic.Registry.Config(f.Traffic); err != nil {
				return err
			} else if _, ok := cfg.(*traffic.GreedyConfig); !ok {
				return fmt.Errorf("liverun: flow %s: traffic %q is not supported live (stream flows: greedy)", f.Name, f.Traffic)
			}
		}
	}
	if p.UntilDone {
		return fmt.Errorf("liverun: until_done is not supported live (sized flows end by themselves)")
	}
	return nil
}

// liveRun is one live run's state, built step by step by Run.
type liveRun struct {
	r      Runner
	p      *plan.Plan
	ctx    context.Context
	cancel context.CancelFunc
	closes []func() // closed in reverse order when Run returns

	mu       sync.Mutex // serializes the sinks (and guards col, the sinks' offsets and flow maps)
	flowOf   map[uint64]uint64
	pending  []event.Event
	col      *metrics.Collector
	links    *linkSink
	recvSink *shiftSink

	host     string         // the address the receivers listen on
	shell    *linkShell     // the link shell the run crosses (a run with kernel flows), or nil
	recv     *udp.Endpoint  // the receiver of stream and datagram flows
	urecv    *netio.UDPConn // the raw UDP flows' receiver
	uentries []int          // the relay entries of the raw UDP flows
	rl       *relay.Relay
	rwg      sync.WaitGroup // the receivers' goroutines
	senders  []*sender
	udpFlows map[uint64]*udpFlow
	badUDP   int64
	cm       common
}

// sender is one flow's sending side: a socket through the relay's address
// for its path.
type sender struct {
	f    *plan.Flow
	to   netip.AddrPort
	ep   *udp.Endpoint
	u    *udpFlow // a raw UDP flow's sender (ep nil)
	sink *shiftSink
}

// close releases what the run opened, the last first.
func (lr *liveRun) close() {
	for i := len(lr.closes) - 1; i >= 0; i-- {
		lr.closes[i]()
	}
	lr.cancel()
}

// listen opens the receivers: the transport receiver (it accepts ECN from
// the senders that ask for it) and the raw UDP flows' receiver.
func (lr *liveRun) listen() error {
	rcfg := transport.DefaultConfig()
	rcfg.MaxDatagram = 9000 // a connection uses the smaller of the two ends' sizes
	rcfg.ECN = true
	rcfg.Sink = lr.recvSink
	ecfg := ReceiverLimits(lr.p)
	ecfg.Server, ecfg.Defaults, ecfg.Sink, ecfg.Configure = true, rcfg, lr.recvSink, receiverConfig(lr.p)
	recv, err := udp.Listen(netip.AddrPortFrom(netip.MustParseAddr(lr.host), 0).String(), udp.Config{Endpoint: ecfg})
	if err != nil {
		return fmt.Errorf("liverun: receiver: %v", err)
	}
	lr.recv = recv
	lr.closes = append(lr.closes, func() { recv.Close() })
	// netio's socket: big receive buffer, and its drops counted
	// (netio.ReceiveDrops, udpAccount).
	urecv, err := netio.ListenUDP(netip.AddrPortFrom(netip.MustParseAddr(lr.host), 0).String())
	if err != nil {
		return fmt.Errorf("liverun: UDP receiver: %v", err)
	}
	lr.urecv = urecv
	lr.closes = append(lr.closes, func() { urecv.Close() })
	return nil
}

// ReceiverLimits returns the receiver endpoint's admission limits for
// plan p (docs/security.md "Admission"): every flow of a run arrives from
// one address (the relay's sessions, or the senders' loopback), so the
// per-source and per-prefix limits, made against floods from one host,
// are raised to the run's size, as RelayConfig raises the relay's per-host
// bound: two connections a flow (a connection and a lingering one) and
// every flow's handshake at once, never below the transport's defaults.
// Nothing is evicted for being idle then: the limits hold the whole run.
func ReceiverLimits(p *plan.Plan) transport.EndpointConfig {
	n := 2*len(p.Flows) + 16
	conns, half := max(transport.DefaultMaxConns, n), max(transport.DefaultMaxHalfOpen, n)
	return transport.EndpointConfig{MaxConns: conns, MaxConnsPerSource: conns, MaxConnsPerPrefix: conns,
		MaxHalfOpen: half, MaxHalfOpenPerSource: half, MaxHalfOpenPerPrefix: half}
}

// startRelay starts the relay in front of the receivers; the raw UDP flows'
// entries lead to their own receiver.
func (lr *liveRun) startRelay(cfg relay.Config, entries []int) error {
	for i, f := range lr.p.Flows {
		if f.Mode == scenario.ModeUDP {
			cfg.Entries[entries[i]].Target = lr.urecv.LocalAddr().String()
			if !slices.Contains(lr.uentries, entries[i]) {
				lr.uentries = append(lr.uentries, entries[i])
			}
		}
	}
	cfg.Target = lr.recv.LocalAddr().String()
	cfg.Sink = lr.links
	cfg.InjectWriteLate = lr.r.injectLate
	rl, err := relay.New(cfg)
	if err != nil {
		return fmt.Errorf("liverun: relay: %v", err)
	}
	rl.Start()
	lr.rl = rl
	lr.closes = append(lr.closes, func() { rl.Close() })
	if lr.r.onRelay != nil {
		lr.r.onRelay(rl)
	}
	return nil
}

// serveReceivers reads every accepted connection (stream and datagram) to
// its end.
func (lr *liveRun) serveReceivers() {
	serveAll(lr.ctx, &lr.rwg, lr.recv.Accept, func(c *udp.Conn, buf []byte) {
		for {
			if _, err := c.Read(buf); err != nil {
				if errors.Is(err, io.EOF) {
					c.CloseWrite() // our direction has no data: close it so the sender's Wait returns
				}
				return
			}
		}
	})
	serveAll(lr.ctx, &lr.rwg, lr.recv.AcceptDgram, func(c *udp.DgramConn, buf []byte) {
		for {
			if _, _, err := c.Recv(lr.ctx, buf); err != nil {
				return
			}
		}
	})
}

// dialSenders opens each flow's socket through the relay's address for its
// path, and maps its relay flow key to its flow number.
func (lr *liveRun) dialSenders(entries []int) error {
	lr.udpFlows = map[uint64]*udpFlow{}
	for i := range lr.p.Flows {
		f := &lr.p.Flows[i]
		s := &sender{f: f, to: lr.entry(entries[i], f)}
		s.sink = &shiftSink{mu: &lr.mu, fixed: f.ID}
		if f.Background {
			s.sink.fixed = dropFlow
		}
		lr.senders = append(lr.senders, s)
		if f.Kernel != nil {
			continue // connects at its start (kernelFlow)
		}
		var local netip.AddrPort
		err := lr.inShell(func() error {
			if f.Mode == scenario.ModeUDP {
				u, err := newUDPFlow(lr.p, f, lr.senderHost(), net.UDPAddrFromAddrPort(s.to), s.sink)
				if err != nil {
					return fmt.Errorf("liverun: %v", err)
				}
				lr.closes = append(lr.closes, func() { u.conn.Close() })
				s.u, lr.udpFlows[f.ID] = u, u
				local = u.conn.LocalAddr().(*net.UDPAddr).AddrPort()
				return nil
			}
			ep, err := udp.DialSocket(s.to.String(), udp.Config{Endpoint: transport.EndpointConfig{Sink: s.sink}, InjectTimerLate: lr.r.injectLate})
			if err != nil {
				return fmt.Errorf("liverun: flow %s: %v", f.Name, err)
			}
			lr.closes = append(lr.closes, func() { ep.Close() })
			s.ep = ep
			local = ep.LocalAddr()
			return nil
		})
		if err != nil {
			return err
		}
		key := lr.flowKey(local, s.to, f)
		if s.u != nil {
			s.u.key = key
		}
		lr.mu.Lock()
		lr.links.flows[key] = f.MetricID()
		lr.mu.Unlock()
	}
	return nil
}

// startClock starts the run's common clock and the collector (the
// measurement window is [t0+warm-up, t0+duration]), puts every sink on the
// common clock, and starts the raw UDP receiver.
func (lr *liveRun) startClock() metrics.RunInfo {
	lr.cm = common{t0: time.Now()}
	info := lr.p.RunInfo(lr.cm.now())
	lr.mu.Lock()
	lr.col = metrics.NewCollector(info)
	lr.recvSink.col, lr.recvSink.off = lr.col, offset(lr.cm, lr.recv)
	lr.links.col, lr.links.off = lr.col, lr.cm.now().Sub(lr.rl.Now())
	for _, s := range lr.senders {
		s.sink.col = lr.col
		if s.ep != nil {
			s.sink.off = offset(lr.cm, s.ep) // a raw UDP flow's events are on the common clock already
		}
	}
	lr.mu.Unlock()
	lr.rwg.Add(1)
	go func() {
		defer lr.rwg.Done()
		udpReceiver(lr.urecv.Raw(), lr.cm, lr.udpFlows, &lr.badUDP)
	}()
	return info
}

// runSenders runs every flow to its end and returns the number of flows
// whose handshake had no answer (errNotConnected), how many of them the
// receiver reset (errResetUnconfirmed), and the first other error.
func (lr *liveRun) runSenders(info metrics.RunInfo) (unconnected, reset int, first error) {
	errs := make(chan error, len(lr.senders))
	var swg sync.WaitGroup
	start := info.Start.Add(-lr.p.Warmup)
	for _, s := range lr.senders {
		swg.Add(1)
		go func() {
			defer swg.Done()
			if s.f.Kernel != nil {
				errs <- lr.kernelFlow(s, start, info.End)
				return
			}
			if s.u != nil {
				if err := sleepUntil(lr.ctx, lr.cm, start.Add(s.f.Start)); err != nil {
					errs <- err
					return
				}
				errs <- s.u.send(lr.ctx, lr.cm, start, info.End)
				return
			}
			errs <- lr.r.flow(lr.ctx, lr.cm, start, info.End, s.to, s.ep, s.f, lr.p.Rand(s.f.DataStream).Uint64(), &lr.mu, s.sink, lr.recvSink, &lr.pending)
		}()
	}
	swg.Wait()
	close(errs)
	for err := range errs {
		switch {
		case errors.Is(err, errNotConnected):
			unconnected++
			if errors.Is(err, errResetUnconfirmed) {
				reset++
			}
		case err != nil && first == nil:
			first = err
		}
	}
	return unconnected, reset, first
}

// endpoints returns the run's transport endpoints: the receiver's and the
// senders'.
func (lr *liveRun) endpoints() []*udp.Endpoint {
	eps := []*udp.Endpoint{lr.recv}
	for _, s := range lr.senders {
		if s.ep != nil {
			eps = append(eps, s.ep)
		}
	}
	return eps
}

// stop ends the run: the relay and the receivers close and their
// goroutines end.
func (lr *liveRun) stop() {
	lr.cancel()
	lr.stopShell()
	lr.rl.Close()
	lr.recv.Close()
	lr.urecv.Close()
	lr.rwg.Wait()
}

// flow runs one greedy flow: start at its offset, send until its stop (or
// the end of the run), close, and wait for the close to complete.
func (r Runner) flow(ctx context.Context, cm common, start, end clock.Time, to netip.AddrPort, ep *udp.Endpoint, f *plan.Flow,
	seed uint64, mu *sync.Mutex, sendSink, recvSink *shiftSink, pending *[]event.Event) error {
	num := f.ID
	if f.Background {
		num = dropFlow
	}
	if err := sleepUntil(ctx, cm, start.Add(f.Start)); err != nil {
		return err
	}
	stop := end
	if f.Stop > 0 {
		stop = start.Add(f.Stop)
	}
	// The handshake may retry until the flow's stop (at least 10 s).
	deadline := cm.wall(stop)
	if min10 := time.Now().Add(10 * time.Second); deadline.Before(min10) {
		deadline = min10
	}
	dctx, dcancel := context.WithDeadline(ctx, deadline)
	defer dcancel()
	dialErr := func(err error) error {
		if ctx.Err() == nil && (dctx.Err() != nil || errors.Is(err, transport.ErrHandshakeTimeout)) {
			return errNotConnected
		}
		return fmt.Errorf("flow %s: %v", f.Name, err)
	}
	drain := r.Drain
	if drain <= 0 {
		drain = 5 * time.Second
	}
	if f.Mode == scenario.ModeDatagram {
		dc, err := ep.DialDgram(dctx, to, transport.DgramConfig{CC: f.CC, Rate: f.Rate, MaxDatagram: f.Datagram, PLPMTUMax: f.PLPMTUMax, Sink: sendSink})
		if err != nil {
			return dialErr(err)
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
			return fmt.Errorf("flow %s: %v", f.Name, err)
		}
		return nil
	}
	cfg := transport.Config{CC: f.CC, Recovery: f.Recovery, MaxDatagram: f.Datagram, ECN: f.ECN, MinRTO: f.MinRTO, MaxWindow: f.Window, PLPMTUMax: f.PLPMTUMax, Sink: sendSink}
	if f.SetsReceiving() {
		cfg.Request = binary.AppendUvarint(nil, f.ID) // the receiver picks the flow's settings by it (receiverConfig)
	}
	conn, err := ep.Dial(dctx, to, cfg)
	if err != nil {
		return dialErr(err)
	}
	mapReceiver(mu, recvSink, pending, conn.ID(), num)
	if f.Size > 0 {
		conn.SetSource(transport.NewPatternSource(seed), f.Size)
	} else {
		conn.SetSource(transport.NewPatternSource(seed), -1)
		if err := sleepUntil(ctx, cm, stop); err != nil {
			return err
		}
		conn.CloseWrite()
	}
	wait := drain
	if f.Size > 0 {
		// A sized transfer has until the flow's stop (the end of the run)
		// to finish, then the drain, as in the simulator (not the drain
		// alone: a 250 kB transfer at 2 Mbit/s and 160 ms was cut at 5 s).
		wait += max(0, stop.Sub(cm.now()))
	}
	wctx, wcancel := context.WithTimeout(ctx, wait)
	defer wcancel()
	err = conn.Wait(wctx)
	return streamEnd(f.Name, err, conn.Stats().PacketsReceived > 0)
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
			recvSink.col.Record(&e)
		} else {
			keep = append(keep, e)
		}
	}
	*pending = keep
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

// receiverConfig returns the shared receiver's Configure hook: a stream
// flow with receiver settings names itself in its request (its plan flow
// ID, a uvarint), and its connection gets the flow's delayed-ACK policy and
// receive window (as the simulator's per-flow receiver,
// sim.ConfigureReceiver).
func receiverConfig(p *plan.Plan) func([]byte, *transport.Config) {
	return func(request []byte, cfg *transport.Config) {
		id, n := binary.Uvarint(request)
		if n <= 0 || n != len(request) || id == 0 || id > uint64(len(p.Flows)) {
			return
		}
		f := &p.Flows[id-1]
		if f.ID != id || !f.SetsReceiving() {
			return
		}
		cfg.MaxDatagram = cmp.Or(f.Datagram, transport.DefaultMaxDatagram) // the size negotiated, so the window holds two
		f.Receive(cfg)
	}
}
