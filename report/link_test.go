package report

import (
	"os"
	"strings"
	"testing"
)

// TestReportComparesLinks checks the per-link rows of the sim-vs-live table:
// the synthetic runs of both backends have link 0 ("bottleneck"), so every
// point gets one row per link metric.
func TestReportComparesLinks(t *testing.T) {
	b, err := os.ReadFile(writeTestReport(t))
	if err != nil {
		t.Fatal(err)
	}
	html := string(b)
	i := strings.Index(html, "Simulator vs live</h2>")
	if i < 0 {
		t.Fatal("report has no sim-vs-live table")
	}
	table := html[i:]
	table = table[:strings.Index(table, "</table>")]
	const points = 12 // 4 losses × 3 controllers
	for _, km := range linkCompareMetrics {
		if got := strings.Count(table, "<td>bottleneck: "+km.Title+"</td>"); got != points {
			t.Errorf("sim-vs-live rows for link metric %s: got %d, want one per point (%d)", km.Metric, got, points)
		}
	}
}
