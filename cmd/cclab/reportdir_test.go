package main

import (
	"flag"
	"testing"
)

// TestReportDir: -out's default names the database (other than the
// default one), so reports of different databases do not overwrite each
// other; an -out given is kept.
func TestReportDir(t *testing.T) {
	for _, tc := range []struct {
		args []string
		db   string
		want string
	}{
		{nil, "cclab.db", "reports"},
		{nil, "runs/sweep.db", "reports-sweep"},
		{nil, "postgres://cclab@db.example:5432/scale?sslmode=disable", "reports-scale"},
		{[]string{"-out", "mine"}, "runs/sweep.db", "mine"},
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		out := fs.String("out", "reports", "")
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		if got := reportDir(fs, "out", *out, tc.db); got != tc.want {
			t.Errorf("reportDir(%q, -db %s) = %q, want %q", tc.args, tc.db, got, tc.want)
		}
	}
}
