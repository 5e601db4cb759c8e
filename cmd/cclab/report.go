package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"cclab/internal/cli"
	"cclab/report"
	"cclab/report/studies"
	"cclab/store"
)

func init() {
	register("report", "write the HTML report (and CSV/JSON) of stored experiments", runReport)
}

func runReport(args []string) int {
	fs := flag.NewFlagSet("cclab report", flag.ContinueOnError)
	db := fs.String("db", store.DefaultDB, "result database: an SQLite file or a PostgreSQL URL postgres://user@host/db")
	out := fs.String("out", "reports", "directory for the reports (a subdirectory per experiment); with a -db other than "+store.DefaultDB+" the default is reports-DBNAME")
	name := fs.String("experiment", "", "experiment to report on; default: every experiment in the database")
	inclHost := fs.Bool("include-host-limited", false, "keep host-limited live runs in the simulator-vs-live comparison (default: left out; the banner counts them either way)")
	version := fs.String("exp-version", "", "experiment version to report on (N or vN, as cclab list shows; needs -experiment); default: the newest, the one last run")
	if code, ok := cli.Parse(fs, args); !ok {
		return code
	}
	seq := 0
	if *version != "" {
		n, err := strconv.Atoi(strings.TrimPrefix(*version, "v"))
		if err != nil || n < 1 {
			fmt.Fprintf(os.Stderr, "cclab report: -exp-version %q: want a version number such as 2 or v2 (cclab list shows them)\n", *version)
			return 2
		}
		if *name == "" {
			fmt.Fprintln(os.Stderr, "cclab report: -exp-version needs -experiment NAME")
			return 2
		}
		seq = n
	}
	if _, err := os.Stat(*db); err != nil && !store.IsPostgresURL(*db) {
		fmt.Fprintf(os.Stderr, "cclab report: database %s: %v\n", *db, err)
		return 1
	}
	st, err := store.Open(*db)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cclab report:", err)
		return 1
	}
	defer st.Close()
	noteMigration(os.Stdout, st, *db)
	ctx := context.Background()
	names := []string{*name}
	if *name == "" {
		exps, err := st.Experiments(ctx)
		if err != nil {
			fmt.Fprintln(os.Stderr, "cclab report:", err)
			return 1
		}
		names = nil
		for _, e := range exps {
			names = append(names, e.Name)
		}
		if len(names) == 0 {
			fmt.Fprintf(os.Stderr, "cclab report: no experiments in %s\n", store.DBName(*db))
			return 1
		}
	}
	for _, n := range names {
		path, err := report.WriteVersionReportWith(ctx, st, n, seq, reportDir(fs, "out", *out, *db), studies.Sections, report.Options{IncludeHostLimited: *inclHost})
		if err != nil {
			fmt.Fprintf(os.Stderr, "cclab report: %s: %v\n", n, err)
			return 1
		}
		abs, _ := filepath.Abs(path)
		fmt.Printf("%s: %s\n", n, abs)
	}
	return 0
}
