package transport

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"
	"time"

	"cclab/clock"
	"cclab/ecn"
)

// dnet runs datagram-mode connections over a simNet, checking every
// datagram decodes.
type dnet struct {
	simNet
	app func(n *dnet)
}

func newDnet(t testing.TB, seed uint64, fwd, rev pathModel, cfg DgramConfig) *dnet {
	n := &dnet{simNet: newSimNet(t, seed, fwd, rev)}
	n.simNet.send = n.send
	n.eps[0] = NewEndpoint(EndpointConfig{Dgram: DgramEndpointConfig{Defaults: cfg}, Rand: rand.New(rand.NewPCG(seed, 3))})
	n.eps[1] = NewEndpoint(EndpointConfig{Server: true, Dgram: DgramEndpointConfig{Defaults: cfg}, Rand: rand.New(rand.NewPCG(seed, 4))})
	return n
}

func (n *dnet) send(from int, b []byte, cp ecn.Codepoint) {
	var sp packet
	var dp dgramPacket
	if b[1] == byte(typeDgram) {
		if r := decodeDgram(b, &dp); r != RejectNone {
			n.t.Fatalf("endpoint %d sent a datagram its peer rejects: %v", from, r)
		}
	} else if r := decodePacket(b, &sp); r != RejectNone {
		n.t.Fatalf("endpoint %d sent a datagram its peer rejects: %v", from, r)
	}
	n.carry(from, n.addrs[from], b, cp)
}

// run steps until done() (nil: never) or the clock reaches limit (where it
// then stops); it reports whether done.
func (n *dnet) run(limit time.Duration, done func() bool) bool {
	end := n.now.Add(limit)
	for {
		if n.app != nil {
			n.app(n)
		}
		n.flush()
		if done != nil && done() {
			return true
		}
		if !n.advance(end) {
			n.now = min(n.now, end)
			return false
		}
	}
}

// seqSource writes an increasing counter into datagrams of size bytes.
type seqSource struct {
	size int
	n    uint64
}

func (s *seqSource) Next(_ clock.Time, b []byte) int {
	k := min(s.size, len(b))
	binary.BigEndian.PutUint64(b, s.n)
	s.n++
	return k
}

// dial opens a datagram conn from 0 to 1 with src, accepts it at 1 and
// runs until established; the server reads everything if read is set.
func (n *dnet) dial(cfg DgramConfig, src DgramSource, read bool) (cli *DgramConn, srv **DgramConn) {
	c, err := n.eps[0].DialDgram(n.now, n.addrs[1], cfg)
	if err != nil {
		n.t.Fatal(err)
	}
	if src != nil {
		c.SetSource(n.now, src)
	}
	var s *DgramConn
	buf := make([]byte, 65536)
	n.app = func(n *dnet) {
		if s == nil {
			s = n.eps[1].AcceptDgram()
		}
		if s != nil && read {
			for {
				if _, ok := s.Recv(buf); !ok {
					break
				}
			}
		}
	}
	if !n.run(5*time.Second, func() bool { return c.Established() && s != nil }) {
		n.t.Fatalf("handshake did not complete: %v", c.Err())
	}
	return c, &s
}

var bottleneck = pathModel{Delay: 20 * time.Millisecond, Rate: 10e6, QueueBytes: 30 * 1200}

