package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"cclab/internal/cli"
)

// stdoutOf runs f with os.Stdout going to a file and returns what f wrote.
func stdoutOf(t *testing.T, f func() int) (string, int) {
	t.Helper()
	tmp, err := os.CreateTemp(t.TempDir(), "stdout")
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stdout
	os.Stdout = tmp
	code := f()
	os.Stdout = old
	b, err := os.ReadFile(tmp.Name())
	if err != nil {
		t.Fatal(err)
	}
	return string(b), code
}

// TestCampaignBadInput: bad commands, flags and specs exit 2.
func TestCampaignBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("name: x\nhostz: []\n"), 0o644)
	for _, args := range [][]string{
		{},
		{"fly"},
		{"status"},
		{"status", bad},
		{"run", bad},
		{"report", "-nope", bad},
		{"profile", filepath.Join(dir, "missing.yaml")},
	} {
		if _, code := stdoutOf(t, func() int { return runCampaign(args) }); code != 2 {
			t.Errorf("cclab campaign %v: exit %d, want 2", args, code)
		}
	}
}

// TestCampaignFlagsDocumented: every flag of every cclab campaign command
// is in docs/campaigns.md.
func TestCampaignFlagsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/campaigns.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"run", "status", "report", "profile"} {
		var help bytes.Buffer
		c := newCampaignFlags(cmd)
		c.fs.SetOutput(&help)
		c.fs.PrintDefaults()
		if m := cli.Undocumented(help.String(), string(doc)); len(m) > 0 {
			t.Errorf("cclab campaign %s: flags %v are not in docs/campaigns.md", cmd, m)
		}
	}
}
