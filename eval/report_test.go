package eval

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeTestReport sweeps the test scenario (with a reno baseline) on both
// backends with eventRunner and writes its report; it returns the HTML path.
func writeTestReport(t *testing.T) string {
	t.Helper()
	exp, err := ParseScenario("sweep.yaml", []byte(sweepScenario+"baseline: {cc: reno}\n"))
	if err != nil {
		t.Fatal(err)
	}
	st := openTestStore(t)
	r := &eventRunner{}
	if _, err := Sweep(context.Background(), exp, SweepOptions{Store: st, Runners: map[string]Runner{BackendSim: r, BackendLive: r}}); err != nil {
		t.Fatal(err)
	}
	path, err := WriteReport(context.Background(), st, exp.Name, t.TempDir())
	if err != nil {
		t.Fatalf("WriteReport: %v", err)
	}
	return path
}

func TestWriteReport(t *testing.T) {
	path := writeTestReport(t)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	html := string(b)
	for _, want := range []string{
		"<table>", "Results by point and backend", "Simulator vs live", "Change against the baseline", "Run conditions", "host_load1_start",
		"bandwidth utilization against loss", "Time series", "<svg", "name: sweep-test",
	} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	// 6 points × 2 backends of time series and 2 distributions (one per
	// controller); 5 comparison plots + 1 difference plot + 2 distributions
	// have captions.
	if got := strings.Count(html, "<details>"); got != 14 {
		t.Errorf("collapsible figures: got %d, want 12 time series + 2 distributions", got)
	}
	if got := strings.Count(html, "<figcaption>"); got != 8 {
		t.Errorf("captioned figures: got %d, want 8", got)
	}
	if !strings.Contains(html, "Distribution of throughput, cc=reno") {
		t.Errorf("no throughput distribution for cc=reno")
	}
	// Offline: no scripts and no external resources.
	for _, bad := range []string{"<script", `src="http`, `href="http`, "<link ", "<img "} {
		if strings.Contains(html, bad) {
			t.Errorf("report contains %q", bad)
		}
	}
	for _, f := range []string{"runs.json", "runs.csv", "aggregate.json", "aggregate.csv"} {
		if _, err := os.Stat(filepath.Join(filepath.Dir(path), f)); err != nil {
			t.Errorf("missing %s: %v", f, err)
		}
	}
	var agg []map[string]any
	ab, _ := os.ReadFile(filepath.Join(filepath.Dir(path), "aggregate.json"))
	if err := json.Unmarshal(ab, &agg); err != nil || len(agg) == 0 {
		t.Fatalf("aggregate.json: %v (%d rows)", err, len(agg))
	}
	// The synthetic runs are identical, so every mean equals the per-run value.
	for _, row := range agg {
		if row["metric"] == "agg_throughput" && row["mean"] != 8000.0 {
			t.Errorf("aggregate agg_throughput mean: got %v, want 8000", row["mean"])
		}
	}
}

func TestReportUnknownExperiment(t *testing.T) {
	st := openTestStore(t)
	st.Experiment(context.Background(), "other", nil)
	_, err := WriteReport(context.Background(), st, "nope", t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "other") {
		t.Errorf("unknown experiment: got %v, want an error listing the stored ones", err)
	}
}
