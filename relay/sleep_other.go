//go:build !linux

package relay

import "time"

const hasPreciseSleep = false

func preciseTimers() {}

func sleep(d time.Duration) { time.Sleep(d) }
