package eval

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"cclab/internal/evaltest"
	"cclab/metrics"
	"cclab/scenario"
)

// eventRunner replays the synthetic event stream through the Collector, as a
// backend would, optionally failing or cancelling the sweep after n runs.
type eventRunner struct {
	calls    atomic.Int32
	cancelAt int32 // cancel the sweep's context when this run starts (0: never)
	cancel   context.CancelFunc
	failSeed uint64 // fail runs with this seed (0: none)
}

func (r *eventRunner) Run(ctx context.Context, s scenario.RunSpec) (metrics.RunResult, error) {
	n := r.calls.Add(1)
	if r.cancelAt > 0 && n >= r.cancelAt {
		r.cancel()
		return metrics.RunResult{}, ctx.Err()
	}
	if s.Seed == r.failSeed {
		return metrics.RunResult{}, errors.New("backend exploded")
	}
	info, ev := evaltest.SyntheticRun()
	res := metrics.RunResult{Info: info, Metrics: metrics.Compute(info, ev)}
	if s.Backend == scenario.BackendLive {
		res.Notes = map[string]float64{"host_load1_start": 0.5}
	}
	return res, nil
}

const sweepScenario = `name: sweep-test
duration: 2s
seeds: [1, 2, 3]
backends: [sim, live]
topology: {kind: dumbbell, bottleneck: {rate: 16Mbit, loss: [0, 0.01, 0.1]}}
flows: [{cc: [reno, newreno]}]
`

