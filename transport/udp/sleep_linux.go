package udp

import (
	"time"

	"golang.org/x/sys/unix"
)

// preciseSleep blocks the calling thread for d with nanosleep(2), which
// wakes within tens of microseconds (Go's timers: up to ~1 ms late).
func preciseSleep(d time.Duration) {
	ts := unix.NsecToTimespec(int64(d))
	for unix.Nanosleep(&ts, &ts) == unix.EINTR {
	}
}
