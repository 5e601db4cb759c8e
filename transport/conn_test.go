package transport

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"strings"
	"testing"
	"time"

	"cclab/clock"
	"cclab/ecn"
)

// srvFixture is a server endpoint whose client is the test itself.
type srvFixture struct {
	fixture
	srv     *Conn
	srvCID  uint64
	cliCID  uint64
	initial []byte
}

func newSrvFixture(t *testing.T, cfg Config, validate bool) *srvFixture {
	f := &srvFixture{fixture: fixture{t: t, now: clock.Start, buf: make([]byte, 65536), peer: netip.MustParseAddrPort("198.51.100.7:40000")}}
	f.ep = NewEndpoint(EndpointConfig{Server: true, Defaults: cfg, Rand: rand.New(rand.NewPCG(2, 2))})
	f.cliCID = 0x1234
	ini := packet{typ: typeInitial, dcid: 0x9999, scid: f.cliCID, ts: 5, maxDatagram: 1200, recvWindow: 1 << 20, hsFlags: hsECN, request: []byte("hello")}
	f.initial = make([]byte, 1200)
	encodePacket(f.initial, &ini)
	f.ep.Receive(f.now, f.peer, ecn.NotECT, f.initial)
	// Stateless address validation: a Retry, then the Initial with its token.
	if r := f.drain(); len(r) != 1 || r[0].typ != typeRetry || f.ep.Accept() != nil {
		t.Fatalf("reply to an Initial without a token: %d datagrams, want one Retry and no connection", len(r))
	}
	ini.token = f.sent[0].token
	encodePacket(f.initial, &ini)
	f.ep.Receive(f.now, f.peer, ecn.NotECT, f.initial)
	f.srv = f.ep.Accept()
	if f.srv == nil {
		t.Fatalf("no conn accepted; rejects %v", f.ep.Stats().Rejects)
	}
	f.c = f.srv
	if string(f.srv.Request()) != "hello" {
		t.Errorf("Request() = %q, want hello", f.srv.Request())
	}
	f.drain()
	if len(f.sent) != 1 || f.sent[0].typ != typeAccept {
		t.Fatalf("reply to Initial: %d datagrams", len(f.sent))
	}
	f.srvCID = f.sent[0].scid
	if validate {
		f.now = f.now.Add(10 * time.Millisecond)
		f.ping()
		f.drain()
	}
	return f
}

// ping sends a PING from the client (the validating packet).
func (f *srvFixture) ping() {
	p := packet{typ: typeShort, dcid: f.srvCID, flags: flagPING, pn: f.pn, ts: 10}
	f.pn++
	f.recv(&p, ecn.NotECT)
}

// data sends stream segment k (MSS-sized) from the client.
func (f *srvFixture) data(k int, flags uint8, cp ecn.Codepoint) {
	s := seg(k)
	p := packet{typ: typeShort, dcid: f.srvCID, flags: flagDATA | flags, pn: f.pn, ts: uint32(100 + k), off: s.Start,
		data: make([]byte, s.End-s.Start)}
	f.pn++
	NewPatternSource(9).Fill(int64(s.Start), p.data)
	f.recv(&p, cp)
}

// acks returns the ACK sections sent in the last drain.
func (f *fixture) acks() []packet {
	var a []packet
	for _, p := range f.sent {
		if p.flags&flagACK != 0 {
			a = append(a, p)
		}
	}
	return a
}

