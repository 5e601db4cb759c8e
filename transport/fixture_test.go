package transport

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"testing"
	"time"

	"cclab/ccalgo"
	"cclab/clock"
	"cclab/ecn"
	"cclab/internal/spec"
)

// testCC is a controller with a fixed window and recorded calls, so recovery
// and transport rules can be checked without controller dynamics.
// ssthresh = max(FlightSize/2, 2*MSS) on loss and ECN (RFC 5681 eq. 4);
// cwnd = ssthresh on ECN and on recovery exit; 1 MSS on RTO.
type testCC struct {
	mss, cwnd, ssthresh int
	calls               []string
	last                ccalgo.Ack // the latest OnAck
}

type testCCConfig struct {
	Cwnd int `param:"cwnd" help:"window, packets"`
}

func (c *testCC) Name() string                { return "testcc" }
func (c *testCC) OnSent(clock.Time, int, int) {}
func (c *testCC) OnAck(a ccalgo.Ack) {
	c.last = a
	c.calls = append(c.calls, fmt.Sprintf("ack %d rec=%v", a.Acked, a.InRecovery))
}
func (c *testCC) Cwnd() int           { return c.cwnd }
func (c *testCC) Ssthresh() int       { return c.ssthresh }
func (c *testCC) State() ccalgo.State { return ccalgo.State{Cwnd: c.cwnd, Ssthresh: c.ssthresh} }
func (c *testCC) OnRecoveryExit(clock.Time, int) {
	c.cwnd = c.ssthresh
	c.calls = append(c.calls, "exit")
}
func (c *testCC) OnRTO(_ clock.Time, inFlight int) {
	c.ssthresh = max(inFlight/2, 2*c.mss)
	c.cwnd = c.mss
	c.calls = append(c.calls, "rto")
}
func (c *testCC) OnCongestion(g ccalgo.Congestion) {
	c.ssthresh = max(g.InFlight/2, 2*c.mss)
	if g.Kind == ccalgo.ECN {
		c.cwnd = c.ssthresh
	}
	c.calls = append(c.calls, "congestion "+g.Kind.String())
}

func init() {
	ccalgo.Registry.Register(spec.Entry[ccalgo.Controller, ccalgo.Env]{
		Name: "testcc", Doc: "test controller with a fixed window",
		Defaults: func() any { return &testCCConfig{Cwnd: 10} },
		Build: func(cfg any, env ccalgo.Env) (ccalgo.Controller, error) {
			c := cfg.(*testCCConfig)
			return &testCC{mss: env.MSS, cwnd: c.Cwnd * env.MSS, ssthresh: 1 << 30}, nil
		},
	})
	// Stand-in until ccalgo's Reno lands (the real one registers first).
	if _, ok := ccalgo.Registry.Lookup("reno"); !ok {
		ccalgo.Registry.Register(spec.Entry[ccalgo.Controller, ccalgo.Env]{
			Name: "reno", Doc: "test stand-in", Defaults: func() any { return &testCCConfig{Cwnd: 10} },
			Build: func(cfg any, env ccalgo.Env) (ccalgo.Controller, error) {
				return &testCC{mss: env.MSS, cwnd: 10 * env.MSS, ssthresh: 1 << 30}, nil
			},
		})
	}
}

const testMSS = DefaultMaxDatagram - maxShortOverhead

// fixture is a client conn whose peer is the test itself: datagrams are
// decoded and crafted by hand.
type fixture struct {
	t    *testing.T
	now  clock.Time
	ep   *Endpoint
	c    *Conn
	peer netip.AddrPort
	buf  []byte
	pn   uint64
	sent []packet // decoded datagrams from the last drain
	cps  []ecn.Codepoint
}

