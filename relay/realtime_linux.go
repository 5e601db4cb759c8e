package relay

import (
	"fmt"
	"runtime"

	"golang.org/x/sys/unix"
)

// setRealtime gives the calling OS thread (locked to its goroutine) the
// SCHED_FIFO policy at RealtimePriority, with reset-on-fork so that threads
// it creates start with the normal policy (the Go runtime makes its
// threads from a template thread anyway, never from a locked one). restore
// gives the thread its former policy back (which reset-on-fork lets any
// thread do) and reports whether it did; a thread that keeps the policy
// must stay locked until its goroutine ends, so that the runtime ends the
// thread too (or, for the main thread, parks it for good).
func setRealtime() (restore func() bool, err error) {
	old, err := unix.SchedGetAttr(0, 0)
	if err != nil {
		return nil, fmt.Errorf("realtime: sched_getattr: %v", err)
	}
	attr := unix.SchedAttr{Policy: unix.SCHED_FIFO, Priority: RealtimePriority, Flags: unix.SCHED_FLAG_RESET_ON_FORK}
	if err := unix.SchedSetAttr(0, &attr, 0); err != nil {
		return nil, fmt.Errorf("realtime: the SCHED_FIFO policy needs root, CAP_SYS_NICE or an RLIMIT_RTPRIO (ulimit -r) of at least %d (sched_setattr: %v)", RealtimePriority, err)
	}
	return func() bool {
		old.Flags = 0
		return unix.SchedSetAttr(0, old, 0) == nil
	}, nil
}

// checkRealtime reports whether this process may give a thread the
// real-time policy: it tries on a locked thread and gives the thread its
// policy back.
func checkRealtime() error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		restore, err := setRealtime()
		if err == nil && !restore() {
			errc <- nil
			return // stay locked: the thread goes with the goroutine
		}
		runtime.UnlockOSThread()
		errc <- err
	}()
	return <-errc
}
