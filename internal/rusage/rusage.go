// Package rusage reads the resources the running process has used so far
// (getrusage(2) with RUSAGE_SELF): its CPU time, for benchmarks that report
// work per CPU-second beside work per wall-clock second, and its peak
// resident set size. Where the platform has no getrusage, both are unknown.
package rusage

import "time"

// CPU returns the CPU time (user + system) the process has used so far,
// and whether it is known.
func CPU() (time.Duration, bool) { return cpu() }

// Times returns the user and system CPU time the process has used so far,
// and whether they are known.
func Times() (user, system time.Duration, ok bool) { return times() }

// MaxRSS returns the process's peak resident set size, bytes, and whether
// it is known.
func MaxRSS() (int64, bool) { return maxRSS() }
