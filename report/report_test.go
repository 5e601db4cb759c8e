package report

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"cclab/eval"
	"cclab/event"
	"cclab/internal/evaltest"
	"cclab/metrics"
	"cclab/scenario"
	"cclab/store"
)

// reportScenario sweeps a geometric loss series over three controllers with
// a Reno baseline, on both backends with three seeds.
const reportScenario = `name: report-test
description: A synthetic loss sweep for the report's tests.
duration: 2s
seeds: [1, 2, 3]
backends: [sim, live]
topology: {kind: dumbbell, bottleneck: {rate: 16Mbit, delay: 7.5ms, loss: [0, 0.001, 0.01, 0.1]}}
flows: [{cc: [reno, newreno, cubic]}]
baseline: {cc: reno}
`

// reportRunner replays the synthetic event stream (one flow unless the
// scenario has several) with RTT samples, then sets the network metrics the
// report draws from the point and the seed: utilization falling with the
// loss (cubic > newreno > reno), retransmissions growing with it and almost
// none at loss 0 (one run with 3, the others 0: a near-zero baseline whose t
// interval would go below 0).
type reportRunner struct{}

func (reportRunner) Run(_ context.Context, s scenario.RunSpec) (metrics.RunResult, error) {
	info, ev := evaltest.SyntheticRun()
	flows := 0
	for _, f := range s.Point.Scenario.Flows {
		flows += f.Count
	}
	if flows == 1 {
		var keep []event.Event
		for _, e := range ev {
			if e.Flow != 2 {
				keep = append(keep, e)
			}
		}
		ev = keep
	}
	cc := map[string]float64{"reno": 0, "newreno": 1, "cubic": 2}[s.Point.Scenario.Flows[0].CC]
	for i := 0; i < 40; i++ {
		rtt := evaltest.Ms(20 + float64(i) + 5*cc)
		ev = append(ev, event.Event{Time: evaltest.At(0.04 * float64(i)), Kind: event.MetricsUpdated, Flow: 1, Link: -1, SRTT: rtt, RTT: rtt, MinRTT: evaltest.Ms(15)})
	}
	m := metrics.Compute(info, ev)
	loss, _ := strconv.ParseFloat(s.Point.Scenario.Topology.Hops[0].Loss, 64)
	seed := float64(s.Seed)
	u := math.Min(0.95, 0.03/math.Sqrt(loss+1e-6)) * (0.8 + 0.08*cc) * (1 + 0.01*(seed-2))
	if s.Backend == scenario.BackendLive {
		u *= 0.97
	}
	retrans := math.Round(loss * 2e4 * (1 + 0.1*(seed-2)))
	if loss == 0 && s.Seed == 3 {
		retrans = 3
	}
	m.Network.Values["bw_utilization"] = u
	m.Network.Values["agg_throughput"] = u * 16e6
	m.Network.Values["total_retransmissions"] = retrans
	res := metrics.RunResult{Info: info, Metrics: m}
	if s.Backend == scenario.BackendLive {
		res.Notes = map[string]float64{"host_load1_start": 0.5}
	}
	return res, nil
}

