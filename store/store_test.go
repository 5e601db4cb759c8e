package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"cclab/internal/evaltest"
	"cclab/metrics"
	"cclab/scenario"
)

// newSQLiteDB names a new SQLite file.
func newSQLiteDB(t *testing.T) string { return filepath.Join(t.TempDir(), "test.db") }

// openStore opens the store a -db argument names, closed when the test ends.
func openStore(t *testing.T, db string) *SQLStore {
	t.Helper()
	st, err := Open(db)
	if err != nil {
		t.Fatalf("Open(%s): %v", db, err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// testRun returns a run record with metrics from the synthetic event stream.
func testRun(key string, seed uint64) *RunRecord {
	info, ev := evaltest.SyntheticRun()
	info.Trace = &metrics.TraceWindow{Flow: 1, Origin: info.Start, From: info.Start, To: info.End}
	r := &RunRecord{Key: key, Point: int(seed % 2), Params: []scenario.Param{{Axis: "flows[0].cc", Value: "reno"}},
		ScenarioHash: "abc", Backend: scenario.BackendSim, Seed: seed, Status: StatusDone,
		Started: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Finished: time.Date(2026, 1, 2, 3, 4, 6, 0, time.UTC), WallSeconds: 1}
	r.SetMetrics(metrics.Compute(info, ev))
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

var tables = []string{"runs", "flows", "links", "summaries", "timeseries", "packet_traces"}

// storeTests run on every database the store supports: SQLite here,
// PostgreSQL in TestStorePostgres. Each takes a function that names a new,
// empty database (a -db argument).
var storeTests = []struct {
	name string
	test func(t *testing.T, newDB func(*testing.T) string)
}{
	{"SaveRunAtomic", testSaveRunAtomic},
	{"FailedRunReplaced", testFailedRunReplaced},
	{"ReadBack", testStoreReadBack},
	{"ExportRoundTrip", testExportRoundTrip},
	{"ConcurrentWriters", testConcurrentWriters},
	{"Copy", testCopy},
}

// TestStoreSQLite runs storeTests on SQLite files.
func TestStoreSQLite(t *testing.T) {
	for _, tc := range storeTests {
		t.Run(tc.name, func(t *testing.T) { tc.test(t, newSQLiteDB) })
	}
}

// TestSaveRunAtomic interrupts a run's write at every stage and checks that
// nothing of it is left, and that a later complete write succeeds.
func testSaveRunAtomic(t *testing.T, newDB func(*testing.T) string) {
	ctx := context.Background()
	for _, stage := range []string{"run", "scopes", "summaries", "series", "trace"} {
		st := openStore(t, newDB(t))
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

func testFailedRunReplaced(t *testing.T, newDB func(*testing.T) string) {
	ctx := context.Background()
	st := openStore(t, newDB(t))
	exp, _ := st.Experiment(ctx, "e", nil)
	failed := &RunRecord{Key: "k", Backend: scenario.BackendSim, Seed: 1, Status: StatusFailed, Error: "boom"}
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

func testStoreReadBack(t *testing.T, newDB func(*testing.T) string) {
	ctx := context.Background()
	st := openStore(t, newDB(t))
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
	if got.Key != "k1" || got.Seed != 1 || got.Backend != scenario.BackendSim || got.Status != StatusDone || got.Version == "" {
		t.Errorf("run: got %+v", got)
	}
	if got.Notes["load1"] != 1.5 {
		t.Errorf("notes: got %v, want load1 1.5", got.Notes)
	}
	if len(got.Summaries) != len(want.Summaries) {
		t.Errorf("summaries: got %d, want %d", len(got.Summaries), len(want.Summaries))
	}
	if v, ok := got.Value(metrics.ScopeFlow, 1, "mean_throughput"); !ok || v != 8000 {
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
		if s.Scope == metrics.ScopeFlow && s.ScopeID == 1 && s.Metric == "cwnd" {
			found = true
			if len(s.V) != 2 || s.V[0] != 2000 || s.V[1] != 4000 {
				t.Errorf("cwnd series: got %v, want [2000 4000]", s.V)
			}
		}
	}
	if !found {
		t.Errorf("cwnd series not stored")
	}
	flow, trace, err := st.Trace(ctx, got.ID)
	if err != nil || flow != want.TraceFlow || len(trace) == 0 || !reflect.DeepEqual(trace, want.Trace) {
		t.Errorf("packet trace: got flow %d %v (%v), want flow %d %v", flow, trace, err, want.TraceFlow, want.Trace)
	}
	exps, _ := st.Experiments(ctx)
	if len(exps) != 1 || exps[0].Scenario != "src" {
		t.Errorf("experiments: got %+v", exps)
	}
}

func testExportRoundTrip(t *testing.T, newDB func(*testing.T) string) {
	ctx := context.Background()
	st := openStore(t, newDB(t))
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

// testConcurrentWriters opens one new database from several handles at once
// (as the shards of a sweep do, each its own process): every handle creates
// the schema, registers the experiment and its version and writes its runs.
// Nothing may fail ("database is locked", duplicate keys), and the database
// ends with one experiment, one version and every run.
func testConcurrentWriters(t *testing.T, newDB func(*testing.T) string) {
	const writers, runsEach = 4, 5
	ctx := context.Background()
	db := newDB(t)
	start := make(chan struct{})
	errs := make(chan error, writers)
	for w := 0; w < writers; w++ {
		go func() {
			errs <- func() error {
				<-start
				st, err := Open(db)
				if err != nil {
					return err
				}
				defer st.Close()
				exp, err := st.Experiment(ctx, "e", []byte("name: e"))
				if err != nil {
					return fmt.Errorf("Experiment: %w", err)
				}
				v := &VersionRecord{Hash: "h", Points: []VersionPoint{{Index: 0, Hash: "abc"}, {Index: 1, Hash: "abc"}}}
				if err := st.Version(ctx, exp, v); err != nil {
					return fmt.Errorf("Version: %w", err)
				}
				if v.Seq != 1 {
					return fmt.Errorf("version seq %d, want 1 (one version, registered by every writer)", v.Seq)
				}
				for i := 0; i < runsEach; i++ {
					if err := st.SaveRun(ctx, exp, testRun(fmt.Sprintf("w%d-%d", w, i), uint64(i))); err != nil {
						return fmt.Errorf("SaveRun: %w", err)
					}
				}
				return nil
			}()
		}()
	}
	close(start)
	for w := 0; w < writers; w++ {
		if err := <-errs; err != nil {
			t.Errorf("writer: %v", err)
		}
	}
	st := openStore(t, db)
	for _, tc := range []struct {
		table string
		want  int
	}{{"experiments", 1}, {"versions", 1}, {"version_points", 2}, {"runs", writers * runsEach}} {
		if got := count(t, st, tc.table); got != tc.want {
			t.Errorf("%s: got %d rows, want %d", tc.table, got, tc.want)
		}
	}
}

// testCopy copies a store into SQLite and back into a new database of the
// kind under test: runs (with series), versions and experiments arrive
// unchanged, and copying again copies nothing.
func testCopy(t *testing.T, newDB func(*testing.T) string) {
	ctx := context.Background()
	src := openStore(t, newDB(t))
	exp, _ := src.Experiment(ctx, "e", []byte("name: e"))
	v := &VersionRecord{Hash: "h1", Scenario: "name: e", Build: "b", CclabVersion: "cv", Note: "n",
		Points: []VersionPoint{{Index: 0, Params: []scenario.Param{{Axis: "a", Value: "1"}}, Hash: "abc"}}}
	if err := src.Version(ctx, exp, v); err != nil {
		t.Fatal(err)
	}
	for i := uint64(1); i <= 3; i++ {
		r := testRun("k"+strconv.FormatUint(i, 10), i)
		r.Notes = map[string]float64{"sim_events": float64(100 * i)}
		if err := src.SaveRun(ctx, exp, r); err != nil {
			t.Fatal(err)
		}
	}
	mid := openStore(t, newSQLiteDB(t))
	dst := openStore(t, newDB(t))
	for _, hop := range []struct{ from, to *SQLStore }{{src, mid}, {mid, dst}} {
		cs, err := CopyStore(ctx, hop.to, hop.from, "")
		if err != nil {
			t.Fatalf("copy %s to %s: %v", hop.from.Dialect(), hop.to.Dialect(), err)
		}
		if want := (CopyStats{Experiments: 1, Versions: 1, Runs: 3}); cs != want {
			t.Errorf("copy %s to %s: got %+v, want %+v", hop.from.Dialect(), hop.to.Dialect(), cs, want)
		}
	}
	want, err := Digests(ctx, src, "e")
	if err != nil || len(want) != 3 {
		t.Fatalf("source digests: %d, %v", len(want), err)
	}
	got, err := Digests(ctx, dst, "e")
	if err != nil {
		t.Fatal(err)
	}
	for k, d := range want {
		if got[k] != d {
			t.Errorf("run %s: digest after two copies %q, want %q", k, got[k], d)
		}
	}
	if len(got) != len(want) {
		t.Errorf("runs after two copies: got %d, want %d", len(got), len(want))
	}
	runs, _ := dst.Runs(ctx, "e", 0)
	srcRuns, _ := src.Runs(ctx, "e", 0)
	for i := range runs {
		if !runs[i].Started.Equal(srcRuns[i].Started) || runs[i].WallSeconds != srcRuns[i].WallSeconds || runs[i].Version != srcRuns[i].Version {
			t.Errorf("run %s: started %v, wall %v, version %q; want %v, %v, %q", runs[i].Key, runs[i].Started, runs[i].WallSeconds,
				runs[i].Version, srcRuns[i].Started, srcRuns[i].WallSeconds, srcRuns[i].Version)
		}
	}
	vs, err := dst.Versions(ctx, "e")
	if err != nil || len(vs) != 1 {
		t.Fatalf("versions after copy: %d, %v; want 1", len(vs), err)
	}
	gv := vs[0]
	if gv.Seq != 1 || gv.Hash != v.Hash || gv.Created != v.Created || gv.LastUsed != v.LastUsed || gv.Note != v.Note ||
		gv.Build != v.Build || gv.Scenario != v.Scenario || len(gv.Points) != 1 || gv.Points[0].Hash != "abc" || gv.Done != 3 {
		t.Errorf("version after copy: got %+v, want %+v with 3 runs done", gv, *v)
	}
	cs, err := CopyStore(ctx, dst, mid, "e")
	if want := (CopyStats{Experiments: 1, Skipped: 3}); err != nil || cs != want {
		t.Errorf("copying again: got %+v, %v; want %+v", cs, err, want)
	}
	if _, err := CopyStore(ctx, dst, mid, "nosuch"); err == nil || !strings.Contains(err.Error(), "nosuch") {
		t.Errorf("copying an unknown experiment: got %v, want an error naming it", err)
	}
}

// TestStoreMigrates2To3: a schema-2 database (no packet_traces) gains the
// table, keeps its runs and says it migrated from version 2.
func TestStoreMigrates2To3(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v2.db")
	st, err := OpenSQLite(path)
	if err != nil {
		t.Fatal(err)
	}
	exp, _ := st.Experiment(ctx, "e", []byte("src"))
	r := testRun("k1", 1)
	r.Trace = nil
	if err := st.SaveRun(ctx, exp, r); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`DROP TABLE packet_traces`, `UPDATE schema_info SET value = '2' WHERE name = 'schema_version'`} {
		if _, err := st.DB().Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	st = openMigrated(t, path, 2, map[string]int{"runs": 1, "packet_traces": 0})
	if err := st.SaveRun(ctx, exp, testRun("k2", 2)); err != nil {
		t.Errorf("a run with a trace after migration: %v", err)
	}
}

// openMigrated opens the database at path of schema version from and checks
// that opening migrated it to SchemaVersion, keeping the rows of each table
// (table -> row count after the migration).
func openMigrated(t *testing.T, path string, from int, rows map[string]int) *SQLStore {
	t.Helper()
	st, err := OpenSQLite(path)
	if err != nil {
		t.Fatalf("OpenSQLite on a schema-%d database: %v", from, err)
	}
	t.Cleanup(func() { st.Close() })
	if st.Migrated != from {
		t.Errorf("Migrated: got %d, want %d", st.Migrated, from)
	}
	for table, want := range rows {
		if got := count(t, st, table); got != want {
			t.Errorf("%s after migration: got %d rows, want %d", table, got, want)
		}
	}
	var v string
	st.DB().QueryRow(`SELECT value FROM schema_info WHERE name = 'schema_version'`).Scan(&v)
	if v != strconv.Itoa(SchemaVersion) {
		t.Errorf("schema_version: got %q, want %d", v, SchemaVersion)
	}
	return st
}
