package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"cclab/agent"
	"cclab/eval"
	"cclab/internal/agenttest"
)

// TestCampaignCommands runs cclab campaign run, status, report and profile
// on three agents over loopback; the profile is a scenario cclab run
// accepts.
func TestCampaignCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 6 transfers over loopback")
	}
	dir := t.TempDir()
	key := filepath.Join(dir, "c.psk")
	if err := os.WriteFile(key, []byte(strings.Repeat("5a", 32)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	creds, err := agent.LoadCredentials(key, "", "")
	if err != nil {
		t.Fatal(err)
	}
	var hosts strings.Builder
	for i, a := range agenttest.Start(t, 3, creds) {
		fmt.Fprintf(&hosts, "  - {name: h%d, agent: %q, data: 127.0.0.1, group: %s}\n", i, a, []string{"eu", "eu", "us"}[i])
	}
	spec := filepath.Join(dir, "c.yaml")
	db := filepath.Join(dir, "c.db")
	src := "name: cmdtest\nhosts:\n" + hosts.String() + "variants: [{name: reno, cc: reno, recovery: reno}]\n" +
		"transfer: {bytes: 100kB}\nschedule: {spacing: 0s, timeout: 60s}\ncredentials: {psk: c.psk}\ndb: " + db + "\n"
	if err := os.WriteFile(spec, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code := stdoutOf(t, func() int { return runCampaign([]string{"run", spec, "-v"}) })
	if code != 0 || !strings.Contains(out, "6 done now") {
		t.Fatalf("campaign run: exit %d, output:\n%s", code, out)
	}
	out, code = stdoutOf(t, func() int { return runCampaign([]string{"status", spec}) })
	if code != 0 || !strings.Contains(out, "h2->h0") || !regexpMatch(out, `total\s+6\s+0\s+0`) {
		t.Errorf("campaign status: exit %d, output:\n%s", code, out)
	}
	html := filepath.Join(dir, "r.html")
	if _, code = stdoutOf(t, func() int { return runCampaign([]string{"report", spec, "-o", html}) }); code != 0 {
		t.Fatalf("campaign report: exit %d", code)
	}
	if b, _ := os.ReadFile(html); !bytes.Contains(b, []byte("cmdtest")) || !bytes.Contains(b, []byte("inter")) {
		t.Errorf("report lacks the campaign or the inter group")
	}
	prof := filepath.Join(dir, "p.yaml")
	if _, code = stdoutOf(t, func() int { return runCampaign([]string{"profile", "-o", prof, spec}) }); code != 0 {
		t.Fatalf("campaign profile: exit %d", code)
	}
	exp, err := eval.LoadScenarioFile(prof)
	if err != nil {
		t.Fatalf("profile scenario: %v", err)
	}
	if got, want := len(exp.Points), 6; got != want {
		t.Errorf("profile scenario: %d points, want %d (6 paths × 1 variant)", got, want)
	}
}

func regexpMatch(s, re string) bool { return regexp.MustCompile(re).MatchString(s) }
