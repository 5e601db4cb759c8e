//go:build !linux

package relay

import "errors"

// RealtimePriority is the SCHED_FIFO priority of the scheduler's thread
// with Config.Realtime (Linux only).
const RealtimePriority = 10

var errNoRealtime = errors.New("realtime: the SCHED_FIFO policy of the scheduler's thread needs Linux")

func setRealtime() (func() bool, error) { return nil, errNoRealtime }

func checkRealtime() error { return errNoRealtime }
