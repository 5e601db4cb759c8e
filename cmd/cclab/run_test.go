package main

import (
	"database/sql"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"cclab/experiments"
	"cclab/internal/testenv"
	"cclab/scenario"
)

// binDir holds the cclab binary the tests build (once) and share; TestMain
// removes it.
var binDir string

func TestMain(m *testing.M) {
	var err error
	if binDir, err = os.MkdirTemp("", "cclab-test-"); err != nil {
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(binDir)
	os.Exit(code)
}

// cclabBinary builds the cclab binary once per test run. The tests that
// compare stores share it: point hashes include the binary's identity.
var cclabBinary = sync.OnceValues(func() (string, error) {
	if err := testenv.GoBuild(binDir, "cclab/cmd/cclab"); err != nil {
		return "", err
	}
	return filepath.Join(binDir, "cclab"), nil
})

// buildCclab returns the cclab binary, building it on first use.
func buildCclab(t *testing.T) string {
	t.Helper()
	bin, err := cclabBinary()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

func countRuns(t *testing.T, db string) (runs, keys, bare int) {
	t.Helper()
	d, err := sql.Open("sqlite", "file:"+db+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.QueryRow(`SELECT COUNT(*), COUNT(DISTINCT run_key) FROM runs WHERE status = 'done'`).Scan(&runs, &keys); err != nil {
		return 0, 0, 0 // the schema may not exist yet
	}
	d.QueryRow(`SELECT COUNT(*) FROM runs r WHERE NOT EXISTS (SELECT 1 FROM summaries s WHERE s.run_id = r.id)`).Scan(&bare)
	return
}

// killScenario has 32 simulator runs of 20 s each: long enough to kill the
// sweep while it is under way.
const killScenario = `name: kill-test
duration: 20s
runs: 4
backends: [sim]
topology:
  kind: dumbbell
  bottleneck: {rate: 16Mbit, delay: 7.5ms, queue: droptail:20p, loss: [0, 0.001, 0.01, 0.05]}
flows: [{cc: [reno, "cubic?"]}]
`

// TestRunKilledAndResumed kills "cclab run" with SIGKILL in the middle of a
// sweep and runs it again: the sweep completes with every run exactly once,
// and no run was left half-written.
func TestRunKilledAndResumed(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the cclab binary")
	}
	bin := buildCclab(t)
	dir := t.TempDir()
	scen := filepath.Join(dir, "kill.yaml")
	os.WriteFile(scen, []byte(killScenario), 0o644)
	db := filepath.Join(dir, "cclab.db")
	out := filepath.Join(dir, "report")

	cmd := exec.Command(bin, "run", scen, "-db", db, "-out", out, "-parallel", "1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Kill once a few runs are stored.
	deadline := time.Now().Add(60 * time.Second)
	for {
		if runs, _, _ := countRuns(t, db); runs >= 3 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	before, _, bare := countRuns(t, db)
	if bare != 0 {
		t.Errorf("after the kill: %d runs without summaries (half-written)", bare)
	}
	out2, err := exec.Command(bin, "run", scen, "-db", db, "-out", out).CombinedOutput()
	if err != nil {
		t.Fatalf("rerun: %v\n%s", err, out2)
	}
	runs, keys, bare := countRuns(t, db)
	total := 4 * 4 * 1 // losses × seeds × controllers (reno; cubic if present)
	if strings.Contains(string(out2), "cubic") || runs > total {
		total *= 2
	}
	if runs != total || keys != total || bare != 0 {
		t.Errorf("after resuming: %d done runs, %d distinct keys, %d half-written; want %d, %d, 0", runs, keys, bare, total, total)
	}
	t.Logf("killed after %d of %d runs", before, total)
	if before >= total {
		t.Logf("the first sweep finished before the kill (%d runs); resume was not exercised", before)
	} else if !strings.Contains(string(out2), "already done") {
		t.Errorf("rerun output does not report resumed runs:\n%s", out2)
	}
	if _, err := os.Stat(filepath.Join(out, "kill-test", "index.html")); err != nil {
		t.Errorf("report not written: %v", err)
	}
}

// TestRunQuickBuiltin runs the built-in experiment's quick form on the
// simulator through the command and checks its outputs.
func TestRunQuickBuiltin(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the cclab binary")
	}
	bin := buildCclab(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "r.db")
	out, err := exec.Command(bin, "run", "loss-resilience", "-quick", "-backends", "sim", "-db", db, "-out", filepath.Join(dir, "rep")).CombinedOutput()
	if err != nil {
		t.Fatalf("cclab run: %v\n%s", err, out)
	}
	for _, f := range []string{"index.html", "runs.csv", "runs.json", "aggregate.csv", "aggregate.json"} {
		if _, err := os.Stat(filepath.Join(dir, "rep", "loss-resilience-quick", f)); err != nil {
			t.Errorf("missing %s", f)
		}
	}
	// The experiment's own grid says how many points and runs there are
	// (controllers are added to it as they are built).
	src, ok := experiments.Source("loss-resilience-quick")
	if !ok {
		t.Fatal("no built-in loss-resilience-quick")
	}
	exp, err := scenario.ParseScenario("loss-resilience-quick.yaml", src)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("%d points, %d runs done, 0 failed", len(exp.Points), len(exp.Points)*len(exp.Base.Seeds))
	list, err := exec.Command(bin, "list", "-db", db).CombinedOutput()
	if err != nil || !strings.Contains(string(list), "loss-resilience") || !strings.Contains(string(list), "  loss-resilience-quick\n") ||
		!strings.Contains(string(list), "v1 ") || !strings.Contains(string(list), want) {
		t.Errorf("cclab list: %v\n%s", err, list)
	}
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("name: x\nduration: 1s\ntopology: {kind: ring}\nflows: [{cc: reno}]\n"), 0o644)
	out, err = exec.Command(bin, "run", bad, "-db", db).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "bad.yaml:3:") || !strings.Contains(string(out), "topology.kind") {
		t.Errorf("malformed scenario: got %v\n%s\nwant an error naming bad.yaml:3 and topology.kind", err, out)
	}
}

// TestRunArgs checks that flags after the experiment's name count wherever
// the name stands (a sweep once ignored -quick in "run -db F NAME -quick").
func TestRunArgs(t *testing.T) {
	for _, tc := range []struct {
		args      []string
		name, db  string
		quick, ok bool
	}{
		{[]string{"dca-vs-reno", "-quick"}, "dca-vs-reno", "d", true, true},
		{[]string{"-quick", "dca-vs-reno"}, "dca-vs-reno", "d", true, true},
		{[]string{"-db", "F", "dca-vs-reno", "-quick"}, "dca-vs-reno", "F", true, true},
		{[]string{"-db", "F", "dca-vs-reno"}, "dca-vs-reno", "F", false, true},
		{[]string{"dca-vs-reno", "-db", "F", "-quick"}, "dca-vs-reno", "F", true, true},
		{[]string{"-db", "F", "a", "b"}, "", "F", false, false},
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		quick := fs.Bool("quick", false, "")
		db := fs.String("db", "d", "")
		name, err := parseNameAndFlags(fs, tc.args)
		if (err == nil) != tc.ok || (tc.ok && (name != tc.name || *quick != tc.quick || *db != tc.db)) {
			t.Errorf("%v: got name %q quick %v db %q err %v, want name %q quick %v db %q ok %v",
				tc.args, name, *quick, *db, err, tc.name, tc.quick, tc.db, tc.ok)
		}
	}
}