func TestDelayedAck(t *testing.T) {
	f := newSrvFixture(t, Config{}, true)
	f.data(0, 0, ecn.NotECT)
	if f.drain(); len(f.acks()) != 0 {
		t.Fatalf("one in-order segment acknowledged at once; want a delayed ACK")
	}
	if got, want := f.ep.Deadline(), f.now.Add(DefaultDelayedAck); got != want {
		t.Errorf("deadline %v, want delayed-ACK timer %v", got, want)
	}
	f.now = f.ep.Deadline()
	f.ep.OnDeadline(f.now)
	if a := f.drain(); len(a) != 1 || a[0].cumAck != seg(1).Start {
		t.Fatalf("after the delayed-ACK timer: %d packets, want one ACK of %d", len(a), seg(1).Start)
	}
	// RFC 5681 §4.2: an ACK at least every second full-sized segment.
	f.data(1, 0, ecn.NotECT)
	if f.drain(); len(f.acks()) != 0 {
		t.Errorf("first of two segments acknowledged at once")
	}
	f.data(2, 0, ecn.NotECT)
	if a := f.drain(); len(a) != 1 || a[0].cumAck != seg(3).Start {
		t.Errorf("second full segment: want an immediate ACK of %d, got %d packets", seg(3).Start, len(a))
	}
	// RFC 7323 §4.3: with the delayed ACK, TSecr echoes the earlier segment.
	if got := f.sent[0].tsecr; got != 101 {
		t.Errorf("TSecr %d, want the first unacknowledged segment's TSval 101", got)
	}
}

func TestImmediateAckAndSACK(t *testing.T) {
	f := newSrvFixture(t, Config{}, true)
	f.data(0, 0, ecn.NotECT)
	f.drain()
	// Out-of-order arrivals: each triggers an immediate duplicate ACK whose
	// first SACK block holds the segment just received (RFC 2018 §4).
	for _, k := range []int{2, 4, 6, 8} {
		f.data(k, 0, ecn.NotECT)
		a := f.drain()
		if len(a) != 1 || a[0].flags&flagACK == 0 {
			t.Fatalf("segment %d out of order: %d packets, want one immediate ACK", k, len(a))
		}
		if a[0].cumAck != seg(1).Start || a[0].nBlocks == 0 || a[0].blocks[0] != seg(k) {
			t.Errorf("segment %d: cum %d first block %v, want cum %d first block %v", k, a[0].cumAck, a[0].blocks[0], seg(1).Start, seg(k))
		}
	}
	a := f.sent[0]
	want := []sackBlock{seg(8), seg(6), seg(4), seg(2)}
	if a.nBlocks != 4 {
		t.Fatalf("blocks %d, want 4 (>= 3 required)", a.nBlocks)
	}
	for i, w := range want {
		if a.blocks[i] != w {
			t.Errorf("block %d = %v, want %v (most recent first)", i, a.blocks[i], w)
		}
	}
	// Segment 3 joins [2] and [4]: the merged block comes first, then the
	// most recently reported others.
	f.data(3, 0, ecn.NotECT)
	a = f.drain()[0]
	want = []sackBlock{span(2, 5), seg(8), seg(6)}
	for i, w := range want {
		if a.blocks[i] != w {
			t.Errorf("after segment 3: block %d = %v, want %v", i, a.blocks[i], w)
		}
	}
	// Filling the first hole advances the cumulative ACK at once.
	f.data(1, 0, ecn.NotECT)
	a = f.drain()[0]
	if a.cumAck != seg(5).Start || a.nBlocks != 2 {
		t.Errorf("after filling hole: cum %d blocks %d, want %d and 2", a.cumAck, a.nBlocks, seg(5).Start)
	}
	// A duplicate segment is acknowledged at once.
	f.data(0, 0, ecn.NotECT)
	if len(f.drain()) != 1 {
		t.Errorf("duplicate segment not acknowledged at once")
	}
}

