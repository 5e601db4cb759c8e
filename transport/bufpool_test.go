package transport

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"reflect"
	"slices"
	"testing"
	"time"

	"cclab/ccalgo"
	"cclab/clock"
	"cclab/event"
)

// poison fills b with buffers of garbage: bytes 0xA5 and segments with
// every field set, as an earlier connection might leave them.
func poison(b *Buffers) {
	for c := range 6 {
		for range 4 {
			r := make([]byte, minRing<<c)
			for i := range r {
				r[i] = 0xA5
			}
			b.putRing(r)
			s := make([]Segment, minSegs<<c)
			for i := range s {
				s[i] = Segment{Off: 1 << 40, Len: 999, Fin: true, SentAt: 12345, TS: 7, Retrans: 3, Sacked: true, Lost: true, SendSeq: 1 << 30}
			}
			b.putSegments(s)
		}
	}
}

// TestBufPoolDeterministic: connections whose scoreboard and rings come
// from free lists full of an earlier connection's garbage behave exactly as
// with fresh buffers (same event trace, every byte delivered), and a
// finished connection gives its empty buffers back.
func TestBufPoolDeterministic(t *testing.T) {
	for _, rec := range []string{"newreno", "rack"} {
		t.Run(rec, func(t *testing.T) {
			fresh := NewBuffers()
			h1, cli, srv := runImpairedBufs(t, 7, 0.05, 512<<10, rec, fresh)
			checkTransfer(t, cli, srv, 512<<10, 0.05)
			if got := [3]bool{cli.sb.segs == nil, srv.rbuf.b == nil, cli.rbuf.b == nil}; got != [3]bool{true, true, true} {
				t.Errorf("finished conns: client scoreboard, server and client receive rings released %v, want all true", got)
			}
			if fresh.Held() == 0 {
				t.Errorf("finished conns returned nothing: Held() = 0")
			}
			dirty := NewBuffers()
			poison(dirty)
			h2, cli, srv := runImpairedBufs(t, 7, 0.05, 512<<10, rec, dirty)
			checkTransfer(t, cli, srv, 512<<10, 0.05)
			if h1.traceHash() != h2.traceHash() {
				t.Errorf("fresh and recycled buffers: traces differ")
			}
		})
	}
}

// TestBuffersBound: a Buffers keeps at most MaxPooledBytes; a nil Buffers
// allocates and keeps nothing.
func TestBuffersBound(t *testing.T) {
	b := NewBuffers()
	big := minRing << (poolClasses - 1) // 4 MiB
	for range 2 * MaxPooledBytes / big {
		b.putRing(make([]byte, big))
	}
	if got, want := b.Held(), MaxPooledBytes; got != want {
		t.Errorf("Held() after putting twice the bound = %d, want %d", got, want)
	}
	r := b.ring(big)
	if got, want := b.Held(), MaxPooledBytes-big; len(r) != big || got != want {
		t.Errorf("after one ring(%d): len %d, Held() = %d, want %d", big, len(r), got, want)
	}
	b.putRing(make([]byte, 3*minRing)) // not a pooled size
	if got, want := b.Held(), MaxPooledBytes-big; got != want {
		t.Errorf("Held() after an unpooled size = %d, want %d", got, want)
	}
	var none *Buffers
	none.putRing(make([]byte, minRing))
	if got := none.Held(); got != 0 || len(none.ring(minRing)) != minRing || len(none.segments(minSegs)) != minSegs {
		t.Errorf("nil Buffers: Held() = %d, want 0 and fresh buffers of the asked size", got)
	}
}

// TestPoolClass: only power-of-two multiples of the smallest size within
// the classes are pooled.
func TestPoolClass(t *testing.T) {
	for _, tc := range []struct{ n, min, want int }{
		{4096, minRing, 0}, {8192, minRing, 1}, {4096 << 10, minRing, 10}, {4096 << 11, minRing, -1},
		{2048, minRing, -1}, {12288, minRing, -1}, {0, minRing, -1}, {64, minSegs, 0}, {96, minSegs, -1},
	} {
		if got := poolClass(tc.n, tc.min); got != tc.want {
			t.Errorf("poolClass(%d, %d) = %d, want %d", tc.n, tc.min, got, tc.want)
		}
	}
}

