//go:build !linux

package main

import "time"

// monotonic is this process's clock: (d)'s full emulation, which compares
// clocks of several processes, needs Linux (as its GSO blaster does).
func monotonic() time.Duration { return since() }

// processCPU is not measured here (0).
func processCPU() time.Duration { return 0 }
