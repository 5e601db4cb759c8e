//go:build !linux

package udp

import "time"

// preciseSleep sleeps for d (a Go timer: no better precision is portable).
func preciseSleep(d time.Duration) { time.Sleep(d) }
