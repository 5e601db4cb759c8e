package eval

import (
	"context"
	"database/sql"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cclab/transport"
)

// rateRunner reports a network bw_utilization that depends on the point's
// bottleneck rate (1 Mbit/s divided by it), so runs of different
// configurations are told apart by their values. It keeps no state: Sweep
// calls it from several workers at once.
type rateRunner struct{}

func (r *rateRunner) Run(_ context.Context, s RunSpec) (RunResult, error) {
	u := 1e6 / s.Point.Scenario.Topology.Hops[0].Rate
	m := Metrics{Network: Result{Scope: ScopeNetwork, Name: "network", Values: map[string]float64{"bw_utilization": u}}}
	return RunResult{Metrics: m}, nil
}

func identityScenario(rate string) string {
	return `name: edited
duration: 1s
runs: 3
topology: {kind: dumbbell, bottleneck: {rate: ` + rate + `, loss: [0, 0.01]}}
flows: [{cc: reno}]
`
}

func sweepSrc(t *testing.T, st Store, src string, r Runner) SweepStats {
	t.Helper()
	exp, err := ParseScenario("edited.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	stats, err := Sweep(context.Background(), exp, SweepOptions{Store: st, Runners: map[string]Runner{BackendSim: r}})
	if err != nil {
		t.Fatal(err)
	}
	return stats
}

// TestEditedScenarioNeverMixed edits a scenario's rate but keeps its name
// (issue #15): the edited scenario is a new version whose report has only
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
		d, err := LoadReport(ctx, st, "edited", tc.version)
		if err != nil {
			t.Fatal(err)
		}
		if d.Version.Seq != tc.seq || len(d.Groups) != 2 {
			t.Fatalf("report of version %d: got v%d with %d groups, want v%d with 2", tc.version, d.Version.Seq, len(d.Groups), tc.seq)
		}
		for _, g := range d.Groups {
			s := Summarize(g.Values(ScopeNetwork, 0, "bw_utilization"))
			if s.N != 3 || !near(s.Mean, tc.want) || s.SD != 0 {
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
	if _, err := LoadReport(ctx, st, "edited", 7); err == nil || !strings.Contains(err.Error(), "v1, v2") && !strings.Contains(err.Error(), "v2, v1") {
		t.Errorf("unknown version: got %v, want an error listing v1 and v2", err)
	}
}

// TestOtherBuildIsNewVersion: the same scenario run by another build of
// cclab gets new point hashes: its runs are run again, not resumed.
func TestOtherBuildIsNewVersion(t *testing.T) {
	st := openTestStore(t)
	r := &rateRunner{}
	sweepSrc(t, st, identityScenario("10Mbit"), r)
	defer func(f func() string) { buildIdentity = f }(buildIdentity)
	buildIdentity = func() string { return "commit:0123456789abcdef" }
	if s := sweepSrc(t, st, identityScenario("10Mbit"), r); s.Version != 2 || s.Ran != 6 {
		t.Errorf("another build: version %d, ran %d; want v2 and 6 runs", s.Version, s.Ran)
	}
}

func TestPointHash(t *testing.T) {
	parse := func(src string) Point {
		exp, err := ParseScenario("h.yaml", []byte(src))
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
	defer func(f func() string) { buildIdentity = f }(buildIdentity)
	h := base.Hash()
	buildIdentity = func() string { return "exe:other" }
	if base.Hash() == h {
		t.Errorf("the point hash does not depend on the build")
	}
	var set struct {
		Backend  string
		Seed     uint64
		Scenario Scenario
	}
	if err := json.Unmarshal(base.Settings(BackendLive, 7), &set); err != nil || set.Backend != BackendLive || set.Seed != 7 ||
		set.Scenario.Topology.Hops[0].Rate != 10e6 || set.Scenario.Flows[0].Recovery != transport.DefaultRecovery {
		t.Errorf("Settings: got %+v, %v; want backend live, seed 7 and the resolved scenario", set, err)
	}
}

// schema1Run inserts a schema-1 run row (and a summary) directly.
func schema1Run(t *testing.T, db *sql.DB, exp int64, key string, point int, params, hash string, seed int, started time.Time, util float64) {
	t.Helper()
	res, err := db.Exec(`INSERT INTO runs (experiment_id, run_key, point, params, scenario_hash, backend, seed, version, status, error,
		started, finished, wall_seconds, notes) VALUES (?, ?, ?, ?, ?, 'sim', ?, 'devel', 'done', '', ?, ?, 1, '{}')`,
		exp, key, point, params, hash, seed, started.Format(time.RFC3339Nano), started.Add(time.Second).Format(time.RFC3339Nano))
	if err != nil {
		t.Fatal(err)
	}
	id, _ := res.LastInsertId()
	if _, err := db.Exec(`INSERT INTO summaries (run_id, scope, scope_id, metric, unit, value) VALUES (?, 'network', 0, 'bw_utilization', '1', ?)`, id, util); err != nil {
		t.Fatal(err)
	}
}

// TestMigrateSchema1 opens a schema-1 database holding runs of two versions
// of a scenario at the same grid points (the issue #15 mix-up): migration
// keeps every row and sorts the runs into two versions, the one matching the
// stored scenario the newest.
func TestMigrateSchema1(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v1.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range schema1 {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	oldExp, _ := ParseScenario("edited.yaml", []byte(identityScenario("10Mbit")))
	newSrc := identityScenario("80Mbit")
	newExp, _ := ParseScenario("edited.yaml", []byte(newSrc))
	res, err := db.Exec(`INSERT INTO experiments (name, scenario, created) VALUES ('edited', ?, '2026-01-01T00:00:00Z')`, newSrc)
	if err != nil {
		t.Fatal(err)
	}
	expID, _ := res.LastInsertId()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, exp := range []*Experiment{oldExp, newExp} {
		for _, p := range exp.Points {
			params, _ := json.Marshal(p.Params)
			for seed := 1; seed <= 3; seed++ {
				key := RunKey(p, BackendSim, uint64(seed)) + string(rune('a'+i))
				started := t0.Add(time.Duration(i)*time.Hour + time.Duration(p.Index*3+seed)*time.Second)
				schema1Run(t, db, expID, key, p.Index, string(params), p.legacyHash(), seed, started, 1e6/p.Scenario.Topology.Hops[0].Rate)
			}
		}
	}
	db.Close()

	st := openMigrated(t, path, 1, map[string]int{"runs": 12, "summaries": 12})
	ctx := context.Background()
	vers, err := st.Versions(ctx, "edited")
	if err != nil || len(vers) != 2 {
		t.Fatalf("versions: got %d, %v; want 2", len(vers), err)
	}
	if vers[0].Seq != 2 || vers[0].Scenario != newSrc || vers[0].Done != 6 || vers[1].Seq != 1 || vers[1].Scenario != "" || vers[1].Done != 6 {
		t.Errorf("versions: got v%d (%d runs, source %t) and v%d (%d runs, source %t); want v2 with the stored source and v1 without, 6 runs each",
			vers[0].Seq, vers[0].Done, vers[0].Scenario != "", vers[1].Seq, vers[1].Done, vers[1].Scenario != "")
	}
	for _, tc := range []struct {
		version int
		want    float64
	}{{0, 1.0 / 80}, {1, 1.0 / 10}} {
		d, err := LoadReport(ctx, st, "edited", tc.version)
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Groups) != 2 {
			t.Errorf("version %d: %d groups, want 2", tc.version, len(d.Groups))
		}
		for _, g := range d.Groups {
			s := Summarize(g.Values(ScopeNetwork, 0, "bw_utilization"))
			if s.N != 3 || !near(s.Mean, tc.want) {
				t.Errorf("version %d, %s: n=%d mean %v, want n=3 mean %v", tc.version, g.Label, s.N, s.Mean, tc.want)
			}
		}
	}
	st.Close()
	again, err := OpenSQLite(path)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if again.Migrated != 0 {
		t.Errorf("second open migrated again (from %d)", again.Migrated)
	}
}

// TestSchemaNewerRefused: a database written by a newer cclab is refused
// with a clear error, not misread.
func TestSchemaNewerRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "new.db")
	st, err := OpenSQLite(path)
	if err != nil {
		t.Fatal(err)
	}
	st.DB().Exec(`UPDATE schema_info SET value = '99' WHERE name = 'schema_version'`)
	st.Close()
	if _, err := OpenSQLite(path); err == nil || !strings.Contains(err.Error(), "schema version 99") {
		t.Errorf("newer schema: got %v, want an error naming schema version 99", err)
	}
}
