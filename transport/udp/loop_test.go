package udp

import (
	"encoding/binary"
	"net/netip"
	"testing"
	"time"

	"cclab/clock"
	"cclab/ecn"
	"cclab/internal/hostlimit"
	"cclab/netio"
)

// windowEngine sends numbered datagrams to peer, keeping at most window of
// them unacknowledged; echoEngine answers each with an 8-byte ack. Together
// they exercise the loop's receive, transmit and wake-up paths without the
// transport.
type windowEngine struct {
	peer          netip.AddrPort
	size          int
	window        uint64
	total         uint64 // datagrams to send
	next, acked   uint64
	deadline      clock.Time // a one-shot timer to test the real timer
	fired         clock.Time
	done          chan struct{}
	badLen, badCP int
}

func (w *windowEngine) Receive(now clock.Time, from netip.AddrPort, cp ecn.Codepoint, b []byte) {
	if len(b) != 8 {
		w.badLen++
		return
	}
	if cp != ecn.ECT0 {
		w.badCP++
	}
	if a := binary.BigEndian.Uint64(b); a > w.acked {
		w.acked = a
		if w.acked == w.total && w.done != nil {
			close(w.done)
			w.done = nil
		}
	}
}

func (w *windowEngine) Transmit(now clock.Time, buf []byte) (int, netip.AddrPort, ecn.Codepoint) {
	if w.next >= w.total || w.next-w.acked >= w.window {
		return 0, netip.AddrPort{}, 0
	}
	w.next++
	binary.BigEndian.PutUint64(buf, w.next)
	return w.size, w.peer, ecn.ECT0
}

func (w *windowEngine) Deadline() clock.Time {
	if w.fired != clock.Never {
		return clock.Never
	}
	return w.deadline
}

func (w *windowEngine) OnDeadline(now clock.Time) {
	if w.deadline != clock.Never && !now.Before(w.deadline) {
		w.fired = now
	}
}

type echoEngine struct {
	peer      netip.AddrPort
	highest   uint64
	pending   bool
	got       uint64
	reordered uint64 // datagrams that did not carry highest+1
}

func (e *echoEngine) Receive(now clock.Time, from netip.AddrPort, cp ecn.Codepoint, b []byte) {
	if len(b) < 8 {
		return
	}
	e.got++
	s := binary.BigEndian.Uint64(b)
	if s != e.highest+1 {
		e.reordered++
	}
	if s > e.highest {
		e.highest = s
	}
	e.pending = true
}

func (e *echoEngine) Transmit(now clock.Time, buf []byte) (int, netip.AddrPort, ecn.Codepoint) {
	if !e.pending {
		return 0, netip.AddrPort{}, 0
	}
	e.pending = false
	binary.BigEndian.PutUint64(buf, e.highest)
	return 8, e.peer, ecn.ECT0
}

func (e *echoEngine) Deadline() clock.Time      { return clock.Never }
func (e *echoEngine) OnDeadline(now clock.Time) {}

var (
	addrA = netip.MustParseAddrPort("10.0.0.1:1000")
	addrB = netip.MustParseAddrPort("10.0.0.2:2000")
)

func startPair(w *windowEngine) (*loop, *loop, *echoEngine) {
	a, b := netio.MemPair(addrA, addrB)
	e := &echoEngine{peer: addrA}
	w.peer = addrB
	la := newLoop(w, a, 0, 2048, 2048, true)
	lb := newLoop(e, b, 0, 2048, 2048, true)
	la.run()
	lb.run()
	return la, lb, e
}

