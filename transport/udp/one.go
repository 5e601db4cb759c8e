package udp

import (
	"os"
	"runtime"
	"sync/atomic"
	"time"

	"cclab/clock"
	"cclab/netio"
)

// The one-goroutine loop (Config.OneGoroutine). The two-goroutine loop
// (loop.go) parks a reader in the Go runtime's poller and a writer on a Go
// timer; every datagram batch that arrives and every timer that fires
// readies a goroutine, and the runtime hands it to another thread (waking
// one to spin for it when a P is idle): at a pacing quantum of 1 ms that
// was 7-10 k context switches per second for a 100 Mbit/s datagram flow,
// against 1.3 k for iperf3 -u. The one-goroutine loop reads, runs the
// engine's timers and writes in one goroutine that blocks in one system
// call (netio.SocketWait: epoll_pwait2 on the socket and an eventfd, with
// the engine's next deadline as its nanosecond timeout): a burst of
// datagrams in, a timer due, or an application call (kick, through the
// eventfd) each cost one return from that system call on the same thread.
//
// It gives up what the two-goroutine loop's parallelism buys on a fast
// path (the reader answering ACKs on one core while the writer sends on
// the other), so it is a choice of the driver's user, not the default.

// oneState is the one-goroutine loop's wait (nil: two goroutines).
type oneState struct {
	sw *netio.SocketWait
	pc netio.Poller
	// kickPending: a wake-up was written to the eventfd and the loop has
	// not yet taken it (kicks coalesce).
	kickPending atomic.Bool
}

// oneGoroutine is Config.OneGoroutine, overridden by the environment
// variable CCLAB_ONE_GOROUTINE (1: on, 0: off) for every Endpoint (for
// side-by-side measurements).
func oneGoroutine(cfg bool) bool {
	switch os.Getenv("CCLAB_ONE_GOROUTINE") {
	case "1":
		return true
	case "0":
		return false
	}
	return cfg
}

// unpoll takes c out of the Go runtime's poller (netio.UDPConn.Unpoll) for
// the one-goroutine loop; false if c cannot be waited on by the loop
// itself (not a UDP socket, or a kernel without epoll_pwait2).
func unpoll(c netio.Conn) bool {
	u, ok := c.(*netio.UDPConn)
	return ok && netio.CheckWait() == nil && u.Unpoll() == nil
}

// maxReadRounds bounds the batches one wake-up reads before the loop runs
// its timers and sends (the rest is read at once after: the socket stays
// readable).
const maxReadRounds = 4

// startOne makes the loop run in one goroutine if the socket can be waited
// on (a netio.UDPConn on Linux 5.11 or later); it reports whether it can.
// Call it before run.
func (l *loop) startOne() bool {
	pc, ok := l.conn.(netio.Poller)
	if !ok {
		return false
	}
	sw, err := netio.NewSocketWait(l.conn)
	if err != nil {
		return false
	}
	sw.Raw = runtime.GOMAXPROCS(0) > 1
	l.one = &oneState{sw: sw, pc: pc}
	l.stats.OneGoroutine = true
	return true
}

// kickOne wakes the one-goroutine loop (non-blocking; wake-ups coalesce).
func (l *loop) kickOne() {
	if l.one.kickPending.CompareAndSwap(false, true) {
		l.kicks.Add(1)
		l.one.sw.Wake()
	}
}

// runOne is the one goroutine: wait, read what is waiting, run the timers
// that are due and send, wait again until the next deadline.
func (l *loop) runOne() {
	defer l.wg.Done()
	defer close(l.writerDone)
	o := l.one
	b := l.newBuffers()
	wait := time.Duration(-1) // no deadline
	for {
		if l.precise && wait >= 0 && wait < preciseBelow {
			netio.PreciseTimers() // this thread's slack: pacing one datagram at a time
		}
		readable, woken, err := o.sw.Wait(wait)
		if woken {
			o.kickPending.Store(false)
		}
		select {
		case <-l.closed:
			// Send what is due before the socket closes (as the writer).
			l.flush(b.out, b.offs, b.arena)
			return
		default:
		}
		if err != nil {
			l.readFailed(err)
		}
		if !readable && !woken && err == nil {
			l.timerFired()
		}
		if readable && l.readWaiting(b) {
			return
		}
		d, ok := l.flush(b.out, b.offs, b.arena)
		wait = d
		if !ok {
			wait = -1
		}
	}
}

// readWaiting reads and drives the engine with what the socket holds, at
// most maxReadRounds batches; it reports whether the loop is closing.
func (l *loop) readWaiting(b *buffers) (stop bool) {
	for range maxReadRounds {
		n, err := l.one.pc.TryReadBatch(b.in)
		if err != nil {
			return l.readFailed(err)
		}
		if n == 0 {
			return false
		}
		l.input(b, n) // flush follows: no wake-up needed
		if n < len(b.in) {
			return false
		}
	}
	return false
}

// timerFired counts a wait that ended without a datagram or a kick: the
// timer, if the deadline it was set for has come (a signal may end a wait
// early).
func (l *loop) timerFired() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.armed == clock.Never {
		return
	}
	late := l.now().Sub(l.armed)
	if late < 0 {
		return
	}
	l.stats.TimerFires++
	l.stats.TimerLate.Add(late + l.lateHook)
}
