package scenario

import (
	"fmt"
	"time"
)

// Upper bounds on a scenario's sizes and counts (docs/scenarios.md,
// "Limits"): a scenario file or cclab sim's flags beyond them are refused
// with the field or flag named, before anything is built.
const (
	MaxFlows        = 10000          // flows in one run: every group's count, background groups and UDP flows together
	MaxRuns         = 10000          // runs (seeds) per point, and live_runs
	MaxHops         = 64             // hops of a topology
	MaxDuration     = 24 * time.Hour // a run's (simulated) duration
	MaxSeriesPoints = 1000000        // samples of one time series: duration / interval
)

// flowCount returns the number of flows of a run of s: the flow groups'
// counts and the hops' background groups.
func (s *Scenario) flowCount() int {
	n := 0
	for _, f := range s.Flows {
		n += f.Count
	}
	for _, h := range s.Topology.Hops {
		for _, b := range h.Background {
			n += b.Count
		}
	}
	return n
}

// checkLimits checks s against the bounds above; the error names the
// scenario key, or the cclab sim flag when flags is true.
func (s *Scenario) checkLimits(flags bool) error {
	name := func(key, flag string) string {
		if flags {
			return flag
		}
		return key
	}
	switch {
	case s.Duration <= 0 || s.Duration > MaxDuration:
		return fmt.Errorf("%s %v: must be positive and at most %v", name("duration", "-duration"), s.Duration, MaxDuration)
	case s.Interval <= 0 || s.Duration/s.Interval > MaxSeriesPoints:
		return fmt.Errorf("%s %v: must be positive and at least duration/%d (%v for %v)", name("interval", "-interval"),
			s.Interval, MaxSeriesPoints, (s.Duration+MaxSeriesPoints-1)/MaxSeriesPoints, s.Duration)
	case len(s.Seeds) > MaxRuns:
		return fmt.Errorf("%s %d: at most %d runs per point", name("runs", "-runs"), len(s.Seeds), MaxRuns)
	case len(s.Topology.Hops) > MaxHops:
		return fmt.Errorf("%s %d: at most %d hops", name("topology.hops", "-hops"), len(s.Topology.Hops), MaxHops)
	}
	if n := s.flowCount(); n > MaxFlows {
		return fmt.Errorf("%s: %d flows in a run, at most %d", name("flows", "-flows"), n, MaxFlows)
	}
	return nil
}
