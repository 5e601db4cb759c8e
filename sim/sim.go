package sim

import (
	"fmt"
	"time"

	"cclab/clock"
	"cclab/event"
	"cclab/qdisc"
	"cclab/traffic"
	"cclab/transport"
)

// TransportPort is the UDP port every host's transport endpoint listens on.
const TransportPort = 4433

// Sim is a network with hosts running transport endpoints and traffic
// generators: the simulator's driver. Endpoints are driven through exactly
// the public API the live driver uses (docs/architecture.md): datagrams in with
// Receive, datagrams out with Transmit, OnDeadline at Deadline.
type Sim struct {
	E   *Engine
	Net *Network
	// Sink receives every event: links, queues and connections. Set it
	// before adding flows.
	Sink event.Sink
	// Transport is the base connection config (CC, Recovery, ...) of flows
	// added with a zero Config.
	Transport transport.Config
	TCP       []*TCPFlow
	UDP       []*UDPFlow
	// Integrity counts finished connections whose stream was checked end to
	// end: the bytes the receiving application read are compared with the
	// sender's pattern stream at their offset, and the byte count the
	// receiver delivered with the one the sender sent. By default the
	// senders write only the pattern's stamps (transport.SampledSource: 8
	// bytes in every 512, so the payload's bytes stay out of the cache) and
	// the receivers compare those; with FullPayload every byte is written
	// and compared (transport.PatternSource). Either way the transport
	// computes no digest in the simulator (Transport.Digest "none").
	Integrity struct {
		Verified, Mismatched int
	}
	// FullPayload makes stream senders write every payload byte of the
	// pattern and receivers compare every byte (see Integrity). Set it
	// before adding flows; the trace is the same either way.
	FullPayload bool
	pending     map[uint64]streamCheck // the first side's check, by connection ID
	patterns    map[uint64]uint64      // the seed of each open connection's pattern stream, by connection ID

	stacks []*Stack
	bufs   *transport.Buffers // connection buffers, shared by every host's endpoint (one goroutine drives them all)
}

// New returns a simulator driving n (which must have been built on e). The
// network's links must have been built with the same sink (Options.Sink)
// if link events are wanted.
func New(n *Network, sink event.Sink) *Sim {
	if sink == nil {
		sink = event.Discard
	}
	tc := transport.DefaultConfig()
	tc.Digest = "none" // the simulator checks every byte (Sim.Integrity)
	return &Sim{E: n.E, Net: n, Sink: sink, Transport: tc, stacks: make([]*Stack, len(n.Nodes)),
		pending:  map[uint64]streamCheck{},
		patterns: map[uint64]uint64{}, bufs: transport.NewBuffers()}
}

// Stack is a host's protocol stack: one transport endpoint on
// TransportPort and raw UDP receivers on other ports.
type Stack struct {
	sim  *Sim
	node *Node
	ep   *transport.Endpoint
	// doneSeen is ep.Finished() when service last looked for finished
	// senders: until it changes none has finished since.
	doneSeen uint32
	timer    Timer
	udp      map[uint16]*UDPFlow
	accepted []acceptedConn // incoming conns: read and closed by the stack
	// configure, if set, adjusts the config of each incoming connection
	// (Sim.ConfigureReceiver).
	configure func(*transport.Config)
	senders   []*TCPFlow      // flows sending from this host
	readers   []*streamReader // finished conns' readers, for reuse
}

func (s *Sim) stack(n *Node) *Stack {
	st := s.stacks[n.ID]
	if st == nil {
		st = &Stack{sim: s, node: n, udp: map[uint16]*UDPFlow{}}
		s.stacks[n.ID] = st
		n.Receiver = st
	}
	return st
}

// endpoint returns the host's transport endpoint, creating it on first use.
func (st *Stack) endpoint() *transport.Endpoint {
	if st.ep == nil {
		defaults := st.sim.Transport
		defaults.Sink = nil // accepted (receiving) conns report to the endpoint's sink
		st.ep = transport.NewEndpoint(transport.EndpointConfig{
			Server:    true,
			Defaults:  defaults,
			Sink:      st.sim.Sink,
			Rand:      traffic.Stream(st.sim.Net.Seed, "endpoint/"+st.node.Name),
			Configure: st.acceptConfig,
			NoRetry:   true, // no attacker on simulated paths: no Retry round trip
			// nor an amplification budget to keep: a flow may send its
			// Initial unpadded (transport.Config.TCPHandshake)
			AcceptUnpaddedInitial: true,
			Buffers:               st.sim.bufs,
		})
		st.sim.E.InitTimer(&st.timer, st, 0)
	}
	return st.ep
}

