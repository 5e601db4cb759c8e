package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"

	"go.yaml.in/yaml/v3"

	"cclab/eval"
	"cclab/internal/testenv"
	"cclab/internal/testsvc"
	"cclab/scenario"
	"cclab/store"
)

// scaleScenario is deploy/scale-sweep.yaml, a 40-point simulator sweep (5
// rates × 2 queues × 2 loss rates × 2 controllers, one seed) of short runs,
// the one docs/scale.md's examples and deploy/k8s/job.yaml run.
var scaleScenario = func() string {
	b, err := os.ReadFile("../../deploy/scale-sweep.yaml")
	if err != nil {
		panic(err)
	}
	return string(b)
}()

const scalePoints = 40

// baselines caches the local single-process runs by scenario text.
var baselines sync.Map // string -> func() (map[string]string, error)

// baseline runs a scenario in one process into an SQLite file and returns
// its runs' digests, once per scenario and test binary.
func baseline(src string) (map[string]string, error) {
	f, _ := baselines.LoadOrStore(src, sync.OnceValues(func() (map[string]string, error) {
		bin, err := cclabBinary()
		if err != nil {
			return nil, err
		}
		exp, err := scenario.ParseScenario("scenario.yaml", []byte(src))
		if err != nil {
			return nil, err
		}
		dir, err := os.MkdirTemp(binDir, "baseline-")
		if err != nil {
			return nil, err
		}
		scen := filepath.Join(dir, "scenario.yaml")
		os.WriteFile(scen, []byte(src), 0o644)
		db := filepath.Join(dir, "local.db")
		if out, err := exec.Command(bin, "run", scen, "-db", db, "-no-report", "-parallel", "1").CombinedOutput(); err != nil {
			return nil, fmt.Errorf("local run: %v\n%s", err, out)
		}
		return digestsOf(db, exp.Name)
	}))
	return f.(func() (map[string]string, error))()
}

// digestsOf returns the digests of an experiment's runs in a database.
func digestsOf(db, experiment string) (map[string]string, error) {
	st, err := store.Open(db)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	return store.Digests(context.Background(), st, experiment)
}

// sameResults compares a sweep's stored results with a local run's of the
// same scenario: the same run keys, each with the same digest (the
// simulator is deterministic).
func sameResults(t *testing.T, db, src string, runs int) {
	t.Helper()
	want, err := baseline(src)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) != runs {
		t.Fatalf("local run: %d runs, want %d", len(want), runs)
	}
	exp, _ := scenario.ParseScenario("scenario.yaml", []byte(src))
	got, err := digestsOf(db, exp.Name)
	if err != nil {
		t.Fatalf("reading %s: %v", store.DBName(db), err)
	}
	diff := 0
	for k, d := range want {
		if got[k] != d {
			diff++
			if diff <= 3 {
				t.Errorf("run %s: digest %q, want the local run's %q", k, got[k], d)
			}
		}
	}
	if len(got) != len(want) || diff > 0 {
		t.Errorf("%s: %d runs, %d differing from the local single-process run (%d runs)", store.DBName(db), len(got), diff, len(want))
	}
}

