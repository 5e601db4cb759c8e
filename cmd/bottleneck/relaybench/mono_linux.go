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

// processCPU returns the CPU time (user and system) this process has used.
func processCPU() time.Duration {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_PROCESS_CPUTIME_ID, &ts)
	return time.Duration(ts.Nano())
}