// acceptConfig configures an incoming connection: it may use ECN when its
// client asks for it (RFC 3168 §6.1.1: the server agrees if it supports
// ECN), so that ECN is a per-flow choice of the sender
// (transport.Config.ECN); then the host's ConfigureReceiver hook applies.
func (st *Stack) acceptConfig(_ []byte, cfg *transport.Config) {
	cfg.ECN = true
	if st.configure != nil {
		st.configure(cfg)
	}
}

// ConfigureReceiver sets f to adjust the config of every connection host n
// accepts (e.g. a flow's receive window and delayed-ACK policy); f runs
// after the endpoint's defaults (Sim.Transport) are applied.
func (s *Sim) ConfigureReceiver(n *Node, f func(*transport.Config)) {
	s.stack(n).configure = f
}

// Receive implements Receiver: hand the datagram to the endpoint or to a
// raw UDP flow's receiver.
func (st *Stack) Receive(now clock.Time, p *qdisc.Packet) {
	m := st.sim.Net.pool.Meta(p)
	if m.DstPort == TransportPort {
		if st.ep == nil {
			st.node.Dropped++
			return
		}
		st.ep.Receive(now, AddrPort(m.Src, m.SrcPort), p.ECN, p.Buf)
		st.service(now)
		return
	}
	if f := st.udp[m.DstPort]; f != nil {
		f.receive(now, p, m)
		return
	}
	st.node.Dropped++
}

// Fire runs the endpoint's timers.
func (st *Stack) Fire(now clock.Time, _ uint64) {
	st.ep.OnDeadline(now)
	st.service(now)
}

// service runs the driver loop after any input: let receivers read, drain
// Transmit onto the network, notice finished transfers, re-arm the timer.
func (st *Stack) service(now clock.Time) {
	ep := st.ep
	for c := ep.Accept(); c != nil; c = ep.Accept() {
		var r *streamReader
		if k := len(st.readers); k > 0 {
			r = st.readers[k-1]
			st.readers = st.readers[:k-1]
			*r = streamReader{}
		} else {
			r = &streamReader{}
		}
		if seed, ok := st.sim.patterns[c.ID()]; ok {
			r.want, r.known, r.full = *transport.NewSampledSource(seed), true, st.sim.FullPayload
		}
		c.SetConsumer(r)
		st.accepted = append(st.accepted, acceptedConn{c: c, r: r})
	}
	if len(st.accepted) > 0 {
		st.readAll(now)
	}
	st.transmit(now)
	if n := ep.Finished(); n != st.doneSeen {
		// A connection has finished since the last look (a sender's, or
		// an accepted one): look for finished senders. Without a change
		// no sender's connection can have become done (issue #29: every
		// call read each sender's flow and connection).
		st.doneSeen = n
		finished := false
		for _, f := range st.senders {
			if f.conn != nil && f.conn.Done() {
				f.finish(now)
				finished = true
			}
		}
		if finished {
			st.transmit(now)
		}
	}
	st.timer.Set(ep.Deadline())
}

// readAll follows every accepted conn (a reader that never falls behind:
// its streamReader takes each byte as it arrives) and closes our direction
// once the peer's FIN has been read.
func (st *Stack) readAll(now clock.Time) {
	k := 0
	for i := range st.accepted {
		a := &st.accepted[i]
		c := a.c
		if c.EOF() && !a.closed {
			c.CloseWrite(now)
			a.closed = true
		}
		if !c.Done() {
			if k != i {
				st.accepted[k] = *a
			}
			k++
		} else {
			if c.Err() == nil {
				n, r := c.BytesDelivered(), a.r
				ok := r.known && !r.bad && r.off == n
				st.sim.verify(c.ID(), streamCheck{n, ok})
			}
			c.Release() // the endpoint reuses it once removed
			st.readers = append(st.readers, a.r)
		}
	}
	if k < len(st.accepted) { // some finished: compact
		clear(st.accepted[k:])
		st.accepted = st.accepted[:k]
	}
}

// acceptedConn is an incoming conn, its reader, and whether we closed our
// side.
type acceptedConn struct {
	c      *transport.Conn
	r      *streamReader
	closed bool
}

// streamReader is the receiving application of an incoming conn: it checks
// the bytes against the sender's pattern stream at their offset (its stamps,
// or with full every byte) where they lie, in the datagram or the receive
// ring (transport.Conn.SetConsumer: nothing is copied out).
type streamReader struct {
	want  transport.SampledSource // the sender's stream, if known
	known bool                    // false: the stream cannot be verified
	full  bool                    // compare every byte (Sim.FullPayload), not the stamps
	off   uint64                  // bytes consumed so far
	bad   bool                    // a byte differed from the pattern, or arrived out of order
}