func TestDgramGreedyCCID2(t *testing.T) {
	rev := pathModel{Delay: 20 * time.Millisecond}
	n := newDnet(t, 1, bottleneck, rev, DgramConfig{})
	cli, srv := n.dial(DgramConfig{}, &seqSource{size: 1100}, true)
	n.run(10*time.Second, nil)
	cs, ss := cli.Stats(), (*srv).Stats()
	// No retransmission: every data packet carries a new datagram.
	if cs.DataSent != cs.Generated {
		t.Errorf("data sent %d, generated %d: want equal (greedy, nothing queued or resent)", cs.DataSent, cs.Generated)
	}
	// Throughput near the 10 Mbit/s bottleneck (payload share of 1100/1143 bytes).
	gp := float64(ss.RecvBytes) * 8 / 10
	if gp < 0.75*10e6 || gp > 10e6 {
		t.Errorf("goodput got %.2f Mbit/s, want 7.5..10", gp/1e6)
	}
	// What the network dropped, the sender declared lost (or is still in flight).
	netDrop := uint64(n.paths[0].dropped)
	if got := cs.Lost + cs.LostRTO; got+uint64(cs.InFlight)+5 < netDrop || got > netDrop+uint64(cs.InFlight) {
		t.Errorf("sender declared %d lost, path dropped %d (in flight %d)", got, netDrop, cs.InFlight)
	}
	if ss.RecvLost != netDrop && ss.RecvLost+uint64(cs.InFlight) < netDrop {
		t.Errorf("receiver counted %d lost, path dropped %d", ss.RecvLost, netDrop)
	}
	if cs.Congestion == 0 {
		t.Errorf("no congestion events over a drop-tail bottleneck")
	}
	// Ack of acks keeps the receiver's Ack Vector state small.
	if ss.VecSpan > 4*cs.CwndPackets+64 {
		t.Errorf("receiver keeps %d packets of state, cwnd %d: ack-of-ack trimming not working", ss.VecSpan, cs.CwndPackets)
	}
	if ss.PeerAckRatio != cs.AckRatio {
		t.Errorf("receiver's Ack Ratio %d, sender's %d: want equal", ss.PeerAckRatio, cs.AckRatio)
	}
	t.Logf("goodput %.2f Mbit/s, sent %d, lost %d (path %d), recvLost %d, cong %d, acks %d, R %d, cwnd %d, span %d",
		gp/1e6, cs.DataSent, cs.Lost, netDrop, ss.RecvLost, cs.Congestion, ss.AcksSent, cs.AckRatio, cs.CwndPackets, ss.VecSpan)
}

// TestDgramAckRatio: the receiver acknowledges every R data packets, for
// the R the sender sends (RFC 4341 §6).
func TestDgramAckRatio(t *testing.T) {
	for _, r := range []int{1, 2, 3, 5} {
		fwd := pathModel{Delay: 10 * time.Millisecond, Rate: 20e6}
		rev := pathModel{Delay: 10 * time.Millisecond}
		cfg := DgramConfig{CC: "ccid2:adapt=false,iw=40,ackratio=" + string(rune('0'+r)), AckDelay: time.Second}
		n := newDnet(t, 2, fwd, rev, cfg)
		_, srv := n.dial(cfg, &seqSource{size: 1000}, true)
		n.run(2*time.Second, nil)
		ss := (*srv).Stats()
		if ss.PeerAckRatio != r {
			t.Errorf("R=%d: receiver uses %d", r, ss.PeerAckRatio)
			continue
		}
		want := float64(ss.RecvDelivered) / float64(r)
		if got := float64(ss.AcksSent); got < want-3 || got > want+3 {
			t.Errorf("R=%d: %d data packets, %v acks, want about %.0f", r, ss.RecvDelivered, got, want)
		}
	}
}

// TestDgramAckRatioBoundedByCwnd: R <= ceil(cwnd/2) even with a fixed Reno
// controller, whose Ack Ratio comes from the config.
func TestDgramAckRatioBoundedByCwnd(t *testing.T) {
	cfg := DgramConfig{CC: "reno:iw=2", AckRatio: 8}
	n := newDnet(t, 3, pathModel{Delay: 10 * time.Millisecond}, pathModel{Delay: 10 * time.Millisecond}, cfg)
	cli, _ := n.dial(cfg, &seqSource{size: 1000}, true)
	if got := cli.Stats().AckRatio; got != 1 {
		t.Errorf("cwnd 2: R got %d, want 1", got)
	}
	n.run(time.Second, nil)
	if got := cli.Stats().AckRatio; got != 8 {
		t.Errorf("large cwnd: R got %d, want the configured 8", got)
	}
}

func TestDgramAckLossRaisesAckRatio(t *testing.T) {
	cfg := DgramConfig{CC: "ccid2:iw=40"}
	fwd := pathModel{Delay: 20 * time.Millisecond, Rate: 20e6, QueueBytes: 200 * 1200}
	rev := pathModel{Delay: 20 * time.Millisecond, Loss: 0.2}
	n := newDnet(t, 4, fwd, rev, cfg)
	cli, _ := n.dial(cfg, &seqSource{size: 1000}, true)
	n.run(3*time.Second, nil)
	cs := cli.Stats()
	if cs.AckLoss == 0 {
		t.Fatalf("no ACK loss detected with 20%% reverse loss")
	}
	maxR := 0
	for _, c := range cli.AckRatioLog() {
		maxR = max(maxR, c.Ratio)
	}
	if maxR <= 2 {
		t.Errorf("Ack Ratio never rose above 2 with ACK loss (log %v)", cli.AckRatioLog())
	}
}

