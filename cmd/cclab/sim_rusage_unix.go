//go:build unix

package main

import "syscall"

// maxRSS returns the process's peak resident set size in bytes (getrusage).
func maxRSS() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Maxrss) * 1024 // Linux reports KiB
}
