package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"cclab/agent"
	"cclab/campaign"
	"cclab/internal/agenttest"
	"cclab/internal/testsvc"
	"cclab/scenario"
)

// TestCampaignCommands runs cclab campaign run, status, report and profile
// on three agents over loopback; the profile is a scenario cclab run
// accepts.
func TestCampaignCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 6 transfers over loopback")
	}
	groups := [3]string{"eu", "eu", "us"}
	dir, spec := loopbackSpec(t, "cmdtest", groups, "variants: [{name: reno, cc: reno, recovery: reno}]\n"+
		"transfer: {bytes: 100kB}\nschedule: {spacing: 0s, timeout: 60s}\n")
	db := filepath.Join(dir, "c.db")
	appendFile(t, spec, "db: "+db+"\n")
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
	exp, err := scenario.LoadScenarioFile(prof)
	if err != nil {
		t.Fatalf("profile scenario: %v", err)
	}
	if got, want := len(exp.Points), 6; got != want {
		t.Errorf("profile scenario: %d points, want %d (6 paths × 1 variant)", got, want)
	}
}

func regexpMatch(s, re string) bool { return regexp.MustCompile(re).MatchString(s) }

// TestCampaignKillResume kills a running `cclab campaign run` (SIGKILL,
// after 5 transfers finished) and runs it again: every transfer is stored
// exactly once as done, none twice.
func TestCampaignKillResume(t *testing.T) {
	if testing.Short() {
		t.Skip("builds cclab and runs 24 transfers over loopback")
	}
	bin := buildCclab(t)
	dir, spec := loopbackSpec(t, "killtest", [3]string{"g0", "g1", "g0"},
		"variants: [{name: reno, cc: reno, recovery: reno}, {name: sack, cc: reno, recovery: sack}]\n"+
			"transfer: {bytes: 300kB}\nschedule: {rounds: 2, seed: 5, spacing: 0s, timeout: 60s}\n")
	db := filepath.Join(dir, "c.db")
	appendFile(t, spec, "db: "+db+"\n")
	cmd := exec.Command(bin, "campaign", "run", "-v", spec)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	done := 0
	for done < 5 && sc.Scan() {
		if strings.Contains(sc.Text(), ": done in") {
			done++
		}
	}
	cmd.Process.Kill()
	go io.Copy(io.Discard, stderr)
	cmd.Wait()
	if done < 5 {
		t.Fatalf("the first run ended after %d transfers", done)
	}
	out, err := exec.Command(bin, "campaign", "run", "-v", spec).CombinedOutput()
	if err != nil {
		t.Fatalf("second run: %v\n%s", err, out)
	}
	st, err := campaign.OpenStore(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sp, err := campaign.LoadSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := st.Rows(context.Background(), sp.Name, sp.Digest())
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]int{}
	for _, r := range rows {
		if r.Status != campaign.StatusDone {
			t.Errorf("%s attempt %d: %s (%s)", r.ID, r.Attempt, r.Status, r.Error)
		}
		seen[r.Seq]++
	}
	for seq, n := range seen {
		if n != 1 {
			t.Errorf("transfer %d stored %d times", seq, n)
		}
	}
	if got, want := len(seen), 24; got != want {
		t.Errorf("stored %d transfers, want %d\n%s", got, want, out)
	}
	if !strings.Contains(string(out), "stored before") {
		t.Errorf("second run's summary:\n%s", out)
	}
}

// TestCampaignRunLeased: cclab campaign run refuses a campaign whose lease
// another run holds (here: of another host), exits 1 with an error that
// names the campaign and that run, and stores nothing.
func TestCampaignRunLeased(t *testing.T) {
	if testing.Short() {
		t.Skip("builds cclab")
	}
	bin := buildCclab(t)
	dir, spec := loopbackSpec(t, "leasetest", [3]string{"g0", "g1", "g0"}, "variants: [{name: reno, cc: reno}]\n"+
		"transfer: {bytes: 100kB}\nschedule: {spacing: 0s, timeout: 60s}\n")
	db := filepath.Join(dir, "c.db")
	st, err := campaign.OpenStore(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	other := campaign.Owner{Host: "otherhost", PID: 4242, Token: "feedbeef"}
	if _, err := st.Acquire(ctx, "leasetest", other, time.Hour, nil); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "campaign", "run", "-db", db, spec).CombinedOutput()
	var ee *exec.ExitError
	want := `campaign "leasetest" is being run by host otherhost pid 4242 (run feedbeef)`
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(string(out), want) || strings.Contains(string(out), "done now") {
		t.Errorf("campaign run of a leased campaign: %v, output:\n%s\nwant exit 1 and only an error containing %q", err, out, want)
	}
	if rows, err := st.Rows(ctx, "leasetest", ""); err != nil || len(rows) != 0 {
		t.Errorf("stored attempts: got %d, %v; want none", len(rows), err)
	}
}

