package transport

import (
	"container/heap"
	"crypto/sha256"
	"encoding/binary"
	"hash"
	"math/rand/v2"
	"net/netip"
	"testing"
	"time"

	"cclab/clock"
	"cclab/ecn"
	"cclab/event"
)

// pathModel is one direction of an in-memory path: Bernoulli loss, a
// serializer at a rate with a byte-limited drop-tail queue (optionally
// CE-marking above a threshold), propagation delay, random reordering and
// duplication. All randomness comes from its own seeded source.
type pathModel struct {
	Delay      time.Duration // one-way propagation delay
	Rate       float64       // bits/s; 0 = infinite
	QueueBytes int           // drop-tail limit, bytes; 0 = unlimited
	MarkBytes  int           // CE-mark ECT packets when the backlog exceeds this, bytes; 0 = never
	Loss       float64       // drop probability
	Reorder    float64       // probability a packet gets extra delay
	ReorderMax time.Duration // extra delay, uniform in (0, ReorderMax]
	Dup        float64       // duplication probability
	Drop       func(b []byte) bool

	rng       *rand.Rand
	busyUntil clock.Time
	sent      int
	dropped   int
	marked    int
}

type flight struct {
	at   clock.Time
	seq  uint64
	to   int
	from netip.AddrPort
	cp   ecn.Codepoint
	data []byte
}

type flightQ []flight

func (q flightQ) Len() int { return len(q) }
func (q flightQ) Less(i, j int) bool {
	if q[i].at != q[j].at {
		return q[i].at < q[j].at
	}
	return q[i].seq < q[j].seq
}
func (q flightQ) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *flightQ) Push(x any)   { *q = append(*q, x.(flight)) }
func (q *flightQ) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}

// simNet is a client endpoint (0) and a server endpoint (1) joined by two
// path models with a fake clock: the core of harness (stream connections)
// and dnet (datagram mode).
type simNet struct {
	t     testing.TB
	now   clock.Time
	eps   [2]*Endpoint
	addrs [2]netip.AddrPort
	paths [2]*pathModel // paths[i] carries datagrams sent by eps[i]
	q     flightQ
	seq   uint64
	buf   []byte
	// send hands a datagram that eps[from] transmitted to the network
	// (checking it and then calling carry).
	send func(from int, b []byte, cp ecn.Codepoint)
	// deliver, if set, sees every datagram with its destination address
	// and may keep it from the network (false: not delivered).
	deliver func(from int, to netip.AddrPort, b []byte) bool
	// beforeTransmit, if set, runs before every Transmit of eps[i].
	beforeTransmit func(i int)
}

// newSimNet returns the network without its endpoints; fwd and rev draw
// from sources seeded by seed.
func newSimNet(t testing.TB, seed uint64, fwd, rev pathModel) simNet {
	n := simNet{t: t, now: clock.Start, buf: make([]byte, 65536)}
	n.addrs[0] = netip.MustParseAddrPort("10.0.0.1:4000")
	n.addrs[1] = netip.MustParseAddrPort("10.0.0.2:5201")
	fwd.rng = rand.New(rand.NewPCG(seed, 1))
	rev.rng = rand.New(rand.NewPCG(seed, 2))
	n.paths[0], n.paths[1] = &fwd, &rev
	return n
}

