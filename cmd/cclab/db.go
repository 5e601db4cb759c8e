package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sort"

	"cclab/campaign"
	"cclab/internal/cli"
	"cclab/store"
)

func init() {
	register("db", "copy results and campaigns between databases (SQLite, PostgreSQL), print run digests", runDB)
}

func dbUsage() {
	fmt.Fprint(os.Stderr, `usage:
  cclab db copy -from DB -to DB [-experiment NAME] [-campaign NAME]
                                                     copy experiments, versions and runs, and campaigns'
                                                     specs and transfer attempts (SQLite <-> PostgreSQL)
  cclab db digest -db DB -experiment NAME            print each run's key and result digest (store.RunDigest)

DB is an SQLite file or a PostgreSQL URL (postgres://user@host:port/database?sslmode=disable).
`)
}

func runDB(args []string) int {
	if len(args) == 0 {
		dbUsage()
		return 2
	}
	switch args[0] {
	case "copy":
		return runDBCopy(args[1:])
	case "digest":
		return runDBDigest(args[1:])
	}
	fmt.Fprintf(os.Stderr, "cclab db: unknown command %q (allowed: copy, digest)\n", args[0])
	dbUsage()
	return 2
}

// openExisting opens a store that must already exist (an SQLite file is
// not created by reading it).
func openExisting(db string) (*store.SQLStore, error) {
	if !store.IsPostgresURL(db) {
		if _, err := os.Stat(db); err != nil {
			return nil, fmt.Errorf("database %s: %w", db, err)
		}
	}
	return store.Open(db)
}

func runDBCopy(args []string) int {
	fs := flag.NewFlagSet("cclab db copy", flag.ContinueOnError)
	from := fs.String("from", "", "source database (SQLite file or PostgreSQL URL; required)")
	to := fs.String("to", "", "destination database (created on first use; required)")
	name := fs.String("experiment", "", "copy only this experiment (and no campaign unless -campaign names one); default: every experiment")
	camp := fs.String("campaign", "", "copy only this campaign (and no experiment unless -experiment names one); default: every campaign")
	if code, ok := cli.Parse(fs, args); !ok {
		return code
	}
	if *from == "" || *to == "" {
		fmt.Fprintln(os.Stderr, "cclab db copy: -from DB and -to DB are required (cclab db copy -h lists the flags)")
		return 2
	}
	if *from == *to {
		fmt.Fprintln(os.Stderr, "cclab db copy: -from and -to name the same database")
		return 2
	}
	src, err := openExisting(*from)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cclab db copy: -from:", err)
		return 1
	}
	defer src.Close()
	dst, err := store.Open(*to)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cclab db copy: -to:", err)
		return 1
	}
	defer dst.Close()
	ctx := context.Background()
	if *name != "" || *camp == "" {
		st, err := store.CopyStore(ctx, dst, src, *name)
		fmt.Printf("copied %d experiments, %d new versions, %d runs (%d already there) from %s to %s\n",
			st.Experiments, st.Versions, st.Runs, st.Skipped, store.DBName(*from), store.DBName(*to))
		if err != nil {
			fmt.Fprintln(os.Stderr, "cclab db copy:", err)
			return 1
		}
	}
	if *camp != "" || *name == "" {
		st, err := campaign.CopyCampaigns(ctx, dst, src, *camp)
		fmt.Printf("copied %d campaigns, %d new specs, %d transfer attempts (%d already there) from %s to %s\n",
			st.Campaigns, st.Specs, st.Attempts, st.Skipped, store.DBName(*from), store.DBName(*to))
		if err != nil {
			fmt.Fprintln(os.Stderr, "cclab db copy:", err)
			return 1
		}
	}
	return 0
}

func runDBDigest(args []string) int {
	fs := flag.NewFlagSet("cclab db digest", flag.ContinueOnError)
	db := fs.String("db", store.DefaultDB, "database (SQLite file or PostgreSQL URL)")
	name := fs.String("experiment", "", "experiment (required)")
	if code, ok := cli.Parse(fs, args); !ok {
		return code
	}
	if *name == "" {
		fmt.Fprintln(os.Stderr, "cclab db digest: -experiment NAME is required (cclab db digest -h lists the flags)")
		return 2
	}
	st, err := openExisting(*db)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cclab db digest:", err)
		return 1
	}
	defer st.Close()
	d, err := store.Digests(context.Background(), st, *name)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cclab db digest:", err)
		return 1
	}
	keys := make([]string, 0, len(d))
	for k := range d {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Println(k, d[k])
	}
	return 0
}