// TestAddressValidation: before the client's address is validated the
// server sends nothing but one Accept per Initial, each smaller than it.
func TestAddressValidation(t *testing.T) {
	f := newSrvFixture(t, Config{}, false)
	f.srv.SetSource(NewPatternSource(1), 1<<20) // the server wants to send (reverse mode)
	if n := len(f.drain()); n != 0 {
		t.Fatalf("server sent %d datagrams before validation", n)
	}
	st := f.ep.Stats()
	if st.BytesOut > uint64(len(f.initial)) {
		t.Errorf("server sent %d bytes for a %d-byte Initial", st.BytesOut, len(f.initial))
	}
	// A retransmitted Initial earns exactly one more Accept.
	f.ep.Receive(f.now, f.peer, ecn.NotECT, f.initial)
	if a := f.drain(); len(a) != 1 || a[0].typ != typeAccept {
		t.Errorf("retransmitted Initial: %d replies, want one Accept", len(a))
	}
	if st := f.ep.Stats(); st.BytesOut > st.BytesIn {
		t.Errorf("amplification: out %d > in %d bytes before validation", st.BytesOut, st.BytesIn)
	}
	// Timers do not make it send either.
	f.now = f.now.Add(5 * time.Second)
	f.ep.OnDeadline(f.now)
	if n := len(f.drain()); n != 0 {
		t.Errorf("server sent %d datagrams on a timer before validation", n)
	}
	// An unpadded Initial is rejected without a reply.
	small := packet{typ: typeInitial, dcid: 0x5555, scid: 0x77, ts: 5, maxDatagram: 1200, recvWindow: 1 << 20}
	b := make([]byte, 1200)
	n := encodePacket(b, &small)
	f.ep.Receive(f.now, f.peer, ecn.NotECT, b[:n/2])
	if f.ep.Stats().Rejects[RejectInitialSize] != 1 || len(f.drain()) != 0 {
		t.Errorf("short Initial: rejects %v, want initial_too_small and no reply", f.ep.Stats().Rejects)
	}
	// The client's first short packet validates: data flows.
	f.ping()
	if f.drain(); len(f.dataOffsets()) == 0 {
		t.Errorf("no data after validation")
	}
}

// TestFlowControl: a reader that never reads stalls the sender at the
// advertised window; reading resumes the transfer.
func TestFlowControl(t *testing.T) {
	const win = 32 * testMSS
	h := newHarness(t, 1, pathModel{Delay: 10 * time.Millisecond}, pathModel{Delay: 10 * time.Millisecond}, Config{RecvWindow: win})
	cli, err := h.eps[0].Dial(h.now, h.addrs[1], Config{})
	if err != nil {
		t.Fatal(err)
	}
	const size = 1 << 20
	cli.SetSource(NewPatternSource(5), size)
	var srv *Conn
	reading := false
	buf := make([]byte, 4096)
	h.app = func(h *harness) {
		if srv == nil {
			srv = h.eps[1].Accept()
		}
		if srv != nil && reading {
			for srv.Read(buf) > 0 {
			}
			if srv.EOF() {
				srv.CloseWrite(h.now)
			}
		}
	}
	h.run(30*time.Second, func() bool { return false })
	ss, cs := srv.Stats(), cli.Stats()
	if ss.BytesDelivered != win || cs.BytesSent != win {
		t.Errorf("stalled reader: delivered %d, sent %d, want both = window %d", ss.BytesDelivered, cs.BytesSent, win)
	}
	if ss.DroppedBeyondWindow != 0 {
		t.Errorf("sender overran the window %d times", ss.DroppedBeyondWindow)
	}
	if cli.Err() != nil {
		t.Errorf("stalled conn failed: %v (zero-window probes should keep it alive)", cli.Err())
	}
	reading = true
	if !h.run(time.Minute, func() bool { return cli.Done() && srv.Done() }) {
		t.Fatalf("transfer did not resume and finish")
	}
	if got := srv.Stats().BytesRead; got != size {
		t.Errorf("read %d, want %d", got, size)
	}
}

// TestClose: FIN both ways, both ends done without error, then removed.
func TestClose(t *testing.T) {
	h := newHarness(t, 3, pathModel{Delay: 5 * time.Millisecond}, pathModel{Delay: 5 * time.Millisecond}, Config{})
	cli, srv, ok := h.transfer(100_000, time.Minute)
	if !ok {
		t.Fatal("transfer did not finish")
	}
	cs, ss := cli.Stats(), srv.Stats()
	if cli.Err() != nil || srv.Err() != nil || !cs.SentFin || !cs.RecvFin || !ss.SentFin || !ss.RecvFin {
		t.Errorf("close: errs %v %v, fins %v %v %v %v", cli.Err(), srv.Err(), cs.SentFin, cs.RecvFin, ss.SentFin, ss.RecvFin)
	}
	if !srv.EOF() {
		t.Errorf("server EOF false after reading everything")
	}
	h.run(10*time.Second, func() bool { return len(h.eps[0].Conns())+len(h.eps[1].Conns()) == 0 })
	if n := len(h.eps[0].Conns()) + len(h.eps[1].Conns()); n != 0 {
		t.Errorf("%d conns not removed after the drain period", n)
	}
}

