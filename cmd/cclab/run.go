package main

import (
	"cclab/backend/ns3"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"

	"golang.org/x/term"

	liverun "cclab/backend/live"
	simrun "cclab/backend/sim"
	"cclab/eval"
	"cclab/experiments"
	"cclab/internal/cli"
	"cclab/report"
	"cclab/report/studies"
	"cclab/scenario"
	"cclab/store"
)

func init() {
	register("run", "run a built-in experiment or a scenario file on its backends, store results, write the report", runRun)
}

// runners returns the backends available in this build.
func runners() map[string]eval.Runner {
	m := map[string]eval.Runner{scenario.BackendSim: simrun.Runner{}, scenario.BackendLive: liverun.Runner{},
		scenario.BackendNS3: ns3.Runner{}}
	return m
}

// loadExperiment loads a built-in experiment by name (NAME-quick with quick)
// or a scenario file by path.
// loadExperimentOrExit loads an experiment for a command (tool names it in
// the message); on error it prints the error and returns nil and the exit
// code: 2 when the scenario file is wrong (the message names the field), 1
// otherwise.
func loadExperimentOrExit(tool, arg string, quick bool) (*scenario.Experiment, int) {
	exp, err := loadExperiment(arg, quick)
	if err != nil {
		fmt.Fprintln(os.Stderr, tool+":", err)
		var se *scenario.Error
		if errors.As(err, &se) {
			return nil, 2
		}
		return nil, 1
	}
	return exp, 0
}

func loadExperiment(arg string, quick bool) (*scenario.Experiment, error) {
	if src, ok := experiments.Source(arg); ok && !strings.HasSuffix(arg, ".yaml") {
		name := arg
		if quick {
			if _, ok := experiments.Source(arg + "-quick"); !ok {
				return nil, fmt.Errorf("built-in experiment %s has no quick form", arg)
			}
			name = arg + "-quick"
			src, _ = experiments.Source(name)
		}
		return scenario.ParseScenario(name+".yaml (built in)", src)
	}
	if _, err := os.Stat(arg); err != nil {
		return nil, fmt.Errorf("%q is neither a built-in experiment (%s) nor a readable scenario file", arg, strings.Join(experiments.Names(), ", "))
	}
	if quick {
		return nil, fmt.Errorf("-quick applies to built-in experiments only")
	}
	return scenario.LoadScenarioFile(arg)
}

// parseNameAndFlags parses args into fs and returns the one positional
// argument, which may stand before, between or after the flags ("run NAME
// -quick", "run -quick NAME", "run -db F NAME -quick"): the flag package
// stops at the first positional argument, so the flags after it are parsed
// in a second pass.
func parseNameAndFlags(fs *flag.FlagSet, args []string) (string, error) {
	rest, name := splitArgs(args)
	if code, ok := cli.ParseArgs(fs, rest); !ok {
		return "", exitCode(code)
	}
	if name == "" && fs.NArg() > 0 {
		name = fs.Arg(0)
		if code, ok := cli.ParseArgs(fs, fs.Args()[1:]); !ok {
			return "", exitCode(code)
		}
	}
	if fs.NArg() > 0 {
		return "", fmt.Errorf("%w %v", errExtraArgs, fs.Args())
	}
	return name, nil
}

// exitCode is the error of a parse that ends the command at once (cli.ParseArgs
// has reported it): 0 after -h, 2 after a bad flag.
type exitCode int

func (c exitCode) Error() string { return fmt.Sprintf("exit %d", int(c)) }

// errExtraArgs reports positional arguments beyond the one name.
var errExtraArgs = errors.New("unexpected arguments")

// maxParallel is the upper bound of cclab run -parallel.
const maxParallel = 1024

// parseWithExperiment parses the flags of a command that takes one
// experiment (NAME or FILE.yaml) anywhere among them (parseNameAndFlags),
// with a usage naming the built-in experiments. ok is false when the command
// should exit at once with code: 0 after -h, 2 on a bad flag, extra
// arguments or no experiment.
func parseWithExperiment(fs *flag.FlagSet, args []string) (name string, code int, ok bool) {
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: %s NAME|FILE.yaml [flags]\n\nbuilt-in experiments: %s\n\nflags:\n", fs.Name(), strings.Join(experiments.Names(), ", "))
		fs.PrintDefaults()
	}
	name, err := parseNameAndFlags(fs, args)
	if err != nil {
		var code exitCode
		if errors.As(err, &code) { // cli.ParseArgs has reported it
			return "", int(code), false
		}
		fmt.Fprintf(os.Stderr, "%s: %v\n", fs.Name(), err)
		return "", 2, false
	}
	if name == "" {
		fs.Usage()
		return "", 2, false
	}
	return name, 0, true
}

// splitArgs moves a leading positional argument behind the flags so that
// both "run NAME -quick" and "run -quick NAME" work.
func splitArgs(args []string) (flags []string, positional string) {
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		return args[1:], args[0]
	}
	return args, ""
}