// Consume implements transport.Consumer.
func (r *streamReader) Consume(off uint64, p []byte) {
	if r.known && !r.bad {
		if r.full {
			r.bad = off != r.off || !r.want.Pattern().Equal(int64(off), p)
		} else {
			r.bad = off != r.off || !r.want.Equal(int64(off), p)
		}
	}
	r.off = off + uint64(len(p))
}

// StampsOnly implements transport.StampConsumer: without full, Consume
// reads the stamps alone, so the connection stores only them of data that
// arrives out of order.
func (r *streamReader) StampsOnly() bool { return !r.full }

// transmit drains the endpoint's datagrams onto the network.
func (st *Stack) transmit(now clock.Time) { st.sim.Net.transmit(now, st.ep, st.node, TransportPort) }

// transmit drains ep's datagrams onto the network from node, with source
// port srcPort. A datagram to an address outside the simulation counts in
// node.Dropped.
func (n *Network) transmit(now clock.Time, ep *transport.Endpoint, node *Node, srcPort uint16) {
	pool := &n.pool
	for {
		if n.spare == nil {
			n.spare = pool.Get()
		}
		p := n.spare
		size, to, cp := ep.Transmit(now, p.Buf[:cap(p.Buf)])
		if size == 0 {
			return // p stays the spare for the next call
		}
		dst := NodeID(to)
		if dst < 0 || int(dst) >= len(n.Nodes) {
			node.Dropped++ // not a simulated address: nowhere to route it
			continue
		}
		n.spare = nil
		p.Buf = p.Buf[:size]
		p.Size = size + n.Overhead
		p.ECN = cp
		p.Flow = flowKey(node.ID, dst, srcPort)
		*pool.Meta(p) = Meta{Src: node.ID, Dst: dst, SrcPort: srcPort, DstPort: to.Port(), Sent: now}
		n.forward(now, node, p, dst)
	}
}

// TCPStats are a stream flow's counters over all its transfers.
type TCPStats struct {
	Transfers    int           // transfers started
	Completed    int           // transfers finished (all data acknowledged, conn closed)
	Failed       int           // transfers whose conn failed (Err != nil)
	FCTSum       time.Duration // sum of completion times of completed byte-limited transfers
	BytesOffered int64         // bytes of completed byte-limited transfers
}

// TCPFlow runs a traffic.StreamGen's transfers as reliable connections from
// Src to Dst, one connection per transfer.
type TCPFlow struct {
	Name     string
	Index    int
	Src, Dst *Node
	Gen      traffic.StreamGen
	Config   transport.Config // CC, Recovery, Sink, ... for this flow's conns
	Stats    TCPStats
	// OnConn, if set, is called with each new connection (e.g. to map its
	// ID to the flow for metrics). The connection is the flow's until its
	// transfer finishes; the flow then releases it (transport.Conn.Release)
	// and its memory serves a later connection: keep its ID, not c.
	OnConn func(f *TCPFlow, c *transport.Conn)

	sim   *Sim
	timer Timer
	conn  *transport.Conn
	// src is the current transfer's stream (the connection reads it until
	// it is done, the flow rewrites it only for the next transfer): no
	// allocation per transfer. Its stamps, or its full pattern with
	// Sim.FullPayload.
	src     transport.SampledSource
	cur     traffic.Transfer
	started clock.Time
	seed    uint64
	closeAt clock.Time // end of a time-limited ON period; Never if none
	active  bool
	// exhausted: the generator has no more transfers
	exhausted bool
	stopped   bool // Stop was called: no more transfers
}

// Finished reports whether the flow's generator has no more transfers and
// the last one has finished.
func (f *TCPFlow) Finished() bool { return f.exhausted && f.conn == nil }

// AllFinished reports whether every stream flow has finished (see
// TCPFlow.Finished); with unlimited generators it never becomes true.
func (s *Sim) AllFinished() bool {
	for _, f := range s.TCP {
		if !f.Finished() {
			return false
		}
	}
	return true
}

// Conn returns the flow's current connection, or nil between transfers
// (valid until its transfer finishes: see OnConn).
func (f *TCPFlow) Conn() *transport.Conn { return f.conn }

