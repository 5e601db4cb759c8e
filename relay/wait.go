package relay

import (
	"time"

	"cclab/clock"
	"cclab/netio"
)

// The waiting loop (Config.WaitPoll; docs/bottleneck.md, "The waiting
// loop") is the busy-polling loop (poll.go) that, after a pass that read
// nothing with nothing due, blocks in epoll_pwait2 on the sockets and the
// sleeper's eventfd until a datagram, the next modelled instant or Close.
// A real-time loop (Config.Realtime) that blocked for less than waitRest
// in waitRestAfter rests for waitRest, so that a flood cannot hold its CPU.

// wakeKey is the ReadySet key of the sleeper's eventfd (Close's wake).
const wakeKey int32 = -1

// Bounds of the waiting loop.
const (
	// waitMemBound is the longest wait while the loop reads a socket
	// that cannot be watched (a MemConn) every pass, or if the eventfd
	// could not join the set: the loop comes back to those that often.
	waitMemBound = 50 * time.Microsecond
	// waitRestAfter is how long a real-time loop runs, blocking for
	// less than waitRest in all, before it rests for waitRest (a 1 % share for the other threads of
	// its CPU, against the 5 % the kernel's throttling leaves them in
	// 50 ms stalls).
	waitRestAfter = 10 * time.Millisecond
	waitRest      = 100 * time.Microsecond
)

// waiter is the waiting loop's state, on the loop's locked thread.
type waiter struct {
	r       *Relay
	raw     bool   // a real-time thread: raw system calls
	rest    bool   // rest after a stretch of waitRestAfter (Realtime)
	bounded bool   // the eventfd is not in the set: bound every wait
	undo    func() // gives the thread its policy back
	// busySince starts the stretch: the last rest, or the wait that
	// brought blocked, the time blocked in waits since, to waitRest.
	busySince clock.Time
	blocked   time.Duration
}

// startWaiting prepares the loop's thread for waiting (Config.WaitPoll;
// nil otherwise): 1 ns timer slack, the real-time policy with Realtime,
// the sleeper's eventfd in the ReadySet. Call it on the locked thread.
func (r *Relay) startWaiting() *waiter {
	if !r.cfg.WaitPoll {
		return nil
	}
	w := &waiter{r: r, undo: func() {}}
	netio.PreciseTimers()
	if r.cfg.Realtime {
		w.undo = r.goRealtime()
		w.raw = r.realtimeErr == nil
		w.rest = w.raw
	}
	if r.ready != nil && r.ready.AddFD(r.sl.eventFD(), wakeKey) != nil {
		w.bounded = true
	}
	w.busySince = r.now()
	return w
}

// stop gives the thread its former policy back.
func (w *waiter) stop() { w.undo() }

// lead is how long before an instant the loop stops waiting and polls:
// a fixed Config.Spin, else none (Spin's learned lead does not apply).
// Polling makes the loop's thread one that seldom blocks, and such a
// thread loses its CPU for longer: measured at 1 Gbit/s pinned, a learned
// lead of 10-13 µs gave the normal-policy loop error p99 of 13-90 ms
// against 7-27 ms without (load 10-11.5, 9 runs each), and took a
// real-time loop from 68 to 86 % of its CPU and its write lateness maximum
// from 7 to 50 ms (load 2-3): the kernel then runs the normal threads of
// its CPU for tens of ms at a stretch (docs/bottleneck.md, "The waiting
// loop").
func (w *waiter) lead() time.Duration { return max(w.r.cfg.Spin, 0) }

// wait blocks after a pass until next (less the lead), a datagram or
// Close, unless the pass read something (got) or next is within the lead;
// a real-time loop rests instead if it has not blocked for waitRestAfter.
// It reports whether readyBuf holds the keys of ready sockets (to be read
// without asking again) and whether it blocked.
func (w *waiter) wait(now, next clock.Time, got bool) (pending, waited bool) {
	r := w.r
	if w.rest && now.Sub(w.busySince) >= waitRestAfter {
		w.sleepRest()
		w.busySince, w.blocked = r.now(), 0
		r.mu.Lock()
		r.cnt.LoopRests++
		r.mu.Unlock()
		return false, true
	}
	if got || r.closed.Load() {
		return false, false
	}
	start := r.now()
	lead := w.lead()
	rem := next.Sub(start)
	if rem <= lead {
		return false, false // poll for the rest
	}
	d := rem - lead
	if w.bounded || len(r.polled) > 0 {
		d = min(d, waitMemBound)
	}
	r.mu.Lock()
	r.cnt.LoopWaits++ // (before: Close may come while it blocks)
	r.mu.Unlock()
	timedOut := false
	var err error
	if r.ready == nil {
		timedOut = !r.sl.sleep(d)
	} else {
		r.readyBuf, timedOut, err = r.ready.Wait(r.readyBuf[:0], d, w.raw)
	}
	end := r.now()
	w.blockedFor(end.Sub(start), end)
	r.mu.Lock()
	if err != nil {
		r.cnt.ReadErrors++
	}
	if timedOut {
		r.cnt.SleepLate.Add(end.Sub(start.Add(d)))
	}
	r.cnt.Lead = lead
	r.mu.Unlock()
	return r.ready != nil && len(r.readyBuf) > 0, true
}

// blockedFor counts a wait of d that ended at end: once the waits since
// busySince add up to waitRest, the loop has left its CPU to the other
// threads for as long as a rest would, and a new stretch begins.
func (w *waiter) blockedFor(d time.Duration, end clock.Time) {
	w.blocked += d
	if w.blocked >= waitRest {
		w.busySince, w.blocked = end, 0
	}
}

// sleepRest sleeps waitRest, all of it: a signal (the runtime's
// preemption, likely after a long stretch on the CPU) that ends the sleep
// early makes it sleep again for what is left. Close ends it.
func (w *waiter) sleepRest() {
	r := w.r
	end := r.now().Add(waitRest)
	for !r.closed.Load() {
		rem := end.Sub(r.now())
		if rem <= 0 || r.sl.sleep(rem) {
			return
		}
	}
}