// BenchmarkConnChurn: one op is one short connection (dial, a 48 kB stream
// as the scale benchmark's mean ON period, both FINs, drain and removal)
// between two Endpoints in memory, with the buffer pools (pooled) and with
// fresh buffers and connections (fresh), side by side in one run; setup is
// the same with a 1-byte stream: the cost of a connection's setup and
// teardown alone (handshake, both FINs, drain, removal).
func BenchmarkConnChurn(b *testing.B) {
	for _, tc := range []struct {
		name    string
		size    int64
		recycle bool
		drop    int
	}{{"pooled", 48 << 10, true, 0}, {"fresh", 48 << 10, false, 0}, {"setup", 1, true, 0},
		{"lossy", 48 << 10, true, churnDrop}} {
		b.Run(tc.name, func(b *testing.B) {
			var bufs *Buffers
			if tc.recycle {
				bufs = NewBuffers()
			}
			benchChurn(b, tc.size, bufs, tc.drop)
		})
	}
}

// churnDrop: a lossy churn drops every churnDrop-th datagram from client to
// server, so that each transfer has out-of-order data and retransmissions.
const churnDrop = 7

func benchChurn(b *testing.B, size int64, bufs *Buffers, drop int) {
	p := newChurnPair(Config{Digest: "none", Sink: event.Discard}, bufs)
	p.drop = drop
	delivered := uint64(0)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		c, s, err := p.one(size)
		if err != nil {
			b.Fatal(err)
		}
		delivered += s.Stats().BytesDelivered
		c.Release() // as the simulator does: recycled once removed
		s.Release()
		p.pause(100 * time.Millisecond) // older connections drain and are removed
	}
	b.StopTimer()
	if delivered != uint64(b.N)*uint64(size) {
		b.Fatalf("delivered %d bytes, want %d", delivered, uint64(b.N)*uint64(size))
	}
	b.ReportMetric(float64(len(p.cli.byCID)+len(p.srv.byCID)), "live-conns")
}

// churnPair is a client and a server endpoint joined in memory (no delay;
// no loss unless drop is set) that run one connection at a time (one), as
// BenchmarkConnChurn does.
type churnPair struct {
	cli, srv  *Endpoint
	ca, sa    netip.AddrPort
	now       clock.Time
	buf, rbuf []byte
	drop      int // if > 0, each connection's every drop-th datagram from client to server is lost
}

// newChurnPair returns endpoints with defaults cfg sharing bufs (nil:
// fresh buffers and connections).
func newChurnPair(cfg Config, bufs *Buffers) *churnPair {
	p := &churnPair{ca: netip.MustParseAddrPort("10.0.0.1:1"), sa: netip.MustParseAddrPort("10.0.0.2:2"), now: clock.Start,
		buf: make([]byte, 65536), rbuf: make([]byte, 1<<16)}
	p.cli = NewEndpoint(EndpointConfig{Defaults: cfg, Rand: rand.New(rand.NewPCG(1, 1))})
	p.srv = NewEndpoint(EndpointConfig{Server: true, Defaults: cfg, NoRetry: true, Rand: rand.New(rand.NewPCG(2, 2))})
	p.cli.bufs, p.srv.bufs = bufs, bufs
	return p
}

// one dials a connection, sends a size-byte stream over it, reads it at
// the server and closes both directions; it returns when both ends are
// done (not yet drained), in 1 ms steps.
func (p *churnPair) one(size int64) (c, s *Conn, err error) {
	c, err = p.cli.Dial(p.now, p.sa, Config{})
	if err != nil {
		return nil, nil, err
	}
	c.SetSource(NewPatternSource(1), size)
	sent := 0 // client datagrams, for drop
	for steps := 0; !c.Done() || s == nil || !s.Done(); steps++ {
		if steps > 100000 {
			return nil, nil, fmt.Errorf("connection not done after %d steps", steps)
		}
		for moved := true; moved; {
			moved = false
			for n, _, cp := p.cli.Transmit(p.now, p.buf); n > 0; n, _, cp = p.cli.Transmit(p.now, p.buf) {
				moved = true
				if sent++; p.drop > 0 && sent%p.drop == 0 {
					continue
				}
				p.srv.Receive(p.now, p.ca, cp, p.buf[:n])
			}
			if s == nil {
				s = p.srv.Accept()
			}
			if s != nil {
				for s.Read(p.rbuf) > 0 {
				}
				if s.EOF() {
					s.CloseWrite(p.now)
				}
			}
			for n, _, cp := p.srv.Transmit(p.now, p.buf); n > 0; n, _, cp = p.srv.Transmit(p.now, p.buf) {
				p.cli.Receive(p.now, p.sa, cp, p.buf[:n])
				moved = true
			}
		}
		p.pause(time.Millisecond)
	}
	return c, s, nil
}

