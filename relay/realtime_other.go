//go:build !linux

package relay

import "errors"

var errNoRealtime = errors.New("realtime: the SCHED_FIFO policy of the scheduler's thread needs Linux")

func setRealtime() (func() bool, error) { return nil, errNoRealtime }

func checkRealtime() error { return errNoRealtime }