func runRun(args []string) int {
	fs := flag.NewFlagSet("cclab run", flag.ContinueOnError)
	quick := fs.Bool("quick", false, "run the experiment's quick form (NAME-quick: fewer points, shorter runs)")
	db := fs.String("db", store.DefaultDB, "result database: an SQLite file (created on first use) or a PostgreSQL URL postgres://user@host/db")
	out := fs.String("out", "reports", "directory for the HTML report (a subdirectory per experiment); with a -db other than "+store.DefaultDB+" the default is reports-DBNAME")
	backends := fs.String("backends", "", "comma-separated backends to run (sim, live); default: the scenario's")
	parallel := fs.Int("parallel", runtime.NumCPU(), "concurrent simulator runs, 1..1024")
	retryHost := fs.Int("retry-host-limited", 0, fmt.Sprintf("run a live run marked host-limited again, up to N more times (0..%d); the last attempt is stored", eval.MaxRetryHostLimited))
	noReport := fs.Bool("no-report", false, "do not write the report after the sweep")
	verbose := fs.Bool("v", false, "print a line per finished run (on stderr) instead of the progress bar")
	shard := fs.String("shard", "", "run only shard I/N of the sweep's runs (I in 0..N-1; no report: run cclab report when every shard is done)")
	name, code, ok := parseWithExperiment(fs, args)
	if !ok {
		return code
	}
	shardI, shardN := 0, 1
	if *shard != "" {
		var err error
		if shardI, shardN, err = eval.ParseShard(*shard); err != nil {
			fmt.Fprintf(os.Stderr, "cclab run: -shard: %v\n", err)
			return 2
		}
	}
	if *retryHost < 0 || *retryHost > eval.MaxRetryHostLimited {
		fmt.Fprintf(os.Stderr, "cclab run: -retry-host-limited %d: must be between 0 and %d\n", *retryHost, eval.MaxRetryHostLimited)
		return 2
	}
	if *parallel < 1 || *parallel > maxParallel {
		fmt.Fprintf(os.Stderr, "cclab run: -parallel %d: must be between 1 and %d\n", *parallel, maxParallel)
		return 2
	}
	exp, code := loadExperimentOrExit("cclab run", name, *quick)
	if exp == nil {
		return code
	}
	st, err := store.Open(*db)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cclab run:", err)
		return 1
	}
	defer st.Close()
	noteMigration(os.Stdout, st, *db)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	opt := eval.SweepOptions{Store: st, Runners: runners(), Parallel: map[string]int{scenario.BackendSim: *parallel},
		Shard: shardI, Shards: shardN, RetryHostLimited: *retryHost}
	if *backends != "" {
		opt.Backends = strings.Split(*backends, ",")
		if err := eval.CheckBackends(exp, opt.Backends); err != nil {
			fmt.Fprintf(os.Stderr, "cclab run: -backends %s: %v\n", *backends, err)
			return 2
		}
	}
	if len(exp.Skipped) > 0 {
		fmt.Printf("not in this build, left out: %s\n", strings.Join(exp.Skipped, ", "))
	}
	// Progress goes to stderr: a bar on a terminal, else (or with -v) one
	// line per finished run.
	meter := eval.NewProgressMeter(opt.Parallel)
	view := newProgressView(os.Stderr, meter, term.IsTerminal(int(os.Stderr.Fd())) && !*verbose)
	opt.Progress = view.event
	opt.Log = os.Stdout
	view.start()
	stats, err := eval.Sweep(ctx, exp, opt)
	view.stop()
	share := ""
	if shardN > 1 {
		share = fmt.Sprintf(" (shard %d/%d)", shardI, shardN)
	}
	fmt.Printf("%s v%d: %d runs%s: %d done now, %d already done, %d failed (%.1fs); database %s\n",
		exp.Name, stats.Version, stats.Total, share, stats.Ran, stats.Skipped, stats.Failed, stats.Duration.Seconds(), store.DBName(*db))
	if errors.Is(err, context.Canceled) {
		fmt.Println("interrupted: completed runs are stored; run the same command again to resume")
		return 130
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "cclab run:", err)
		return 1
	}
	if shardN > 1 && !*noReport {
		fmt.Printf("report: when every shard is done, cclab report -db %s -experiment %s\n", store.DBName(*db), exp.Name)
	} else if !*noReport {
		path, err := report.WriteReport(context.Background(), st, exp.Name, reportDir(fs, "out", *out, *db), studies.Sections)
		if err != nil {
			fmt.Fprintln(os.Stderr, "cclab run: report:", err)
			return 1
		}
		abs, _ := filepath.Abs(path)
		fmt.Println("report:", abs)
	}
	if stats.Failed > 0 {
		return 1
	}
	return 0
}

// noteMigration says when opening the database migrated it to the current
// schema (docs/store.md, "Schema versions").
func noteMigration(w io.Writer, st *store.SQLStore, db string) {
	if st.Migrated > 0 {
		fmt.Fprintf(w, "database %s: migrated from schema %d to %d (its runs are sorted into experiment versions: cclab list shows them)\n",
			store.DBName(db), st.Migrated, store.SchemaVersion)
	}
}
