package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestAsksVersion: -version anywhere in a subcommand's arguments (before
// "--") asks for cclab's version.
func TestAsksVersion(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{[]string{"-version"}, true},
		{[]string{"--version"}, true},
		{[]string{"run", "-version"}, true}, // a nested subcommand (campaign run, db copy)
		{[]string{"-db", "x.db", "-version"}, true},
		{[]string{"-exp-version", "2"}, false},
		{[]string{"--", "-version"}, false},
		{nil, false},
	} {
		if got := asksVersion(tc.args); got != tc.want {
			t.Errorf("asksVersion(%q) = %v, want %v", tc.args, got, tc.want)
		}
	}
}

// TestSubcommandVersion: every subcommand prints cclab's version line with
// -version and exits 0 (cclab run -version was undefined, and cclab
// report -version chose an experiment version, now -exp-version).
func TestSubcommandVersion(t *testing.T) {
	bin := buildCclab(t)
	for _, args := range [][]string{{"run", "-version"}, {"report", "-version"}, {"campaign", "run", "--version"}, {"sim", "-version"}} {
		out, err := exec.Command(bin, args...).Output()
		if err != nil || !strings.HasPrefix(string(out), "cclab "+args[0]+": cclab ") {
			t.Errorf("cclab %s: output %q, error %v; want the version line and exit 0", strings.Join(args, " "), out, err)
		}
	}
}
