package eval

import (
	"testing"
	"time"

	"cclab/scenario"
	"cclab/store"
)

// TestProgressMeterWeightsByTime: after the fast simulator runs of a sweep
// with live runs, the progress is the small share of the expected time they
// took, not their share of the run count; the time left tracks the live
// runs, and a running live run moves it.
func TestProgressMeterWeightsByTime(t *testing.T) {
	exp, err := scenario.ParseScenario("p.yaml", []byte(`name: p
duration: 5s
runs: 3
live_runs: 1
backends: [sim, live]
topology: {kind: dumbbell, bottleneck: {rate: 16Mbit, loss: [0, 0.01]}}
flows: [{cc: [reno, cubic]}]
`))
	if err != nil {
		t.Fatal(err)
	}
	specs := Specs(exp, nil)
	var sims, lives []scenario.RunSpec
	for _, s := range specs {
		if s.Backend == scenario.BackendSim {
			sims = append(sims, s)
		} else {
			lives = append(lives, s)
		}
	}
	if len(sims) != 12 || len(lives) != 4 {
		t.Fatalf("specs: %d sim, %d live; want 12 and 4", len(sims), len(lives))
	}
	m := NewProgressMeter(map[string]int{scenario.BackendSim: 2})
	t0 := time.Unix(1000, 0)
	now := t0
	m.Observe(ProgressEvent{Kind: ProgressPlan, Todo: append(append([]scenario.RunSpec{}, sims...), lives...), At: t0})
	st := m.State(now)
	// Before any run: 12 sim runs × 5 s × 0.02 / 2 workers + 4 live × (5 s + 0.5 s).
	if want := 12*5*simSpeedPrior/2 + 4*5.5; !nearDur(st.Remaining, want) || st.Fraction != 0 {
		t.Errorf("at the start: remaining %v, fraction %v; want %.1f s and 0", st.Remaining, st.Fraction, want)
	}
	// The simulator runs take 0.05 s each, two at a time.
	for _, s := range sims {
		m.Observe(ProgressEvent{Kind: ProgressStart, Spec: s, At: now})
		now = now.Add(25 * time.Millisecond)
		m.Observe(ProgressEvent{Kind: ProgressDone, Spec: s, Status: store.StatusDone, Wall: 50 * time.Millisecond, At: now})
	}
	st = m.State(now)
	if st.Done != 12 || st.Total != 16 {
		t.Errorf("after the sim runs: %d/%d runs, want 12/16", st.Done, st.Total)
	}
	if st.Fraction > 0.05 || !nearDur(st.Remaining, 22) {
		t.Errorf("after the sim runs: fraction %.3f (want < 5 %%: they took 0.3 s of about 22.3 s), remaining %v (want 22 s)", st.Fraction, st.Remaining)
	}
	// A live run under way for 3 s: 2.5 s of it left.
	m.Observe(ProgressEvent{Kind: ProgressStart, Spec: lives[0], Label: "loss=0 cc=reno", At: now})
	now = now.Add(3 * time.Second)
	st = m.State(now)
	if !nearDur(st.Remaining, 2.5+3*5.5) || st.Phase != scenario.BackendLive || st.PhaseTotal != 4 || len(st.Running) != 1 || st.Running[0] != "live loss=0 cc=reno seed 1" {
		t.Errorf("during a live run: remaining %v (want 19 s), phase %q %d/%d, running %q", st.Remaining, st.Phase, st.PhaseDone, st.PhaseTotal, st.Running)
	}
	// It took 6 s: the others are now expected to take 6 s each.
	now = now.Add(3 * time.Second)
	m.Observe(ProgressEvent{Kind: ProgressDone, Spec: lives[0], Status: store.StatusDone, Wall: 6 * time.Second, At: now})
	st = m.State(now)
	if !nearDur(st.Remaining, 18) || st.PhaseDone != 1 {
		t.Errorf("after one live run of 6 s: remaining %v, want 18 s; phase done %d, want 1", st.Remaining, st.PhaseDone)
	}
	if want := st.Elapsed.Seconds() / (st.Elapsed.Seconds() + 18); abs(st.Fraction-want) > 1e-9 {
		t.Errorf("fraction: got %v, want elapsed/(elapsed+remaining) = %v", st.Fraction, want)
	}
}

func nearDur(d time.Duration, seconds float64) bool { return abs(d.Seconds()-seconds) < 0.01 }

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