func TestDgramECN(t *testing.T) {
	cfg := DgramConfig{ECN: true}
	fwd := pathModel{Delay: 10 * time.Millisecond, Rate: 10e6, QueueBytes: 1 << 20, MarkBytes: 15 * 1200}
	n := newDnet(t, 5, fwd, pathModel{Delay: 10 * time.Millisecond}, cfg)
	cli, srv := n.dial(cfg, &seqSource{size: 1100}, true)
	n.run(5*time.Second, nil)
	cs, ss := cli.Stats(), (*srv).Stats()
	if n.paths[0].marked == 0 || ss.RecvCE == 0 {
		t.Fatalf("no CE marks (path %d, receiver %d)", n.paths[0].marked, ss.RecvCE)
	}
	if cs.AckedECN == 0 || cs.Congestion == 0 {
		t.Errorf("sender saw %d ECN-marked acks, %d congestion events; want > 0", cs.AckedECN, cs.Congestion)
	}
	if cs.Lost != 0 || n.paths[0].dropped != 0 {
		t.Errorf("losses with ECN and a large queue: sender %d, path %d", cs.Lost, n.paths[0].dropped)
	}
	if uint64(n.paths[0].marked) < cs.AckedECN {
		t.Errorf("acked ECN %d > marked %d", cs.AckedECN, n.paths[0].marked)
	}
}

func TestDgramRecvQueueDrops(t *testing.T) {
	cfg := DgramConfig{RecvQueue: 10, CC: "none", Rate: 1e6}
	n := newDnet(t, 6, pathModel{Delay: 5 * time.Millisecond}, pathModel{Delay: 5 * time.Millisecond}, cfg)
	_, srv := n.dial(cfg, &seqSource{size: 500}, false)
	n.run(time.Second, nil)
	ss := (*srv).Stats()
	if ss.RecvDelivered != 10 || ss.RecvDropped == 0 || (*srv).Readable() != 10 {
		t.Errorf("unread queue: delivered %d dropped %d readable %d; want 10, > 0, 10", ss.RecvDelivered, ss.RecvDropped, (*srv).Readable())
	}
	var b [8]byte
	if _, ok := (*srv).Recv(b[:]); !ok || binary.BigEndian.Uint64(b[:]) != 0 {
		t.Errorf("first datagram read: got %d, want 0", binary.BigEndian.Uint64(b[:]))
	}
}

func TestDgramSendQueuePolicy(t *testing.T) {
	for _, pol := range []DropPolicy{DropNewest, DropOldest} {
		cfg := DgramConfig{SendQueue: 5, DropPolicy: pol, CC: "ccid2:iw=2", Rate: 8e6}
		// The reverse path loses everything after the handshake: no ACKs,
		// the window stays shut and the queue fills.
		rev := pathModel{Delay: 5 * time.Millisecond}
		n := newDnet(t, 7, pathModel{Delay: 5 * time.Millisecond}, rev, cfg)
		src := &seqSource{size: 1000}
		cli, _ := n.dial(cfg, src, true)
		n.paths[1].Loss = 1
		n.run(100*time.Millisecond, nil)
		cs := cli.Stats()
		if cli.Queued() != 5 || cs.QueueDropped == 0 || cs.Generated != cs.QueueDropped+cs.DataSent+5 {
			t.Errorf("%v: queued %d, dropped %d, generated %d, sent %d", pol, cli.Queued(), cs.QueueDropped, cs.Generated, cs.DataSent)
			continue
		}
		first := binary.BigEndian.Uint64(cli.sq.front())
		if pol == DropOldest && first != src.n-5 {
			t.Errorf("drop-oldest: head of queue %d, want the 5th newest %d", first, src.n-5)
		}
		if pol == DropNewest && first != cs.DataSent {
			t.Errorf("drop-newest: head of queue %d, want the first unsent %d", first, cs.DataSent)
		}
	}
}

