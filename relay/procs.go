package relay

import (
	"os"
	"runtime"
)

// TwoProcs raises GOMAXPROCS to 2 if it is 1 and the GOMAXPROCS
// environment variable does not set it, and reports the value in effect. A
// program whose main job is a relay calls it at start: pinned to one CPU
// (taskset, sched_setaffinity) Go gives it one P, but the scheduler's
// precise sleeps (nanosleep) keep their P for their duration, so with one P
// the readers, woken by the network poller, wait for the runtime to take
// the P back (tens of µs to ms); with two Ps their OS threads share the CPU
// and each wakes when the kernel wakes it.
func TwoProcs() int {
	if n := runtime.GOMAXPROCS(0); n != 1 || os.Getenv("GOMAXPROCS") != "" {
		return n
	}
	runtime.GOMAXPROCS(2)
	return 2
}
