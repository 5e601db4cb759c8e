package eval

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/csv"
	"encoding/json"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func openTestStore(t *testing.T) *SQLStore {
	t.Helper()
	st, err := OpenSQLite(filepath.Join(t.TempDir(), "test.db"))
	if err != nil {
		t.Fatalf("OpenSQLite: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// testRun returns a run record with metrics from the synthetic event stream.
func testRun(key string, seed uint64) *RunRecord {
	info, ev := syntheticRun()
	r := &RunRecord{Key: key, Point: int(seed % 2), Params: []Param{{Axis: "flows[0].cc", Value: "reno"}},
		ScenarioHash: "abc", Backend: BackendSim, Seed: seed, Status: StatusDone,
		Started: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Finished: time.Date(2026, 1, 2, 3, 4, 6, 0, time.UTC), WallSeconds: 1}
	r.SetMetrics(Compute(info, ev))
	return r
}

func count(t *testing.T, st *SQLStore, table string) int {
	t.Helper()
	var n int
	if err := st.DB().QueryRow(`SELECT COUNT(*) FROM ` + table).Scan(&n); err != nil {
		t.Fatalf("count %s: %v", table, err)
	}
	return n
}

var tables = []string{"runs", "flows", "links", "summaries", "timeseries"}

// TestSaveRunAtomic interrupts a run's write at every stage and checks that
// nothing of it is left, and that a later complete write succeeds.
func TestSaveRunAtomic(t *testing.T) {
	ctx := context.Background()
	for _, stage := range []string{"run", "scopes", "summaries", "series"} {
		st := openTestStore(t)
		exp, err := st.Experiment(ctx, "e", []byte("name: e"))
		if err != nil {
			t.Fatal(err)
		}
		if err := st.SaveRun(ctx, exp, testRun("k1", 1)); err != nil {
			t.Fatalf("first run: %v", err)
		}
		before := map[string]int{}
		for _, tb := range tables {
			before[tb] = count(t, st, tb)
		}
		boom := errors.New("interrupted")
		st.hook = func(s string) error {
			if s == stage {
				return boom
			}
			return nil
		}
		if err := st.SaveRun(ctx, exp, testRun("k2", 2)); !errors.Is(err, boom) {
			t.Fatalf("stage %s: got %v, want the injected error", stage, err)
		}
		for _, tb := range tables {
			if got := count(t, st, tb); got != before[tb] {
				t.Errorf("interrupted at %s: table %s has %d rows, want %d (no partial run)", stage, tb, got, before[tb])
			}
		}
		if done, _ := st.Done(ctx, exp, "k2"); done {
			t.Errorf("interrupted at %s: run reported done", stage)
		}
		st.hook = nil
		if err := st.SaveRun(ctx, exp, testRun("k2", 2)); err != nil {
			t.Fatalf("retry after %s: %v", stage, err)
		}
		if got := count(t, st, "runs"); got != 2 {
			t.Errorf("after retry: %d runs, want 2", got)
		}
	}
}

func TestFailedRunReplaced(t *testing.T) {
	ctx := context.Background()
	st := openTestStore(t)
	exp, _ := st.Experiment(ctx, "e", nil)
	failed := &RunRecord{Key: "k", Backend: BackendSim, Seed: 1, Status: StatusFailed, Error: "boom"}
	if err := st.SaveRun(ctx, exp, failed); err != nil {
		t.Fatal(err)
	}
	if done, _ := st.Done(ctx, exp, "k"); done {
		t.Errorf("a failed run counts as done")
	}
	if err := st.SaveRun(ctx, exp, testRun("k", 1)); err != nil {
		t.Fatal(err)
	}
	if done, _ := st.Done(ctx, exp, "k"); !done {
		t.Errorf("the retried run is not done")
	}
	if got := count(t, st, "runs"); got != 1 {
		t.Errorf("runs: got %d, want 1 (the retry replaces the failure)", got)
	}
}

func TestStoreReadBack(t *testing.T) {
	ctx := context.Background()
	st := openTestStore(t)
	exp, _ := st.Experiment(ctx, "e", []byte("src"))
	want := testRun("k1", 1)
	want.Notes = map[string]float64{"load1": 1.5}
	if err := st.SaveRun(ctx, exp, want); err != nil {
		t.Fatal(err)
	}
	runs, err := st.Runs(ctx, "e", 0)
	if err != nil || len(runs) != 1 {
		t.Fatalf("Runs: got %d runs, err %v", len(runs), err)
	}
	got := runs[0]
	if got.Key != "k1" || got.Seed != 1 || got.Backend != BackendSim || got.Status != StatusDone || got.Version == "" {
		t.Errorf("run: got %+v", got)
	}
	if got.Notes["load1"] != 1.5 {
		t.Errorf("notes: got %v, want load1 1.5", got.Notes)
	}
	if len(got.Summaries) != len(want.Summaries) {
		t.Errorf("summaries: got %d, want %d", len(got.Summaries), len(want.Summaries))
	}
	if v, ok := got.Value(ScopeFlow, 1, "mean_throughput"); !ok || v != 8000 {
		t.Errorf("mean_throughput: got %v %v, want 8000", v, ok)
	}
	if len(got.Flows) != 2 || got.Flows[0].Name != "f1" || len(got.Links) != 1 {
		t.Errorf("scopes: flows %+v links %+v", got.Flows, got.Links)
	}
	series, err := st.Series(ctx, got.ID)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, s := range series {
		if s.Scope == ScopeFlow && s.ScopeID == 1 && s.Metric == "cwnd" {
			found = true
			if len(s.V) != 2 || s.V[0] != 2000 || s.V[1] != 4000 {
				t.Errorf("cwnd series: got %v, want [2000 4000]", s.V)
			}
		}
	}
	if !found {
		t.Errorf("cwnd series not stored")
	}
	exps, _ := st.Experiments(ctx)
	if len(exps) != 1 || exps[0].Scenario != "src" {
		t.Errorf("experiments: got %+v", exps)
	}
}

func TestExportRoundTrip(t *testing.T) {
	ctx := context.Background()
	st := openTestStore(t)
	exp, _ := st.Experiment(ctx, "e", nil)
	for i := uint64(1); i <= 3; i++ {
		if err := st.SaveRun(ctx, exp, testRun("k"+strconv.FormatUint(i, 10), i)); err != nil {
			t.Fatal(err)
		}
	}
	stored, _ := st.Runs(ctx, "e", 0)

	var jb bytes.Buffer
	if err := ExportJSON(ctx, st, "e", 0, &jb); err != nil {
		t.Fatal(err)
	}
	var back []RunRecord
	if err := json.Unmarshal(jb.Bytes(), &back); err != nil {
		t.Fatalf("JSON does not decode: %v", err)
	}
	if len(back) != len(stored) {
		t.Fatalf("JSON runs: got %d, want %d", len(back), len(stored))
	}
	for i := range back {
		a, b := back[i], stored[i]
		if a.Key != b.Key || a.Seed != b.Seed || len(a.Summaries) != len(b.Summaries) || !a.Started.Equal(b.Started) {
			t.Errorf("JSON run %d: got %+v, want %+v", i, a, b)
			continue
		}
		for j := range a.Summaries {
			if a.Summaries[j] != b.Summaries[j] {
				t.Errorf("JSON run %d summary %d: got %+v, want %+v", i, j, a.Summaries[j], b.Summaries[j])
			}
		}
	}

	var cb bytes.Buffer
	if err := ExportCSV(ctx, st, "e", 0, &cb); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&cb).ReadAll()
	if err != nil {
		t.Fatalf("CSV does not parse: %v", err)
	}
	total := 0
	for _, r := range stored {
		total += len(r.Summaries)
	}
	if len(recs) != total+1 {
		t.Fatalf("CSV rows: got %d, want %d summaries + header", len(recs), total)
	}
	for i, h := range CSVHeader {
		if recs[0][i] != h {
			t.Errorf("CSV header %d: got %q, want %q", i, recs[0][i], h)
		}
	}
	// Every CSV value equals the stored summary.
	k := 1
	for _, r := range stored {
		for _, s := range r.Summaries {
			rec := recs[k]
			k++
			v, err := strconv.ParseFloat(rec[13], 64)
			if err != nil || v != s.Value || rec[11] != s.Metric || rec[2] != r.Key || rec[8] != string(s.Scope) {
				t.Errorf("CSV row %d: got %v, want %s %s %v", k, rec, r.Key, s.Metric, s.Value)
			}
		}
	}
}

// TestStoreMigratesNotes opens a schema-1 database whose runs table
// predates the notes column.
func TestStoreMigratesNotes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range schema1 {
		q = strings.Replace(q, ",\n\t\tnotes TEXT NOT NULL DEFAULT '{}'", "", 1)
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Exec(`SELECT notes FROM runs`); err == nil {
		t.Fatal("the test's old runs table has a notes column")
	}
	db.Close()
	st, err := OpenSQLite(path)
	if err != nil {
		t.Fatalf("OpenSQLite on an old database: %v", err)
	}
	defer st.Close()
	if _, err := st.DB().Exec(`SELECT notes, provenance, settings FROM runs`); err != nil {
		t.Errorf("columns not added: %v", err)
	}
}