func TestDgramUncontrolledIgnoresLoss(t *testing.T) {
	cfg := DgramConfig{CC: "none", Rate: 2e6}
	fwd := pathModel{Delay: 10 * time.Millisecond, Loss: 0.1}
	n := newDnet(t, 8, fwd, pathModel{Delay: 10 * time.Millisecond}, cfg)
	cli, srv := n.dial(cfg, &seqSource{size: 1000}, true)
	n.run(4*time.Second, nil)
	cs, ss := cli.Stats(), (*srv).Stats()
	want := 2e6 * 4 / 8000 // datagrams at 2 Mbit/s for 4 s
	if got := float64(cs.DataSent); got < 0.97*want || got > 1.03*want {
		t.Errorf("sent %v datagrams, want %.0f (fixed rate regardless of loss)", got, want)
	}
	// Equal but for losses at the very end (no later packet shows the gap).
	if d := uint64(n.paths[0].dropped); ss.RecvLost > d || d-ss.RecvLost > 2 {
		t.Errorf("receiver lost %d, path dropped %d", ss.RecvLost, d)
	}
}

func TestDgramOnOff(t *testing.T) {
	cfg := DgramConfig{CC: "none", Rate: 8e6, On: 100 * time.Millisecond, Off: 300 * time.Millisecond}
	n := newDnet(t, 9, pathModel{Delay: 5 * time.Millisecond}, pathModel{Delay: 5 * time.Millisecond}, cfg)
	cli, _ := n.dial(cfg, &seqSource{size: 1000}, true)
	n.run(4*time.Second, nil)
	want := 8e6 * 4 / 8000 / 4 // ON a quarter of the time
	if got := float64(cli.Stats().DataSent); got < 0.9*want || got > 1.1*want {
		t.Errorf("ON/OFF sent %v, want about %.0f", got, want)
	}
}

func TestDgramCloseAndTimeouts(t *testing.T) {
	cfg := DgramConfig{}
	n := newDnet(t, 10, pathModel{Delay: 5 * time.Millisecond}, pathModel{Delay: 5 * time.Millisecond}, cfg)
	cli, srv := n.dial(cfg, nil, true)
	for i := 0; i < 20; i++ {
		if !cli.Send(n.now, []byte("hello")) {
			t.Fatal("Send refused")
		}
	}
	cli.Close(n.now)
	if !n.run(5*time.Second, func() bool { return cli.Done() && (*srv).Done() }) {
		t.Fatalf("close did not finish: cli %v srv %v", cli.Done(), (*srv).Done())
	}
	if cli.Err() != nil || (*srv).Err() != nil {
		t.Errorf("errors after close: %v, %v", cli.Err(), (*srv).Err())
	}
	if got := (*srv).Stats().RecvDelivered; got != 20 {
		t.Errorf("delivered %d before close, want 20", got)
	}
	n.run(10*time.Second, nil)
	if len(n.eps[0].DgramConns())+len(n.eps[1].DgramConns()) != 0 {
		t.Errorf("closed conns not removed")
	}
	// A peer that is gone: CLOSE is retried and then the conn ends anyway.
	c2, err := n.eps[0].DialDgram(n.now, n.addrs[1], cfg)
	if err != nil {
		t.Fatal(err)
	}
	n.run(time.Second, func() bool { return c2.Established() })
	n.paths[0].Loss = 1
	c2.Close(n.now)
	if !n.run(time.Minute, func() bool { return c2.Done() }) || c2.Err() != nil {
		t.Errorf("close to a silent peer: done %v err %v", c2.Done(), c2.Err())
	}
	// Handshake timeout.
	c3, _ := n.eps[0].DialDgram(n.now, n.addrs[1], DgramConfig{HandshakeTimeout: 3 * time.Second})
	n.run(time.Minute, func() bool { return c3.Done() })
	if c3.Err() != ErrHandshakeTimeout {
		t.Errorf("handshake to a black hole: err %v, want %v", c3.Err(), ErrHandshakeTimeout)
	}
}

// TestDgramAmplification: before the client proves its address the
// server sends one Retry (no state) and then one Accept per Initial with a
// valid token, and nothing else, fewer bytes than it received.
func TestDgramAmplification(t *testing.T) {
	cfg := DgramConfig{}
	fwd := pathModel{Delay: 5 * time.Millisecond}
	fwd.Drop = func(b []byte) bool { return b[1] == byte(typeDgram) } // the client's validating packets are lost
	n := newDnet(t, 11, fwd, pathModel{Delay: 5 * time.Millisecond}, cfg)
	c, err := n.eps[0].DialDgram(n.now, n.addrs[1], cfg)
	if err != nil {
		t.Fatal(err)
	}
	c.SetSource(n.now, &seqSource{size: 1000})
	n.run(3*time.Second, nil)
	if n.paths[1].sent != 2 {
		t.Errorf("server sent %d datagrams to an unvalidated client, want 2 (the Retry and the Accept)", n.paths[1].sent)
	}
	if st := n.eps[1].Stats(); st.BytesOut > st.BytesIn || st.RetriesSent != 1 {
		t.Errorf("server sent %d bytes for %d received, %d Retries; want at most 1x and one Retry", st.BytesOut, st.BytesIn, st.RetriesSent)
	}
}

