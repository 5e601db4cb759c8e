package relay

import (
	"runtime"
	"time"

	"cclab/clock"
	"cclab/netio"
)

// deadline is the earliest instant any hop or generator needs control.
func (r *Relay) deadline() clock.Time {
	d := clock.Never
	for dir := 0; dir < 2; dir++ {
		for _, h := range r.paths[dir] {
			d = clock.Earliest(d, h.l.Deadline())
			for _, g := range h.cross {
				d = clock.Earliest(d, g.next)
			}
		}
	}
	return d
}

// writeDue is the earliest instant a packet reaches the far end of a hop
// (a write, or a hand-over to the next hop), not before the coalescing
// bound after the scheduler's last write (Config.Coalesce); clock.Never if
// none is in flight. Called with mu held.
func (r *Relay) writeDue() clock.Time {
	d := clock.Never
	for dir := 0; dir < 2; dir++ {
		for _, h := range r.paths[dir] {
			d = clock.Earliest(d, h.l.DeliveryDeadline())
		}
	}
	return coalesce(d, r.lastWrite, r.cfg.Coalesce)
}

// schedule is the real-time driver: it wakes at every deadline.
func (r *Relay) schedule() {
	defer r.wg.Done()
	if r.cfg.LockThread || r.cfg.Realtime {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		netio.PreciseTimers()
	}
	if r.cfg.Realtime {
		defer r.goRealtime()()
	}
	r.noSpin = runtime.GOMAXPROCS(0) == 1 || runtime.NumCPU() == 1
	nextExpire := r.now().Add(time.Second)
	over := time.Duration(-1)
	for {
		if r.closed.Load() {
			return
		}
		// The instant is read once the lock is held: a reader may hold it
		// for a while (a large read), and the packets that fell due
		// meanwhile go out in this write, not the next.
		woke := r.now()
		r.mu.Lock()
		now := r.now()
		r.cnt.LockWait.Add(now.Sub(woke))
		if over >= 0 {
			r.cnt.SleepLate.Add(over)
		}
		r.cnt.Lead, _ = r.sleepLead()
		r.serviceTimed(now)
		r.housekeep(now, &nextExpire)
		d := r.nextWake(nextExpire)
		r.wakeAt.Store(int64(d))
		r.mu.Unlock()
		over = r.wait(d)
	}
}

// goRealtime gives the calling goroutine's locked OS thread the real-time
// policy (Config.Realtime; New checked that it is allowed: checkRealtime)
// and returns what gives the policy back, to be deferred. The thread gets
// its policy back before it is unlocked; if it could not, it stays locked
// (a second lock, never undone) and ends with its goroutine, so no other
// goroutine runs on it real-time. If the policy could not be set, the
// summary says why (realtimeErr).
func (r *Relay) goRealtime() (undo func()) {
	restore, err := setRealtime()
	if err != nil {
		r.mu.Lock()
		r.realtimeErr = err
		r.mu.Unlock()
		return func() {}
	}
	return func() {
		if !restore() {
			runtime.LockOSThread()
		}
	}
}

// housekeep writes the statistics line when one is due and closes idle
// sessions once a second (*nextExpire: the next time). Called with mu held
// by the scheduler or the polling loop.
func (r *Relay) housekeep(now clock.Time, nextExpire *clock.Time) {
	if now >= r.nextStat {
		r.writeStats(now, false)
		for r.nextStat <= now {
			r.nextStat = r.nextStat.Add(r.cfg.Interval)
		}
	}
	if now >= *nextExpire {
		r.expire(now)
		*nextExpire = now.Add(time.Second)
	}
}

// nextWake is the next instant the scheduler or the polling loop must run
// at although nothing arrives: the links' next deadline (after Coalesce),
// the next statistics line and, while sessions or flows exist, the next
// expiry check (none is due without them). Called with mu held.
func (r *Relay) nextWake(nextExpire clock.Time) clock.Time {
	d := clock.Earliest(coalesce(r.deadline(), r.lastWrite, r.cfg.Coalesce), r.nextStat)
	if len(r.clients) > 0 || r.packet {
		d = clock.Earliest(d, nextExpire)
	}
	return d
}

// coalesce returns when the scheduler wakes for deadline d after its last
// write at lastWrite: not before lastWrite+c (Config.Coalesce), so that the
// packets due until then go out in one write.
func coalesce(d, lastWrite clock.Time, c time.Duration) clock.Time {
	if c > 0 && d != clock.Never && d < lastWrite.Add(c) {
		return lastWrite.Add(c)
	}
	return d
}

// sleepLead returns how long before an instant the scheduler stops
// sleeping and polls the clock, and whether that lead is learned
// (Config.Spin 0: wakeLead) rather than fixed (Config.Spin). On one CPU or
// one P (noSpin), for a real-time thread and with a negative Spin there is
// no lead: the polling after an early wake-up takes CPU from the readers,
// and on a shared CPU from the relay's fair share (measured pinned at load
// 8: error p99 1.8-2.2 ms with the lead at 86 % of the CPU, against
// 1.0-1.2 ms sleeping to each instant at 61-64 %).
func (r *Relay) sleepLead() (lead time.Duration, learned bool) {
	switch {
	case r.noSpin || r.cfg.Realtime || r.cfg.Spin < 0:
		return 0, false
	case r.cfg.Spin == 0:
		return r.lead.lead(), true
	}
	return r.cfg.Spin, false
}

// wait returns at d, or when woken (a reader's packets fall due sooner,
// Close). It sleeps (sleeper: precise and interruptible) until the lead
// (sleepLead) before d and polls the clock for the rest; with a learned
// lead, if d is nearer than that it sleeps once as briefly as it can, which
// takes about that long. It returns how late its last sleep woke against
// the instant asked for (the overshoot), or -1 if it did not sleep to the
// end of one.
func (r *Relay) wait(d clock.Time) time.Duration {
	over := time.Duration(-1)
	lead, adaptive := r.sleepLead()
	for {
		now := r.now()
		if now >= d || r.closed.Load() {
			return over
		}
		rem := d.Sub(now)
		if rem <= lead && (!adaptive || over >= 0) {
			// Busy-poll the clock without yielding: runtime.Gosched would put
			// the scheduler on the global run queue, behind whatever else is
			// runnable (measured: p99 lateness several ms under CPU load,
			// against under 1 ms without yielding). The window is short (the
			// lead), and the sleeps give the P back between writes.
			continue
		}
		s := max(rem-lead, time.Nanosecond)
		if r.sl.sleep(s) {
			return over
		}
		over = r.now().Sub(now.Add(s)) // negative: the sleep was cut short (EINTR)
		if adaptive && over >= 0 {
			r.lead.observe(over)
		}
	}
}
