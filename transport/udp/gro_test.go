package udp

import (
	"errors"
	"net/netip"
	"sync"
	"testing"
	"time"

	"cclab/clock"
	"cclab/ecn"
	"cclab/internal/testenv"
	"cclab/netio"
	"cclab/transport"
)

// groConn is a netio.Conn whose first read returns one coalesced (GRO)
// message of segs datagrams of seg bytes (the last one short), as the
// kernel does; later reads block until Close. It records what is written.
type groConn struct {
	mu      sync.Mutex
	segs    int
	seg     int
	read    bool
	closed  chan struct{}
	written [][]byte
}

func (g *groConn) ReadBatch(ms []netio.Message) (int, error) {
	g.mu.Lock()
	first := !g.read
	g.read = true
	g.mu.Unlock()
	if !first {
		<-g.closed
		return 0, netio.ErrClosed
	}
	m := &ms[0]
	m.N = 0
	for i := 0; i < g.segs; i++ {
		k := g.seg
		if i == g.segs-1 {
			k = g.seg / 2
		}
		for j := 0; j < k; j++ {
			m.Buf[m.N+j] = byte(i)
		}
		m.N += k
	}
	m.Seg, m.Addr, m.ECN = g.seg, addrB, ecn.ECT0
	return 1, nil
}

func (g *groConn) WriteBatch(ms []netio.Message) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, m := range ms {
		g.written = append(g.written, append([]byte(nil), m.Buf[:m.N]...))
	}
	return len(ms), nil
}

func (g *groConn) LocalAddr() netip.AddrPort { return addrA }
func (g *groConn) Close() error              { close(g.closed); return nil }

// answerEngine records each datagram it receives and answers every one
// with a one-byte datagram naming it (as a receiver's ACK would).
type answerEngine struct {
	got     [][]byte
	cps     []ecn.Codepoint
	pending []byte
}

func (a *answerEngine) Receive(_ clock.Time, _ netip.AddrPort, cp ecn.Codepoint, b []byte) {
	a.got = append(a.got, append([]byte(nil), b...))
	a.cps = append(a.cps, cp)
	a.pending = append(a.pending, b[0])
}

func (a *answerEngine) Transmit(_ clock.Time, buf []byte) (int, netip.AddrPort, ecn.Codepoint) {
	if len(a.pending) == 0 {
		return 0, netip.AddrPort{}, ecn.NotECT
	}
	buf[0] = a.pending[0]
	a.pending = a.pending[1:]
	return 1, addrB, ecn.NotECT
}

func (a *answerEngine) Deadline() clock.Time  { return clock.Never }
func (a *answerEngine) OnDeadline(clock.Time) {}

// TestLoopSplitsGROReads: a coalesced read of 100 datagrams (more than a
// batch of answers) reaches the engine as 100 datagrams, in order, with
// their sizes and the message's ECN codepoint, and the engine is asked to
// transmit after each one: all 100 answers go out, in order.
func TestLoopSplitsGROReads(t *testing.T) {
	const segs, seg = 100, 600
	g := &groConn{segs: segs, seg: seg, closed: make(chan struct{})}
	eng := &answerEngine{}
	l := newLoop(eng, g, 0, netio.GROBufSize, 0, false)
	l.run()
	deadline := time.Now().Add(10 * time.Second)
	for {
		g.mu.Lock()
		n := len(g.written)
		g.mu.Unlock()
		if n >= segs || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	l.close()
	if len(eng.got) != segs {
		t.Fatalf("engine received %d datagrams, want %d", len(eng.got), segs)
	}
	for i, b := range eng.got {
		want := seg
		if i == segs-1 {
			want = seg / 2
		}
		if len(b) != want || b[0] != byte(i) || b[len(b)-1] != byte(i) || eng.cps[i] != ecn.ECT0 {
			t.Fatalf("datagram %d: got %d bytes of %d (%v), want %d bytes of %d (ECT(0))", i, len(b), b[0], eng.cps[i], want, i)
		}
	}
	if len(g.written) != segs {
		t.Fatalf("answers sent: got %d, want %d (one per datagram)", len(g.written), segs)
	}
	for i, w := range g.written {
		if w[0] != byte(i) {
			t.Fatalf("answer %d names datagram %d, want %d (order kept)", i, w[0], i)
		}
	}
	if st := l.stats; st.GROReads != 1 || st.DatagramsIn != segs {
		t.Errorf("stats: GROReads %d, DatagramsIn %d; want 1 and %d", st.GROReads, st.DatagramsIn, segs)
	}
}

// TestTransferUDPGROAckRule: over loopback with UDP GRO on (the default)
// and off, a transfer completes intact and the receiver still sends at
// least one ACK per two full segments (the transport's rule, as in the
// simulator), although GRO hands it many segments per read.
func TestTransferUDPGROAckRule(t *testing.T) {
	for _, noGRO := range []bool{false, true} {
		scfg := Config{Endpoint: transport.EndpointConfig{Server: true}, NoGRO: noGRO}
		srv, cli := udpPair(t, scfg, Config{NoGRO: noGRO})
		if !noGRO && !srv.LoopStats().GRO {
			testenv.Need(t, "UDP GRO", errors.New("netio.EnableGRO failed (Linux ≥ 5.0 needed; CCLAB_NO_GRO set?)"))
		}
		const n = 16 << 20
		c, s := transfer(t, cli, srv, srv.LocalAddr(), n)
		checkDigests(t, c, s, n)
		mss := int64(c.Stats().MSS)
		segs := n / mss // full segments
		acks := int64(s.Stats().AcksSent)
		st := srv.LoopStats()
		t.Logf("GRO=%v: %d segments, %d ACKs, %d reads held coalesced datagrams, %d datagrams in", st.GRO, segs, acks, st.GROReads, st.DatagramsIn)
		if acks*2 < segs {
			t.Errorf("GRO=%v: %d ACKs for %d full segments, want at least one per two", st.GRO, acks, segs)
		}
		if !noGRO && st.GROReads == 0 {
			t.Errorf("GRO on: no coalesced read in a %d-byte transfer (GSO sends arrive whole)", n)
		}
		if noGRO && st.GROReads != 0 {
			t.Errorf("GRO off: %d coalesced reads, want 0", st.GROReads)
		}
	}
}
