package eval

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"cclab/internal/evaltest"
	"cclab/metrics"
	"cclab/report"
	"cclab/scenario"
	"cclab/store"
	"cclab/transport"
)

// rateRunner reports a network bw_utilization that depends on the point's
// bottleneck rate (1 Mbit/s divided by it), so runs of different
// configurations are told apart by their values. It keeps no state: Sweep
// calls it from several workers at once.
type rateRunner struct{}

func (r *rateRunner) Run(_ context.Context, s scenario.RunSpec) (metrics.RunResult, error) {
	u := 1e6 / s.Point.Scenario.Topology.Hops[0].Rate
	m := metrics.Metrics{Network: metrics.Result{Scope: metrics.ScopeNetwork, Name: "network", Values: map[string]float64{"bw_utilization": u}}}
	return metrics.RunResult{Metrics: m}, nil
}

func identityScenario(rate string) string {
	return `name: edited
duration: 1s
runs: 3
topology: {kind: dumbbell, bottleneck: {rate: ` + rate + `, loss: [0, 0.01]}}
flows: [{cc: reno}]
`
}

func sweepSrc(t *testing.T, st store.Store, src string, r Runner) SweepStats {
	t.Helper()
	exp, err := scenario.ParseScenario("edited.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	stats, err := Sweep(context.Background(), exp, SweepOptions{Store: st, Runners: map[string]Runner{scenario.BackendSim: r}})
	if err != nil {
		t.Fatal(err)
	}
	return stats
}

// TestEditedScenarioNeverMixed edits a scenario's rate but keeps its name:
// the edited scenario is a new version whose report has only
// its own runs (n = 3 seeds, not 6), and the old version stays reportable.
func TestEditedScenarioNeverMixed(t *testing.T) {
	ctx := context.Background()
	st := openTestStore(t)
	r := &rateRunner{}
	if s := sweepSrc(t, st, identityScenario("10Mbit"), r); s.Version != 1 || s.Ran != 6 {
		t.Fatalf("first sweep: version %d, ran %d; want v1, 6 runs", s.Version, s.Ran)
	}
	if s := sweepSrc(t, st, identityScenario("80Mbit"), r); s.Version != 2 || s.Ran != 6 || s.Skipped != 0 {
		t.Fatalf("edited sweep: version %d, ran %d, skipped %d; want v2, 6 runs, none skipped", s.Version, s.Ran, s.Skipped)
	}
	for _, tc := range []struct {
		version int
		want    float64 // bw_utilization of every run
		seq     int
	}{{0, 1.0 / 80, 2}, {2, 1.0 / 80, 2}, {1, 1.0 / 10, 1}} {
		d, err := report.LoadReport(ctx, st, "edited", tc.version)
		if err != nil {
			t.Fatal(err)
		}
		if d.Version.Seq != tc.seq || len(d.Groups) != 2 {
			t.Fatalf("report of version %d: got v%d with %d groups, want v%d with 2", tc.version, d.Version.Seq, len(d.Groups), tc.seq)
		}
		for _, g := range d.Groups {
			s := metrics.Summarize(g.Values(metrics.ScopeNetwork, 0, "bw_utilization"))
			if s.N != 3 || !evaltest.Near(s.Mean, tc.want) || s.SD != 0 {
				t.Errorf("report of version %d, %s: n=%d mean %v sd %v; want n=3 mean %v sd 0 (never mixed)", tc.version, g.Label, s.N, s.Mean, s.SD, tc.want)
			}
		}
		if !strings.Contains(d.Source, map[int]string{1: "10Mbit", 2: "80Mbit"}[tc.seq]) {
			t.Errorf("report of version %d: scenario source %q is not that version's", tc.version, d.Source)
		}
	}
	// Going back to the first scenario reuses v1 (its runs are done) and
	// makes it the newest again.
	if s := sweepSrc(t, st, identityScenario("10Mbit"), r); s.Version != 1 || s.Ran != 0 || s.Skipped != 6 {
		t.Errorf("reverted sweep: version %d, ran %d, skipped %d; want v1, 0, 6", s.Version, s.Ran, s.Skipped)
	}
	vers, err := st.Versions(ctx, "edited")
	if err != nil || len(vers) != 2 || vers[0].Seq != 1 || vers[0].Done != 6 || vers[1].Done != 6 {
		t.Errorf("versions: got %+v, %v; want v1 (newest) and v2 with 6 done runs each", vers, err)
	}
	if _, err := report.LoadReport(ctx, st, "edited", 7); err == nil || !strings.Contains(err.Error(), "v1, v2") && !strings.Contains(err.Error(), "v2, v1") {
		t.Errorf("unknown version: got %v, want an error listing v1 and v2", err)
	}
}

// TestOtherBuildIsNewVersion: the same scenario run by another build of
// cclab gets new point hashes: its runs are run again, not resumed.
func TestOtherBuildIsNewVersion(t *testing.T) {
	st := openTestStore(t)
	r := &rateRunner{}
	sweepSrc(t, st, identityScenario("10Mbit"), r)
	defer func(f func() string) { scenario.BuildIdentity = f }(scenario.BuildIdentity)
	scenario.BuildIdentity = func() string { return "commit:0123456789abcdef" }
	if s := sweepSrc(t, st, identityScenario("10Mbit"), r); s.Version != 2 || s.Ran != 6 {
		t.Errorf("another build: version %d, ran %d; want v2 and 6 runs", s.Version, s.Ran)
	}
}

func TestPointHash(t *testing.T) {
	parse := func(src string) scenario.Point {
		exp, err := scenario.ParseScenario("h.yaml", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		return exp.Points[0]
	}
	base := parse(identityScenario("10Mbit"))
	same := parse(strings.Replace(identityScenario("10Mbit"), "duration: 1s", "description: words\nduration: 1s\nbackends: [sim, live]", 1))
	unitOnly := parse(identityScenario("10000kbit"))
	other := parse(identityScenario("11Mbit"))
	if base.Hash() != same.Hash() {
		t.Errorf("a description and the backends change the point hash; they must not")
	}
	if base.Hash() != unitOnly.Hash() {
		t.Errorf("10Mbit and 10000kbit hash differently; the resolved value is the same")
	}
	if base.Hash() == other.Hash() {
		t.Errorf("10 and 11 Mbit/s hash the same")
	}
	defer func(f func() string) { scenario.BuildIdentity = f }(scenario.BuildIdentity)
	h := base.Hash()
	scenario.BuildIdentity = func() string { return "exe:other" }
	if base.Hash() == h {
		t.Errorf("the point hash does not depend on the build")
	}
	var set struct {
		Backend  string
		Seed     uint64
		Scenario scenario.Scenario
	}
	if err := json.Unmarshal(base.Settings(scenario.BackendLive, 7), &set); err != nil || set.Backend != scenario.BackendLive || set.Seed != 7 ||
		set.Scenario.Topology.Hops[0].Rate != 10e6 || set.Scenario.Flows[0].Recovery != transport.DefaultRecovery {
		t.Errorf("Settings: got %+v, %v; want backend live, seed 7 and the resolved scenario", set, err)
	}
}

// TestSchemaNewerRefused: a database written by a newer cclab is refused
// with a clear error, not misread.
func TestSchemaNewerRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "new.db")
	st, err := store.OpenSQLite(path)
	if err != nil {
		t.Fatal(err)
	}
	st.DB().Exec(`UPDATE schema_info SET value = '99' WHERE name = 'schema_version'`)
	st.Close()
	if _, err := store.OpenSQLite(path); err == nil || !strings.Contains(err.Error(), "schema version 99") {
		t.Errorf("newer schema: got %v, want an error naming schema version 99", err)
	}
}
