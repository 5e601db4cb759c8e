package transport

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"net/netip"
	"testing"
	"time"

	"cclab/clock"
	"cclab/ecn"
)

// schedEndpoint returns a server endpoint with n established, idle
// connections (each from its own address).
func schedEndpoint(tb testing.TB, n int) (*Endpoint, clock.Time) {
	ep := NewEndpoint(EndpointConfig{Server: true, NoRetry: true, MaxConns: n, MaxHalfOpen: n, MaxConnsPerSource: n, Rand: rand.New(rand.NewPCG(7, 7))})
	now := clock.Start
	b := make([]byte, 2048)
	buf := make([]byte, 65536)
	for i := 0; i < n; i++ {
		from := netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}), 1000)
		ep.Receive(now, from, ecn.NotECT, initialBytes(uint64(i)+1, uint64(i)+1<<32, nil))
		c := ep.Accept()
		if c == nil {
			tb.Fatalf("conn %d not accepted: %v", i, ep.Stats().Rejects)
		}
		for k, _, _ := ep.Transmit(now, buf); k > 0; k, _, _ = ep.Transmit(now, buf) {
		}
		p := packet{typ: typeShort, dcid: c.localCID, flags: flagPING, ts: 1}
		ep.Receive(now, from, ecn.NotECT, b[:encodePacket(b, &p)])
	}
	for k, _, _ := ep.Transmit(now, buf); k > 0; k, _, _ = ep.Transmit(now, buf) {
	}
	return ep, now
}

// BenchmarkEndpointSched: the driver's work per garbage datagram (Receive,
// Transmit until nothing is left, Deadline) on an endpoint with 4,096 idle
// connections. Without the scheduler both Transmit and Deadline visited
// every connection (a garbage flood starved live transfers);
// with it the cost no longer grows with the connections.
//
//	go test ./transport -run '^$' -bench BenchmarkEndpointSched -benchtime 2000x
func BenchmarkEndpointSched(b *testing.B) {
	for _, n := range []int{16, 4096} {
		b.Run(fmt.Sprintf("conns=%d", n), func(b *testing.B) {
			ep, now := schedEndpoint(b, n)
			garbage := []byte{WireVersion, byte(typeShort), 1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
			from := netip.MustParseAddrPort("192.0.2.99:9")
			buf := make([]byte, 65536)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				ep.Receive(now, from, ecn.NotECT, garbage)
				for k, _, _ := ep.Transmit(now, buf); k > 0; k, _, _ = ep.Transmit(now, buf) {
				}
				if d := ep.Deadline(); d != clock.Never && d <= now {
					ep.OnDeadline(now)
				}
			}
		})
	}
}

// TestSchedMatchesScan: with many connections, some touched, some with
// timers due, the scheduler's Transmit and Deadline give what a scan of
// every connection gives (the reference: each conn's own deadline, and the
// fact that an untouched, not-due conn has nothing to send).
func TestSchedMatchesScan(t *testing.T) {
	ep, now := schedEndpoint(t, 300)
	buf := make([]byte, 65536)
	r := rand.New(rand.NewPCG(9, 9))
	for step := 0; step < 2000; step++ {
		switch r.IntN(5) {
		case 0: // data to a random conn
			c := ep.Conns()[r.IntN(len(ep.Conns()))]
			p := packet{typ: typeShort, dcid: c.localCID, flags: flagDATA, pn: uint64(step + 10), ts: 2, off: c.rcvNxt, data: make([]byte, 100)}
			b := make([]byte, 2048)
			ep.Receive(now, c.peer, ecn.NotECT, b[:encodePacket(b, &p)])
		case 1: // the application writes
			ep.Conns()[r.IntN(len(ep.Conns()))].Write(make([]byte, 3000))
		case 2:
			now = now.Add(time.Duration(r.IntN(50)) * time.Millisecond)
		case 3:
			if d := ep.Deadline(); d != clock.Never && d <= now {
				ep.OnDeadline(now)
			}
		case 4: // the application reads (a window update may fall due)
			ep.Conns()[r.IntN(len(ep.Conns()))].Read(make([]byte, r.IntN(4000)))
		}
		for k, _, _ := ep.Transmit(now, buf); k > 0; k, _, _ = ep.Transmit(now, buf) {
		}
		checkDirty(t, step, &ep.sch.schedCore)
		// Reference: the earliest deadline over all conns.
		want := clock.Never
		for _, c := range ep.Conns() {
			want = clock.Earliest(want, c.deadline())
		}
		if got := ep.Deadline(); got != want {
			t.Fatalf("step %d: Deadline %v, scan %v", step, got, want)
		}
		// Nothing left to send by any conn (a scan asks every one).
		for _, c := range ep.Conns() {
			if n, _ := c.transmit(now, buf); n > 0 {
				t.Fatalf("step %d: conn %d had a datagram the scheduler did not ask for", step, c.sched.pos)
			}
		}
	}
}