// writeReportOf sweeps src on both backends with runner r and writes its
// report; it returns the HTML path.
func writeReportOf(t *testing.T, src string, r eval.Runner) string {
	t.Helper()
	exp, err := scenario.ParseScenario("report.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	st := openTestStore(t)
	if _, err := eval.Sweep(context.Background(), exp, eval.SweepOptions{Store: st, Runners: map[string]eval.Runner{scenario.BackendSim: r, scenario.BackendLive: r}}); err != nil {
		t.Fatal(err)
	}
	path, err := WriteReport(context.Background(), st, exp.Name, t.TempDir(), nil)
	if err != nil {
		t.Fatalf("WriteReport: %v", err)
	}
	return path
}

// writeTestReport writes the report of reportScenario.
func writeTestReport(t *testing.T) string {
	t.Helper()
	return writeReportOf(t, reportScenario, reportRunner{})
}

// section returns the HTML from the heading title to the next h2.
func section(t *testing.T, html, title string) string {
	t.Helper()
	_, body, _ := strings.Cut(html, "</nav>") // after the table of contents
	i := strings.Index(body, title)
	if i < 0 {
		t.Fatalf("report has no %q", title)
	}
	s := body[i:]
	if j := strings.Index(s[1:], "<h2"); j >= 0 {
		s = s[:j+1]
	}
	return s
}

// tableColumn returns the cells of the named column of the first table in s.
func tableColumn(t *testing.T, s, col string) []string {
	t.Helper()
	s = s[strings.Index(s, "<table"):]
	s = s[:strings.Index(s, "</table>")]
	heads := regexp.MustCompile(`<th>([^<]*)</th>`).FindAllStringSubmatch(s, -1)
	idx := -1
	for i, h := range heads {
		if h[1] == col {
			idx = i
		}
	}
	if idx < 0 {
		t.Fatalf("no column %q in %v", col, heads)
	}
	var out []string
	for _, row := range regexp.MustCompile(`(?s)<tr>(.*?)</tr>`).FindAllStringSubmatch(s, -1) {
		cells := regexp.MustCompile(`<td>([^<]*)</td>`).FindAllStringSubmatch(row[1], -1)
		if idx < len(cells) {
			out = append(out, cells[idx][1])
		}
	}
	return out
}

func TestWriteReport(t *testing.T) {
	path := writeTestReport(t)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	html := string(b)
	for _, want := range []string{
		"Ranking by bandwidth utilization: simulator", "Ranking by bandwidth utilization: live",
		"Results by point and backend", "Simulator vs live", "Change against the baseline", "Run conditions", "host_load1_start",
		"Provenance", "Resolved settings", "Experiment version v1", "name: report-test",
		"bandwidth utilization against loss", "Throughput against 95th-percentile RTT", "Time series", "<svg",
		"Mathis et al. 1997", "PFTK (Padhye et al. 1998)", "MSS 1165 B, RTT 15ms, T0 200ms",
		"loss (log scale; 0 drawn at the left)", "The x axis is logarithmic", "p95 RTT",
	} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	// Ranking: cubic, newreno, reno (utilization 0.96, 0.88, 0.8 of a common curve).
	rank := section(t, html, "Ranking by bandwidth utilization: simulator")
	if got := tableColumn(t, rank, "cc"); strings.Join(got, ",") != "cubic,newreno,reno" {
		t.Errorf("ranking order: got %v, want cubic, newreno, reno", got)
	}
	if got := tableColumn(t, rank, "loss = 0.01"); len(got) != 3 || !strings.Contains(got[0], " ± ") {
		t.Errorf("ranking cells at loss 0.01: got %v, want three means with intervals", got)
	}
	// The ranking has both of Pantheon's dimensions, throughput and delay,
	// and a power score; the page opens with a summary and a table of
	// contents whose anchors exist.
	if rtt, score := tableColumn(t, rank, "p95 RTT"), tableColumn(t, rank, "power score"); len(rtt) != 3 || len(score) != 3 || rtt[0] == "–" || score[0] == "–" {
		t.Errorf("ranking: p95 RTT %v, power score %v; want three of each", rtt, score)
	}
	summary, _, _ := strings.Cut(html[strings.Index(html, `<p class="summary"`):], "</p>")
	if !strings.Contains(summary, "Simulator: cubic has the highest mean utilization") {
		t.Errorf("summary %q: want the simulator's first-ranked controller", summary)
	}
	nav, _, _ := strings.Cut(html[strings.Index(html, `<nav id="contents">`):], "</nav>")
	for _, m := range regexp.MustCompile(`href="#([a-z0-9-]+)"`).FindAllStringSubmatch(nav, -1) {
		if !strings.Contains(html, `id="`+m[1]+`"`) {
			t.Errorf("table of contents links #%s, which the page lacks", m[1])
		}
	}
	if n := strings.Count(nav, "href="); n < 5 {
		t.Errorf("table of contents has %d entries, want every section", n)
	}
	// Small multiples: one panel per controller, for each plotted metric;
	// the throughput–delay figure has one panel per loss value.
	comp := section(t, html, "Comparison across the sweep")
	if got := strings.Count(comp, "<div><svg"); got != 3*len(plotMetrics) {
		t.Errorf("comparison panels: got %d, want 3 controllers × %d metrics", got, len(plotMetrics))
	}
	if got := strings.Count(section(t, html, "Throughput and delay"), "<div><svg"); got != 4 {
		t.Errorf("throughput–delay panels: got %d, want one per loss value (4)", got)
	}
	// Intervals respect the domain: no negative retransmissions; the
	// near-zero ones get a bootstrap interval.
	res := section(t, html, "Results by point and backend")
	boot := 0
	for _, c := range tableColumn(t, res, "retransmissions") {
		if strings.Contains(c, "-") || strings.Contains(c, "−") {
			t.Errorf("retransmissions cell %q has a negative number", c)
		}
		if strings.HasSuffix(c, "]†") {
			boot++
		}
	}
	if boot == 0 {
		t.Errorf("no bootstrap interval for the near-zero retransmissions")
	}
	// No percentage of a near-zero baseline.
	base := section(t, html, "Change against the baseline")
	if regexp.MustCompile(`[+-][0-9]{4,}\.[0-9] %`).MatchString(base) {
		t.Errorf("baseline table has a percent change of 1000 %% or more")
	}
	if !strings.Contains(base, "n/a (baseline ≈ 0)") {
		t.Errorf("baseline table: no n/a for the near-zero retransmission baseline")
	}
	// One flow: no per-flow table.
	if strings.Contains(html, ">Per flow</h2>") {
		t.Errorf("a one-flow experiment has a per-flow table")
	}
	// 12 points' time series (both backends on one figure), 3
	// distributions (one per controller) and the resolved settings are
	// collapsible.
	if got := strings.Count(html, "<details>"); got != 12+3+1 {
		t.Errorf("collapsible elements: got %d, want 12 time series + 3 distributions + settings", got)
	}
	checkSeriesAndFiles(t, html, filepath.Dir(path))
	// Offline: no scripts and no external resources.
	for _, bad := range []string{"<script", `src="http`, `href="http`, "<link ", "<img ", "NaN"} {
		if strings.Contains(html, bad) {
			t.Errorf("report contains %q", bad)
		}
	}
	for _, f := range []string{"runs.json", "runs.csv", "aggregate.json", "aggregate.csv"} {
		if _, err := os.Stat(filepath.Join(filepath.Dir(path), f)); err != nil {
			t.Errorf("missing %s: %v", f, err)
		}
	}
	var agg []map[string]any
	ab, _ := os.ReadFile(filepath.Join(filepath.Dir(path), "aggregate.json"))
	if err := json.Unmarshal(ab, &agg); err != nil || len(agg) == 0 {
		t.Fatalf("aggregate.json: %v (%d rows)", err, len(agg))
	}
	// Every run's flow has the synthetic stream's throughput (8000 bit/s).
	for _, row := range agg {
		if row["metric"] == "mean_throughput" && row["mean"] != 8000.0 {
			t.Errorf("aggregate mean_throughput mean: got %v, want 8000", row["mean"])
		}
	}
	var runs []store.RunRecord
	rb, _ := os.ReadFile(filepath.Join(filepath.Dir(path), "runs.json"))
	if err := json.Unmarshal(rb, &runs); err != nil || len(runs) != 72 {
		t.Fatalf("runs.json: %v, %d runs; want 72", err, len(runs))
	}
	if runs[0].Provenance.Go == "" || len(runs[0].Settings) == 0 {
		t.Errorf("runs.json: provenance %+v, settings %q; want both recorded", runs[0].Provenance, runs[0].Settings)
	}
}

// TestReportPerFlow: a scenario with several flows gets the per-flow table.
func TestReportPerFlow(t *testing.T) {
	src := strings.Replace(reportScenario, "flows: [{cc: [reno, newreno, cubic]}]", "flows: [{cc: [reno, cubic], count: 2}]", 1)
	b, err := os.ReadFile(writeReportOf(t, src, reportRunner{}))
	if err != nil {
		t.Fatal(err)
	}
	html := string(b)
	pf := section(t, html, ">Per flow</h2>")
	if got := len(tableColumn(t, pf, "share")); got != 4*2*2*2 {
		t.Errorf("per-flow rows: got %d, want 4 losses × 2 controllers × 2 backends × 2 flows", got)
	}
	if strings.Contains(html, "Mathis et al. 1997") {
		t.Errorf("the single-flow models are drawn for a two-flow scenario")
	}
}

func TestReportUnknownExperiment(t *testing.T) {
	st := openTestStore(t)
	st.Experiment(context.Background(), "other", nil)
	_, err := WriteReport(context.Background(), st, "nope", t.TempDir(), nil)
	if err == nil || !strings.Contains(err.Error(), "other") {
		t.Errorf("unknown experiment: got %v, want an error listing the stored ones", err)
	}
}

func TestXScale(t *testing.T) {
	for _, tc := range []struct {
		values []string
		kind   string
	}{
		{[]string{"0", "0.001", "0.002", "0.005", "0.01", "0.02", "0.05", "0.1"}, xLog},
		{[]string{"1", "10", "100"}, xLog},
		{[]string{"0", "0.01", "0.05"}, xLinear},
		{[]string{"10", "20", "30", "40"}, xLinear},
		{[]string{"0", "0", "1", "10", "100"}, xLinear},
		{[]string{"reno", "cubic"}, xNominal},
	} {
		s := newXScale(scenario.Axis{Path: "x", Short: "x", Values: tc.values})
		if s.Kind != tc.kind {
			t.Errorf("%v: got %s, want %s", tc.values, s.Kind, tc.kind)
		}
	}
	s := newXScale(scenario.Axis{Short: "loss", Values: []string{"0", "0.001", "0.002", "0.005", "0.01", "0.02", "0.05", "0.1"}})
	if s.ZeroAt >= 0.001 || s.ZeroAt <= 0 || s.Pos["0"] != s.ZeroAt || s.Pos["0.01"] != 0.01 {
		t.Errorf("log scale with 0: zero at %v, positions %v", s.ZeroAt, s.Pos)
	}
	var labelled []string
	for _, tk := range s.Ticks {
		if tk.Label != "" {
			labelled = append(labelled, tk.Label)
		}
	}
	if strings.Join(labelled, " ") != "0 0.001 0.01 0.1" {
		t.Errorf("labelled ticks: got %v, want 0 and the decades", labelled)
	}
}

// openTestStore opens a new SQLite store, closed when the test ends.
func openTestStore(t *testing.T) *store.SQLStore {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "test.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// TestRankingGroups: lines over different networks (here two bottleneck
// rates) are ranked in a table per network, each ranking the controllers
// only, named without the network's parameters.
func TestRankingGroups(t *testing.T) {
	src := `name: rank-groups
duration: 2s
seeds: [1, 2]
backends: [sim]
topology: {kind: dumbbell, bottleneck: {rate: [8Mbit, 16Mbit], delay: 7.5ms, loss: [0, 0.01]}}
flows: [{cc: [reno, cubic]}]
`
	b, err := os.ReadFile(writeReportOf(t, src, reportRunner{}))
	if err != nil {
		t.Fatal(err)
	}
	html := string(b)
	if strings.Contains(html, "<h3>Ranking by bandwidth utilization: simulator</h3>") {
		t.Errorf("one ranking over both rates; want one per rate")
	}
	for _, rate := range []string{"8Mbit", "16Mbit"} {
		s := section(t, html, "Ranking by bandwidth utilization: simulator, rate="+rate)
		if got := tableColumn(t, s, "cc"); strings.Join(got, ",") != "cubic,reno" {
			t.Errorf("rate=%s ranking: got %v, want cubic, reno (named without rate=)", rate, got)
		}
		if !strings.Contains(s, "Ranked within the lines over the same network (rate="+rate+")") {
			t.Errorf("rate=%s ranking: caption does not say which group it ranks within", rate)
		}
	}
}

// checkSeriesAndFiles: the time series overlay every seed of both backends
// (a median line each, named with its run count), the distributions have
// throughput, RTT and queueing-delay panels per controller, and every
// figure is linked as an SVG file that exists.
func checkSeriesAndFiles(t *testing.T, html, dir string) {
	t.Helper()
	series := section(t, html, "Time series")
	for _, want := range []string{"simulator: 3 run(s), live: 3 run(s)", "simulator (median of 3)", "live (median of 3)"} {
		if !strings.Contains(series, want) {
			t.Errorf("time series: no %q", want)
		}
	}
	dist := section(t, html, "Distributions")
	for _, cc := range []string{"reno", "newreno", "cubic"} {
		for _, panel := range []string{"throughput: ", "RTT: ", "queueing delay: "} {
			if !strings.Contains(dist, ">"+panel+cc+"<") {
				t.Errorf("distributions: no %q panel for %s", panel, cc)
			}
		}
	}
	links := regexp.MustCompile(`href="(figures/[^"]+\.svg)"`).FindAllStringSubmatch(html, -1)
	if len(links) < 12+3*3 {
		t.Errorf("figure files linked: %d, want at least one per time-series figure and per distribution panel", len(links))
	}
	for _, l := range links {
		b, err := os.ReadFile(filepath.Join(dir, l[1]))
		if err != nil || !strings.HasPrefix(string(b), "<?xml") || !strings.Contains(string(b), `xmlns="http://www.w3.org/2000/svg"`) {
			t.Errorf("figure file %s: %v; want a standalone SVG document", l[1], err)
		}
	}
}

// TestStepTicks: a time axis gets 5 to 10 labelled ticks at a round step.
func TestStepTicks(t *testing.T) {
	for _, tc := range []struct{ min, max, step float64 }{{0, 3, 0.5}, {0, 15, 2}, {0, 120, 20}, {0.1, 0.9, 0.1}} {
		var labels []float64
		for _, tk := range (stepTicks{N: 10}).Ticks(tc.min, tc.max) {
			if tk.Label != "" {
				labels = append(labels, tk.Value)
			}
		}
		if len(labels) < 5 || len(labels) > 11 {
			t.Errorf("ticks of [%g, %g]: %d labelled %v, want 5 to 11", tc.min, tc.max, len(labels), labels)
		}
		for i := 1; i < len(labels); i++ {
			if math.Abs(labels[i]-labels[i-1]-tc.step) > 1e-9 {
				t.Errorf("ticks of [%g, %g]: %v, want a step of %g", tc.min, tc.max, labels, tc.step)
				break
			}
		}
	}
}

// TestBand: the median and min–max band over runs, sample by sample; a
// shorter run counts where it has samples.
func TestBand(t *testing.T) {
	runs := []*store.SeriesRecord{
		{T: []float64{0.1, 0.2, 0.3}, V: []float64{1, 5, 9}},
		{T: []float64{0.1, 0.2, 0.3}, V: []float64{3, 4, 8}},
		{T: []float64{0.1, 0.2}, V: []float64{2, 6}},
	}
	b := band(runs)
	for _, c := range []struct {
		name      string
		got, want []float64
	}{
		{"t", b.T, []float64{0.1, 0.2, 0.3}},
		{"median", b.Med, []float64{2, 5, 8.5}},
		{"min", b.Lo, []float64{1, 4, 8}},
		{"max", b.Hi, []float64{3, 6, 9}},
	} {
		if fmt.Sprint(c.got) != fmt.Sprint(c.want) {
			t.Errorf("band %s: got %v, want %v", c.name, c.got, c.want)
		}
	}
	if b.Runs != 3 {
		t.Errorf("band runs: got %d, want 3", b.Runs)
	}
}
