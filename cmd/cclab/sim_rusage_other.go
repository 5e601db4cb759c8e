//go:build !unix

package main

import "time"

// maxRSS is not available on this platform.
func maxRSS() float64 { return 0 }

// cpuTime is not available on this platform.
func cpuTime() time.Duration { return 0 }