// TestCampaignPostgres runs a campaign into a PostgreSQL database (a
// server started for the test) and reports and profiles from it.
func TestCampaignPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a PostgreSQL server and runs 6 transfers over loopback")
	}
	db := testsvc.StartPostgres(t).CreateDB(t, "campaign")
	dir, spec := loopbackSpec(t, "pgtest", [3]string{"g0", "g1", "g0"}, "variants: [{name: sack, cc: reno, recovery: sack}]\n"+
		"transfer: {bytes: 100kB}\nschedule: {spacing: 0s, timeout: 60s}\n")
	if out, code := stdoutOf(t, func() int { return runCampaign([]string{"run", "-v", "-db", db, spec}) }); code != 0 || !strings.Contains(out, "6 done now") {
		t.Fatalf("campaign run -db postgres: exit %d:\n%s", code, out)
	}
	html := filepath.Join(dir, "r.html")
	if out, code := stdoutOf(t, func() int { return runCampaign([]string{"report", "-db", db, "-o", html, spec}) }); code != 0 {
		t.Fatalf("campaign report -db postgres: exit %d:\n%s", code, out)
	}
	if b, _ := os.ReadFile(html); !bytes.Contains(b, []byte("6 done, 0 failed, 0 pending")) {
		t.Errorf("report from PostgreSQL lacks the counts")
	}
	if out, code := stdoutOf(t, func() int { return runCampaign([]string{"profile", "-db", db, "-o", "-", spec}) }); code != 0 || !strings.Contains(out, "inter-h0-h1") {
		t.Errorf("campaign profile -db postgres: exit %d:\n%s", code, out)
	}
	// cclab db copy takes the campaign home to SQLite, where it reports the same.
	local := filepath.Join(dir, "home.db")
	out, code := stdoutOf(t, func() int { return runDB([]string{"copy", "-from", db, "-to", local}) })
	if want := "copied 1 campaigns, 1 new specs, 6 transfer attempts (0 already there)"; code != 0 || !strings.Contains(out, want) {
		t.Fatalf("db copy postgres -> SQLite: exit %d, output:\n%s\nwant a line %q", code, out, want)
	}
	html = filepath.Join(dir, "home.html")
	if out, code := stdoutOf(t, func() int { return runCampaign([]string{"report", "-db", local, "-o", html, spec}) }); code != 0 {
		t.Fatalf("campaign report from the copy: exit %d:\n%s", code, out)
	}
	if b, _ := os.ReadFile(html); !bytes.Contains(b, []byte("6 done, 0 failed, 0 pending")) {
		t.Errorf("report from the SQLite copy lacks the counts")
	}
	out, code = stdoutOf(t, func() int { return runDB([]string{"copy", "-from", db, "-to", local, "-campaign", "pgtest"}) })
	if want := "copied 1 campaigns, 0 new specs, 0 transfer attempts (6 already there)"; code != 0 || !strings.Contains(out, want) || strings.Contains(out, "experiments") {
		t.Errorf("db copy -campaign again: exit %d, output:\n%s\nwant only a line %q", code, out, want)
	}
}

// loopbackSpec starts three agents on loopback with a new PSK and writes a
// campaign spec for them (hosts h0, h1, h2 in groups, then body and the
// credentials) into a temporary directory; it returns the directory and
// the spec's path.
func loopbackSpec(t *testing.T, name string, groups [3]string, body string) (dir, spec string) {
	t.Helper()
	dir = t.TempDir()
	key := filepath.Join(dir, "c.psk")
	if err := os.WriteFile(key, []byte(strings.Repeat("6b", 32)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	creds, err := agent.LoadCredentials(key, "", "")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "name: %s\nhosts:\n", name)
	for i, a := range agenttest.Start(t, 3, creds) {
		fmt.Fprintf(&b, "  - {name: h%d, agent: %q, data: 127.0.0.1, group: %s}\n", i, a, groups[i])
	}
	b.WriteString(body + "credentials: {psk: c.psk}\n")
	spec = filepath.Join(dir, "c.yaml")
	if err := os.WriteFile(spec, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, spec
}

// appendFile appends text to a file.
func appendFile(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err == nil {
		_, err = f.WriteString(text)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		t.Fatal(err)
	}
}
