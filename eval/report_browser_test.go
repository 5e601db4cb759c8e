package eval

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// chromium returns the path of a headless-capable Chromium, or "".
func chromium() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// TestReportInChromium opens a generated report in headless Chromium: the
// page must load without console errors, and its DOM must hold the tables
// and the SVG plots. It saves a screenshot and logs its path (go test -v).
func TestReportInChromium(t *testing.T) {
	bin := chromium()
	if bin == "" {
		t.Skip("chromium not installed (Debian: apt-get install chromium)")
	}
	url := "file://" + writeTestReport(t)
	run := func(args ...string) (string, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--user-data-dir=" + t.TempDir(),
			"--enable-logging=stderr", "--v=0"}
		cmd := exec.CommandContext(ctx, bin, append(base, args...)...)
		var so, se strings.Builder
		cmd.Stdout, cmd.Stderr = &so, &se
		if err := cmd.Run(); err != nil {
			t.Fatalf("chromium %v: %v\n%s", args, err, se.String())
		}
		return so.String(), se.String()
	}
	dom, logs := run("--dump-dom", url)
	for _, line := range strings.Split(logs, "\n") {
		if strings.Contains(line, "CONSOLE") || strings.Contains(line, "Uncaught") {
			t.Errorf("console message: %s", line)
		}
	}
	if got := strings.Count(dom, "<table"); got < 3 {
		t.Errorf("DOM tables: got %d, want at least 3 (results, sim vs live, baseline)", got)
	}
	if got := strings.Count(dom, "<svg"); got < 6 {
		t.Errorf("DOM SVG images: got %d, want at least 6", got)
	}
	shot := filepath.Join(os.TempDir(), "cclab-report-screenshot.png")
	run("--window-size=1280,2400", "--screenshot="+shot, url)
	if fi, err := os.Stat(shot); err != nil || fi.Size() < 10000 {
		t.Fatalf("screenshot %s missing or empty: %v", shot, err)
	}
	t.Logf("report screenshot: %s", shot)
}