// carry puts datagram b sent by endpoint from, with source address src, on
// its path: drop, loss, serialization and queue, CE marking, delay,
// reordering and duplication.
func (n *simNet) carry(from int, src netip.AddrPort, b []byte, cp ecn.Codepoint) {
	p := n.paths[from]
	p.sent++
	if p.Drop != nil && p.Drop(b) {
		p.dropped++
		return
	}
	if p.Loss > 0 && p.rng.Float64() < p.Loss {
		p.dropped++
		return
	}
	at := n.now
	if p.Rate > 0 {
		start := max(n.now, p.busyUntil)
		backlog := int(float64(start.Sub(n.now)) * p.Rate / 8 / 1e9)
		if p.QueueBytes > 0 && backlog+len(b) > p.QueueBytes {
			p.dropped++
			return
		}
		if p.MarkBytes > 0 && backlog > p.MarkBytes && cp.Capable() {
			cp = ecn.CE
			p.marked++
		}
		p.busyUntil = start.Add(time.Duration(float64(len(b)) * 8 / p.Rate * 1e9))
		at = p.busyUntil
	}
	at = at.Add(p.Delay)
	if p.Reorder > 0 && p.rng.Float64() < p.Reorder {
		at = at.Add(time.Duration(p.rng.Int64N(int64(p.ReorderMax))) + 1)
	}
	copies := 1
	if p.Dup > 0 && p.rng.Float64() < p.Dup {
		copies = 2
	}
	for k := 0; k < copies; k++ {
		n.seq++
		heap.Push(&n.q, flight{at: at.Add(time.Duration(k) * time.Microsecond), seq: n.seq, to: 1 - from, from: src, cp: cp, data: append([]byte(nil), b...)})
	}
}

// flush hands every datagram the endpoints have ready to send.
func (n *simNet) flush() {
	for i := range n.eps {
		for {
			if n.beforeTransmit != nil {
				n.beforeTransmit(i)
			}
			k, to, cp := n.eps[i].Transmit(n.now, n.buf)
			if k == 0 {
				break
			}
			if n.deliver != nil && !n.deliver(i, to, n.buf[:k]) {
				continue
			}
			n.send(i, n.buf[:k], cp)
		}
	}
}

// advance moves the clock to the next arrival or timer, delivers the due
// datagrams and runs the due timers. It returns false without doing so when
// nothing is pending (stalled) or the next event lies beyond end (the clock
// has then moved past end).
func (n *simNet) advance(end clock.Time) bool {
	next := clock.Earliest(n.eps[0].Deadline(), n.eps[1].Deadline())
	if len(n.q) > 0 {
		next = clock.Earliest(next, n.q[0].at)
	}
	if next == clock.Never {
		n.t.Logf("stalled at %v", n.now)
		return false
	}
	if next > n.now {
		n.now = next
	}
	if n.now > end {
		return false
	}
	for len(n.q) > 0 && n.q[0].at <= n.now {
		f := heap.Pop(&n.q).(flight)
		n.eps[f.to].Receive(n.now, f.from, f.cp, f.data)
	}
	for i := range n.eps {
		if d := n.eps[i].Deadline(); d != clock.Never && d <= n.now {
			n.eps[i].OnDeadline(n.now)
		}
	}
	return true
}

// harness runs stream connections over a simNet and records a digest of
// every event.
type harness struct {
	simNet
	trace hash.Hash
	log   event.Log
	keep  bool // keep events in log
	// app is called after every step (to read, write, close).
	app func(h *harness)
	// rewrite, if set, may change the source address of datagrams sent by endpoint i (NAT rebinding).
	rewrite func(h *harness, from int, a netip.AddrPort) netip.AddrPort
}

func newHarness(t testing.TB, seed uint64, fwd, rev pathModel, cfg Config) *harness {
	h := &harness{simNet: newSimNet(t, seed, fwd, rev), trace: sha256.New()}
	h.simNet.send = h.send
	sink := event.Func(h.record)
	cfg.Sink = sink
	h.eps[0] = NewEndpoint(EndpointConfig{Defaults: cfg, Rand: rand.New(rand.NewPCG(seed, 3))})
	h.eps[1] = NewEndpoint(EndpointConfig{Server: true, Defaults: cfg, Sink: sink, Rand: rand.New(rand.NewPCG(seed, 4))})
	return h
}

