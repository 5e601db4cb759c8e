package main

import (
	"context"
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"cclab/eval"
	"cclab/experiments"
	"cclab/report"
	"cclab/report/studies"
	"cclab/store"
)

func init() {
	register("slurm", "write (and submit) a Slurm job array that runs a sweep's shards into one database", runSlurm)
}

// slurmJob is what the job array script runs.
type slurmJob struct {
	Name      string // experiment name (job name cclab-NAME)
	Cclab     string // absolute path of the cclab binary on the compute nodes
	Scenario  string // built-in experiment name or absolute scenario path
	DB        string // -db of every task
	Shards    int
	CPUs      int    // --cpus-per-task, and each task's -parallel
	Logs      string // directory of the tasks' output files
	Partition string // optional
	Time      string // optional time limit
	Extra     []string
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// script renders the sbatch script: one array task per shard, each running
// "cclab run ... -shard $SLURM_ARRAY_TASK_ID/N".
func (j slurmJob) script() string {
	var b strings.Builder
	fmt.Fprintf(&b, "#!/bin/bash\n# cclab sweep %s as %d shards (written by cclab slurm; docs/scale.md)\n", j.Name, j.Shards)
	fmt.Fprintf(&b, "#SBATCH --job-name=%s\n", "cclab-"+j.Name)
	fmt.Fprintf(&b, "#SBATCH --array=0-%d\n", j.Shards-1)
	fmt.Fprintf(&b, "#SBATCH --ntasks=1\n#SBATCH --cpus-per-task=%d\n", j.CPUs)
	fmt.Fprintf(&b, "#SBATCH --output=%s\n", filepath.Join(j.Logs, "cclab-"+j.Name+"-%A_%a.out"))
	if j.Partition != "" {
		fmt.Fprintf(&b, "#SBATCH --partition=%s\n", j.Partition)
	}
	if j.Time != "" {
		fmt.Fprintf(&b, "#SBATCH --time=%s\n", j.Time)
	}
	b.WriteString("set -euo pipefail\n")
	args := []string{shellQuote(j.Cclab), "run", shellQuote(j.Scenario), "-db", shellQuote(j.DB),
		`-shard "${SLURM_ARRAY_TASK_ID}/` + strconv.Itoa(j.Shards) + `"`, `-parallel "${SLURM_CPUS_PER_TASK:-1}"`, "-no-report", "-v"}
	for _, a := range j.Extra {
		args = append(args, shellQuote(a))
	}
	b.WriteString("exec " + strings.Join(args, " ") + "\n")
	return b.String()
}

func runSlurm(args []string) int {
	fs := flag.NewFlagSet("cclab slurm", flag.ContinueOnError)
	shards := fs.Int("shards", 4, "array tasks: the sweep's runs are split into this many shards (cclab run -shard I/N)")
	db := fs.String("db", store.DefaultDB, "database every task writes to: a PostgreSQL URL, or an SQLite file on a filesystem all nodes share")
	out := fs.String("o", "", "script to write; default cclab-NAME.sbatch")
	logs := fs.String("logs", "", "directory of the tasks' output files (cclab-NAME-JOB_TASK.out); default: the script's directory")
	bin := fs.String("cclab", "", "cclab binary the tasks run (a path the compute nodes see); default: this executable")
	cpus := fs.Int("cpus-per-task", 1, "CPUs per task (sbatch --cpus-per-task; each task's -parallel)")
	partition := fs.String("partition", "", "Slurm partition (sbatch --partition); default: the cluster's default")
	limit := fs.String("time", "", "time limit per task (sbatch --time, e.g. 2:00:00); default: the partition's")
	quick := fs.Bool("quick", false, "run the built-in experiment's quick form (NAME-quick)")
	backends := fs.String("backends", "", "comma-separated backends to run (sim, live); default: the scenario's")
	submit := fs.Bool("submit", false, "submit the script with sbatch")
	wait := fs.Bool("wait", false, "submit and wait until every task has ended (sbatch --wait), then write the report")
	outDir := fs.String("out", "reports", "with -wait: directory for the HTML report")
	noReport := fs.Bool("no-report", false, "with -wait: do not write the report")
	name, code, ok := parseWithExperiment(fs, args)
	if !ok {
		return code
	}
	if *shards < 1 {
		fmt.Fprintf(os.Stderr, "cclab slurm: -shards %d: want at least 1\n", *shards)
		return 2
	}
	if *cpus < 1 {
		fmt.Fprintf(os.Stderr, "cclab slurm: -cpus-per-task %d: want at least 1\n", *cpus)
		return 2
	}
	exp, code := loadExperimentOrExit("cclab slurm", name, *quick)
	if exp == nil {
		return code
	}
	job := slurmJob{Name: exp.Name, Shards: *shards, CPUs: *cpus, Partition: *partition, Time: *limit, DB: *db, Scenario: name}
	if *backends != "" {
		bs := strings.Split(*backends, ",")
		if err := eval.CheckBackends(exp, bs); err != nil {
			fmt.Fprintf(os.Stderr, "cclab slurm: -backends %s: %v\n", *backends, err)
			return 2
		}
		job.Extra = append(job.Extra, "-backends", *backends)
	}
	if *quick {
		job.Extra = append(job.Extra, "-quick")
	}
	script, err := job.locate(name, *bin, *logs, *out, *wait)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cclab slurm:", err)
		return 1
	}
	if err := job.write(script); err != nil {
		fmt.Fprintln(os.Stderr, "cclab slurm:", err)
		return 1
	}
	runs := len(eval.Specs(exp, job.backendList()))
	fmt.Printf("%s: %d runs in %d shards (about %d runs each); script %s\n", exp.Name, runs, *shards, (runs+*shards-1)/(*shards), script)
	if runs < *shards {
		fmt.Fprintf(os.Stderr, "cclab slurm: warning: %d shards for %d runs: %d tasks have nothing to do\n", *shards, runs, *shards-runs)
	}
	if !*submit && !*wait {
		fmt.Printf("submit with: sbatch %s\n", script)
		return 0
	}
	if code := job.submit(script, *wait); code != 0 || !*wait || *noReport {
		return code
	}
	st, err := store.Open(job.DB)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cclab slurm:", err)
		return 1
	}
	defer st.Close()
	path, err := report.WriteReport(context.Background(), st, exp.Name, reportDir(fs, "out", *outDir, *db), studies.Sections)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cclab slurm: report:", err)
		return 1
	}
	fmt.Println("report:", absPath(path))
	return 0
}

