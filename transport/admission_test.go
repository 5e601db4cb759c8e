package transport

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"testing"
	"time"

	"cclab/clock"
	"cclab/ecn"
)

// admitFixture is a server endpoint without Retry (every Initial counts
// as address-validated) fed Initials and confirmations by hand.
type admitFixture struct {
	t   *testing.T
	ep  *Endpoint
	now clock.Time
	n   uint64
}

func newAdmitFixture(t *testing.T, cfg EndpointConfig) *admitFixture {
	cfg.Server, cfg.NoRetry, cfg.Rand = true, true, rand.New(rand.NewPCG(4, 4))
	return &admitFixture{t: t, ep: NewEndpoint(cfg), now: clock.Start}
}

// open sends a fresh Initial from src and returns the connection it made
// (nil: refused) and what the endpoint sent in answer.
func (f *admitFixture) open(src string) (*Conn, []packet, []netip.AddrPort) {
	f.n++
	before := len(f.ep.Conns())
	from := netip.MustParseAddrPort(src)
	f.ep.Receive(f.now, from, ecn.NotECT, initialBytes(1000+f.n, 5000+f.n, nil))
	var c *Conn
	if len(f.ep.Conns()) > before {
		c = f.ep.Conns()[len(f.ep.Conns())-1]
	}
	out, to, _ := drainAll(f.t, f.ep, f.now)
	return c, out, to
}

// confirm sends the client's first packet after the Accept for c.
func (f *admitFixture) confirm(c *Conn) {
	p := packet{typ: typeShort, dcid: c.localCID, flags: flagPING, ts: 1}
	b := make([]byte, 100)
	f.ep.Receive(f.now, c.peer, ecn.NotECT, b[:encodePacket(b, &p)])
	drainAll(f.t, f.ep, f.now)
}

// refusal finds the explicit refusal to dcid among out (sent to to) and
// returns its destination.
func refusal(out []packet, to []netip.AddrPort, dcid uint64) (netip.AddrPort, bool) {
	for i, p := range out {
		if p.typ == typeShort && p.dcid == dcid && p.flags&flagCLOSE != 0 && p.closeCode == CloseReceiverFull {
			return to[i], true
		}
	}
	return netip.AddrPort{}, false
}

// TestAdmitHalfOpenEviction: a full half-open table evicts its oldest
// unconfirmed entry for a new validated peer, which is told nothing but its
// Accept, and the evicted client is told CloseReceiverFull.
func TestAdmitHalfOpenEviction(t *testing.T) {
	f := newAdmitFixture(t, EndpointConfig{MaxHalfOpen: 4})
	var first *Conn
	for i := range 4 {
		c, _, _ := f.open(fmt.Sprintf("192.0.2.%d:1000", i+1))
		if c == nil {
			t.Fatalf("half-open %d refused", i)
		}
		if i == 0 {
			first = c
		}
		f.now = f.now.Add(time.Millisecond)
	}
	c, out, to := f.open("198.51.100.1:1000")
	if c == nil {
		t.Fatalf("new peer refused with a full half-open table (rejects %v), want the oldest evicted", f.ep.Stats().Rejects)
	}
	if got, want := f.ep.Stats().Evicted, uint64(1); got != want {
		t.Errorf("evicted = %d, want %d", got, want)
	}
	if !errors.Is(first.Err(), ErrEvicted) {
		t.Errorf("oldest half-open: err %v, want ErrEvicted", first.Err())
	}
	if dst, ok := refusal(out, to, first.peerCID); !ok || dst != first.peer {
		t.Errorf("no CloseReceiverFull to the evicted client %v among %+v", first.peer, out)
	}
	if got, want := f.ep.Stats().HalfOpen, 4; got != want {
		t.Errorf("half-open = %d, want %d", got, want)
	}
}