// record hashes every event (all fields) into the trace digest.
func (h *harness) record(e *event.Event) {
	var b [96]byte
	binary.LittleEndian.PutUint64(b[0:], uint64(e.Time))
	b[8] = byte(e.Kind)
	b[9] = e.Reason
	binary.LittleEndian.PutUint64(b[10:], e.Flow)
	binary.LittleEndian.PutUint64(b[18:], e.Seq)
	binary.LittleEndian.PutUint64(b[26:], uint64(e.Bytes))
	binary.LittleEndian.PutUint64(b[34:], uint64(e.Cwnd))
	binary.LittleEndian.PutUint64(b[42:], uint64(e.Ssthresh))
	binary.LittleEndian.PutUint64(b[50:], uint64(e.InFlight))
	binary.LittleEndian.PutUint64(b[58:], uint64(e.SRTT))
	binary.LittleEndian.PutUint64(b[66:], uint64(e.RTT))
	binary.LittleEndian.PutUint64(b[74:], uint64(e.MinRTT))
	h.trace.Write(b[:82])
	if h.keep {
		h.log.Record(e)
	}
}

func (h *harness) traceHash() [32]byte {
	var d [32]byte
	copy(d[:], h.trace.Sum(nil))
	return d
}

func (h *harness) send(from int, b []byte, cp ecn.Codepoint) {
	var chk packet
	if r := decodePacket(b, &chk); r != RejectNone {
		h.t.Fatalf("endpoint %d sent a datagram its peer rejects: %v", from, r)
	}
	src := h.addrs[from]
	if h.rewrite != nil {
		src = h.rewrite(h, from, src)
	}
	h.carry(from, src, b, cp)
}

// run steps until done() or the clock passes limit; it reports whether done.
func (h *harness) run(limit time.Duration, done func() bool) bool {
	end := h.now.Add(limit)
	for {
		if h.app != nil {
			h.app(h)
		}
		h.flush()
		if done() {
			return true
		}
		if !h.advance(end) {
			return false
		}
	}
}

// transfer dials, sends size bytes of a pattern stream from client to server,
// reads them at the server, closes both ways, and returns the two conns.
func (h *harness) transfer(size int64, limit time.Duration) (cli, srv *Conn, ok bool) {
	c, err := h.eps[0].Dial(h.now, h.addrs[1], Config{Request: []byte("bulk")})
	if err != nil {
		h.t.Fatal(err)
	}
	c.SetSource(NewPatternSource(42), size)
	srv, ok = h.serve(c, limit)
	return c, srv, ok
}

// serve accepts the connection at the server, reads it to EOF and closes
// it, until both it and the client cli are done or the clock passes limit;
// it reports whether they are done.
func (h *harness) serve(cli *Conn, limit time.Duration) (srv *Conn, ok bool) {
	buf := make([]byte, 64<<10)
	h.app = func(h *harness) {
		if srv == nil {
			srv = h.eps[1].Accept()
		}
		if srv != nil {
			for srv.Read(buf) > 0 {
			}
			if srv.EOF() {
				srv.CloseWrite(h.now)
			}
		}
	}
	ok = h.run(limit, func() bool { return cli.Done() && srv != nil && srv.Done() })
	return srv, ok
}

var lossCases = []struct {
	name string
	loss float64
	size int64
}{
	{"loss0", 0, 2 << 20},
	{"loss1", 0.01, 1 << 20},
	{"loss5", 0.05, 512 << 10},
	{"loss20", 0.20, 128 << 10},
}

func impairedPath(loss float64) pathModel {
	return pathModel{Delay: 20 * time.Millisecond, Rate: 20e6, QueueBytes: 100_000, Loss: loss,
		Reorder: 0.02, ReorderMax: 5 * time.Millisecond, Dup: 0.01}
}

func runImpaired(t *testing.T, seed uint64, loss float64, size int64, recovery string) (*harness, *Conn, *Conn) {
	return runImpairedBufs(t, seed, loss, size, recovery, nil)
}

