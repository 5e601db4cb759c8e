package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cclab/internal/testenv"
)

// TestBadInputExit2 runs the real binaries on the bad inputs
// (item 10): each must exit 2 at once with one line that names the flag or
// scenario field and its allowed range, instead of panicking, running out
// of memory, running unbounded or silently doing something else.
func TestBadInputExit2(t *testing.T) {
	if testing.Short() {
		t.Skip("builds three binaries; skipped with -short")
	}
	bin := testenv.BuildTools(t, "cclab/cmd/cclab", "cclab/cmd/sender", "cclab/cmd/bottleneck")
	dir := t.TempDir()
	scenario := func(name, head, flowExtra string) string {
		f := filepath.Join(dir, name)
		body := "name: bad\n" + head + "topology:\n  kind: dumbbell\n  bottleneck: {rate: 10Mbit, delay: 5ms}\nflows:\n  - name: f\n" + flowExtra
		if err := os.WriteFile(f, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return f
	}
	count := scenario("count.yaml", "duration: 1s\n", "    count: 1000000000\n")
	runs := scenario("runs.yaml", "duration: 1s\nruns: 1000000000\n", "")
	long := scenario("duration.yaml", "duration: 1000000h\n", "")
	good := scenario("good.yaml", "duration: 1s\n", "")
	for _, tc := range []struct {
		args []string // tool and arguments
		want []string // substrings of the one-line message: the flag or field, the allowed range
	}{
		{[]string{"cclab", "sim", "-flows", "-1"}, []string{"-flows", "between 1 and 10000"}},
		{[]string{"cclab", "sim", "-flows", "10000000"}, []string{"-flows", "between 1 and 10000"}},
		{[]string{"cclab", "sim", "-interval", "1ns", "-series", filepath.Join(dir, "s.csv")}, []string{"-interval", "at least"}},
		{[]string{"cclab", "sim", "-scenario", count}, []string{"count", "maximum 10000"}},
		{[]string{"cclab", "sim", "-scenario", runs}, []string{"runs", "maximum 10000"}},
		{[]string{"cclab", "run", runs}, []string{"runs", "maximum 10000"}},
		{[]string{"cclab", "sim", "-topology", "chain", "-hops", "1000000"}, []string{"-hops", "between 1 and 64"}},
		{[]string{"cclab", "sim", "-scenario", long}, []string{"duration", "at most 24h"}},
		{[]string{"cclab", "sim", "-duration", "-1s"}, []string{"-duration", "at most 24h"}},
		{[]string{"cclab", "sim", "-queue", "drr:quantum=0"}, []string{"quantum", "between 1 and"}},
		{[]string{"cclab", "sim", "-rate", "1e-9bit"}, []string{"-rate", "between 1kbit and 10Tbit"}},
		{[]string{"cclab", "run", "-parallel", "0", good}, []string{"-parallel", "between 1 and 1024"}},
		{[]string{"cclab", "agent", "-max-seconds", "2h"}, []string{"-max-seconds", "3600s"}},
		{[]string{"cclab", "agent", "-max-transfers", "0"}, []string{"-max-transfers", "at least 1"}},
		{[]string{"cclab", "agent", "-listen", "127.0.0.1:0"}, []string{"-psk-file", "-identity"}},
		{[]string{"cclab", "agent", "keygen"}, []string{"-out"}},
		{[]string{"bottleneck", "-target", "127.0.0.1:9", "-listen", "127.0.0.1:0", "-rate", "1e-9bit"}, []string{"-rate", "between 1000 and"}},
		{[]string{"bottleneck", "-target", "127.0.0.1:9", "-listen", "127.0.0.1:0", "-duration", "-1s"}, []string{"-duration", "must not be negative"}},
		{[]string{"bottleneck", "-target", "127.0.0.1:9", "-listen", "127.0.0.1:0", "-queue", "drr:quantum=0"}, []string{"quantum", "between 1 and"}},
		{[]string{"bottleneck", "-target", "127.0.0.1:9", "-listen", "127.0.0.1:0", "-max-clients-per-host", "0"}, []string{"-max-clients-per-host", "between 1 and"}},
		{[]string{"sender", "-c", "127.0.0.1:9", "-t", "0"}, []string{"-t", "positive", "at most 24h"}},
		{[]string{"sender", "-c", "127.0.0.1:9", "-connect-timeout", "-1s"}, []string{"-connect-timeout", "positive", "at most"}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			cmd := exec.Command(filepath.Join(bin, tc.args[0]), tc.args[1:]...)
			cmd.Dir = dir
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// A case that is not refused at once runs (or allocates) for a
			// long time: stop it rather than hang the test.
			timer := time.AfterFunc(time.Minute, func() { cmd.Process.Kill() })
			err := cmd.Wait()
			timer.Stop()
			var ee *exec.ExitError
			code := 0
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			msg := stderr.String()
			if code != 2 {
				t.Errorf("exit %d, want 2 (stderr %q)", code, msg)
			}
			if strings.Count(msg, "\n") != 1 {
				t.Errorf("stderr %q: want exactly one line", msg)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("stderr %q: want it to contain %q", msg, w)
				}
			}
		})
	}
}