// absPath is p made absolute (tasks start in the submission directory, but
// a script may be submitted from elsewhere).
func absPath(p string) string { a, _ := filepath.Abs(p); return a }

// locate sets the paths the tasks see, all absolute: the scenario file (a
// built-in experiment stays a name), an SQLite database, the cclab binary
// (bin, default this executable) and the logs directory (logs, default the
// script's); it returns the script's path (out, default
// cclab-NAME.sbatch).
func (j *slurmJob) locate(name, bin, logs, out string, wait bool) (string, error) {
	if _, builtin := experiments.Source(name); !builtin || strings.HasSuffix(name, ".yaml") {
		j.Scenario = absPath(name)
	}
	if !store.IsPostgresURL(j.DB) {
		j.DB = absPath(j.DB)
	}
	j.Cclab = bin
	if j.Cclab == "" {
		var err error
		if j.Cclab, err = os.Executable(); err != nil {
			return "", fmt.Errorf("finding this executable (give -cclab): %v", err)
		}
	}
	j.Cclab = absPath(j.Cclab)
	if strings.Contains(j.Cclab, string(filepath.Separator)+"go-build") && !wait {
		fmt.Fprintf(os.Stderr, "cclab slurm: warning: %s is a temporary build (go run) that is deleted when this command ends: "+
			"build cclab (go build -o DIR/cclab ./cmd/cclab) where the nodes see it and pass -cclab DIR/cclab\n", j.Cclab)
	}
	script := out
	if script == "" {
		script = "cclab-" + j.Name + ".sbatch"
	}
	script = absPath(script)
	j.Logs = logs
	if j.Logs == "" {
		j.Logs = filepath.Dir(script)
	}
	j.Logs = absPath(j.Logs)
	return script, nil
}

// write writes the job's script, readable only by its owner when the
// database URL holds a password.
func (j slurmJob) write(script string) error {
	mode := os.FileMode(0o644)
	if u, err := url.Parse(j.DB); err == nil && store.IsPostgresURL(j.DB) {
		if _, has := u.User.Password(); has {
			mode = 0o600 // the URL's password is in the script
		}
	}
	return os.WriteFile(script, []byte(j.script()), mode)
}

// submit submits the script with sbatch and, with wait, waits until every
// task has ended; it returns the exit status.
func (j slurmJob) submit(script string, wait bool) int {
	sbatch := []string{"--parsable"}
	if wait {
		sbatch = append(sbatch, "--wait")
	}
	cmd := exec.Command("sbatch", append(sbatch, script)...)
	cmd.Stderr = os.Stderr
	outb, err := cmd.Output()
	jobID := strings.TrimSpace(string(outb))
	if err != nil {
		fmt.Fprintf(os.Stderr, "cclab slurm: sbatch %s: %v (job %s; task output in %s)\n", script, err, jobID, j.Logs)
		return 1
	}
	if !wait {
		fmt.Printf("submitted job %s; task output in %s\n", jobID, j.Logs)
		return 0
	}
	fmt.Printf("job %s: every task completed; task output in %s\n", jobID, j.Logs)
	return 0
}

// backendList is the -backends selection of the job (nil: the scenario's).
func (j slurmJob) backendList() []string {
	for i, a := range j.Extra {
		if a == "-backends" && i+1 < len(j.Extra) {
			return strings.Split(j.Extra[i+1], ",")
		}
	}
	return nil
}
