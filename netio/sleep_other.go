//go:build !linux

package netio

import "time"

// HasPreciseSleep says whether Sleep is more precise than a Go timer here.
const HasPreciseSleep = false

// PreciseTimers does nothing: no timer slack to set on this platform.
func PreciseTimers() {}

// Sleep sleeps for d (a Go timer: no better precision is portable).
func Sleep(d time.Duration) { time.Sleep(d) }
