package netio

import (
	"time"

	"golang.org/x/sys/unix"
)

// HasPreciseSleep says whether Sleep is more precise than a Go timer here.
const HasPreciseSleep = true

// PreciseTimers sets the calling OS thread's timer slack to 1 ns (prctl
// PR_SET_TIMERSLACK), so nanosleep wakes within a few microseconds instead
// of the default 50 µs slack. A driver that locks its goroutine to a thread
// calls it once.
func PreciseTimers() { _ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0) }

// Sleep blocks the calling OS thread for d with nanosleep(2), which wakes
// within tens of microseconds, where Go's timers wake up to about 1 ms late
// on an idle process. The goroutine may run on any thread, so the timer
// slack is set on the current one first (a cheap system call); an
// interrupted sleep resumes for the time left.
func Sleep(d time.Duration) {
	PreciseTimers()
	ts := unix.NsecToTimespec(int64(d))
	for unix.Nanosleep(&ts, &ts) == unix.EINTR {
	}
}
