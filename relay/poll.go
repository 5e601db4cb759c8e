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
// pass reads every socket once without blocking (netio.Poller: a recvmmsg
// that returns at once), relays what it read (handle, as a reader does), then
// runs the links up to the present and writes what has fallen due, when the
// scheduler would have woken for it (the next deadline, not before Coalesce
// after the last write). Nothing in it sleeps or waits for another thread:
// the lateness it adds is the length of a pass (Counters.Loop), a few µs
// when nothing is read, against the tens to hundreds of µs a sleep wakes late
// on a VM (Counters.SleepLate). The price is a whole CPU, all the time.

// checkPoll reports an error if Config.BusyPoll is set and conn cannot be
// polled (netio.Poller).
func (r *Relay) checkPoll(what string, conn netio.Conn) error {
	if !r.cfg.BusyPoll {
		return nil
	}
	if _, ok := conn.(netio.Poller); !ok {
		return fmt.Errorf("busy polling: %s (%T) cannot be read without blocking (want UDP sockets on Linux or netio.MemNet)", what, conn)
	}
	return nil
}

// errPollRealtime is New's error for Config.BusyPoll with Config.Realtime.
var errPollRealtime = errors.New("busy polling cannot be combined with the real-time policy (a SCHED_FIFO thread that never sleeps starves its CPU)")

// pollLoop is the busy-polling driver (see above). It returns when the
// relay closes.
func (r *Relay) pollLoop() {
	defer r.wg.Done()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	r.mu.Lock()
	nextExpire := r.now().Add(time.Second)
	r.mu.Unlock()
	prev := clock.Never
	for !r.closed.Load() {
		for i := 0; i < len(r.polled); i++ {
			rd := r.polled[i]
			n, err := rd.read(true)
			switch {
			case err == nil && n > 0:
				t := time.Now()
				r.mu.Lock()
				r.handle(rd, n, t)
				r.mu.Unlock()
			case errors.Is(err, netio.ErrClosed):
				// A session's socket closed (expired, evicted), or the
				// relay is closing: drop its reader (slices.Delete
				// clears the freed slot, so the reader can be freed).
				r.polled = slices.Delete(r.polled, i, i+1)
				i--
			case err != nil:
				r.mu.Lock()
				r.cnt.ReadErrors++
				r.mu.Unlock()
			}
		}
		r.mu.Lock()
		now := r.now()
		if prev != clock.Never {
			r.cnt.LoopHist.Add(now.Sub(prev))
		}
		prev = now
		if now >= coalesce(r.deadline(), r.lastWrite, r.cfg.Coalesce) {
			r.serviceTimed(now)
		}
		r.housekeep(now, &nextExpire)
		r.mu.Unlock()
	}
}
