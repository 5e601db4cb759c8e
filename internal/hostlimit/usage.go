package hostlimit

import (
	"os"
	"strconv"
	"strings"
	"time"

	"cclab/internal/rusage"
)

// Usage is the CPU a process used and waited for over an interval. Fields
// that could not be read are -1.
type Usage struct {
	Seconds float64 `json:"seconds"`    // wall-clock length of the interval, s
	CPU     float64 `json:"cpu_s"`      // user + system CPU time of the process (getrusage), s
	RunWait float64 `json:"run_wait_s"` // time its threads waited on a run queue for a CPU (/proc/self/task/*/schedstat), s
	// Pressure is the fraction of the interval in which some task of the
	// host waited for a CPU (/proc/pressure/cpu, "some"): the host's load,
	// recorded as context but not a check (a shared host reads high here
	// while every process still gets the CPU it needs).
	Pressure float64 `json:"host_cpu_pressure"`
}

// Cores returns the CPU time per second of the interval (cores busy on
// average), 0 when unknown.
func (u Usage) Cores() float64 {
	if u.Seconds <= 0 || u.CPU < 0 {
		return 0
	}
	return u.CPU / u.Seconds
}

// RunWaitPerSecond returns the run-queue wait per second of the interval,
// 0 when unknown.
func (u Usage) RunWaitPerSecond() float64 {
	if u.Seconds <= 0 || u.RunWait < 0 {
		return 0
	}
	return u.RunWait / u.Seconds
}

// Snapshot is the process's and host's CPU counters at one instant.
type Snapshot struct {
	wall     time.Time
	cpu      time.Duration // -1: unknown
	runWait  time.Duration // -1: unknown
	pressure time.Duration // -1: unknown
}

// Take reads the counters now.
func Take() Snapshot {
	s := Snapshot{wall: time.Now(), cpu: -1, runWait: -1, pressure: -1}
	if c, ok := rusage.CPU(); ok {
		s.cpu = c
	}
	s.runWait = threadsRunWait("/proc/self/task")
	if b, err := os.ReadFile("/proc/pressure/cpu"); err == nil {
		s.pressure = parsePressure(string(b))
	}
	return s
}

// Since returns the usage from earlier to s.
func (s Snapshot) Since(earlier Snapshot) Usage {
	u := Usage{Seconds: s.wall.Sub(earlier.wall).Seconds(), CPU: -1, RunWait: -1, Pressure: -1}
	if s.cpu >= 0 && earlier.cpu >= 0 {
		u.CPU = (s.cpu - earlier.cpu).Seconds()
	}
	if s.runWait >= 0 && earlier.runWait >= 0 {
		u.RunWait = max(s.runWait-earlier.runWait, 0).Seconds()
	}
	if s.pressure >= 0 && earlier.pressure >= 0 && u.Seconds > 0 {
		u.Pressure = min((s.pressure-earlier.pressure).Seconds()/u.Seconds, 1)
	}
	return u
}

// threadsRunWait sums the run-queue wait of every thread under dir
// (/proc/self/task), -1 if unknown.
func threadsRunWait(dir string) time.Duration {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return -1
	}
	var sum time.Duration
	n := 0
	for _, e := range ents {
		b, err := os.ReadFile(dir + "/" + e.Name() + "/schedstat")
		if err != nil {
			continue // the thread exited
		}
		if w, ok := parseSchedstat(string(b)); ok {
			sum += w
			n++
		}
	}
	if n == 0 {
		return -1
	}
	return sum
}

// parseSchedstat reads the run-queue wait from a schedstat line: "time on
// the CPU (ns), time waiting on a run queue (ns), timeslices"
// (Documentation/scheduler/sched-stats.rst).
func parseSchedstat(s string) (time.Duration, bool) {
	f := strings.Fields(s)
	if len(f) < 2 {
		return 0, false
	}
	v, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil || v < 0 {
		return 0, false
	}
	return time.Duration(v), true
}

// parsePressure reads the "some" line's total stall time (µs) from
// /proc/pressure/cpu (Documentation/accounting/psi.rst), -1 if absent.
func parsePressure(s string) time.Duration {
	for _, line := range strings.Split(s, "\n") {
		rest, ok := strings.CutPrefix(line, "some ")
		if !ok {
			continue
		}
		for _, kv := range strings.Fields(rest) {
			if v, ok := strings.CutPrefix(kv, "total="); ok {
				us, err := strconv.ParseInt(v, 10, 64)
				if err != nil || us < 0 {
					return -1
				}
				return time.Duration(us) * time.Microsecond
			}
		}
	}
	return -1
}