// TestRebinding: the client's address changes mid-transfer (NAT rebinding);
// the server follows by connection ID and the transfer completes.
func TestRebinding(t *testing.T) {
	h := newHarness(t, 4, pathModel{Delay: 10 * time.Millisecond}, pathModel{Delay: 10 * time.Millisecond}, Config{})
	newAddr := netip.MustParseAddrPort("203.0.113.9:61000")
	h.rewrite = func(h *harness, from int, a netip.AddrPort) netip.AddrPort {
		if from == 0 && h.now > clock.Start.Add(300*time.Millisecond) {
			return newAddr
		}
		return a
	}
	// Deliver server->client datagrams regardless of the address they are sent to.
	cli, srv, ok := h.transfer(1<<20, time.Minute)
	if !ok {
		t.Fatal("transfer did not survive rebinding")
	}
	if srv.Peer() != newAddr || srv.Stats().Rebinds != 1 {
		t.Errorf("server peer %v rebinds %d, want %v and 1", srv.Peer(), srv.Stats().Rebinds, newAddr)
	}
	if srv.Stats().RecvDigest != cli.Stats().SentDigest {
		t.Errorf("digest mismatch after rebinding")
	}
}

// TestECN: ECT(0) on data, CE echoed until CWR, sender reacts once per RTT.
func TestECN(t *testing.T) {
	// Sender side.
	f := newFixture(t, Config{CC: "testcc:cwnd=10", ECN: true}, 1<<30, true)
	f.c.SetSource(NewPatternSource(1), -1)
	f.drain()
	for i, p := range f.sent {
		if p.flags&flagDATA != 0 && f.cps[i] != ecn.ECT0 {
			t.Errorf("data packet %d sent %v, want ECT(0)", i, f.cps[i])
		}
	}
	f.now = f.now.Add(50 * time.Millisecond)
	f.ackFlags(seg(1).Start, f.sent[0].ts, flagECE)
	f.ackFlags(seg(2).Start, f.sent[1].ts, flagECE)
	f.ackFlags(seg(3).Start, f.sent[2].ts, flagECE)
	if n := hasCall(f, "congestion ecn"); n != 1 {
		t.Errorf("3 ECE ACKs in one window: %d reductions, want 1 (RFC 3168 §6.1.2)", n)
	}
	f.ack(seg(10).Start, 0) // the rest of the window, no ECE
	f.drain()
	if len(f.sent) == 0 || f.sent[0].flags&flagCWR == 0 {
		t.Errorf("first new data packet after the reduction lacks CWR")
	}
	// ECE for data sent after the reduction: react again.
	f.ackFlags(seg(11).Start, 0, flagECE)
	if n := hasCall(f, "congestion ecn"); n != 2 {
		t.Errorf("ECE after the window passed: %d reductions, want 2", n)
	}
	if st := f.c.Stats(); st.ECNReductions != 2 {
		t.Errorf("ECNReductions %d, want 2", st.ECNReductions)
	}

	// Receiver side: CE sets ECE on every ACK until CWR arrives.
	r := newSrvFixture(t, Config{ECN: true}, true)
	r.data(0, 0, ecn.CE)
	r.data(1, 0, ecn.NotECT)
	if a := r.drain(); len(a) != 1 || a[0].flags&flagECE == 0 {
		t.Fatalf("ACK after CE lacks ECE")
	}
	r.data(2, 0, ecn.ECT0)
	r.data(3, 0, ecn.ECT0)
	if a := r.drain(); len(a) != 1 || a[0].flags&flagECE == 0 {
		t.Errorf("ECE not repeated before CWR")
	}
	r.data(4, flagCWR, ecn.ECT0)
	r.data(5, 0, ecn.ECT0)
	if a := r.drain(); len(a) != 1 || a[0].flags&flagECE != 0 {
		t.Errorf("ECE still set after CWR")
	}
}