// startUDPPair is startPair over loopback UDP sockets (w's socket
// connected to the echo side's).
func startUDPPair(tb testing.TB, w *windowEngine) (*loop, *loop, *echoEngine) {
	tb.Helper()
	sa, err := netio.ListenUDP("127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	ca, err := netio.DialUDP("", sa.LocalAddr().String())
	if err != nil {
		tb.Fatal(err)
	}
	w.peer = sa.LocalAddr()
	e := &echoEngine{peer: ca.LocalAddr()}
	la := newLoop(w, ca, 0, 2048, 2048, true)
	lb := newLoop(e, sa, 0, 2048, 2048, true)
	la.run()
	lb.run()
	return la, lb, e
}

func TestLoopTransfersAndWakes(t *testing.T) {
	w := &windowEngine{size: 1200, window: 32, total: 5000, done: make(chan struct{})}
	done := w.done
	la, lb, e := startPair(w)
	defer la.close()
	defer lb.close()
	la.kick() // the application's first call
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		la.mu.Lock()
		acked := w.acked
		la.mu.Unlock() // not held into the deferred close, which takes it
		t.Fatalf("transfer stalled: acked %d of %d", acked, w.total)
	}
	// Stop both loops before reading the counters: sendBatch counts a
	// batch after writing it, so the last batch's ack can arrive (closing
	// done) before its goroutine has counted it.
	la.close()
	lb.close()
	la.mu.Lock()
	defer la.mu.Unlock()
	if w.badLen != 0 || w.badCP != 0 {
		t.Errorf("bad acks: got %d wrong-length and %d wrong-ECN, want 0 and 0", w.badLen, w.badCP)
	}
	if la.stats.DatagramsOut != w.total {
		t.Errorf("datagrams out: got %d, want %d", la.stats.DatagramsOut, w.total)
	}
	lb.mu.Lock()
	defer lb.mu.Unlock()
	if e.got != w.total {
		t.Errorf("echo engine received: got %d, want %d", e.got, w.total)
	}
	// The reader (answering acks) and the writer (kicked) both send; the
	// datagrams must still arrive in the order they were produced.
	if e.reordered != 0 {
		t.Errorf("datagrams out of production order: got %d, want 0", e.reordered)
	}
}

func TestLoopTimerRunsOnDeadline(t *testing.T) {
	w := &windowEngine{size: 100}
	a, _ := netio.MemPair(addrA, addrB)
	l := newLoop(w, a, 0, 0, 0, true)
	l.mu.Lock()
	w.deadline = l.now().Add(20 * time.Millisecond)
	l.mu.Unlock()
	l.run()
	defer l.close()
	l.kick()
	l.mu.Lock()
	for w.fired == clock.Never {
		l.cond.Wait() // flush broadcasts after OnDeadline
	}
	fired, want := w.fired, w.deadline
	l.mu.Unlock()
	if fired.Before(want) {
		t.Errorf("OnDeadline ran at %v, before the deadline %v", fired, want)
	}
}

func TestLoopCloseUnblocks(t *testing.T) {
	a, _ := netio.MemPair(addrA, addrB)
	l := newLoop(&echoEngine{}, a, 0, 0, 0, true)
	l.run()
	done := make(chan struct{})
	go func() { l.close(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("close did not stop the loop")
	}
	if l.now() == clock.Never {
		t.Error("now() returned clock.Never")
	}
}

// TestLoopWakesWriterOnlyWhenNeeded: the reader sends what each datagram
// released itself, so in a steady exchange whose deadlines never move
// earlier it posts no wake-up to the writer (before, it woke the writer
// after every read batch).
func TestLoopWakesWriterOnlyWhenNeeded(t *testing.T) {
	w := &windowEngine{size: 1200, window: 32, total: 5000, done: make(chan struct{})}
	done := w.done
	la, lb, _ := startPair(w)
	defer la.close()
	defer lb.close()
	la.kick() // the application's first call: the only wake-up
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("transfer stalled")
	}
	for _, c := range []struct {
		name string
		l    *loop
		want uint64
	}{{"window side", la, 1}, {"echo side", lb, 0}} {
		c.l.mu.Lock()
		reads := c.l.stats.ReadBatches
		c.l.mu.Unlock()
		if got := c.l.kicks.Load(); got != c.want || reads == 0 {
			t.Errorf("%s: writer wake-ups over %d read batches: got %d, want %d", c.name, reads, got, c.want)
		}
	}
}

// delayEngine, on its first datagram, asks for control after delay (as a
// delayed ACK does) and records when OnDeadline runs.
type delayEngine struct {
	delay    time.Duration
	deadline clock.Time
	fired    clock.Time
}

func (e *delayEngine) Receive(now clock.Time, _ netip.AddrPort, _ ecn.Codepoint, _ []byte) {
	if e.deadline == clock.Never && e.fired == clock.Never {
		e.deadline = now.Add(e.delay)
	}
}
func (e *delayEngine) Transmit(clock.Time, []byte) (int, netip.AddrPort, ecn.Codepoint) {
	return 0, netip.AddrPort{}, 0
}
func (e *delayEngine) Deadline() clock.Time { return e.deadline }
func (e *delayEngine) OnDeadline(now clock.Time) {
	if e.deadline != clock.Never && !now.Before(e.deadline) {
		e.fired, e.deadline = now, clock.Never
	}
}

