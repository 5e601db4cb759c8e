package relay

import (
	"os"
	"runtime"
	"runtime/debug"
)

// TwoProcs raises GOMAXPROCS to 2 if it is 1 and the GOMAXPROCS
// environment variable does not set it, and reports the value in effect. A
// program whose main job is a relay calls it at start: pinned to one CPU
// (taskset, sched_setaffinity) Go gives it one P, but the scheduler's
// precise sleeps (sleeper: ppoll) keep their P for their duration, so with one P
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

// GCPercent is the garbage collector's target (GOGC) QuietGC gives a relay
// process: the heap may grow to 5× what is live (with GOGC=100, 2×) before a
// collection, and the first goal is 16 MiB instead of 4 MiB.
const GCPercent = 400

// QuietGC sets GOGC to GCPercent unless the GOGC environment variable sets
// it, and reports the value in effect. A program whose main job is a relay
// calls it at start. The relay's packet path does not allocate; its
// packet pools fill while its queues first fill (one packet and buffer per
// queued or delayed datagram: about 4 MiB for a 1000-packet queue and 10 ms
// at 1 Gbit/s), which with GOGC=100 crossed the first heap goal and made a
// collection while relaying (measured: 1 per run of the bottleneck bench,
// its stop-the-world phases 1.4–19.5 ms of wall-clock time on a loaded
// 2-CPU machine, and a dedicated mark worker holding one of its two Ps).
// With GCPercent the pools of such a path fit under the first goal.
func QuietGC() int {
	if os.Getenv("GOGC") != "" {
		old := debug.SetGCPercent(100)
		debug.SetGCPercent(old)
		return old
	}
	debug.SetGCPercent(GCPercent)
	return GCPercent
}
