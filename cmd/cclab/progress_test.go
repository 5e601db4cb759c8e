package main

import (
	"strings"
	"testing"
	"time"

	"cclab/eval"
	"cclab/scenario"
	"cclab/store"
)

// TestProgressLines: without a terminal the sweep prints a header per phase
// and one line per finished run naming its backend, point and seed, with the
// time-weighted percentage and the time left.
func TestProgressLines(t *testing.T) {
	exp, err := scenario.ParseScenario("p.yaml", []byte(`name: p
duration: 2s
runs: 2
live_runs: 1
backends: [sim, live]
topology: {kind: dumbbell, bottleneck: {rate: 16Mbit, loss: [0, 0.01]}}
flows: [{cc: reno}]
`))
	if err != nil {
		t.Fatal(err)
	}
	// The sweep's order: every simulator run, then the live ones.
	var specs []scenario.RunSpec
	for _, b := range []string{scenario.BackendSim, scenario.BackendLive} {
		specs = append(specs, eval.Specs(exp, []string{b})...)
	}
	var out strings.Builder
	meter := eval.NewProgressMeter(map[string]int{scenario.BackendSim: 2})
	v := newProgressView(&out, meter, false)
	now := time.Unix(0, 0)
	v.now = func() time.Time { return now }
	v.event(eval.ProgressEvent{Kind: eval.ProgressPlan, Todo: specs, At: now})
	for i, s := range specs {
		label := s.Point.Label(exp.Axes)
		v.event(eval.ProgressEvent{Kind: eval.ProgressStart, Spec: s, Label: label, At: now})
		wall := 20 * time.Millisecond
		if s.Backend == scenario.BackendLive {
			wall = 2500 * time.Millisecond
		}
		now = now.Add(wall)
		status, errText := store.StatusDone, ""
		if i == 1 {
			status, errText = store.StatusFailed, "backend exploded"
		}
		v.event(eval.ProgressEvent{Kind: eval.ProgressDone, Spec: s, Label: label, Status: status, Error: errText, Wall: wall, At: now})
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if got, want := len(lines), len(specs)+2; got != want {
		t.Fatalf("got %d lines, want %d (2 phase headers + one per run):\n%s", got, want, out.String())
	}
	for _, want := range []string{"sim: 4 runs in parallel", "[1/6   0%] sim loss=0 seed 1: done in 20ms", "FAILED (backend exploded)",
		"live: 2 runs one at a time", "[6/6 100%] live loss=0.01 seed 1: done in 2.5s; 5s elapsed, about <1s left"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("progress output lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "NaN") {
		t.Errorf("progress output has NaN:\n%s", out.String())
	}
}
