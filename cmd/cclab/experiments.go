package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"

	"cclab/eval"
	"cclab/experiments"
)

func init() {
	register("list", "list the built-in experiments (and those stored in a database)", runList)
}

func runList(args []string) int {
	fs := flag.NewFlagSet("cclab list", flag.ContinueOnError)
	db := fs.String("db", eval.DefaultDB, "also list the experiments stored in this database, if it exists")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	fmt.Println("built-in experiments (cclab run NAME):")
	for _, n := range experiments.Names() {
		if strings.HasSuffix(n, "-quick") {
			continue
		}
		src, _ := experiments.Source(n)
		desc := ""
		points := 0
		if exp, err := eval.ParseScenario(n+".yaml", src); err == nil {
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
	if _, err := os.Stat(*db); err == nil {
		st, err := eval.OpenSQLite(*db)
		if err != nil {
			fmt.Fprintln(os.Stderr, "cclab list:", err)
			return 1
		}
		defer st.Close()
		ctx := context.Background()
		exps, err := st.Experiments(ctx)
		if err != nil {
			fmt.Fprintln(os.Stderr, "cclab list:", err)
			return 1
		}
		fmt.Printf("\nstored in %s:\n", *db)
		for _, e := range exps {
			runs, _ := st.Runs(ctx, e.Name)
			done := 0
			for _, r := range runs {
				if r.Status == eval.StatusDone {
					done++
				}
			}
			fmt.Printf("  %s: %d runs done, %d failed\n", e.Name, done, len(runs)-done)
		}
	}
	return 0
}