// TestWriteRead: the Write/Read API carries arbitrary bytes, both directions.
func TestWriteRead(t *testing.T) {
	h := newHarness(t, 5, impairedPath(0.02), impairedPath(0.02), Config{SendBuffer: 64 << 10})
	cli, err := h.eps[0].Dial(h.now, h.addrs[1], Config{})
	if err != nil {
		t.Fatal(err)
	}
	msg := make([]byte, 300_000)
	NewPatternSource(77).Fill(0, msg)
	var srv *Conn
	var got, back []byte
	wrote, echoed := 0, 0
	buf := make([]byte, 10000)
	h.app = func(h *harness) {
		if wrote < len(msg) {
			wrote += cli.Write(msg[wrote:])
			if wrote == len(msg) {
				cli.CloseWrite(h.now)
			}
		}
		for n := cli.Read(buf); n > 0; n = cli.Read(buf) {
			back = append(back, buf[:n]...)
		}
		if srv == nil {
			srv = h.eps[1].Accept()
		}
		if srv != nil {
			for n := srv.Read(buf); n > 0; n = srv.Read(buf) {
				got = append(got, buf[:n]...)
			}
			for echoed < len(got) {
				n := srv.Write(got[echoed:])
				if n == 0 {
					break
				}
				echoed += n
			}
			if srv.EOF() && echoed == len(got) {
				srv.CloseWrite(h.now)
			}
		}
	}
	if !h.run(10*time.Minute, func() bool { return cli.Done() && srv != nil && srv.Done() }) {
		t.Fatalf("echo did not finish: wrote %d got %d back %d", wrote, len(got), len(back))
	}
	if !bytes.Equal(got, msg) || !bytes.Equal(back, msg) {
		t.Errorf("echo mismatch: got %d back %d bytes", len(got), len(back))
	}
	if cli.Stats().SentDigest != srv.Stats().RecvDigest || srv.Stats().SentDigest != cli.Stats().RecvDigest {
		t.Errorf("digests disagree")
	}
}

