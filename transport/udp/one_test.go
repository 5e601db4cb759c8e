package udp

import (
	"context"
	"encoding/binary"
	"testing"
	"time"

	"cclab/clock"
	"cclab/netio"
	"cclab/transport"
)

// needOneGoroutine skips a test of the one-goroutine loop where it cannot
// run (the driver then keeps two goroutines).
func needOneGoroutine(t *testing.T) {
	t.Helper()
	if !netio.HasPreciseSleep { // not Linux
		t.Skip("no one-goroutine loop on this system (Linux only)")
	}
	if err := netio.CheckWait(); err != nil {
		t.Skipf("no one-goroutine loop on this system: %v", err)
	}
}

// TestOneGoroutineTransferUDP: a stream transfer between two endpoints
// whose drivers each run in one goroutine (Config.OneGoroutine) delivers
// every byte as sent, and idle endpoints do not spin on their timer.
func TestOneGoroutineTransferUDP(t *testing.T) {
	needOneGoroutine(t)
	srv, cli := udpPair(t, Config{Endpoint: transport.EndpointConfig{Server: true}, OneGoroutine: true}, Config{OneGoroutine: true})
	for name, e := range map[string]*Endpoint{"server": srv, "client": cli} {
		if !e.LoopStats().OneGoroutine {
			t.Fatalf("%s: LoopStats.OneGoroutine false, want true", name)
		}
	}
	transferThenIdle(t, srv, cli)
}

// TestOneGoroutineLoopOrder: the one-goroutine loop, woken by the
// application (kick), sends a windowed transfer whose every datagram the
// echo side receives in production order.
func TestOneGoroutineLoopOrder(t *testing.T) {
	needOneGoroutine(t)
	sa, err := netio.ListenUDP("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ca, err := netio.DialUDP("", sa.LocalAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	if !unpoll(ca) || !unpoll(sa) {
		t.Fatal("unpoll: false on a UDP socket")
	}
	done := make(chan struct{}) // read here, not through w: the loop's goroutine clears w.done
	w := &windowEngine{size: 1200, window: 32, total: 5000, done: done, peer: sa.LocalAddr()}
	e := &echoEngine{peer: ca.LocalAddr()}
	la := newLoop(w, ca, 0, 2048, 2048, true)
	lb := newLoop(e, sa, 0, 2048, 2048, true)
	for _, l := range []*loop{la, lb} {
		if !l.startOne() {
			t.Fatal("startOne: false on a UDP socket")
		}
		l.run()
	}
	defer la.close()
	defer lb.close()
	la.kick()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("transfer stalled")
	}
	la.close()
	lb.close()
	if e.got != w.total || e.reordered != 0 {
		t.Errorf("echo side: got %d datagrams (%d out of order), want %d (0)", e.got, e.reordered, w.total)
	}
	if got := la.kicks.Load(); got != 1 {
		t.Errorf("wake-ups posted: got %d, want 1 (the application's)", got)
	}
}

// TestRecvFunc: RecvFunc hands every datagram sent to the callback, in
// order and intact, and returns nil at the sender's close, whichever loop
// drives the receiving endpoint.
func TestRecvFunc(t *testing.T) {
	for _, tc := range []struct {
		name string
		one  bool
	}{{"two goroutines", false}, {"one goroutine", true}} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.one {
				needOneGoroutine(t)
			}
			srv, cli := udpPair(t, Config{Endpoint: transport.EndpointConfig{Server: true}, OneGoroutine: tc.one}, Config{OneGoroutine: tc.one})
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			type result struct {
				seqs []uint32
				bad  int
				err  error
			}
			res := make(chan result, 1)
			go func() {
				c, err := srv.AcceptDgram(ctx)
				if err != nil {
					res <- result{err: err}
					return
				}
				var r result
				r.err = c.RecvFunc(ctx, func(at clock.Time, p []byte) {
					if len(p) != 100 || at == clock.Never {
						r.bad++
						return
					}
					r.seqs = append(r.seqs, binary.BigEndian.Uint32(p))
				})
				res <- r
			}()
			c, err := cli.DialDgram(ctx, srv.LocalAddr(), transport.DgramConfig{})
			if err != nil {
				t.Fatal(err)
			}
			const n = 40 // within the send queue: none dropped
			p := make([]byte, 100)
			for i := range n {
				binary.BigEndian.PutUint32(p, uint32(i))
				if !c.Send(p) {
					t.Fatalf("Send %d: false", i)
				}
			}
			if err := c.Close(ctx); err != nil {
				t.Fatalf("Close: %v", err)
			}
			r := <-res
			if r.err != nil {
				t.Fatalf("RecvFunc: got %v, want nil", r.err)
			}
			if len(r.seqs) != n || r.bad != 0 {
				t.Fatalf("RecvFunc saw %d datagrams (%d malformed), want %d (0)", len(r.seqs), r.bad, n)
			}
			for i, s := range r.seqs {
				if s != uint32(i) {
					t.Errorf("datagram %d: got sequence %d, want %d", i, s, i)
				}
			}
		})
	}
}

// TestNotifyWakesOnlyReady: the driver's notify wakes the blocked calls
// whose condition holds, evaluating each once it held (its effects are
// the caller's result), and every blocked call once the Endpoint is shut.
func TestNotifyWakesOnlyReady(t *testing.T) {
	a, _ := netio.MemPair(addrA, addrB)
	l := newLoop(&echoEngine{}, a, 0, 0, 0, false)
	ready, evals := false, 0
	wReady := l.addWaiter(func() bool { evals++; return ready })
	wIdle := l.addWaiter(func() bool { return false })
	signalled := func(w *waiter) bool {
		select {
		case <-w.ch:
			return true
		default:
			return false
		}
	}
	for _, step := range []struct {
		ready, shut         bool
		wantReady, wantIdle bool
		wantEvals           int
	}{
		{false, false, false, false, 1},
		{true, false, true, false, 2},
		{true, false, false, false, 2}, // ok already: not evaluated again
		{true, true, false, true, 2},   // shut: every call not yet ok
	} {
		ready, l.shut = step.ready, step.shut
		l.notify()
		if got := signalled(wReady); got != step.wantReady {
			t.Errorf("ready=%v shut=%v: ready call signalled %v, want %v", step.ready, step.shut, got, step.wantReady)
		}
		if got := signalled(wIdle); got != step.wantIdle {
			t.Errorf("ready=%v shut=%v: idle call signalled %v, want %v", step.ready, step.shut, got, step.wantIdle)
		}
		if evals != step.wantEvals {
			t.Errorf("ready=%v shut=%v: condition evaluated %d times, want %d", step.ready, step.shut, evals, step.wantEvals)
		}
	}
	if !wReady.ok || wIdle.ok {
		t.Errorf("ok: ready call %v, idle call %v; want true, false", wReady.ok, wIdle.ok)
	}
	l.removeWaiter(wReady)
	l.removeWaiter(wIdle)
	if len(l.waiters) != 0 || len(l.freeWaiters) != 2 {
		t.Errorf("after removal: %d waiters, %d spare; want 0, 2", len(l.waiters), len(l.freeWaiters))
	}
}