// runImpairedBufs is runImpaired with both endpoints taking their
// connection buffers from bufs (nil: each its own).
func runImpairedBufs(t *testing.T, seed uint64, loss float64, size int64, recovery string, bufs *Buffers) (*harness, *Conn, *Conn) {
	h := newHarness(t, seed, impairedPath(loss), impairedPath(loss), Config{Recovery: recovery})
	if bufs != nil {
		h.eps[0].bufs, h.eps[1].bufs = bufs, bufs
	}
	cli, srv, ok := h.transfer(size, 2*time.Hour)
	if !ok {
		t.Fatalf("seed %d loss %v: transfer did not finish by %v (client done=%v err=%v, server=%v)", seed, loss, h.now, cli.Done(), cli.Err(), srv != nil && srv.Done())
	}
	return h, cli, srv
}

// checkTransfer checks a finished transfer of size bytes of the pattern of
// seed 42 over a path with the given loss: no errors, every byte delivered
// and acknowledged, matching digests, retransmissions if there was loss.
func checkTransfer(t *testing.T, cli, srv *Conn, size int64, loss float64) {
	t.Helper()
	cs, ss := cli.Stats(), srv.Stats()
	if cli.Err() != nil || srv.Err() != nil {
		t.Fatalf("errors: client %v server %v", cli.Err(), srv.Err())
	}
	if ss.BytesDelivered != uint64(size) || cs.BytesAcked != uint64(size) {
		t.Errorf("delivered %d acked %d, want %d", ss.BytesDelivered, cs.BytesAcked, size)
	}
	want := sha256.New()
	data := make([]byte, size)
	NewPatternSource(42).Fill(0, data)
	want.Write(data)
	if ss.RecvDigest != cs.SentDigest || string(ss.RecvDigest[:]) != string(want.Sum(nil)) {
		t.Errorf("digest mismatch: receiver %x sender %x", ss.RecvDigest[:4], cs.SentDigest[:4])
	}
	if loss > 0 && cs.Retransmits == 0 {
		t.Errorf("loss %v but no retransmissions", loss)
	}
}

// TestImpairedTransfers: for loss 0/1/5/20% with reordering and duplication,
// every transfer completes byte-for-byte; the same seed gives the same event
// trace and another seed a different one.
func TestImpairedTransfers(t *testing.T) {
	for _, rec := range []string{"newreno", "reno"} {
		for _, tc := range lossCases {
			t.Run(rec+"/"+tc.name, func(t *testing.T) {
				h1, cli, srv := runImpaired(t, 7, tc.loss, tc.size, rec)
				checkTransfer(t, cli, srv, tc.size, tc.loss)
				h2, _, _ := runImpaired(t, 7, tc.loss, tc.size, rec)
				if h1.traceHash() != h2.traceHash() {
					t.Errorf("same seed, different traces")
				}
				h3, _, _ := runImpaired(t, 8, tc.loss, tc.size, rec)
				if h1.traceHash() == h3.traceHash() {
					t.Errorf("different seeds, identical traces")
				}
				cs := cli.Stats()
				t.Logf("%s: %v sim time, retx %d rtos %d spurious %d recoveries %d, srtt %v", tc.name, h1.now.Sub(clock.Start), cs.Retransmits, cs.RTOs, cs.SpuriousRetransmits, cs.Recoveries, cs.SRTT)
			})
		}
	}
}