// TestDgramAndStreamShareEndpoint: one server endpoint accepts a stream
// and a datagram connection at once (the hsDgram bit).
func TestDgramAndStreamShareEndpoint(t *testing.T) {
	n := newDnet(t, 12, pathModel{Delay: 5 * time.Millisecond, Rate: 20e6}, pathModel{Delay: 5 * time.Millisecond}, DgramConfig{})
	sc, err := n.eps[0].Dial(n.now, n.addrs[1], Config{})
	if err != nil {
		t.Fatal(err)
	}
	sc.SetSource(NewPatternSource(1), 1<<20)
	cli, srv := n.dial(DgramConfig{}, &seqSource{size: 1000}, true)
	var ss *Conn
	buf := make([]byte, 1<<16)
	app := n.app
	n.app = func(n *dnet) {
		app(n)
		if ss == nil {
			ss = n.eps[1].Accept()
		}
		if ss != nil {
			for ss.Read(buf) > 0 {
			}
		}
	}
	n.run(3*time.Second, func() bool { return ss != nil && ss.Stats().BytesRead == 1<<20 })
	if ss == nil || ss.Stats().BytesRead != 1<<20 {
		t.Errorf("stream did not complete next to a datagram flow")
	}
	if (*srv).Stats().RecvDelivered == 0 || cli.Stats().Acked == 0 {
		t.Errorf("datagram flow made no progress next to a stream")
	}
	if r := n.eps[1].Stats().Rejected(); r != 0 {
		t.Errorf("server rejected %d datagrams: %v", r, n.eps[1].Stats().Rejects)
	}
}

// TestDgramRTOResets: a black-holed path makes the sender time out with
// backoff, cwnd 1 and Ack Ratio 1, without retransmitting.
func TestDgramRTOResets(t *testing.T) {
	cfg := DgramConfig{}
	n := newDnet(t, 13, pathModel{Delay: 10 * time.Millisecond, Rate: 10e6, QueueBytes: 30 * 1200}, pathModel{Delay: 10 * time.Millisecond}, cfg)
	cli, _ := n.dial(cfg, &seqSource{size: 1000}, true)
	n.run(time.Second, nil)
	before := cli.Stats()
	n.paths[0].Loss = 1
	if !n.run(3*time.Second, func() bool { return cli.Stats().RTOs > before.RTOs }) {
		t.Fatalf("no RTO on a black-holed path")
	}
	first := cli.Stats()
	if first.CwndPackets != 1 || first.AckRatio != 1 || first.InFlight > 1 {
		t.Errorf("after the RTO: cwnd %d, R %d, in flight %d; want 1, 1, <= 1 (one new packet)", first.CwndPackets, first.AckRatio, first.InFlight)
	}
	n.run(6300*time.Millisecond, nil)
	cs := cli.Stats()
	// Backoff (RFC 6298 §5.5): RTO r, 2r, 4r, ... so at most about
	// log2(6.3 s / 200 ms) + 1 packets, one per timeout, none retransmitted.
	if sent, rtos := cs.DataSent-first.DataSent, cs.RTOs-first.RTOs; sent > rtos+1 || rtos > 6 || rtos < 3 {
		t.Errorf("black hole for 6.3 s after the first RTO: %d packets, %d RTOs; want <= RTOs+1, 3..6 RTOs", sent, rtos)
	}
}