// checkDirty fails unless s counts exactly the touched connections, every
// touched connection is ready (markDue and refresh rely on it) and byPos
// names each connection by its position.
func checkDirty(t *testing.T, step int, s *schedCore) {
	t.Helper()
	n := 0
	for _, st := range s.heap {
		if st.pos >= len(s.byPos) || s.byPos[st.pos] != st {
			t.Fatalf("step %d: conn %d not at its position in byPos", step, st.pos)
		}
		if st.dirty {
			n++
			if s.ready[st.pos/64]&(1<<(st.pos%64)) == 0 {
				t.Fatalf("step %d: touched conn %d not ready", step, st.pos)
			}
		}
	}
	if got, want := s.ndirty, n; got != want {
		t.Fatalf("step %d: %d counted as touched, want %d (the touched conns)", step, got, want)
	}
	set := 0
	for _, w := range s.ready {
		set += bits.OnesCount64(w)
	}
	if got, want := s.nready, set; got != want {
		t.Fatalf("step %d: %d counted as ready, want %d (the bits set)", step, got, want)
	}
	if len(s.byPos) != len(s.heap) {
		t.Fatalf("step %d: byPos holds %d, want %d", step, len(s.byPos), len(s.heap))
	}
}

// TestReadIdleNoTouch: a Read that finds nothing changes nothing, so it
// leaves the connection untouched (a driver that polls every connection
// after each datagram, as the simulator's stack does, would otherwise make
// the scheduler recompute every deadline and ask every connection).
func TestReadIdleNoTouch(t *testing.T) {
	ep, _ := schedEndpoint(t, 50)
	ep.Deadline() // refresh: nothing is touched
	buf := make([]byte, 1500)
	for _, c := range ep.Conns() {
		if n := c.Read(buf); n != 0 {
			t.Fatalf("Read = %d on an idle conn, want 0", n)
		}
	}
	if got := ep.sch.ndirty; got != 0 {
		t.Errorf("touched conns after idle Reads: got %d, want 0", got)
	}
	c := ep.Conns()[7]
	p := packet{typ: typeShort, dcid: c.localCID, flags: flagDATA, pn: 50, ts: 2, off: 0, data: make([]byte, 100)}
	b := make([]byte, 2048)
	ep.Receive(clock.Start, c.peer, ecn.NotECT, b[:encodePacket(b, &p)])
	ep.Deadline()
	if n := c.Read(buf); n != 100 {
		t.Fatalf("Read = %d, want 100", n)
	}
	if got := ep.sch.ndirty; got != 1 {
		t.Errorf("touched conns after a Read of data: got %d, want 1", got)
	}
}

