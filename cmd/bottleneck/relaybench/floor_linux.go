package main

import (
	"runtime"
	"slices"
	"time"

	"golang.org/x/sys/unix"

	"cclab/netio"
)

// wakeFloor measures how late a thread that must act at given instants
// acts on this machine, apart from any relay: for dur, on a locked OS
// thread with 1 ns timer slack, it aims at instants every period and either
// sleeps until each (clock_nanosleep to the absolute instant, as a relay
// that sleeps) or busy-polls the clock until it (as a relay that spins),
// and records how late it noticed each. The relay's write lateness cannot
// be better than this on the same machine and load.
func wakeFloor(period, dur time.Duration, spin bool) []time.Duration {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	netio.PreciseTimers()
	var lates []time.Duration
	next := monotonic() + period
	end := monotonic() + dur
	for next < end {
		if spin {
			for monotonic() < next {
			}
		} else {
			ts := unix.NsecToTimespec(int64(next))
			for unix.ClockNanosleep(unix.CLOCK_MONOTONIC, unix.TIMER_ABSTIME, &ts, nil) == unix.EINTR {
			}
		}
		now := monotonic()
		lates = append(lates, now-next)
		next += period
		if now > next { // skip the instants that passed meanwhile, as the relay writes them at once
			next = now + period
		}
	}
	slices.Sort(lates)
	return lates
}