// TestEventsMatchStats: the event stream agrees with the counters, so
// metrics computed from events mean what the stats say.
func TestEventsMatchStats(t *testing.T) {
	h := newHarness(t, 21, impairedPath(0.05), impairedPath(0.05), Config{})
	h.keep = true
	cli, srv, ok := h.transfer(400_000, time.Hour)
	if !ok {
		t.Fatal("transfer did not finish")
	}
	cs := cli.Stats()
	count := func(k event.Kind, flow uint64, reason int) (n, bytes int) {
		for _, e := range h.log.Events {
			if e.Kind == k && e.Flow == flow && (reason < 0 || int(e.Reason) == reason) {
				n++
				bytes += e.Bytes
			}
		}
		return
	}
	id := cli.ID()
	if srv.ID() != id {
		t.Errorf("IDs differ: client %x server %x", id, srv.ID())
	}
	if n, _ := count(event.Retransmit, id, -1); uint64(n) != cs.Retransmits || n == 0 {
		t.Errorf("Retransmit events %d, stats %d", n, cs.Retransmits)
	}
	if n, _ := count(event.PacketSent, id, 1); uint64(n) != cs.Retransmits {
		t.Errorf("PacketSent(retx) events %d, stats %d", n, cs.Retransmits)
	}
	if _, b := count(event.PacketSent, id, 0); uint64(b) != cs.BytesSent {
		t.Errorf("PacketSent bytes %d, stats %d", b, cs.BytesSent)
	}
	if n, _ := count(event.RTO, id, -1); uint64(n) != cs.RTOs {
		t.Errorf("RTO events %d, stats %d", n, cs.RTOs)
	}
	if n, _ := count(event.RecoveryStart, id, -1); uint64(n) != cs.Recoveries || n == 0 {
		t.Errorf("RecoveryStart events %d, stats %d", n, cs.Recoveries)
	}
	if n, _ := count(event.PacketLost, id, -1); uint64(n) != cs.Lost {
		t.Errorf("PacketLost events %d, stats %d", n, cs.Lost)
	}
	if _, b := count(event.PacketAcked, id, -1); b != 400_000 {
		t.Errorf("PacketAcked bytes %d, want every byte acknowledged once (400000)", b)
	}
	if _, b := count(event.Delivered, id, -1); b != 400_000 {
		t.Errorf("Delivered bytes %d, want 400000", b)
	}
	if n, _ := count(event.MetricsUpdated, id, -1); n == 0 {
		t.Errorf("no MetricsUpdated events")
	}
	for _, e := range h.log.Events {
		if e.Kind == event.MetricsUpdated && e.Flow == id && (e.Cwnd <= 0 || e.SRTT <= 0) {
			t.Errorf("MetricsUpdated without cwnd/srtt: %+v", e)
			break
		}
	}
}

// TestManyConns: several connections between one client endpoint and one
// server endpoint, demultiplexed by CID, all complete intact.
func TestManyConns(t *testing.T) {
	h := newHarness(t, 31, impairedPath(0.01), impairedPath(0.01), Config{})
	const n = 4
	var clis []*Conn
	for i := 0; i < n; i++ {
		c, err := h.eps[0].Dial(h.now, h.addrs[1], Config{Request: []byte{byte(i)}})
		if err != nil {
			t.Fatal(err)
		}
		c.SetSource(NewPatternSource(uint64(i)), int64(100_000*(i+1)))
		clis = append(clis, c)
	}
	srvs := map[byte]*Conn{}
	buf := make([]byte, 1<<16)
	h.app = func(h *harness) {
		for s := h.eps[1].Accept(); s != nil; s = h.eps[1].Accept() {
			srvs[s.Request()[0]] = s
		}
		for _, s := range srvs {
			for s.Read(buf) > 0 {
			}
			if s.EOF() {
				s.CloseWrite(h.now)
			}
		}
	}
	ok := h.run(time.Hour, func() bool {
		for _, c := range clis {
			if !c.Done() {
				return false
			}
		}
		return true
	})
	if !ok || len(srvs) != n {
		t.Fatalf("finished %v, accepted %d of %d", ok, len(srvs), n)
	}
	for i, c := range clis {
		s := srvs[byte(i)]
		if s.ID() != c.ID() || s.Stats().RecvDigest != c.Stats().SentDigest || s.Stats().BytesDelivered != uint64(100_000*(i+1)) {
			t.Errorf("conn %d: server got %d bytes, digest match %v", i, s.Stats().BytesDelivered, s.Stats().RecvDigest == c.Stats().SentDigest)
		}
	}
}