func TestSweepResume(t *testing.T) {
	exp, err := scenario.ParseScenario("sweep.yaml", []byte(sweepScenario))
	if err != nil {
		t.Fatal(err)
	}
	total := len(exp.Points) * 3 // seeds; sim only (live has no runner here)
	if total != 18 {
		t.Fatalf("runs: got %d, want 3 losses × 2 ccs × 3 seeds = 18", total)
	}
	st := openTestStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	r := &eventRunner{cancelAt: 8, cancel: cancel}
	stats, err := Sweep(ctx, exp, SweepOptions{Store: st, Runners: map[string]Runner{scenario.BackendSim: r}, Parallel: map[string]int{scenario.BackendSim: 2}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted sweep: got %v, want context.Canceled", err)
	}
	if len(stats.Missing) != 1 || stats.Missing[0] != scenario.BackendLive {
		t.Errorf("missing backends: got %v, want [live]", stats.Missing)
	}
	first := count(t, st, "runs")
	if first == 0 || first >= total {
		t.Fatalf("after the interruption: %d runs stored, want some but not all of %d", first, total)
	}
	// Every stored run is whole: it has its summaries.
	var bare int
	st.DB().QueryRow(`SELECT COUNT(*) FROM runs r WHERE NOT EXISTS (SELECT 1 FROM summaries s WHERE s.run_id = r.id)`).Scan(&bare)
	if bare != 0 {
		t.Errorf("%d stored runs have no summaries", bare)
	}

	r2 := &eventRunner{}
	stats, err = Sweep(context.Background(), exp, SweepOptions{Store: st, Runners: map[string]Runner{scenario.BackendSim: r2}})
	if err != nil {
		t.Fatal(err)
	}
	if stats.Skipped != first || stats.Ran != total-first || int(r2.calls.Load()) != total-first {
		t.Errorf("resume: skipped %d ran %d calls %d, want skipped %d ran %d", stats.Skipped, stats.Ran, r2.calls.Load(), first, total-first)
	}
	var runs, keys int
	st.DB().QueryRow(`SELECT COUNT(*), COUNT(DISTINCT run_key) FROM runs WHERE status = 'done'`).Scan(&runs, &keys)
	if runs != total || keys != total {
		t.Errorf("after resume: %d done runs with %d distinct keys, want %d each", runs, keys, total)
	}
	// A third sweep does nothing.
	r3 := &eventRunner{}
	stats, _ = Sweep(context.Background(), exp, SweepOptions{Store: st, Runners: map[string]Runner{scenario.BackendSim: r3}})
	if r3.calls.Load() != 0 || stats.Skipped != total {
		t.Errorf("complete sweep rerun: %d calls, %d skipped; want 0 and %d", r3.calls.Load(), stats.Skipped, total)
	}
}

func TestSweepFailedRunsRetried(t *testing.T) {
	exp, err := scenario.ParseScenario("sweep.yaml", []byte(sweepScenario))
	if err != nil {
		t.Fatal(err)
	}
	st := openTestStore(t)
	stats, err := Sweep(context.Background(), exp, SweepOptions{Store: st, Runners: map[string]Runner{scenario.BackendSim: &eventRunner{failSeed: 2}}})
	if err != nil {
		t.Fatal(err)
	}
	if stats.Failed != 6 || stats.Ran != 12 {
		t.Errorf("failures: got ran %d failed %d, want 12 and 6", stats.Ran, stats.Failed)
	}
	r := &eventRunner{}
	stats, _ = Sweep(context.Background(), exp, SweepOptions{Store: st, Runners: map[string]Runner{scenario.BackendSim: r}})
	if r.calls.Load() != 6 || stats.Ran != 6 {
		t.Errorf("retry: %d calls, ran %d; want the 6 failed runs", r.calls.Load(), stats.Ran)
	}
	if got := count(t, st, "runs"); got != 18 {
		t.Errorf("runs: got %d, want 18", got)
	}
}

func TestRunKeys(t *testing.T) {
	exp, _ := scenario.ParseScenario("sweep.yaml", []byte(sweepScenario))
	specs := Specs(exp, nil)
	if len(specs) != 36 {
		t.Fatalf("specs: got %d, want 36 (2 backends)", len(specs))
	}
	seen := map[string]bool{}
	for _, s := range specs {
		if seen[s.Key] {
			t.Errorf("duplicate key %s", s.Key)
		}
		seen[s.Key] = true
	}
	if got := len(Specs(exp, []string{scenario.BackendLive})); got != 18 {
		t.Errorf("live specs: got %d, want 18", got)
	}
	exp, _ = scenario.ParseScenario("sweep.yaml", []byte(sweepScenario+"live_runs: 1\n"))
	if got := len(Specs(exp, []string{scenario.BackendLive})); got != 6 {
		t.Errorf("live specs with live_runs 1: got %d, want 6", got)
	}
	if got := len(Specs(exp, []string{scenario.BackendSim})); got != 18 {
		t.Errorf("sim specs with live_runs 1: got %d, want 18", got)
	}
}

// TestSweepBackendWithoutRuns: selecting a backend the scenario does not run
// on is an error, not a sweep of 0 runs.
func TestSweepBackendWithoutRuns(t *testing.T) {
	exp, err := scenario.ParseScenario("simonly.yaml", []byte(strings.Replace(sweepScenario, "backends: [sim, live]", "backends: [sim]", 1)))
	if err != nil {
		t.Fatal(err)
	}
	r := &eventRunner{}
	_, err = Sweep(context.Background(), exp, SweepOptions{Store: openTestStore(t), Runners: map[string]Runner{scenario.BackendSim: r, scenario.BackendLive: r},
		Backends: []string{scenario.BackendLive}})
	if err == nil || !strings.Contains(err.Error(), "no live runs") || r.calls.Load() != 0 {
		t.Errorf("-backends live on a sim-only scenario: got %v after %d runs, want an error saying it has no live runs", err, r.calls.Load())
	}
	if err := CheckBackends(exp, []string{"omnet"}); err == nil || !strings.Contains(err.Error(), "allowed") {
		t.Errorf("unknown backend: got %v, want an error listing the allowed ones", err)
	}
	if err := CheckBackends(exp, []string{scenario.BackendSim}); err != nil {
		t.Errorf("sim on a sim scenario: %v", err)
	}
}

// TestShardSpecs: the shards of a sweep are disjoint, together the whole
// sweep in order, and differ in size by at most one run.
func TestShardSpecs(t *testing.T) {
	var specs []scenario.RunSpec
	for i := 0; i < 41; i++ {
		specs = append(specs, scenario.RunSpec{Key: strconv.Itoa(i)})
	}
	for _, n := range []int{1, 2, 4, 7, 41, 50} {
		seen := map[string]int{}
		lo, hi := len(specs), 0
		for i := 0; i < n; i++ {
			share := ShardSpecs(specs, i, n)
			lo, hi = min(lo, len(share)), max(hi, len(share))
			for _, s := range share {
				seen[s.Key]++
			}
		}
		if len(seen) != len(specs) || hi-lo > 1 {
			t.Errorf("%d shards: %d distinct runs (want %d), sizes %d..%d (want within 1)", n, len(seen), len(specs), lo, hi)
		}
		for k, c := range seen {
			if c != 1 {
				t.Errorf("%d shards: run %s in %d shards, want 1", n, k, c)
			}
		}
	}
}

func TestParseShard(t *testing.T) {
	for _, tc := range []struct {
		in   string
		i, n int
		ok   bool
	}{{"0/4", 0, 4, true}, {"3/4", 3, 4, true}, {"0/1", 0, 1, true}, {"4/4", 0, 0, false}, {"-1/4", 0, 0, false},
		{"1/0", 0, 0, false}, {"1", 0, 0, false}, {"a/b", 0, 0, false}, {"", 0, 0, false}} {
		i, n, err := ParseShard(tc.in)
		if (err == nil) != tc.ok || i != tc.i || n != tc.n {
			t.Errorf("ParseShard(%q): got %d, %d, %v; want %d, %d, ok=%v", tc.in, i, n, err, tc.i, tc.n, tc.ok)
		}
	}
}

// TestAlternate: live runs go round by round (every point's first seed,
// then every point's second, ...), points in order within a round, none
// lost or repeated.
func TestAlternate(t *testing.T) {
	exp, err := scenario.ParseScenario("sweep.yaml", []byte(sweepScenario))
	if err != nil {
		t.Fatal(err)
	}
	specs := Specs(exp, []string{scenario.BackendLive}) // 6 points x 3 seeds, point-major
	keys := map[string]bool{}
	for _, s := range specs {
		keys[s.Key] = true
	}
	got := Alternate(slices.Clone(specs))
	if len(got) != len(specs) {
		t.Fatalf("got %d runs, want %d", len(got), len(specs))
	}
	points := len(exp.Points)
	for i, s := range got {
		if !keys[s.Key] {
			t.Errorf("run %d: key %s not in the sweep or repeated", i, s.Key)
		}
		delete(keys, s.Key)
		if want := exp.Base.Seeds[i/points]; s.Seed != want {
			t.Errorf("run %d: seed %d, want %d (round %d)", i, s.Seed, want, i/points)
		}
		if want := exp.Points[i%points].Index; s.Point.Index != want {
			t.Errorf("run %d: point %d, want %d", i, s.Point.Index, want)
		}
	}
}
