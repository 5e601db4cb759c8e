package store_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"cclab/eval"
	"cclab/internal/evaltest"
	"cclab/metrics"
	"cclab/report"
	"cclab/scenario"
	"cclab/store"
)

func identityScenario(rate string) string {
	return `name: edited
duration: 1s
runs: 3
topology: {kind: dumbbell, bottleneck: {rate: ` + rate + `, loss: [0, 0.01]}}
flows: [{cc: reno}]
`
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
// of a scenario at the same grid points (schema 1 mixed them up): migration
// keeps every row and sorts the runs into two versions, the one matching the
// stored scenario the newest.
func TestMigrateSchema1(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v1.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range store.Schema1 {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	oldExp, _ := scenario.ParseScenario("edited.yaml", []byte(identityScenario("10Mbit")))
	newSrc := identityScenario("80Mbit")
	newExp, _ := scenario.ParseScenario("edited.yaml", []byte(newSrc))
	res, err := db.Exec(`INSERT INTO experiments (name, scenario, created) VALUES ('edited', ?, '2026-01-01T00:00:00Z')`, newSrc)
	if err != nil {
		t.Fatal(err)
	}
	expID, _ := res.LastInsertId()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, exp := range []*scenario.Experiment{oldExp, newExp} {
		for _, p := range exp.Points {
			params, _ := json.Marshal(p.Params)
			for seed := 1; seed <= 3; seed++ {
				key := eval.RunKey(p, scenario.BackendSim, uint64(seed)) + string(rune('a'+i))
				started := t0.Add(time.Duration(i)*time.Hour + time.Duration(p.Index*3+seed)*time.Second)
				schema1Run(t, db, expID, key, p.Index, string(params), p.LegacyHash(), seed, started, 1e6/p.Scenario.Topology.Hops[0].Rate)
			}
		}
	}
	db.Close()

	st := store.OpenMigrated(t, path, 1, map[string]int{"runs": 12, "summaries": 12})
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
		d, err := report.LoadReport(ctx, st, "edited", tc.version)
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Groups) != 2 {
			t.Errorf("version %d: %d groups, want 2", tc.version, len(d.Groups))
		}
		for _, g := range d.Groups {
			s := metrics.Summarize(g.Values(metrics.ScopeNetwork, 0, "bw_utilization"))
			if s.N != 3 || !evaltest.Near(s.Mean, tc.want) {
				t.Errorf("version %d, %s: n=%d mean %v, want n=3 mean %v", tc.version, g.Label, s.N, s.Mean, tc.want)
			}
		}
	}
	st.Close()
	again, err := store.OpenSQLite(path)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if again.Migrated != 0 {
		t.Errorf("second open migrated again (from %d)", again.Migrated)
	}
}