// TestSlurmPostgresSweep runs the 40-point sweep as a 4-task Slurm job array
// (cclab slurm -wait: single-node Slurm and PostgreSQL started for the test)
// writing to PostgreSQL, and checks that the stored results equal a local
// single-process run's, that cclab report works from PostgreSQL, and that
// cclab db copy moves them to SQLite unchanged.
func TestSlurmPostgresSweep(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL and Slurm and runs a 40-run sweep")
	}
	bin := buildCclab(t)
	pg := testsvc.StartPostgres(t)
	slurm := testsvc.StartSlurm(t)
	dsn := pg.CreateDB(t, "sweep")
	dir := t.TempDir()
	scen := filepath.Join(dir, "scale.yaml")
	os.WriteFile(scen, []byte(scaleScenario), 0o644)

	cmd := slurm.Command(bin, "slurm", scen, "-shards", "4", "-db", dsn, "-o", filepath.Join(dir, "sweep.sbatch"),
		"-wait", "-out", filepath.Join(dir, "report"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		logs, _ := filepath.Glob(filepath.Join(dir, "cclab-scale-sweep-*.out"))
		var tasks strings.Builder
		for _, l := range logs {
			b, _ := os.ReadFile(l)
			fmt.Fprintf(&tasks, "--- %s:\n%s\n", filepath.Base(l), b)
		}
		t.Fatalf("cclab slurm -wait: %v\n%s\n%s\n%s", err, out, tasks.String(), slurm.Logs())
	}
	t.Logf("%s", out)
	script, _ := os.ReadFile(filepath.Join(dir, "sweep.sbatch"))
	for _, want := range []string{"#SBATCH --array=0-3", `-shard "${SLURM_ARRAY_TASK_ID}/4"`} {
		if !strings.Contains(string(script), want) {
			t.Errorf("script lacks %q:\n%s", want, script)
		}
	}
	// Each task ran its own share.
	logs, _ := filepath.Glob(filepath.Join(dir, "cclab-scale-sweep-*.out"))
	if len(logs) != 4 {
		t.Errorf("task outputs: got %d, want 4", len(logs))
	}
	for _, l := range logs {
		b, _ := os.ReadFile(l)
		if !strings.Contains(string(b), "10 runs (shard ") {
			t.Errorf("%s: want a shard of 10 runs:\n%s", filepath.Base(l), b)
		}
	}
	sameResults(t, dsn, scaleScenario, scalePoints)
	if _, err := os.Stat(filepath.Join(dir, "report", "scale-sweep", "index.html")); err != nil {
		t.Errorf("report from PostgreSQL not written: %v", err)
	}
	// PostgreSQL -> SQLite.
	copied := filepath.Join(dir, "copy.db")
	if out, err := exec.Command(bin, "db", "copy", "-from", dsn, "-to", copied).CombinedOutput(); err != nil || !strings.Contains(string(out), "40 runs") {
		t.Fatalf("cclab db copy: %v\n%s", err, out)
	}
	sameResults(t, copied, scaleScenario, scalePoints)
}

// TestShardsSQLiteConcurrent runs the sweep's 4 shards as 4 concurrent
// processes writing to one SQLite file: none may fail with "database is
// locked", and the results equal the single-process run's.
func TestShardsSQLiteConcurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a 40-run sweep in 4 processes")
	}
	dir := t.TempDir()
	scen := filepath.Join(dir, "scale.yaml")
	os.WriteFile(scen, []byte(scaleScenario), 0o644)
	db := filepath.Join(dir, "shared.db")
	shards := runShards(t, 4, func(i int) []string {
		return []string{"run", scen, "-db", db, "-shard", fmt.Sprintf("%d/4", i), "-parallel", "1"}
	})
	for i, out := range shards {
		if !strings.Contains(out, "10 runs (shard ") {
			t.Errorf("shard %d: want 10 runs:\n%s", i, out)
		}
	}
	sameResults(t, db, scaleScenario, scalePoints)
}

// runShards runs n cclab processes at once (args(i) for shard i) and
// returns their outputs; any failure fails the test.
func runShards(t *testing.T, n int, args func(i int) []string) []string {
	t.Helper()
	bin := buildCclab(t)
	outs := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b, err := exec.Command(bin, args(i)...).CombinedOutput()
			outs[i], errs[i] = string(b), err
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("shard %d: %v\n%s", i, err, outs[i])
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	return outs
}

