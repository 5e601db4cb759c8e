package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"cclab/experiments"
	"cclab/internal/cli"
	"cclab/scenario"
	"cclab/store"
)

func init() {
	register("list", "list the built-in experiments (and those stored in a database)", runList)
}

func runList(args []string) int {
	fs := flag.NewFlagSet("cclab list", flag.ContinueOnError)
	db := fs.String("db", store.DefaultDB, "also list the experiments stored in this database (an SQLite file, if it exists, or a PostgreSQL URL)")
	if code, ok := cli.Parse(fs, args); !ok {
		return code
	}
	fmt.Println("built-in experiments (cclab run NAME):")
	for _, n := range experiments.Names() {
		if strings.HasSuffix(n, "-quick") {
			continue
		}
		src, _ := experiments.Source(n)
		desc := ""
		points := 0
		if exp, err := scenario.ParseScenario(n+".yaml", src); err == nil {
			desc = exp.Base.Description
			points = len(exp.Points)
		} else {
			desc = "invalid in this build: " + err.Error()
		}
		quick := ""
		if _, ok := experiments.Source(n + "-quick"); ok {
			quick = " [-quick]"
		}
		fmt.Printf("  %s%s (%d points)\n      %s\n", n, quick, points, desc)
	}
	if _, err := os.Stat(*db); err == nil || store.IsPostgresURL(*db) {
		st, err := store.Open(*db)
		if err != nil {
			fmt.Fprintln(os.Stderr, "cclab list:", err)
			return 1
		}
		defer st.Close()
		noteMigration(os.Stdout, st, *db)
		ctx := context.Background()
		exps, err := st.Experiments(ctx)
		if err != nil {
			fmt.Fprintln(os.Stderr, "cclab list:", err)
			return 1
		}
		fmt.Printf("\nstored in %s (versions newest first; cclab report -experiment NAME -exp-version N):\n", store.DBName(*db))
		for _, e := range exps {
			vers, err := st.Versions(ctx, e.Name)
			if err != nil {
				fmt.Fprintln(os.Stderr, "cclab list:", err)
				return 1
			}
			fmt.Printf("  %s\n", e.Name)
			for i, v := range vers {
				newest := ""
				if i == 0 {
					newest = " (newest: the default report)"
				}
				fmt.Printf("    %-4s %s  %d points, %d runs done, %d failed; cclab %s%s\n", v.Label(), shortTime(v.LastUsed),
					len(v.Points), v.Done, v.Failed, orUnknown(v.CclabVersion), newest)
				if v.Note != "" {
					fmt.Printf("         %s\n", v.Note)
				}
			}
			if len(vers) == 0 {
				runs, _ := st.Runs(ctx, e.Name, 0)
				fmt.Printf("    no versions; %d runs\n", len(runs))
			}
		}
	}
	return 0
}

// shortTime formats an RFC 3339 time as "2006-01-02 15:04 UTC".
func shortTime(s string) string {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t, err = time.Parse(time.RFC3339Nano, s)
	}
	if err != nil {
		return s
	}
	return t.UTC().Format("2006-01-02 15:04 UTC")
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
