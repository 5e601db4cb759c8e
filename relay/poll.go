package relay

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"time"

	"cclab/clock"
	"cclab/netio"
)

// The busy-polling driver (Config.BusyPoll): one goroutine on one locked OS
// thread does everything the readers and the scheduler otherwise share. Each
// pass asks which sockets hold datagrams (netio.ReadySet: one epoll_wait that
// does not block), reads each of those once without blocking (netio.Poller: a
// recvmmsg that returns at once; a socket that cannot be watched, a MemConn,
// is read every pass), so an idle session's socket costs the pass nothing,
// relays what it read (handle, as a reader does), then
// runs the links up to the present and writes what has fallen due, when the
// scheduler would have woken for it (the next deadline, not before Coalesce
// after the last write). Nothing in it sleeps or waits for another thread:
// the lateness it adds is the length of a pass (Counters.Loop), a few µs
// when nothing is read, against the tens to hundreds of µs a sleep wakes late
// on a VM (Counters.SleepLate). The price is a whole CPU, all the time.
// With Config.WaitPoll the same loop blocks in the kernel when a pass read
// nothing and nothing is due (wait.go).

// checkPoll reports an error if the relay runs the polling loop
// (Config.BusyPoll, WaitPoll) and conn cannot be polled (netio.Poller).
func (r *Relay) checkPoll(what string, conn netio.Conn) error {
	if !r.loop {
		return nil
	}
	if _, ok := conn.(netio.Poller); !ok {
		return fmt.Errorf("polling loop: %s (%T) cannot be read without blocking (want UDP sockets on Linux or netio.MemNet)", what, conn)
	}
	return nil
}

// errPollRealtime is New's error for Config.BusyPoll with Config.Realtime.
var errPollRealtime = errors.New("busy polling cannot be combined with the real-time policy (a SCHED_FIFO thread that never sleeps starves its CPU; WaitPoll blocks when idle)")

// errPollBoth is New's error for Config.BusyPoll with Config.WaitPoll.
var errPollBoth = errors.New("BusyPoll and WaitPoll are two modes of the polling loop: set one")

// pollLoop is the polling driver (see above; wait.go for WaitPoll). It
// returns when the relay closes.
func (r *Relay) pollLoop() {
	defer r.wg.Done()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	w := r.startWaiting()
	if w != nil {
		defer w.stop()
	}
	if r.ready != nil {
		defer r.ready.Close()
	}
	r.mu.Lock()
	nextExpire := r.now().Add(time.Second)
	r.mu.Unlock()
	prev := clock.Never
	pending := false // readyBuf holds the keys a wait returned
	for !r.closed.Load() {
		r.pollPasses.Add(1)
		got := false
		for i := 0; i < len(r.polled); i++ {
			read, closed := r.pollRead(r.polled[i])
			got = got || read
			if closed {
				// Its socket closed (the relay is closing): drop its
				// reader (slices.Delete clears the freed slot, so the
				// reader can be freed).
				r.polled = slices.Delete(r.polled, i, i+1)
				i--
			}
		}
		if r.ready != nil {
			var err error
			if !pending {
				if r.readyBuf, err = r.ready.Ready(r.readyBuf[:0]); err != nil {
					r.mu.Lock()
					r.cnt.ReadErrors++
					r.mu.Unlock()
				}
			}
			pending = false
			for _, k := range r.readyBuf {
				if k == wakeKey {
					r.sl.drain()
					continue
				}
				// A key freed earlier in this pass (its session closed)
				// is nil or already another session's: reading that
				// one without data costs a call and nothing else.
				rd := r.watched[k]
				if rd == nil {
					continue
				}
				read, closed := r.pollRead(rd)
				got = got || read
				if closed {
					r.unwatch(rd)
				}
			}
		}
		r.mu.Lock()
		now := r.now()
		if prev != clock.Never {
			r.cnt.Loop.Add(now.Sub(prev))
		}
		prev = now
		if now >= coalesce(r.deadline(), r.lastWrite, r.cfg.Coalesce) {
			r.serviceTimed(now)
		}
		r.housekeep(now, &nextExpire)
		next := clock.Never
		if w != nil && !got {
			next = r.nextWake(nextExpire)
		}
		r.mu.Unlock()
		if w != nil {
			var waited bool
			if pending, waited = w.wait(now, next, got); waited {
				prev = r.now() // the next pass starts as the wait ends
			}
		}
	}
}

// pollRead reads rd's socket once without blocking and relays what it
// held; it reports whether it read datagrams and whether the socket is
// closed.
func (r *Relay) pollRead(rd *reader) (read, closed bool) {
	r.pollReads.Add(1)
	n, err := rd.read(true)
	switch {
	case err == nil && n > 0:
		t := time.Now()
		r.mu.Lock()
		r.handle(rd, n, t)
		r.mu.Unlock()
		return true, false
	case errors.Is(err, netio.ErrClosed):
		return false, true
	case err != nil:
		r.mu.Lock()
		r.cnt.ReadErrors++
		r.mu.Unlock()
	}
	return false, false
}

// watch adds rd to the sockets the loop reads: to the ReadySet under a free
// key, so that it is read only when it holds datagrams, or, if it cannot
// be watched (no ReadySet, a MemConn), to those read every pass.
func (r *Relay) watch(rd *reader) {
	rd.key = -1
	if r.ready != nil {
		k, ok := pop(&r.freeKeys)
		if !ok {
			k = int32(len(r.watched))
			r.watched = append(r.watched, nil)
		}
		if r.ready.Add(rd.conn, k) == nil {
			r.watched[k], rd.key = rd, k
			return
		}
		r.freeKeys = append(r.freeKeys, k)
	}
	r.polled = append(r.polled, rd)
}

// unwatch removes rd from the sockets the loop reads (a session's socket,
// before it closes; or one whose read reported it closed).
func (r *Relay) unwatch(rd *reader) {
	if rd.key >= 0 {
		_ = r.ready.Remove(rd.conn) // (fails only if already closed, which left the set)
		r.watched[rd.key] = nil
		r.freeKeys = append(r.freeKeys, rd.key)
		rd.key = -1
		return
	}
	if i := slices.Index(r.polled, rd); i >= 0 {
		r.polled = slices.Delete(r.polled, i, i+1)
	}
}
