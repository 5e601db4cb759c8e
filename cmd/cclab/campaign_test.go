package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cclab/campaign"
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
		{"validate", bad},
		{"relays", bad},
		{"relay-stats", bad},
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
	for _, cmd := range []string{"run", "status", "report", "profile", "validate", "relays", "relay-stats"} {
		var help bytes.Buffer
		c := newCampaignFlags(cmd)
		c.fs.SetOutput(&help)
		c.fs.PrintDefaults()
		if m := cli.Undocumented(help.String(), string(doc)); len(m) > 0 {
			t.Errorf("cclab campaign %s: flags %v are not in docs/campaigns.md", cmd, m)
		}
	}
}

// TestCampaignProgress: the bar counts finished transfers of those to run
// and prints failures above it; line mode prints one line per attempt.
func TestCampaignProgress(t *testing.T) {
	it := campaign.Item{Round: 1, Pair: campaign.Pair{From: "a", To: "b"}, Variant: campaign.Variant{Name: "sack"}}
	events := []campaign.Event{
		{Kind: campaign.EventStart, Item: it, Attempt: 1, Counts: campaign.Counts{Total: 10, Skipped: 6}, Running: 1},
		{Kind: campaign.EventDone, Item: it, Attempt: 1, Status: campaign.StatusFailed, Err: errors.New("timeout: x"), Retry: true,
			Counts: campaign.Counts{Total: 10, Skipped: 6}},
		{Kind: campaign.EventDone, Item: it, Attempt: 2, Status: campaign.StatusDone, Counts: campaign.Counts{Total: 10, Skipped: 6, Done: 1}},
	}
	for _, bar := range []bool{true, false} {
		var b bytes.Buffer
		p := newCampaignProgress(&b, bar)
		for _, ev := range events {
			p.event(ev)
		}
		p.stop()
		want := []string{"r1/a->b/sack attempt 1: FAILED (timeout: x), will retry"}
		if bar {
			want = append(want, "(0/4)") // throttled: the first state is drawn
		} else {
			want = append(want, "[1/4] r1/a->b/sack attempt 2: done")
		}
		for _, w := range want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("bar %v: output lacks %q:\n%q", bar, w, b.String())
			}
		}
	}
}