// newFixture dials and completes the handshake with a crafted Accept.
func newFixture(t *testing.T, cfg Config, peerWindow uint64, ecnOK bool) *fixture {
	f := &fixture{t: t, now: clock.Start, buf: make([]byte, 65536), peer: netip.MustParseAddrPort("192.0.2.1:5201")}
	f.ep = NewEndpoint(EndpointConfig{Rand: rand.New(rand.NewPCG(1, 1))})
	c, err := f.ep.Dial(f.now, f.peer, cfg)
	if err != nil {
		t.Fatal(err)
	}
	f.c = c
	n, _, _ := f.ep.Transmit(f.now, f.buf)
	var ini packet
	if r := decodePacket(f.buf[:n], &ini); r != RejectNone || ini.typ != typeInitial {
		t.Fatalf("first datagram: %v type %d", r, ini.typ)
	}
	f.now = f.now.Add(100 * time.Millisecond)
	acc := packet{typ: typeAccept, dcid: ini.scid, scid: 0xabc, ts: 1, tsecr: ini.ts, maxDatagram: 1200, recvWindow: peerWindow}
	if ecnOK {
		acc.hsFlags = hsECN
	}
	f.recv(&acc, ecn.NotECT)
	if !c.Established() {
		t.Fatal("not established after Accept")
	}
	return f
}

func (f *fixture) recv(p *packet, cp ecn.Codepoint) {
	b := make([]byte, 65536)
	n := encodePacket(b, p)
	f.ep.Receive(f.now, f.peer, cp, b[:n])
}

// drain transmits until nothing is left and decodes what was sent.
func (f *fixture) drain() []packet {
	f.sent, f.cps = f.sent[:0], f.cps[:0]
	for {
		n, _, cp := f.ep.Transmit(f.now, f.buf)
		if n == 0 {
			return f.sent
		}
		var p packet
		if r := decodePacket(f.buf[:n], &p); r != RejectNone {
			f.t.Fatalf("we sent an undecodable datagram: %v", r)
		}
		p.data = append([]byte(nil), p.data...)
		f.sent = append(f.sent, p)
		f.cps = append(f.cps, cp)
	}
}

// dataOffsets lists the offsets of data segments in the last drain.
func (f *fixture) dataOffsets() []uint64 {
	var o []uint64
	for _, p := range f.sent {
		if p.flags&flagDATA != 0 {
			o = append(o, p.off)
		}
	}
	return o
}

// ack feeds an ACK from the peer; echo is the timestamp echoed.
func (f *fixture) ack(cum uint64, echo uint32, blocks ...sackBlock) {
	f.ackFlags(cum, echo, 0, blocks...)
}

func (f *fixture) ackFlags(cum uint64, echo uint32, flags uint8, blocks ...sackBlock) {
	p := packet{typ: typeShort, dcid: f.c.localCID, flags: flagACK | flags, pn: f.pn, ts: 2, tsecr: echo, cumAck: cum, window: 1 << 30}
	f.pn++
	p.nBlocks = copy(p.blocks[:], blocks)
	f.recv(&p, ecn.NotECT)
}

// seg returns the [start, end) of segment k of an MSS-segmented stream.
func seg(k int) sackBlock { return sackBlock{uint64(k * testMSS), uint64((k + 1) * testMSS)} }

// span returns the SACK block covering segments k..j-1.
func span(k, j int) sackBlock { return sackBlock{uint64(k * testMSS), uint64(j * testMSS)} }

func (f *fixture) tcc() *testCC { return f.c.cc.(*testCC) }

// pacedCC is testCC with a fixed pacing rate.
type pacedCC struct {
	testCC
	rate float64 // bits/s
}

func (c *pacedCC) PacingRate() float64 { return c.rate }

func init() {
	ccalgo.Registry.Register(spec.Entry[ccalgo.Controller, ccalgo.Env]{
		Name: "testpaced", Doc: "test controller pacing at 9.6 Mbit/s",
		Defaults: func() any { return &testCCConfig{Cwnd: 100} },
		Build: func(cfg any, env ccalgo.Env) (ccalgo.Controller, error) {
			c := cfg.(*testCCConfig)
			return &pacedCC{testCC: testCC{mss: env.MSS, cwnd: c.Cwnd * env.MSS, ssthresh: 1 << 30}, rate: 9.6e6}, nil
		},
	})
}

// Undo implements ccalgo.Undoer (undo.go): cwnd and ssthresh back to at
// least their values before the episode.
func (c *testCC) Undo(_ clock.Time, cwnd, ssthresh int) {
	c.cwnd = max(c.cwnd, cwnd)
	c.ssthresh = max(c.ssthresh, ssthresh)
	c.calls = append(c.calls, "undo")
}

// OnRTOHold implements ccalgo.SsthreshHolder: the timeout with ssthresh
// kept.
func (c *testCC) OnRTOHold(clock.Time) {
	c.cwnd = c.mss
	c.calls = append(c.calls, "holdrto")
}