// TestAdmitPerSource: the per-source and per-prefix half-open and
// connection limits; established connections are evicted only once idle
// EvictIdle; a refused validated peer gets an explicit refusal.
func TestAdmitPerSource(t *testing.T) {
	f := newAdmitFixture(t, EndpointConfig{MaxConnsPerSource: 3, MaxConnsPerPrefix: 5, MaxHalfOpenPerSource: 2, MaxHalfOpenPerPrefix: 3})
	// Half-open per source: the third evicts the first of that source.
	a, _, _ := f.open("192.0.2.1:1")
	b, _, _ := f.open("192.0.2.1:2")
	c, _, _ := f.open("192.0.2.1:3")
	if a == nil || b == nil || c == nil || !a.Done() || b.Done() {
		t.Fatalf("half-open per source: a %v b %v c %v (a should be evicted)", a, b, c)
	}
	// Half-open per prefix (192.0.2.0/24): another address's entry evicts b.
	d, _, _ := f.open("192.0.2.2:1")
	e, _, _ := f.open("192.0.2.3:1")
	if d == nil || e == nil || !b.Done() {
		t.Fatalf("half-open per prefix: d %v e %v, b done %v (want evicted)", d, e, b.Done())
	}
	for _, x := range []*Conn{c, d, e} {
		f.confirm(x)
	}
	if got := f.ep.Stats().HalfOpen; got != 0 {
		t.Fatalf("half-open after confirmation = %d, want 0", got)
	}
	g, _, _ := f.open("192.0.2.1:4")
	f.confirm(g)
	// Source 192.0.2.1 holds 2 established (c, g), the prefix 4 (c, d, e, g).
	h, _, _ := f.open("192.0.2.1:5")
	f.confirm(h)
	// 192.0.2.1 is at 3 (its limit), the prefix at 5: everything fresh,
	// nothing idle to evict, so a refusal, explicit.
	x, out, to := f.open("192.0.2.1:6")
	if dst, ok := refusal(out, to, 5000+f.n); x != nil || !ok || dst != netip.MustParseAddrPort("192.0.2.1:6") {
		t.Fatalf("4th of a source: conn %v, replies %+v to %v; want refused with CloseReceiverFull", x, out, to)
	}
	if got := f.ep.Stats().Rejects[RejectPerSource]; got != 1 {
		t.Errorf("per_source_limit = %d, want 1", got)
	}
	y, out, to := f.open("192.0.2.9:1")
	if _, ok := refusal(out, to, 5000+f.n); y != nil || !ok || f.ep.Stats().Rejects[RejectPerPrefix] != 1 {
		t.Fatalf("6th of a prefix: conn %v, rejects %v; want per_prefix_limit and a refusal", y, f.ep.Stats().Rejects)
	}
	// Another prefix is not affected.
	if z, _, _ := f.open("198.51.100.1:1"); z == nil {
		t.Fatal("another prefix refused")
	}
	// After EvictIdle of silence, the idlest of the source makes room.
	f.now = f.now.Add(DefaultEvictIdle)
	f.confirm(h) // h heard from: c and g are idle, c the longest
	w, out, to := f.open("192.0.2.1:7")
	if _, ok := refusal(out, to, c.peerCID); w == nil || !c.Done() || !errors.Is(c.Err(), ErrEvicted) || !ok {
		t.Fatalf("idle eviction: new conn %v, c done %v err %v", w, c.Done(), c.Err())
	}
}