// BenchmarkDgramTransfer moves datagrams between two endpoints directly
// (no path model), so the allocations reported are the transport's own.
func BenchmarkDgramTransfer(b *testing.B) {
	cfg := DgramConfig{}
	n := newDnet(b, 1, pathModel{Delay: 5 * time.Millisecond}, pathModel{Delay: 5 * time.Millisecond}, cfg)
	cli, srv := n.dial(cfg, &seqSource{size: 1100}, true)
	s := *srv
	buf, rb := make([]byte, 2048), make([]byte, 2048)
	now := n.now
	for i := 0; i < 1000; i++ { // warm up: rings and queues reach their size
		benchStep(n, s, &now, buf, rb)
	}
	b.ReportAllocs()
	b.ResetTimer()
	start := cli.Stats().DataSent
	for cli.Stats().DataSent-start < uint64(b.N) {
		benchStep(n, s, &now, buf, rb)
	}
}

func benchStep(n *dnet, s *DgramConn, now *clock.Time, buf, rb []byte) {
	*now = now.Add(100 * time.Microsecond)
	for {
		k, _, cp := n.eps[0].Transmit(*now, buf)
		if k == 0 {
			break
		}
		n.eps[1].Receive(*now, n.addrs[0], cp, buf[:k])
	}
	for {
		if _, ok := s.Recv(rb); !ok {
			break
		}
	}
	for {
		k, _, cp := n.eps[1].Transmit(*now, buf)
		if k == 0 {
			break
		}
		n.eps[0].Receive(*now, n.addrs[1], cp, buf[:k])
	}
	if d := n.eps[0].Deadline(); d <= *now {
		n.eps[0].OnDeadline(*now)
	}
	if d := n.eps[1].Deadline(); d <= *now {
		n.eps[1].OnDeadline(*now)
	}
}

func TestDgramMeter(t *testing.T) {
	var src StampSource
	var m DgramMeter
	b := make([]byte, 100)
	t0 := clock.Start
	// Send 0..9 every 10 ms; 3 and 4 lost, 6 arrives after 7; transit 5 ms
	// except 8 at 9 ms (a 4 ms swing).
	type arr struct {
		seq uint64
		at  time.Duration
	}
	stamps := map[uint64][]byte{}
	for i := 0; i < 10; i++ {
		n := src.Next(t0.Add(time.Duration(i)*10*time.Millisecond), b)
		stamps[uint64(i)] = append([]byte(nil), b[:n]...)
	}
	for _, a := range []arr{{0, 5}, {1, 15}, {2, 25}, {5, 55}, {7, 75}, {6, 76}, {8, 89}, {9, 95}} {
		if err := m.Add(t0.Add(a.at*time.Millisecond), stamps[a.seq]); err != nil {
			t.Fatal(err)
		}
	}
	if m.Received != 8 || m.Missing != 2 || m.Late != 1 {
		t.Errorf("received %d missing %d late %d, want 8 2 1", m.Received, m.Missing, m.Late)
	}
	if m.DelayMin != 5*time.Millisecond || m.DelayMax != 16*time.Millisecond {
		t.Errorf("delay min %v max %v, want 5ms 16ms", m.DelayMin, m.DelayMax)
	}
	// RFC 3550 jitter by hand over the transits 5,5,5,5,5,16,9,5 ms.
	j := 0.0
	tr := []float64{5, 5, 5, 5, 5, 16, 9, 5}
	for i := 1; i < len(tr); i++ {
		d := tr[i] - tr[i-1]
		if d < 0 {
			d = -d
		}
		j += (d - j) / 16
	}
	if got := float64(m.Jitter) / 1e6; got < j-0.01 || got > j+0.01 {
		t.Errorf("jitter got %.3f ms, want %.3f", got, j)
	}
	if m.Add(t0, b[:5]) != ErrShortStamp || m.Bad != 1 {
		t.Errorf("short datagram not counted as bad")
	}
}

// TestDgramStopSource: SetSource(nil) on a rate-driven conn stops
// generation (it must not generate from a nil source at the next deadline).
func TestDgramStopSource(t *testing.T) {
	rev := pathModel{Delay: 20 * time.Millisecond}
	n := newDnet(t, 1, bottleneck, rev, DgramConfig{})
	cli, _ := n.dial(DgramConfig{CC: "none", Rate: 1e6}, &seqSource{size: 500}, true)
	n.run(200*time.Millisecond, nil)
	before := cli.Stats().Generated
	if before == 0 {
		t.Fatal("no datagrams generated before the source was removed")
	}
	cli.SetSource(n.now, nil)
	n.run(time.Second, nil)
	if got := cli.Stats().Generated; got != before {
		t.Errorf("datagrams generated after SetSource(nil): got %d, want %d", got, before)
	}
}