// pause advances time by d and runs both endpoints' timers.
func (p *churnPair) pause(d time.Duration) {
	p.now = p.now.Add(d)
	p.cli.OnDeadline(p.now)
	p.srv.OnDeadline(p.now)
}

// timedLog records events with their time relative to a start and no
// connection ID: two connections that behave alike log alike.
type timedLog struct {
	start clock.Time
	ev    []event.Event
}

func (l *timedLog) Record(ep *event.Event) {
	e := *ep // the emitter's: changed in a copy (event.Sink)
	e.Time = clock.Start.Add(e.Time.Sub(l.start))
	e.Flow = 0
	l.ev = append(l.ev, e)
}

// TestConnRelease: released connections are reused once their endpoint
// has removed them (not before), with their loss-recovery strategies and
// congestion controllers, and a connection built on a reused Conn behaves
// exactly as the first one built fresh (the same events at the same
// relative times, on both sides, every byte delivered).
//
// With losses (lossy: every churnDrop-th datagram), the client's D-SACK and
// timeout records' arrays and the server's out-of-order list serve the next
// connections too, and the reused ones behave as the first.
func TestConnRelease(t *testing.T) {
	for _, tc := range []struct {
		name, cc string
		drop     int
	}{{"reno", "reno", 0}, {"cubic", "cubic", 0}, {"bbr", "bbr", 0}, {"reno-lossy", "reno", churnDrop}} {
		t.Run(tc.name, func(t *testing.T) { testConnRelease(t, tc.cc, tc.drop) })
	}
}

func testConnRelease(t *testing.T, cc string, drop int) {
	var logs [2]timedLog // client, server
	p := newChurnPair(Config{Digest: "none", Recovery: "rack", CC: cc}, NewBuffers())
	p.drop = drop
	seen := map[any]bool{} // the arrays of the lossy transfers' conns
	p.cli.cfg.Defaults.Sink, p.srv.cfg.Sink = &logs[0], &logs[1]
	var first [2][]event.Event
	released := map[*Conn]bool{}
	strategies := map[Recovery]bool{}
	controllers := map[ccalgo.Controller]bool{}
	reused, recReused, ccReused := 0, 0, 0
	for i := range 6 {
		logs[0] = timedLog{start: p.now}
		logs[1] = timedLog{start: p.now}
		c, s, err := p.one(20_000)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Stats().BytesDelivered; got != 20_000 {
			t.Fatalf("transfer %d: delivered %d bytes, want 20000", i, got)
		}
		if released[c] || released[s] {
			reused++
		}
		if drop > 0 {
			if st := c.Stats(); st.Retransmits == 0 || c.dsk.retx == nil || cap(s.ooo) == 0 {
				t.Fatalf("lossy transfer %d: %d retransmissions, D-SACK array %p, out-of-order room %d: want all set",
					i, st.Retransmits, c.dsk.retx, cap(s.ooo))
			}
			for _, x := range []any{c.dsk.retx, s.dsk.retx, c.rtoW.pend, s.rtoW.pend, backing(c.ooo), backing(s.ooo)} {
				if reflect.ValueOf(x).IsNil() {
					continue
				}
				// Each of the two Conns had its arrays after the first two
				// transfers (one as client, one as server).
				if i >= 2 && !seen[x] {
					t.Errorf("lossy transfer %d: a new %T, want the recycled conn's", i, x)
				}
				seen[x] = true
			}
		}
		if strategies[c.rec] || strategies[s.rec] {
			recReused++
		}
		strategies[c.rec], strategies[s.rec] = true, true
		if controllers[c.cc] || controllers[s.cc] {
			ccReused++
		}
		controllers[c.cc], controllers[s.cc] = true, true
		for k, l := range logs {
			if i == 0 {
				first[k] = l.ev
				if len(l.ev) == 0 {
					t.Fatalf("side %d logged no events", k)
				}
			} else if !slices.Equal(l.ev, first[k]) {
				t.Errorf("transfer %d on side %d: %d events differing from the first transfer's %d", i, k, len(l.ev), len(first[k]))
			}
		}
		c.Release()
		s.Release()
		if !slices.Contains(p.cli.Conns(), c) || slices.Contains(p.cli.bufs.conns, c) || slices.Contains(p.srv.bufs.conns, s) {
			t.Fatalf("transfer %d: a conn released before its drain period ended is gone from its endpoint or recycled", i)
		}
		released[c], released[s] = true, true
		p.pause(2 * time.Second) // past the drain period: both are removed and recycled
		if n := len(p.cli.Conns()) + len(p.srv.Conns()); n != 0 {
			t.Fatalf("transfer %d: %d conns left after the drain period, want 0", i, n)
		}
	}
	if reused < 5 || recReused < 5 || ccReused < 5 {
		t.Errorf("%d of the last 5 transfers ran on recycled conns, %d with recycled strategies and %d with recycled controllers, want 5, 5 and 5",
			reused, recReused, ccReused)
	}
}