// k8sManifest is the part of deploy/k8s/job.yaml the test
// reads: a ConfigMap with the scenario and an Indexed Job.
type k8sManifest struct {
	Kind string            `yaml:"kind"`
	Data map[string]string `yaml:"data"`
	Spec struct {
		CompletionMode string `yaml:"completionMode"`
		Completions    int    `yaml:"completions"`
		Parallelism    int    `yaml:"parallelism"`
		Template       struct {
			Spec struct {
				Containers []struct {
					Command []string `yaml:"command"`
					Args    []string `yaml:"args"`
					Env     []struct {
						Name  string `yaml:"name"`
						Value string `yaml:"value"`
					} `yaml:"env"`
					VolumeMounts []struct {
						MountPath string `yaml:"mountPath"`
					} `yaml:"volumeMounts"`
				} `yaml:"containers"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

// k8sVar matches a Kubernetes $(VAR) reference in container arguments.
var k8sVar = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// TestKubernetesManifest parses deploy/k8s/job.yaml, the Indexed Job
// manifest docs/scale.md describes (kubectl apply -f takes it), checks
// that its completions match the -shard count, and runs what its pods would
// run: the container's arguments with $(JOB_COMPLETION_INDEX) = 0..N-1 and
// $(CCLAB_DB) an SQLite file (the scenario path mapped from the ConfigMap
// mount to a file with the ConfigMap's scenario). The stored results must
// equal a single-process run's.
func TestKubernetesManifest(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the manifest's sweep")
	}
	block, err := os.ReadFile("../../deploy/k8s/job.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(block))
	var job, cm *k8sManifest
	for {
		var m k8sManifest
		if err := dec.Decode(&m); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("manifest: %v", err)
		}
		switch m.Kind {
		case "Job":
			job = &m
		case "ConfigMap":
			cm = &m
		}
	}
	if job == nil || cm == nil {
		t.Fatalf("manifest: want a Job and a ConfigMap")
	}
	src := cm.Data["scenario.yaml"]
	if job.Spec.CompletionMode != "Indexed" || len(job.Spec.Template.Spec.Containers) != 1 || src == "" {
		t.Fatalf("manifest: completionMode %q, %d containers, scenario %d bytes; want Indexed, 1, a scenario",
			job.Spec.CompletionMode, len(job.Spec.Template.Spec.Containers), len(src))
	}
	c := job.Spec.Template.Spec.Containers[0]
	n := job.Spec.Completions
	args := strings.Join(c.Args, " ")
	if want := fmt.Sprintf("-shard $(JOB_COMPLETION_INDEX)/%d", n); !strings.Contains(args, want) || len(c.Command) != 1 || !strings.HasSuffix(c.Command[0], "/cclab") {
		t.Fatalf("manifest: command %v args %q; want cclab with %q (completions %d)", c.Command, args, want, n)
	}
	if len(c.VolumeMounts) != 1 {
		t.Fatalf("manifest: %d volume mounts, want the ConfigMap's", len(c.VolumeMounts))
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "scenario.yaml"), []byte(src), 0o644)
	db := filepath.Join(dir, "k8s.db")
	exp, err := scenario.ParseScenario("scenario.yaml", []byte(src))
	if err != nil {
		t.Fatalf("the ConfigMap's scenario: %v", err)
	}
	if want, _ := scenario.ParseScenario("scenario.yaml", []byte(scaleScenario)); !reflect.DeepEqual(eval.Specs(exp, nil), eval.Specs(want, nil)) {
		t.Errorf("the ConfigMap's scenario differs from deploy/scale-sweep.yaml")
	}
	runShards(t, n, func(i int) []string {
		env := map[string]string{"JOB_COMPLETION_INDEX": fmt.Sprint(i), "CCLAB_DB": db}
		for _, e := range c.Env {
			if e.Value != "" {
				env[e.Name] = e.Value
			}
		}
		var out []string
		for _, a := range c.Args {
			a = k8sVar.ReplaceAllStringFunc(a, func(ref string) string {
				v, ok := env[k8sVar.FindStringSubmatch(ref)[1]]
				if !ok {
					t.Errorf("manifest: argument %q refers to an undefined variable", a)
				}
				return v
			})
			a = strings.Replace(a, strings.TrimSuffix(c.VolumeMounts[0].MountPath, "/")+"/", dir+"/", 1)
			out = append(out, a)
		}
		return out
	})
	sameResults(t, db, src, len(eval.Specs(exp, nil)))
}

// TestSingleNodeExample runs docs/scale.md's single-node example as
// written: its ./cclab testbed line, in a directory with ./cclab and
// deploy/scale-sweep.yaml. Slurm and PostgreSQL are the Debian packages
// (testenv.Need: skipped without them, failed under CI=true).
func TestSingleNodeExample(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL and Slurm and runs a 40-run sweep")
	}
	for _, p := range []string{"slurmctld", "slurmd", "munged"} {
		_, err := exec.LookPath(p)
		testenv.Need(t, "Slurm ("+p+")", err)
	}
	_, err := exec.LookPath("pg_ctlcluster")
	testenv.Need(t, "PostgreSQL", err)
	doc, err := os.ReadFile("../../docs/scale.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, _ := strings.Cut(string(doc), "<!-- single-node example -->\n```sh\n")
	block, _, _ = strings.Cut(block, "```")
	var line string
	for _, l := range strings.Split(block, "\n") {
		if strings.HasPrefix(l, "./cclab testbed ") {
			line = l
		}
	}
	if line == "" {
		t.Fatalf("docs/scale.md's single-node example has no ./cclab testbed line:\n%s", block)
	}
	dir := t.TempDir()
	if err := os.Symlink(buildCclab(t), filepath.Join(dir, "cclab")); err != nil {
		t.Fatal(err)
	}
	os.Mkdir(filepath.Join(dir, "deploy"), 0o755)
	os.WriteFile(filepath.Join(dir, "deploy", "scale-sweep.yaml"), []byte(scaleScenario), 0o644)
	cmd := exec.Command("sh", "-c", line)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", line, err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "reports", "scale-sweep", "index.html")); err != nil {
		t.Errorf("report not written: %v", err)
	}
	sameResults(t, filepath.Join(dir, "scale.db"), scaleScenario, scalePoints)
}
