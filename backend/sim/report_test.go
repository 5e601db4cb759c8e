package simrun

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cclab/eval"
	"cclab/report"
	"cclab/report/studies"
	"cclab/scenario"
	"cclab/store"
)

// TestSweepAndReportUnswept runs a scenario without sweep axes end to end on
// the simulator: store, report with a results table and per-run time series
// that include the bottleneck queue.
func TestSweepAndReportUnswept(t *testing.T) {
	exp := parseScenario(t, `name: single
duration: 2s
runs: 2
topology:
  kind: chain
  hops: [{rate: 20Mbit, delay: 2ms, queue: droptail:50p}, {rate: 8Mbit, delay: 3ms, queue: droptail:30p}]
flows: [{cc: reno, count: 2}]
`)
	st, err := store.OpenSQLite(filepath.Join(t.TempDir(), "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	stats, err := eval.Sweep(context.Background(), exp, eval.SweepOptions{Store: st, Runners: map[string]eval.Runner{scenario.BackendSim: Runner{}}})
	if err != nil || stats.Ran != 2 {
		t.Fatalf("sweep: %+v, %v", stats, err)
	}
	path, err := report.WriteReport(context.Background(), st, "single", t.TempDir(), studies.Sections)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	html := string(b)
	for _, want := range []string{"Results by point and backend", "bottleneck queue length", "throughput at the receiver", "<svg"} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if strings.Contains(html, "Comparison across the sweep") {
		t.Errorf("a scenario without sweep axes has comparison plots")
	}
	runs, _ := st.Runs(context.Background(), "single", 0)
	bl := int64(-1)
	for _, l := range runs[0].Links {
		if strings.HasPrefix(l.Info, "bottleneck") {
			bl = l.ID
			if !strings.Contains(l.Info, "rate=8Mbit") {
				t.Errorf("bottleneck is %q, want the 8 Mbit/s hop", l.Info)
			}
		}
	}
	if bl < 0 {
		t.Errorf("no link marked as the bottleneck: %+v", runs[0].Links)
	}
}
