package report

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
// page must load without console errors, and its DOM must hold the ranking
// and other tables, the small multiples with the model curves, the
// throughput–delay panels and the provenance. It saves a screenshot and logs
// its path (go test -v). Without Chromium it skips, except under CI=true,
// where it fails.
func TestReportInChromium(t *testing.T) {
	bin := chromium()
	if bin == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("chromium not installed, and CI=true: .ci/run installs it (Debian: apt-get install chromium)")
		}
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
	if got := strings.Count(dom, "<table"); got < 7 {
		t.Errorf("DOM tables: got %d, want at least 7 (2 rankings, results, sim vs live, baseline, conditions, provenance)", got)
	}
	// Small multiples: 3 controllers × the plotted metrics, 4 throughput–delay
	// panels, the time series and distributions.
	if got := strings.Count(dom, "<svg"); got < 3*len(plotMetrics)+4 {
		t.Errorf("DOM SVG images: got %d, want at least %d", got, 3*len(plotMetrics)+4)
	}
	for _, want := range []string{`class="ranking"`, `class="grid"`, "Mathis et al. 1997", "PFTK", "log scale",
		"95th-percentile RTT (ms, reversed)", "Provenance", "Resolved settings"} {
		if !strings.Contains(dom, want) {
			t.Errorf("DOM lacks %q", want)
		}
	}
	shot := filepath.Join(os.TempDir(), "cclab-report-screenshot.png")
	run("--window-size=1400,3000", "--screenshot="+shot, url)
	if fi, err := os.Stat(shot); err != nil || fi.Size() < 10000 {
		t.Fatalf("screenshot %s missing or empty: %v", shot, err)
	}
	t.Logf("report screenshot: %s", shot)
}