// TestAdmitMaxConns: the total limit evicts the idlest established
// connection; the counts stay right when the evicted ones are removed.
func TestAdmitMaxConns(t *testing.T) {
	f := newAdmitFixture(t, EndpointConfig{MaxConns: 3})
	var cs []*Conn
	for i := range 3 {
		c, _, _ := f.open(fmt.Sprintf("203.0.113.%d:1", i+1))
		f.confirm(c)
		cs = append(cs, c)
		f.now = f.now.Add(100 * time.Millisecond)
	}
	if c, _, _ := f.open("203.0.113.9:1"); c != nil {
		t.Fatal("4th connection admitted with nothing idle long enough")
	}
	f.now = f.now.Add(DefaultEvictIdle)
	c, _, _ := f.open("203.0.113.9:2")
	if c == nil || !cs[0].Done() || cs[1].Done() {
		t.Fatalf("after EvictIdle: new %v, oldest done %v, second done %v", c, cs[0].Done(), cs[1].Done())
	}
	for range 3 {
		f.now = f.now.Add(time.Second)
		f.ep.OnDeadline(f.now)
	}
	if got, want := len(f.ep.Conns()), 3; got != want {
		t.Errorf("conns after removal = %d, want %d", got, want)
	}
	if got, want := f.ep.live, 3; got != want {
		t.Errorf("live count = %d, want %d", got, want)
	}
	if got, want := f.ep.perSource[netip.MustParseAddr("203.0.113.1")].conns, 0; got != want {
		t.Errorf("evicted source still counts %d, want %d", got, want)
	}
}

// TestReceiverFullClient: a client told CloseReceiverFull ends with
// ErrReceiverFull, during its handshake or after it; the same CLOSE from
// another address is ignored.
func TestReceiverFullClient(t *testing.T) {
	h := newHarness(t, 1, pathModel{Delay: 5 * time.Millisecond}, pathModel{Delay: 5 * time.Millisecond}, Config{})
	h.eps[1] = NewEndpoint(EndpointConfig{Server: true, MaxConns: 1, Rand: rand.New(rand.NewPCG(1, 4))})
	first, err := h.eps[0].Dial(h.now, h.addrs[1], Config{})
	if err != nil {
		t.Fatal(err)
	}
	if !h.run(time.Second, func() bool { return first.confirmed }) {
		t.Fatal("first connection not established")
	}
	second, _ := h.eps[0].Dial(h.now, h.addrs[1], Config{})
	if !h.run(5*time.Second, second.Done) {
		t.Fatal("second connection neither refused nor established")
	}
	if !errors.Is(second.Err(), ErrReceiverFull) {
		t.Errorf("refused client: err %v, want ErrReceiverFull", second.Err())
	}
	// A refusal from elsewhere does not end a handshake.
	third, _ := h.eps[0].Dial(h.now, h.addrs[1], Config{})
	p := packet{typ: typeShort, dcid: third.localCID, flags: flagCLOSE, closeCode: CloseReceiverFull}
	b := make([]byte, 64)
	h.eps[0].Receive(h.now, netip.MustParseAddrPort("192.0.2.66:5"), ecn.NotECT, b[:encodePacket(b, &p)])
	if third.Done() {
		t.Errorf("a refusal from another address ended the handshake: %v", third.Err())
	}
}

// TestDgramEvictedClient: a datagram-mode client evicted for the server's
// limits ends with ErrReceiverFull (its RESET carries CloseReceiverFull),
// not ErrPeerAborted.
func TestDgramEvictedClient(t *testing.T) {
	n := newDnet(t, 1, pathModel{Delay: 5 * time.Millisecond}, pathModel{Delay: 5 * time.Millisecond}, DgramConfig{CC: "ccid2"})
	n.eps[1] = NewEndpoint(EndpointConfig{Server: true, MaxConns: 1, Rand: rand.New(rand.NewPCG(1, 4))})
	first, _ := n.dial(DgramConfig{}, nil, false)
	n.run(DefaultEvictIdle+time.Second, nil) // idle: no source
	second, err := n.eps[0].DialDgram(n.now, n.addrs[1], DgramConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if !n.run(5*time.Second, func() bool { return first.Done() && second.Established() }) {
		t.Fatalf("first done %v (err %v), second established %v", first.Done(), first.Err(), second.Established())
	}
	if !errors.Is(first.Err(), ErrReceiverFull) {
		t.Errorf("evicted datagram client: err %v, want ErrReceiverFull", first.Err())
	}
}