// TestLoopReaderArmsEarlierDeadline: a datagram that gives the engine a
// deadline earlier than the writer's timer (here: none) wakes the writer,
// which runs OnDeadline when it comes. Without that wake-up the timer would
// never be set.
func TestLoopReaderArmsEarlierDeadline(t *testing.T) {
	a, b := netio.MemPair(addrA, addrB)
	e := &delayEngine{delay: 5 * time.Millisecond}
	l := newLoop(e, b, 0, 2048, 2048, false)
	l.run()
	defer l.close()
	if _, err := a.WriteBatch([]netio.Message{{Buf: []byte("x"), N: 1, Addr: addrB}}); err != nil {
		t.Fatal(err)
	}
	stop := time.AfterFunc(30*time.Second, func() {
		l.mu.Lock()
		l.cond.Broadcast()
		l.mu.Unlock()
	})
	defer stop.Stop()
	start := time.Now()
	l.mu.Lock()
	for e.fired == clock.Never && time.Since(start) < 30*time.Second {
		l.cond.Wait() // the reader and the writer's flush broadcast
	}
	fired := e.fired
	l.mu.Unlock()
	if fired == clock.Never {
		t.Fatal("OnDeadline never ran: the reader did not wake the writer for the new deadline")
	}
	if got := l.kicks.Load(); got != 1 {
		t.Errorf("writer wake-ups: got %d, want 1", got)
	}
}

// sendOnCallEngine has one datagram to send after each application call.
type sendOnCallEngine struct {
	peer    netip.AddrPort
	pending int
}

func (e *sendOnCallEngine) Receive(clock.Time, netip.AddrPort, ecn.Codepoint, []byte) {}
func (e *sendOnCallEngine) Transmit(_ clock.Time, buf []byte) (int, netip.AddrPort, ecn.Codepoint) {
	if e.pending == 0 {
		return 0, netip.AddrPort{}, 0
	}
	e.pending--
	buf[0] = 'w'
	return 1, e.peer, ecn.NotECT
}
func (e *sendOnCallEngine) Deadline() clock.Time  { return clock.Never }
func (e *sendOnCallEngine) OnDeadline(clock.Time) {}

// TestLoopCallerFlush: what an application call released (a window update
// after Conn.Read) goes out from the caller without waking the writer; more
// than callBatch datagrams leave the rest to the writer.
func TestLoopCallerFlush(t *testing.T) {
	a, b := netio.MemPair(addrA, addrB)
	e := &sendOnCallEngine{peer: addrB}
	l := newLoop(e, a, 0, 2048, 2048, false)
	l.run()
	defer l.close()
	read := func(want int) {
		t.Helper()
		ms := make([]netio.Message, 2*callBatch)
		for i := range ms {
			ms[i].Buf = make([]byte, 64)
		}
		for got := 0; got < want; {
			n, err := b.ReadBatch(ms)
			if err != nil {
				t.Fatal(err)
			}
			got += n
		}
	}
	l.mu.Lock()
	e.pending = 1
	l.mu.Unlock()
	l.callerFlush()
	read(1)
	if got := l.kicks.Load(); got != 0 {
		t.Errorf("writer wake-ups after a call that released one datagram: got %d, want 0", got)
	}
	l.mu.Lock()
	e.pending = callBatch + 3
	l.mu.Unlock()
	l.callerFlush()
	read(callBatch + 3) // callBatch from the caller, the rest from the writer
	l.mu.Lock()
	sends := l.stats.CallerSends
	l.mu.Unlock()
	if got := l.kicks.Load(); got != 1 || sends != 2 {
		t.Errorf("after a call that released %d datagrams: writer wake-ups %d, caller sends %d; want 1 and 2", callBatch+3, got, sends)
	}
}

// BenchmarkLoopMem moves b.N datagrams of 1200 bytes through two loops over a
// netio.MemPair; allocs/op is per datagram and must be ~0 in steady state.
func BenchmarkLoopMem(b *testing.B) {
	w := &windowEngine{size: 1200, window: 256, total: uint64(b.N), done: make(chan struct{})}
	done := w.done
	la, lb, _ := startPair(w)
	defer la.close()
	defer lb.close()
	b.ReportAllocs()
	b.SetBytes(1200)
	b.ResetTimer()
	la.kick()
	<-done
}