// backing returns the first element of x's backing array (nil if none).
func backing(x []sackBlock) *sackBlock {
	if cap(x) == 0 {
		return nil
	}
	return &x[:1][0]
}

// TestReleaseTwice: a second Release of a connection panics with
// ErrReleasedTwice, before its memory is recycled and after: a stale
// Release that reached the next connection built in the same Conn is
// caught when that connection's own application releases it (before, the
// stale call marked the new connection, which was then recycled while in
// use).
func TestReleaseTwice(t *testing.T) {
	p, c, s := releasedPair(t)
	if got := releasePanic(c); got != ErrReleasedTwice {
		t.Errorf("second Release before recycling: panic %v, want %v", got, ErrReleasedTwice)
	}
	p.pause(2 * time.Second) // both removed and recycled
	c2, s2, err := p.one(1000)
	if err != nil {
		t.Fatal(err)
	}
	old := c // the released Conn the new client connection is built in
	if c2 == s {
		old = s
	} else if c2 != c {
		t.Fatalf("the next client connection reused neither released Conn: the test needs it")
	}
	old.Release() // stale: the first connection's owner again, reaching the new connection
	if got := releasePanic(c2); got != ErrReleasedTwice {
		t.Errorf("the new owner's Release after a stale one: panic %v, want %v", got, ErrReleasedTwice)
	}
	s2.Release()
}

// TestReleasePooled: a stale Release of a connection whose memory waits in
// its Buffers' list of idle connections (released and removed) panics at
// once with ErrReleasedTwice (before, it marked the Conn, and the next
// connection built in it was recycled at its removal while still in use);
// that next connection is then released normally.
func TestReleasePooled(t *testing.T) {
	p, c, s := releasedPair(t)
	p.pause(2 * time.Second) // both removed and waiting to be reused
	if got := releasePanic(c); got != ErrReleasedTwice {
		t.Errorf("stale Release of a waiting Conn: panic %v, want %v", got, ErrReleasedTwice)
	}
	c2, s2, err := p.one(1000)
	if err != nil {
		t.Fatal(err)
	}
	if c2 != c && c2 != s {
		t.Fatalf("the next client connection reused neither released Conn: the test needs it")
	}
	for _, x := range []*Conn{c2, s2} {
		if got := releasePanic(x); got != nil {
			t.Errorf("Release of a connection built in a recycled Conn: panic %v, want none", got)
		}
	}
}

// releasedPair runs one 1000-byte transfer between a new pair and releases
// both of its connections (TestReleaseTwice, TestReleasePooled).
func releasedPair(t *testing.T) (p *churnPair, c, s *Conn) {
	t.Helper()
	p = newChurnPair(Config{Digest: "none"}, NewBuffers())
	c, s, err := p.one(1000)
	if err != nil {
		t.Fatal(err)
	}
	c.Release()
	s.Release()
	return p, c, s
}

// releasePanic calls c.Release and returns what it panicked with (nil if
// it did not).
func releasePanic(c *Conn) (v any) {
	defer func() { v = recover() }()
	c.Release()
	return nil
}

// TestEndpointConnCache: the endpoint's look-up of a connection by local
// CID answers as its map does through the one-entry cache (the last one
// found), and the cache lets go of a connection at its removal, before its
// Conn is recycled (possibly for another endpoint's connection).
func TestEndpointConnCache(t *testing.T) {
	p := newChurnPair(Config{Digest: "none"}, NewBuffers())
	c1, s1, err := p.one(1000)
	if err != nil {
		t.Fatal(err)
	}
	c2, err := p.cli.Dial(p.now, p.sa, Config{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []*Conn{c1, c2, c2, c1, nil, c1} {
		id := uint64(12345) // no connection's
		if want != nil {
			id = want.localCID
		}
		if got := p.cli.conn(id); got != want || got != p.cli.byCID[id] {
			t.Errorf("conn(%x) = %p, want %p (the map's %p)", id, got, want, p.cli.byCID[id])
		}
	}
	id := c1.localCID
	c1.Release()
	s1.Release()
	p.pause(2 * time.Second) // c1 drained: removed and recycled
	if p.cli.last != nil || p.cli.conn(id) != nil {
		t.Errorf("after c1's removal: cached %p, conn(its CID) %p, want both nil", p.cli.last, p.cli.conn(id))
	}
}
