package relay

import (
	"time"

	"golang.org/x/sys/unix"
)

const hasPreciseSleep = true

// preciseTimers sets the calling thread's timer slack to 1 ns so nanosleep
// wakes within a few microseconds instead of the default 50 µs slack.
func preciseTimers() { _ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0) }

// sleep blocks the calling OS thread for d with nanosleep (Go timers have
// about 1 ms granularity when the runtime is idle). The goroutine may run on
// any thread, so the timer slack is set on the current one first (a cheap
// system call).
func sleep(d time.Duration) {
	preciseTimers()
	ts := unix.NsecToTimespec(int64(d))
	_ = unix.Nanosleep(&ts, nil)
}