// BenchmarkLoopUDP is BenchmarkLoopMem over real loopback UDP sockets: the
// driver's ceiling without the transport (allocs/op per datagram ~0).
func BenchmarkLoopUDP(b *testing.B) {
	w := &windowEngine{size: 1200, window: 256, total: uint64(b.N), done: make(chan struct{})}
	done := w.done
	la, lb, _ := startUDPPair(b, w)
	defer la.close()
	defer lb.close()
	b.ReportAllocs()
	b.SetBytes(1200)
	b.ResetTimer()
	la.kick()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		b.Fatalf("stalled: acked %d of %d", w.acked, w.total)
	}
}

// tickEngine asks for control every period and records how late each
// OnDeadline call comes (as a pacing sender would).
type tickEngine struct {
	period time.Duration
	next   clock.Time
	late   time.Duration
	n, max int
	done   chan struct{}
}

func (e *tickEngine) Receive(clock.Time, netip.AddrPort, ecn.Codepoint, []byte) {}
func (e *tickEngine) Transmit(clock.Time, []byte) (int, netip.AddrPort, ecn.Codepoint) {
	return 0, netip.AddrPort{}, 0
}
func (e *tickEngine) Deadline() clock.Time { return e.next }
func (e *tickEngine) OnDeadline(now clock.Time) {
	if e.next == clock.Never || now.Before(e.next) {
		return
	}
	e.late += now.Sub(e.next)
	e.n++
	if e.n == e.max {
		e.next = clock.Never
		close(e.done)
		return
	}
	e.next = now.Add(e.period)
}

// BenchmarkTimerLateness reports how late the driver runs OnDeadline for
// 300 µs deadlines (pacing-like), in µs per deadline.
func BenchmarkTimerLateness(b *testing.B) {
	a, _ := netio.MemPair(addrA, addrB)
	e := &tickEngine{period: 300 * time.Microsecond, max: b.N, done: make(chan struct{})}
	l := newLoop(e, a, 0, 0, 0, false)
	l.mu.Lock()
	e.next = l.now().Add(e.period)
	l.mu.Unlock()
	l.run()
	defer l.close()
	b.ResetTimer()
	l.kick()
	<-e.done
	b.StopTimer()
	l.mu.Lock()
	b.ReportMetric(float64(e.late.Microseconds())/float64(e.n), "late-µs/deadline")
	l.mu.Unlock()
}

// TestLoopOrderUDP: over loopback UDP with a window large enough that the
// reader's and the writer's batches interleave, datagrams still arrive in
// the order they were produced.
func TestLoopOrderUDP(t *testing.T) {
	w := &windowEngine{size: 1200, window: 1024, total: 100000, done: make(chan struct{})}
	done := w.done
	la, lb, e := startUDPPair(t, w)
	defer la.close()
	defer lb.close()
	la.kick()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("stalled")
	}
	lb.mu.Lock()
	defer lb.mu.Unlock()
	// Loopback UDP neither reorders nor (with this window) drops, so every
	// out-of-order arrival is the driver's doing.
	if e.reordered != 0 && e.got == w.total {
		t.Errorf("datagrams out of production order: got %d, want 0", e.reordered)
	}
}

// TestLoopTimerLate: the timed wake-ups of the writer (timer fires, and
// precise sleeps for the short periods) are counted in LoopStats.TimerLate,
// and the lateness hook (Config.InjectTimerLate) makes each of them late,
// as a starved loop's would be.
func TestLoopTimerLate(t *testing.T) {
	for _, period := range []time.Duration{5 * time.Millisecond, 500 * time.Microsecond} {
		const ticks = 10
		e := &tickEngine{period: period, max: ticks, done: make(chan struct{})}
		a, _ := netio.MemPair(addrA, addrB)
		l := newLoop(e, a, 0, 0, 0, false)
		l.lateHook = 2 * hostlimit.LateLimit
		l.mu.Lock()
		e.next = l.now().Add(period)
		l.mu.Unlock()
		l.run()
		l.kick()
		<-e.done
		l.mu.Lock()
		tl := l.stats.TimerLate
		l.mu.Unlock()
		l.close()
		// A deadline that has already passed when the writer looks at it
		// (the first one, or any after a preemption longer than the
		// period on a loaded machine) runs without a timed wake-up, so
		// the count is between 1 and ticks, not exactly ticks.
		if tl.Count < 1 || tl.Count > ticks || tl.Late != tl.Count || tl.Max < l.lateHook {
			t.Errorf("period %v: timer lateness %+v: want 1 to %d wake-ups, every one later than %v", period, tl, ticks, l.lateHook)
		}
	}
}