// TestSchedNext: next finds the first ready position at or after from,
// cyclically, as a scan of every position does, and leaves it ready.
func TestSchedNext(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 2000; trial++ {
		n := 1 + r.IntN(300)
		var s scheduler[*Conn]
		s.conns = make([]*Conn, n)
		s.heap = make([]*schedState, n)
		s.ready = make([]uint64, (n+63)/64+r.IntN(2)) // with and without a spare word
		ready := make([]bool, n)
		for i := range ready {
			if r.IntN(8) == 0 {
				ready[i] = true
				s.ready[i/64] |= 1 << (i % 64)
				s.nready++
			}
		}
		from := r.IntN(n + 1)
		want := -1
		for k := 0; k < n; k++ {
			if p := (from + k) % n; ready[p] {
				want = p
				break
			}
		}
		if got := s.next(from); got != want {
			t.Fatalf("trial %d: n %d, next(%d) = %d, want %d", trial, n, from, got, want)
		}
		if want >= 0 && s.ready[want/64]&(1<<(want%64)) == 0 {
			t.Fatalf("trial %d: position %d no longer ready after next", trial, want)
		}
	}
}

// TestCallsAfterRemoval: an application may still call a connection its
// endpoint has removed (finished, drain period over, not released); the
// calls must not mark it in the scheduler, where its position and heap
// index now belong to other connections or to none (a ready bit past the
// last connection made Transmit index out of range), and later
// connections run as before.
func TestCallsAfterRemoval(t *testing.T) {
	p := newChurnPair(Config{Digest: "none"}, nil)
	var old []*Conn
	for range 3 {
		c, s, err := p.one(1000)
		if err != nil {
			t.Fatal(err)
		}
		old = append(old, c, s)
	}
	p.pause(2 * time.Second) // past the drain period: all removed
	if n := len(p.cli.Conns()) + len(p.srv.Conns()); n != 0 {
		t.Fatalf("%d conns left after the drain period, want 0", n)
	}
	for _, c := range old {
		c.Write([]byte("x"))
		c.SetSource(NewPatternSource(2), 10)
		c.CloseWrite(p.now)
		c.Read(make([]byte, 8))
		c.Abort(p.now)
	}
	if got, want := p.cli.sch.ndirty+p.srv.sch.ndirty, 0; got != want {
		t.Errorf("%d removed conns marked in a scheduler, want %d", got, want)
	}
	_, s, err := p.one(5000)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.Stats().BytesDelivered, uint64(5000); got != want {
		t.Errorf("delivered %d bytes after the calls, want %d", got, want)
	}
}

// TestEndpointFinished: Endpoint.Finished counts each stream connection
// once when it finishes (both directions closed) or fails (an abort), at
// both ends, and not again at its removal or at a later call (a driver
// polls its connections' Done only when the count changed: sim.Stack).
func TestEndpointFinished(t *testing.T) {
	p := newChurnPair(Config{Digest: "none"}, nil)
	var conns []*Conn
	steps := []struct {
		name             string
		do               func() error
		wantCli, wantSrv uint32
	}{
		{"none yet", func() error { return nil }, 0, 0},
		{"one transfer", func() error {
			c, s, err := p.one(1000)
			conns = append(conns, c, s)
			return err
		}, 1, 1},
		{"two more", func() error {
			for range 2 {
				c, s, err := p.one(5000)
				if err != nil {
					return err
				}
				conns = append(conns, c, s)
			}
			return nil
		}, 3, 3},
		{"removal after the drain period", func() error { p.pause(2 * time.Second); return nil }, 3, 3},
		{"calls after removal", func() error {
			for _, c := range conns {
				c.Abort(p.now)
			}
			return nil
		}, 3, 3},
		{"an aborted dial", func() error {
			c, err := p.cli.Dial(p.now, p.sa, Config{})
			if err != nil {
				return err
			}
			c.Abort(p.now)
			c.Abort(p.now)
			return nil
		}, 4, 3},
	}
	for _, st := range steps {
		if err := st.do(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if got, got2 := p.cli.Finished(), p.srv.Finished(); got != st.wantCli || got2 != st.wantSrv {
			t.Errorf("%s: Finished() client %d, server %d; want %d, %d", st.name, got, got2, st.wantCli, st.wantSrv)
		}
	}
}