// AddTCPFlow attaches gen as a stream flow from src to dst; cfg's zero
// fields take Sim.Transport's values. The first transfer is drawn at start.
func (s *Sim) AddTCPFlow(name string, src, dst *Node, gen traffic.StreamGen, cfg transport.Config, start clock.Time) *TCPFlow {
	if cfg.Sink == nil {
		cfg.Sink = s.Transport.Sink
	}
	f := &TCPFlow{Name: name, Index: len(s.TCP), Src: src, Dst: dst, Gen: gen, Config: cfg, sim: s}
	f.seed = traffic.Stream(s.Net.Seed, "data/"+name).Uint64()
	s.E.InitTimer(&f.timer, f, 0)
	s.stack(src).endpoint()
	s.stack(dst).endpoint()
	s.stack(src).senders = append(s.stack(src).senders, f)
	s.TCP = append(s.TCP, f)
	f.next(start)
	return f
}

// Stop ends the flow at now: its current transfer closes its sending side
// (the data already written is still delivered) and no further transfer
// starts.
func (f *TCPFlow) Stop(now clock.Time) {
	f.stopped = true
	if f.conn != nil && f.active {
		f.conn.CloseWrite(now)
		f.closeAt = clock.Never
		f.sim.stack(f.Src).service(now)
		return
	}
	f.exhausted = true
	f.timer.Set(clock.Never)
}

// next draws the next transfer and schedules its start.
func (f *TCPFlow) next(now clock.Time) {
	if f.stopped {
		f.exhausted = true
		return
	}
	t, ok := f.Gen.NextTransfer(now)
	if !ok {
		f.exhausted = true
		return
	}
	f.cur = t
	f.active = false
	f.timer.Set(max(t.Start, now))
}

// Fire starts a transfer, or ends a time-limited ON period.
func (f *TCPFlow) Fire(now clock.Time, _ uint64) {
	st := f.sim.stack(f.Src)
	if f.active {
		if f.conn != nil && f.closeAt != clock.Never && now >= f.closeAt {
			f.conn.CloseWrite(now)
			f.closeAt = clock.Never
			st.service(now)
		}
		return
	}
	ep := st.endpoint()
	c, err := ep.Dial(now, AddrPort(f.Dst.ID, TransportPort), f.Config)
	f.Stats.Transfers++
	if err != nil {
		f.Stats.Failed++
		f.next(now)
		return
	}
	f.seed++
	length := f.cur.Bytes
	if length == 0 {
		length = -1 // unlimited until CloseWrite
	}
	f.src = *transport.NewSampledSource(f.seed)
	if f.sim.FullPayload {
		c.SetSource(f.src.Pattern(), length)
	} else {
		c.SetSource(&f.src, length)
	}
	f.sim.patterns[c.ID()] = f.seed
	f.conn, f.active, f.started, f.closeAt = c, true, now, clock.Never
	if f.cur.Duration > 0 {
		f.closeAt = now.Add(f.cur.Duration)
		f.timer.Set(f.closeAt)
	}
	if f.OnConn != nil {
		f.OnConn(f, c)
	}
	st.service(now)
}

// finish records a finished transfer and draws the next.
func (f *TCPFlow) finish(now clock.Time) {
	c := f.conn
	f.conn = nil
	delete(f.sim.patterns, c.ID()) // the receiver took it when it accepted the conn
	if c.Err() != nil {
		f.Stats.Failed++
	} else {
		f.sim.verify(c.ID(), streamCheck{c.BytesSent(), true})
		f.Stats.Completed++
		if f.cur.Bytes > 0 {
			f.Stats.FCTSum += now.Sub(f.started)
			f.Stats.BytesOffered += f.cur.Bytes
		}
	}
	c.Release() // the endpoint reuses it once removed
	f.next(now)
}

// streamCheck is one side's integrity record of a connection's stream:
// the bytes it sent or delivered and, for the receiver, whether every byte
// matched the sender's pattern.
type streamCheck struct {
	bytes uint64
	ok    bool
}

// verify matches the two sides' records of connection id.
func (s *Sim) verify(id uint64, d streamCheck) {
	p, ok := s.pending[id]
	if !ok {
		s.pending[id] = d
		return
	}
	delete(s.pending, id)
	if p == d {
		s.Integrity.Verified++
	} else {
		s.Integrity.Mismatched++
	}
}

// Stacks returns the host stacks created so far (nil entries for nodes
// without one), indexed by node ID.
func (s *Sim) Stacks() []*Stack { return s.stacks }

// Endpoint returns the host's endpoint, or nil if it has none.
func (st *Stack) Endpoint() *transport.Endpoint { return st.ep }

// String names the stack's host.
func (st *Stack) String() string { return fmt.Sprintf("stack(%s)", st.node.Name) }
