package liverun

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	simrun "cclab/backend/sim"
	"cclab/eval"
	"cclab/internal/hostlimit"
	"cclab/report"
	"cclab/report/studies"
	"cclab/scenario"
	"cclab/store"
)

// TestHostLimitedRunMarkedAndBannered: a live run whose host is starved
// on purpose (every relay write and timed wake-up made 5 × LateLimit late:
// the injection hook, so the mark does not depend on the machine's load)
// is stored with the host-limited mark and its reason; its report opens
// with the banner and leaves the run out of the simulator-vs-live table
// unless asked to keep it.
func TestHostLimitedRunMarkedAndBannered(t *testing.T) {
	skipShort(t)
	exp, err := scenario.ParseScenario("hl.yaml", []byte(`name: hostlimited
duration: 2s
backends: [sim, live]
topology:
  kind: dumbbell
  bottleneck: {rate: 10Mbit, delay: 10ms, queue: droptail:50p}
flows: [{cc: reno}]
`))
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.OpenSQLite(filepath.Join(t.TempDir(), "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runners := map[string]eval.Runner{scenario.BackendSim: simrun.Runner{}, scenario.BackendLive: Runner{injectLate: 5 * hostlimit.LateLimit}}
	if stats, err := eval.Sweep(context.Background(), exp, eval.SweepOptions{Store: st, Runners: runners}); err != nil || stats.Ran != 2 {
		t.Fatalf("sweep: %+v, %v", stats, err)
	}
	runs, err := st.Runs(context.Background(), exp.Name, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		live := r.Backend == scenario.BackendLive
		if got := report.HostLimited(&r); got != live {
			t.Errorf("%s run: host-limited %v, want %v (notes %v)", r.Backend, got, live, r.Notes)
		}
		if live && r.Notes[NoteHostReason+hostlimit.CodeRelayLate] != 1 {
			t.Errorf("live run: notes %v, want %s%s = 1", r.Notes, NoteHostReason, hostlimit.CodeRelayLate)
		}
	}
	for _, keep := range []bool{false, true} {
		path, err := report.WriteVersionReportWith(context.Background(), st, exp.Name, 0, t.TempDir(), studies.Sections, report.Options{IncludeHostLimited: keep})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(path)
		html := string(b)
		if !strings.Contains(html, `id="host-limited"`) || !strings.Contains(html, "1 of 1 live runs were limited by the host") {
			t.Errorf("keep %v: the report has no host-limited banner", keep)
		}
		if got := strings.Contains(html, "Simulator vs live"); got != keep {
			t.Errorf("keep %v: simulator-vs-live table shown %v, want %v", keep, got, keep)
		}
	}
}

// TestHostNotes: a report's verdict, reasons and evidence become the run's
// notes. (Whether a real run is marked depends on the machine's load,
// which a pass/fail test must not assert: the real-CPU-load check is
// BenchmarkHostLimitedUnderLoad.)
func TestHostNotes(t *testing.T) {
	n := map[string]float64{}
	h := &hostlimit.Report{Usage: hostlimit.Usage{Seconds: 2, CPU: 1.9, RunWait: -1, Pressure: 0.5}, Timers: hostlimit.Late{Count: 10, Late: 5}}
	h.Judge()
	hostNotes(n, h)
	want := map[string]float64{NoteHostLimited: 1, NoteHostReason + hostlimit.CodeTimerLate: 1, NoteHostReason + hostlimit.CodeCPUBusy: 1,
		NoteHostCores: 0.95, NoteHostPressure: 0.5, NoteTimerLate: 0.5}
	for k, v := range want {
		if n[k] != v {
			t.Errorf("note %s: %v, want %v (notes %v)", k, n[k], v, n)
		}
	}
	if _, ok := n[NoteHostRunWait]; ok {
		t.Errorf("unknown run-queue wait noted: %v", n)
	}
}

// BenchmarkHostLimitedUnderLoad runs a live 10 Mbit/s Reno run for 3 s
// while busy loops, two per CPU, each thread pinned to one CPU
// (sched_setaffinity, as taskset), take the machine; it reports whether
// the run was marked host-limited (host_limited 1 or 0) and logs the
// reasons. A measurement of the real check, not a pass/fail test:
// go test ./backend/live -run NONE -bench HostLimitedUnderLoad -benchtime 1x -v
func BenchmarkHostLimitedUnderLoad(b *testing.B) {
	exp, err := scenario.ParseScenario("load.yaml", []byte(`name: load
duration: 3s
backends: [live]
topology:
  kind: dumbbell
  bottleneck: {rate: 10Mbit, delay: 20ms, queue: droptail:100p}
flows: [{cc: reno}]
`))
	if err != nil {
		b.Fatal(err)
	}
	stop := make(chan struct{})
	for i := 0; i < 2*runtime.NumCPU(); i++ {
		go hog(i%runtime.NumCPU(), stop)
	}
	defer close(stop)
	marked := 0
	for i := 0; i < b.N; i++ {
		res, err := Runner{}.Run(context.Background(), scenario.RunSpec{Experiment: exp.Name, Point: exp.Points[0], Backend: scenario.BackendLive, Seed: 1})
		if err != nil {
			b.Fatal(err)
		}
		if res.Notes[NoteHostLimited] == 1 {
			marked++
		}
		b.Logf("notes %v; throughput %.2f Mbit/s", res.Notes, res.Metrics.Flows[0].Values["mean_throughput"]/1e6)
	}
	b.ReportMetric(float64(marked)/float64(b.N), "host_limited")
}