// TestHandshakeTimeout: an unanswered Initial is retransmitted with RFC 6298
// backoff (1 s, 2 s, 4 s, ...) until HandshakeTimeout, then the conn fails.
func TestHandshakeTimeout(t *testing.T) {
	ep := NewEndpoint(EndpointConfig{Rand: rand.New(rand.NewPCG(9, 9))})
	now := clock.Start
	c, err := ep.Dial(now, netip.MustParseAddrPort("192.0.2.1:1"), Config{HandshakeTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 2048)
	var sends []time.Duration
	for i := 0; i < 20 && !c.Done(); i++ {
		for {
			n, _, _ := ep.Transmit(now, buf)
			if n == 0 {
				break
			}
			if n != DefaultMaxDatagram {
				t.Errorf("Initial is %d bytes, want padded to %d", n, DefaultMaxDatagram)
			}
			sends = append(sends, now.Sub(clock.Start))
		}
		now = ep.Deadline()
		ep.OnDeadline(now)
	}
	want := []time.Duration{0, time.Second, 3 * time.Second, 7 * time.Second}
	if len(sends) != len(want) {
		t.Fatalf("Initials at %v, want %v", sends, want)
	}
	for i := range want {
		if sends[i] != want[i] {
			t.Errorf("Initial %d at %v, want %v", i, sends[i], want[i])
		}
	}
	if c.Err() != ErrHandshakeTimeout || now.Sub(clock.Start) != 10*time.Second {
		t.Errorf("err %v at %v, want ErrHandshakeTimeout at 10s", c.Err(), now.Sub(clock.Start))
	}
}

// TestRejectCounters: malformed datagrams are counted by reason.
func TestRejectCounters(t *testing.T) {
	f := newSrvFixture(t, Config{}, true)
	cases := []struct {
		b    []byte
		want RejectReason
	}{
		{[]byte{1}, RejectTooShort},
		{[]byte{9, 3, 0, 0, 0, 0, 0, 0, 0, 0}, RejectVersion},
		{[]byte{1, 3, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, RejectVersion}, // version 1 (no Retry)
		{[]byte{2, 9, 0, 0, 0, 0, 0, 0, 0, 0}, RejectType},
		{[]byte{2, 3, 0, 0, 0, 0, 0, 0, 0, 0}, RejectTruncated},
		{[]byte{2, 3, 0, 0, 0, 0, 0, 0, 0, 1, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0}, RejectFlags},
		{[]byte{2, 6, 0, 0, 0, 0, 0, 0, 0, 1, 9, 0, 0, 0, 0, 0, 0, 0, 0}, RejectFlags}, // unknown Path type
		{[]byte{2, 3, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, RejectUnknownCID},
		{[]byte{2, 5, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0}, RejectToken}, // Retry with an empty token
	}
	for _, tc := range cases {
		before := f.ep.Stats().Rejects[tc.want]
		f.ep.Receive(f.now, f.peer, ecn.NotECT, tc.b)
		if got := f.ep.Stats().Rejects[tc.want] - before; got != 1 {
			t.Errorf("%x: %v count +%d, want +1 (all: %v)", tc.b, tc.want, got, f.ep.Stats().Rejects)
		}
	}
	// An ACK of data never sent.
	p := packet{typ: typeShort, dcid: f.srvCID, flags: flagACK, pn: 99, cumAck: 1 << 30, window: 1}
	f.recv(&p, ecn.NotECT)
	if f.ep.Stats().Rejects[RejectAckUnsent] != 1 {
		t.Errorf("ACK of unsent data not counted: %v", f.ep.Stats().Rejects)
	}
	// Data beyond a changed final size.
	f.data(0, flagFIN, ecn.NotECT)
	f.data(1, 0, ecn.NotECT)
	if f.ep.Stats().Rejects[RejectFinalSize] != 1 {
		t.Errorf("data beyond FIN not counted: %v", f.ep.Stats().Rejects)
	}
}

// TestECNRetransmitNotECT: RFC 3168 §6.1.5, retransmissions are Not-ECT.
func TestECNRetransmitNotECT(t *testing.T) {
	// newreno: no tail-loss probe (the default rack sends one before the RTO).
	f := newFixture(t, Config{CC: "testcc:cwnd=4", ECN: true, Recovery: "newreno"}, 1<<30, true)
	f.c.SetSource(NewPatternSource(1), -1)
	f.drain()
	f.now = f.c.rtoAt
	f.ep.OnDeadline(f.now)
	f.drain()
	if len(f.sent) != 1 || f.sent[0].off != 0 || f.cps[0] != ecn.NotECT {
		t.Errorf("retransmission after RTO: %d packets, codepoint %v, want one Not-ECT", len(f.sent), f.cps)
	}
}

// TestLateFINAfterRemoval: the client's ACK of the server's FIN is lost until
// the client conn has been removed; the endpoint's tombstone re-acknowledges
// the retransmitted FIN so the server finishes cleanly.
func TestLateFINAfterRemoval(t *testing.T) {
	h := newHarness(t, 6, pathModel{Delay: 5 * time.Millisecond}, pathModel{Delay: 5 * time.Millisecond}, Config{})
	dropped := 0
	h.paths[0].Drop = func(b []byte) bool {
		var p packet
		if decodePacket(b, &p) != RejectNone || p.typ != typeShort || p.flags != flagACK || p.cumAck != 1 {
			return false
		}
		if len(h.eps[0].Conns()) > 0 { // client conn still there: lose its final ACK
			dropped++
			return true
		}
		return false
	}
	cli, srv, ok := h.transfer(50_000, time.Hour)
	if !ok {
		t.Fatal("did not finish")
	}
	if dropped == 0 || h.eps[0].Stats().Rejects[RejectOldPacket] == 0 {
		t.Fatalf("scenario not exercised: dropped %d, late packets %d", dropped, h.eps[0].Stats().Rejects[RejectOldPacket])
	}
	if cli.Err() != nil || srv.Err() != nil || !srv.Stats().SentFin {
		t.Errorf("client err %v, server err %v, server FIN acked %v", cli.Err(), srv.Err(), srv.Stats().SentFin)
	}
}

// TestOutOfOrderFIN: a bare FIN arriving before the last data is ACKed at
// once without an (empty) SACK block, and the stream completes when the data
// arrives.
func TestOutOfOrderFIN(t *testing.T) {
	f := newSrvFixture(t, Config{}, true)
	f.data(0, 0, ecn.NotECT)
	fin := packet{typ: typeShort, dcid: f.srvCID, flags: flagFIN, pn: f.pn, ts: 300, off: seg(2).Start}
	f.pn++
	f.recv(&fin, ecn.NotECT)
	a := f.drain()
	if len(a) != 1 {
		t.Fatalf("out-of-order FIN: %d packets, rejects %v", len(a), f.ep.Stats().Rejects)
	}
	if a[0].cumAck != seg(1).Start || a[0].nBlocks != 0 {
		t.Fatalf("out-of-order FIN: cum %d, %d blocks; want an ACK of %d without blocks", a[0].cumAck, a[0].nBlocks, seg(1).Start)
	}
	f.data(1, 0, ecn.NotECT)
	a = f.drain()
	if len(a) != 1 || a[0].cumAck != seg(2).Start+1 {
		t.Fatalf("after the missing data: %d packets, want an immediate ACK of %d (data + FIN)", len(a), seg(2).Start+1)
	}
}

// TestLateInitial: a duplicated Initial arriving after its connection has
// finished and been removed does not open a ghost connection.
func TestLateInitial(t *testing.T) {
	h := newHarness(t, 8, pathModel{Delay: 5 * time.Millisecond}, pathModel{Delay: 5 * time.Millisecond}, Config{})
	var initial []byte
	h.paths[0].Drop = func(b []byte) bool {
		if initial == nil && len(b) > 1 && b[1] == byte(typeInitial) {
			initial = append([]byte(nil), b...)
		}
		return false
	}
	_, _, ok := h.transfer(20_000, time.Minute)
	if !ok {
		t.Fatal("transfer did not finish")
	}
	h.run(10*time.Second, func() bool { return len(h.eps[1].Conns()) == 0 })
	if len(h.eps[1].Conns()) != 0 {
		t.Fatal("server conn not removed")
	}
	h.eps[1].Receive(h.now, h.addrs[0], ecn.NotECT, initial)
	if c := h.eps[1].Accept(); c != nil || len(h.eps[1].Conns()) != 0 {
		t.Errorf("late Initial opened a new connection")
	}
	if h.eps[1].Stats().Rejects[RejectOldPacket] != 1 {
		t.Errorf("late Initial not counted as finished_conn: %v", h.eps[1].Stats().Rejects)
	}
}

// TestPacing: a controller implementing ccalgo.Pacer spaces data packets at
// its rate (datagram bytes * 8 / 9.6 Mbit/s, about 1 ms) and the deadline
// says when the next one may go.
func TestPacing(t *testing.T) {
	f := newFixture(t, Config{CC: "testpaced"}, 1<<30, false)
	f.c.SetSource(NewPatternSource(1), -1)
	f.drain()
	if n := len(f.dataOffsets()); n != 1 {
		t.Fatalf("paced burst: %d data packets at once, want 1", n)
	}
	start := f.now
	for i := 0; i < 5; i++ {
		last := f.sent[len(f.sent)-1]
		size := shortHeaderLen(&last) + len(last.data) // datagram bytes
		d := f.ep.Deadline()
		if want := f.now.Add(time.Duration(size) * 8 * time.Second / 9_600_000); d != want {
			t.Fatalf("packet %d: deadline %v, want %v", i, d.Sub(start), want.Sub(start))
		}
		f.now = d
		f.ep.OnDeadline(f.now)
		if f.drain(); len(f.dataOffsets()) != 1 {
			t.Fatalf("at the pacing deadline: %d data packets, want 1", len(f.dataOffsets()))
		}
	}
}

// TestDelayedAckPolicy: Config.AckEvery and DelayedAck as a user sets them
// (RFC 5681 §4.2, RFC 1122 §4.2.3.2): after which in-order full-sized
// segment an ACK leaves at once, and how long the timer delays the others.
func TestDelayedAckPolicy(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cfg   Config
		every int           // an immediate ACK after this many segments
		delay time.Duration // the delayed-ACK timer after a lone segment; 0: none armed
	}{
		{"default", Config{}, 2, DefaultDelayedAck},
		{"ns-3 like", Config{AckEvery: 2, DelayedAck: 200 * time.Millisecond}, 2, 200 * time.Millisecond},
		{"stretch ACKs", Config{AckEvery: 4, DelayedAck: 100 * time.Millisecond}, 4, 100 * time.Millisecond},
		{"every segment", Config{AckEvery: 1}, 1, 0},
		{"no delayed ACKs", Config{AckEvery: 3, DelayedAck: NoDelayedAck}, 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newSrvFixture(t, tc.cfg, true)
			f.data(0, 0, ecn.NotECT)
			a := f.drain()
			if tc.delay == 0 {
				if len(a) != 1 {
					t.Fatalf("lone segment: %d packets at once, want one ACK", len(a))
				}
			} else {
				if len(a) != 0 {
					t.Fatalf("lone segment acknowledged at once, want a delayed ACK")
				}
				if got, want := f.ep.Deadline(), f.now.Add(tc.delay); got != want {
					t.Fatalf("deadline %v, want the delayed-ACK timer %v", got, want)
				}
				f.now = f.ep.Deadline()
				f.ep.OnDeadline(f.now)
				if a := f.drain(); len(a) != 1 {
					t.Fatalf("after the delayed-ACK timer: %d packets, want one ACK", len(a))
				}
			}
			for k := 1; k <= tc.every; k++ {
				f.data(k, 0, ecn.NotECT)
				got := len(f.drain())
				if want := map[bool]int{true: 1, false: 0}[k == tc.every]; got != want {
					t.Errorf("segment %d of %d: %d ACKs at once, want %d", k, tc.every, got, want)
				}
			}
		})
	}
}

// TestReceiveSettingsValidate: the receiving side's settings are refused
// out of their ranges, naming the field.
func TestReceiveSettingsValidate(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string // "" = valid
	}{
		{Config{AckEvery: MaxAckEvery, DelayedAck: MaxDelayedAck - 1, RecvWindow: MaxRecvWindow}, ""},
		{Config{DelayedAck: NoDelayedAck, RecvWindow: 2 * DefaultMaxDatagram}, ""},
		{Config{AckEvery: MaxAckEvery + 1}, "AckEvery=65"},
		{Config{AckEvery: -1}, "AckEvery=-1"},
		{Config{DelayedAck: MaxDelayedAck}, "DelayedAck=500ms"},
		{Config{DelayedAck: -2}, "DelayedAck=-2ns"},
		{Config{RecvWindow: 2*DefaultMaxDatagram - 1}, "RecvWindow=2399"},
		{Config{RecvWindow: MaxRecvWindow + 1}, "RecvWindow=1073741825"},
	} {
		c := tc.cfg
		c.fill(DefaultConfig())
		err := c.Validate()
		if got := fmt.Sprint(err); (tc.want == "") != (err == nil) || !strings.Contains(got, tc.want) {
			t.Errorf("Validate(%+v) = %v, want %q", tc.cfg, err, tc.want)
		}
	}
}
