package main

import (
	"time"

	"golang.org/x/sys/unix"
)

// monotonic reads CLOCK_MONOTONIC, the clock every process on the host
// shares (Go's own monotonic readings are relative to each process).
func monotonic() time.Duration {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return time.Duration(ts.Nano())
}
