package sim

import (
	"testing"
	"time"
)

// oneReno is the reference scenario: one Reno flow, 20 Mbit/s,
// 40 ms RTT, 1×BDP DropTail.
func oneReno(seed uint64, dur time.Duration) Scenario {
	return Scenario{Flows: 1, CC: []string{"reno"}, Rate: 20e6, RTT: 40 * time.Millisecond,
		Buffer: "1bdp", Duration: dur, Warmup: dur / 4, Seed: seed}
}

func run(t *testing.T, sc Scenario) (*Run, Summary) {
	t.Helper()
	r, err := sc.Build()
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Run(); err != nil {
		t.Fatal(err)
	}
	return r, r.Summary()
}

func TestSmokeOneFlow(t *testing.T) {
	_, s := run(t, oneReno(1, 10*time.Second))
	if len(s.Flows) != 1 || s.Flows[0].Throughput <= 0 {
		t.Fatalf("flow summary %+v, want positive goodput", s.Flows)
	}
	t.Logf("goodput %.3f Mbit/s srtt %.1f ms util %.4f drops %d", s.Flows[0].Throughput/1e6,
		s.Flows[0].MeanSRTTms, s.Links[0].Utilization, s.Links[0].Drops)
}
