//go:build !linux

package main

import "time"

// wakeFloor is measured on Linux only.
func wakeFloor(period, dur time.Duration, spin bool) []time.Duration { return nil }
