package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"cclab/metrics"
	"cclab/scenario"
)

// keyMetric is a metric shown in the report's tables and plots.
type keyMetric struct {
	Scope  metrics.Scope
	Metric string
	Title  string
}

// ReportMetrics are the network-scope metrics of the report's tables.
var ReportMetrics = []keyMetric{
	{metrics.ScopeNetwork, "agg_throughput", "throughput"},
	{metrics.ScopeNetwork, "bw_utilization", "bandwidth utilization"},
	{metrics.ScopeNetwork, "total_retransmissions", "retransmissions"},
	{metrics.ScopeNetwork, "total_rtos", "RTOs"},
	{metrics.ScopeNetwork, "mean_srtt", "mean srtt"},
	{metrics.ScopeNetwork, "p50_rtt", "p50 RTT"},
	{metrics.ScopeNetwork, "p95_rtt", "p95 RTT"},
	{metrics.ScopeNetwork, "p99_rtt", "p99 RTT"},
	{metrics.ScopeNetwork, "loss_rate", "loss rate"},
	{metrics.ScopeNetwork, "mean_queue_delay", "queue delay"},
	{metrics.ScopeNetwork, "jain_fairness", "Jain index"},
}

// compareMetrics are compared across backends and against the baseline.
var compareMetrics = reportMetricsNamed("agg_throughput", "bw_utilization", "total_retransmissions", "total_rtos", "mean_srtt", "p95_rtt")

// reportMetricsNamed returns the ReportMetrics of the given names, in that
// order; a name not among them panics (at init: a typo cannot pass).
func reportMetricsNamed(names ...string) []keyMetric {
	out := make([]keyMetric, len(names))
	for i, n := range names {
		j := slices.IndexFunc(ReportMetrics, func(k keyMetric) bool { return k.Metric == n })
		if j < 0 {
			panic("report: no report metric " + n)
		}
		out[i] = ReportMetrics[j]
	}
	return out
}

// linkCompareMetrics are the per-link rows of the sim-vs-live table.
var linkCompareMetrics = []keyMetric{
	{metrics.ScopeLink, "mean_queue_len", "queue length"},
	{metrics.ScopeLink, "mean_queue_delay", "queue delay"},
	{metrics.ScopeLink, "total_drops", "drops"},
	{metrics.ScopeLink, "utilization", "link utilization"},
}

// summaryCell formats a summary: "mean ± half-width" for a t interval,
// "mean [low, high]†" for a bootstrap interval, the mean alone for one run.
func SummaryCell(unit string, s metrics.Summary) string {
	switch {
	case s.N == 0:
		return "–"
	case s.N < 2 || math.IsNaN(s.Low):
		return FormatValue(unit, s.Mean)
	case s.Method == metrics.MethodBootstrap:
		return FormatValue(unit, s.Mean) + " [" + FormatValue(unit, s.Low) + ", " + FormatValue(unit, s.High) + "]†"
	}
	return FormatValue(unit, s.Mean) + " ± " + FormatValue(unit, s.CI)
}

// relFloor is the share of a metric's largest mean below which a relative
// change is not shown: a percentage of a near-zero baseline (e.g. +22600 %
// from 1 retransmission to 227) says nothing the difference does not.
const relFloor = 0.05

// metricScale returns the largest |mean| of a metric over every group (the
// scale against which a baseline counts as near zero).
func (d *ReportData) metricScale(scope metrics.Scope, id int64, metric string) float64 {
	m := 0.0
	for _, g := range d.Groups {
		if s := metrics.Summarize(g.Values(scope, id, metric)); s.N > 0 {
			m = math.Max(m, math.Abs(s.Mean))
		}
	}
	return m
}

// relative formats 100·(v − b)/b, or "n/a" when |b| is below relFloor of
// the metric's scale.
func relative(b, v, scale float64) string {
	if math.IsNaN(b) || math.IsNaN(v) || math.Abs(b) <= relFloor*scale || b == 0 {
		return "n/a (baseline ≈ 0)"
	}
	return fmt.Sprintf("%+.1f %%", 100*(v-b)/b)
}

func (d *ReportData) group(point int, backend string) *Group {
	for _, g := range d.Groups {
		if g.Point == point && g.Backend == backend {
			return g
		}
	}
	return nil
}

// paramCells returns g's value of every axis.
func (d *ReportData) paramCells(g *Group) []string {
	var row []string
	for _, a := range d.Axes {
		row = append(row, g.Param(a.Path))
	}
	return row
}

func (d *ReportData) axisHeads() []string {
	var h []string
	for _, a := range d.Axes {
		h = append(h, a.Short)
	}
	return h
}

const BootstrapNote = " †: percentile bootstrap interval, used where the t interval would leave the metric's range (a count below 0, a fraction above 1)."

func (d *ReportData) summaryTable() Table {
	t := Table{Title: "Results by point and backend",
		Caption: "Network metrics over the runs (seeds) of each point: mean ± half-width of the 95 % confidence interval (Student's t); n = runs." + BootstrapNote}
	t.Head = append(d.axisHeads(), "backend", "n")
	for _, km := range ReportMetrics {
		t.Head = append(t.Head, km.Title)
	}
	for _, g := range d.Groups {
		row := append(d.paramCells(g), g.Backend, strconv.Itoa(len(g.Runs)))
		for _, km := range ReportMetrics {
			row = append(row, SummaryCell(metrics.UnitOf(km.Scope, km.Metric), g.Summary(km.Scope, 0, km.Metric)))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// rankingTables ranks the lines (combinations of the parameters other than
// the x axis, e.g. controllers) by bandwidth utilization, per backend and
// within each comparable group (rankGroups): the mean over the swept
// values, then the utilization at each value with its interval.
func (d *ReportData) rankingTables() []Table {
	xa, ok := d.xAxis()
	if !ok {
		return nil
	}
	keys, by := d.lines(xa)
	if len(keys) < 2 {
		return nil
	}
	groups, members := d.rankGroups(xa, keys, by)
	var out []Table
	for _, b := range d.Backends {
		for _, gl := range groups {
			if t, ok := d.rankingTable(b, xa, members[gl], by, gl); ok {
				out = append(out, t)
			}
		}
	}
	return out
}

// rankGroups partitions the lines into groups of comparable ones: lines
// that share the values of every axis that is not a flow's setting (the
// topology, the bottleneck's rate, delay, loss, queue, the case) other
// than x, so that only lines over the same network are ranked against one
// another (ranking an intra-continental path's transfers against an
// inter-continental one's ranks the paths, not the controllers). It returns
// the groups' labels ("" when every line is comparable) in order and their
// lines.
func (d *ReportData) rankGroups(x scenario.Axis, keys []string, by map[string][]*Group) ([]string, map[string][]string) {
	var labels []string
	members := map[string][]string{}
	for _, k := range keys {
		var parts []string
		for _, p := range by[k][0].Params {
			if p.Axis != x.Path && !strings.HasPrefix(p.Axis, "flows") {
				parts = append(parts, scenario.AxisShort(d.Axes, p.Axis)+"="+p.Value)
			}
		}
		gl := strings.Join(parts, " ")
		if _, ok := members[gl]; !ok {
			labels = append(labels, gl)
		}
		members[gl] = append(members[gl], k)
	}
	return labels, members
}

// groupAxes is a group label's axis names ("rate=8Mbit loss=0" → "rate loss").
func groupAxes(group string) string {
	var names []string
	for _, p := range strings.Fields(group) {
		n, _, _ := strings.Cut(p, "=")
		names = append(names, n)
	}
	return strings.Join(names, " ")
}

// lineName is a line's label within its ranking group: its key without
// the group's parameters, shortened (shortKey).
func lineName(key, group string) string {
	if group == "" {
		return shortKey(key)
	}
	drop := map[string]bool{}
	for _, p := range strings.Fields(group) {
		drop[p] = true
	}
	var keep []string
	for _, p := range strings.Fields(key) {
		if !drop[p] {
			keep = append(keep, p)
		}
	}
	if len(keep) == 0 {
		return key
	}
	return shortKey(strings.Join(keep, " "))
}

// ranked is one line of a ranking table.
type ranked struct {
	key        string
	mean       float64 // utilization, mean over the x values
	rtt        float64 // p95 RTT, s, mean over the x values (NaN: none)
	cells      []string
	n          int
	powerScore float64
}

// rankingTable ranks the lines of one backend by their mean utilization,
// beside their delay (the 95th percentile RTT, the delay axis of
// Pantheon's throughput–delay plot, Yan et al. 2018) and Kleinrock's power
// (throughput over delay, Kleinrock 1979), normalized to the table's lowest
// delay: utilization × lowest p95 RTT / this line's p95 RTT, 1 at full
// utilization with the least delay.
func (d *ReportData) rankingTable(b string, xa scenario.Axis, keys []string, by map[string][]*Group, group string) (Table, bool) {
	km := keyMetric{metrics.ScopeNetwork, "bw_utilization", "bandwidth utilization"}
	unit := metrics.UnitOf(km.Scope, km.Metric)
	var rs []ranked
	maxN := 0
	for _, k := range keys {
		r := ranked{key: k}
		var means, rtts []float64
		for _, xv := range xa.Values {
			cell := "–"
			for _, g := range by[k] {
				if g.Backend == b && g.Param(xa.Path) == xv {
					s := g.Summary(km.Scope, 0, km.Metric)
					if s.N > 0 {
						cell = SummaryCell(unit, s)
						means = append(means, s.Mean)
						maxN = max(maxN, s.N)
					}
					if rt := g.Summary(metrics.ScopeNetwork, 0, "p95_rtt"); rt.N > 0 && !math.IsNaN(rt.Mean) {
						rtts = append(rtts, rt.Mean)
					}
				}
			}
			r.cells = append(r.cells, cell)
		}
		if len(means) == 0 {
			continue
		}
		r.n = len(means)
		r.mean = metrics.Summarize(means).Mean
		r.rtt = math.NaN()
		if len(rtts) > 0 {
			r.rtt = metrics.Summarize(rtts).Mean
		}
		rs = append(rs, r)
	}
	if len(rs) < 2 {
		return Table{}, false
	}
	best := math.Inf(1)
	for _, r := range rs {
		if r.rtt > 0 {
			best = math.Min(best, r.rtt)
		}
	}
	for i := range rs {
		rs[i].powerScore = math.NaN()
		if rs[i].rtt > 0 && !math.IsInf(best, 1) {
			rs[i].powerScore = rs[i].mean * best / rs[i].rtt
		}
	}
	sort.SliceStable(rs, func(i, j int) bool { return rs[i].mean > rs[j].mean })
	title := "Ranking by bandwidth utilization: " + BackendName(b)
	if group != "" {
		title += ", " + group
	}
	t := Table{Title: title,
		Caption: fmt.Sprintf("Each %s ranked by its mean utilization over the %d swept values of %s (the mean of the columns), "+
			"beside its delay (the 95th percentile RTT, mean over the same values: the two dimensions of Pantheon's throughput–delay ranking) "+
			"and its power score, Kleinrock's power (throughput over delay) normalized to the lowest delay in the table: "+
			"utilization × lowest p95 RTT / its p95 RTT (1: full utilization at the least delay). "+
			"Each cell: mean over the point's runs (up to n = %d) with its 95 %% confidence interval.%s",
			strings.Join(otherAxes(d.Axes, xa), ", "), len(xa.Values), xa.Short, maxN, BootstrapNote)}
	if group != "" {
		t.Caption = "Ranked within the lines over the same network (" + group + "): every parameter that is not a flow's setting, other than " +
			xa.Short + ", is the same in this table; other groups have their own table. " + t.Caption
	}
	if maxN < 2 {
		t.Caption += " One run per point: no intervals (the full experiment runs 3 or more seeds on every backend)."
	}
	t.Head = []string{"rank", lineName(strings.Join(otherAxes(d.Axes, xa), " "), groupAxes(group)), "mean over " + xa.Short, "p95 RTT", "power score"}
	for _, xv := range xa.Values {
		t.Head = append(t.Head, xa.Short+" = "+xv)
	}
	for i, r := range rs {
		mean := FormatValue(unit, r.mean)
		if r.n < len(xa.Values) {
			mean += fmt.Sprintf(" (%d of %d)", r.n, len(xa.Values))
		}
		rtt, score := "–", "–"
		if !math.IsNaN(r.rtt) {
			rtt = FormatValue(metrics.UnitOf(metrics.ScopeNetwork, "p95_rtt"), r.rtt)
		}
		if !math.IsNaN(r.powerScore) {
			score = strconv.FormatFloat(r.powerScore, 'f', 3, 64)
		}
		t.Rows = append(t.Rows, append([]string{strconv.Itoa(i + 1), lineName(r.key, group), mean, rtt, score}, r.cells...))
	}
	return t, true
}

func BackendName(b string) string {
	switch b {
	case scenario.BackendSim:
		return "simulator"
	case scenario.BackendLive:
		return "live"
	case scenario.BackendNS3:
		return "ns-3"
	}
	return b
}

// simLiveTable compares the two backends point by point.
func (d *ReportData) simLiveTable() (Table, bool) {
	t := Table{Title: "Simulator vs live",
		Caption: "Mean over seeds on each backend, the difference live − sim and the difference relative to sim (n/a where the simulator's " +
			"mean is below 5 % of the metric's largest mean: a percentage of almost nothing). A difference is a finding about the real " +
			"system (timers, scheduling, the OS), or about the model. Rows named after a link compare that link (the live relay's hops " +
			"carry the simulator's link names and IDs). Host-limited live runs are left out unless -include-host-limited." + BootstrapNote}
	t.Head = append(d.axisHeads(), "metric", "sim", "live", "live − sim", "relative")
	scales := map[string]float64{}
	for _, g := range d.Groups {
		if g.Backend != scenario.BackendSim {
			continue
		}
		live := d.withoutHostLimited(d.group(g.Point, scenario.BackendLive))
		if live == nil {
			continue
		}
		row := func(title string, scope metrics.Scope, id int64, metric string, s, l metrics.Summary) {
			unit := metrics.UnitOf(scope, metric)
			k := string(scope) + "/" + strconv.FormatInt(id, 10) + "/" + metric
			sc, ok := scales[k]
			if !ok {
				sc = d.metricScale(scope, id, metric)
				scales[k] = sc
			}
			t.Rows = append(t.Rows, append(d.paramCells(g), title, SummaryCell(unit, s), SummaryCell(unit, l),
				FormatValue(unit, l.Mean-s.Mean), relative(s.Mean, l.Mean, sc)))
		}
		for _, km := range compareMetrics {
			row(km.Title, km.Scope, 0, km.Metric, g.Summary(km.Scope, 0, km.Metric), live.Summary(km.Scope, 0, km.Metric))
		}
		// Per link: both backends give a path's links the simulator's IDs.
		if len(g.Runs) == 0 {
			continue
		}
		for _, ln := range g.Runs[0].Links {
			for _, km := range linkCompareMetrics {
				sv, lv := g.present(metrics.ScopeLink, ln.ID, km.Metric), live.present(metrics.ScopeLink, ln.ID, km.Metric)
				if len(sv) == 0 || len(lv) == 0 {
					continue
				}
				dom := metrics.DomainOf(metrics.ScopeLink, km.Metric)
				row(ln.Name+": "+km.Title, metrics.ScopeLink, ln.ID, km.Metric, metrics.SummarizeIn(sv, dom), metrics.SummarizeIn(lv, dom))
			}
		}
	}
	return t, len(t.Rows) > 0
}

// present returns the metric of the runs that have it.
func (g *Group) present(scope metrics.Scope, id int64, metric string) []float64 {
	var out []float64
	for i := range g.Runs {
		if v, ok := g.Runs[i].Value(scope, id, metric); ok {
			out = append(out, v)
		}
	}
	return out
}

// perFlowTable lists each flow of multi-flow points: its share of the
// throughput, its delay and its retransmissions.
func (d *ReportData) perFlowTable() (Table, bool) {
	multi := false
	for _, g := range d.Groups {
		for _, r := range g.Runs {
			if len(r.Flows) > 1 {
				multi = true
			}
		}
	}
	if !multi {
		return Table{}, false
	}
	t := Table{Title: "Per flow",
		Caption: "Every flow of each point and backend over its runs: throughput (mean ± 95 % CI), its share of the aggregate throughput " +
			"(mean of the per-run shares), mean srtt, 95th-percentile RTT, retransmissions and RTOs; the point's Jain index is in the results table." + BootstrapNote}
	t.Head = append(d.axisHeads(), "backend", "flow", "configuration", "n", "throughput", "share", "mean srtt", "p95 RTT", "retransmissions", "RTOs")
	for _, g := range d.Groups {
		if len(g.Runs) == 0 {
			continue
		}
		for _, f := range g.Runs[0].Flows {
			row := append(d.paramCells(g), g.Backend, f.Name, f.Info, strconv.Itoa(len(g.present(metrics.ScopeFlow, f.ID, "mean_throughput"))))
			for _, m := range []string{"mean_throughput"} {
				row = append(row, SummaryCell(metrics.UnitOf(metrics.ScopeFlow, m), g.Summary(metrics.ScopeFlow, f.ID, m)))
			}
			row = append(row, ShareCell(g.FlowShares(f.ID)))
			for _, m := range []string{"mean_srtt", "p95_rtt", "total_retransmissions", "total_rtos"} {
				row = append(row, SummaryCell(metrics.UnitOf(metrics.ScopeFlow, m), g.Summary(metrics.ScopeFlow, f.ID, m)))
			}
			t.Rows = append(t.Rows, row)
		}
	}
	return t, len(t.Rows) > 0
}

// conditionsTable lists the notes of the runs that have them (live runs:
// host load, relay lateness), to judge a sim-vs-live difference.
func (d *ReportData) conditionsTable() (Table, bool) {
	var keys []string
	for _, g := range d.Groups {
		for _, r := range g.Runs {
			for k := range r.Notes {
				if !slices.Contains(keys, k) {
					keys = append(keys, k)
				}
			}
		}
	}
	if len(keys) == 0 {
		return Table{}, false
	}
	sort.Strings(keys)
	t := Table{Title: "Run conditions",
		Caption: "Measurements of each run's conditions rather than of the network: for live runs the host's 1-minute load average " +
			"(2 cores: above 2 the relay, senders and receiver compete for the CPU) and how late the relay wrote packets against " +
			"the link model's instants. A live run under load or with many late writes is a weak witness against the model."}
	t.Head = append(d.axisHeads(), "backend", "seed")
	t.Head = append(t.Head, keys...)
	for _, g := range d.Groups {
		for _, r := range g.Runs {
			if len(r.Notes) == 0 {
				continue
			}
			row := append(d.paramCells(g), g.Backend, strconv.FormatUint(r.Seed, 10))
			for _, k := range keys {
				v, ok := r.Notes[k]
				if !ok {
					row = append(row, "–")
					continue
				}
				row = append(row, strconv.FormatFloat(v, 'g', 4, 64))
			}
			t.Rows = append(t.Rows, row)
		}
	}
	return t, true
}

// baselineTable compares each point with its paired baseline (same seeds).
func (d *ReportData) baselineTable() (Table, bool) {
	if len(d.Baseline) == 0 {
		return Table{}, false
	}
	isBase := func(g *Group) bool {
		for _, b := range d.Baseline {
			match := false
			for _, p := range g.Params {
				if (p.Axis == b.Axis || scenario.ShortName(p.Axis) == b.Axis) && p.Value == b.Value {
					match = true
				}
			}
			if !match {
				return false
			}
		}
		return true
	}
	baseAxis := func(axis string) bool {
		for _, b := range d.Baseline {
			if axis == b.Axis || scenario.ShortName(axis) == b.Axis {
				return true
			}
		}
		return false
	}
	var bl []string
	for _, b := range d.Baseline {
		bl = append(bl, b.Axis+"="+b.Value)
	}
	t := Table{Title: "Change against the baseline (" + strings.Join(bl, ", ") + ")",
		Caption: "Each point against the baseline point with the same other parameters and backend. Difference: mean ± 95 % CI of the " +
			"per-seed differences (runs with the same seed share background traffic and loss draws); change: percent change of the means " +
			"and mean ± 95 % CI of the per-seed percent changes, shown only where the baseline's mean is at least 5 % of the metric's " +
			"largest mean (n/a otherwise: a percentage of almost nothing, such as +22600 % from 1 retransmission to 227, says less than the difference)." +
			BootstrapNote}
	t.Head = append(d.axisHeads(), "backend", "metric", "baseline", "variant", "difference", "change", "paired change")
	scales := map[string]float64{}
	for _, g := range d.Groups {
		if isBase(g) {
			continue
		}
		var base *Group
		for _, h := range d.Groups {
			if h.Backend != g.Backend || !isBase(h) {
				continue
			}
			same := true
			for _, p := range g.Params {
				if !baseAxis(p.Axis) && h.Param(p.Axis) != p.Value {
					same = false
				}
			}
			if same {
				base = h
			}
		}
		if base == nil {
			continue
		}
		for _, km := range compareMetrics {
			unit := metrics.UnitOf(km.Scope, km.Metric)
			sc, ok := scales[km.Metric]
			if !ok {
				sc = d.metricScale(km.Scope, 0, km.Metric)
				scales[km.Metric] = sc
			}
			bs, vs := base.BySeed(km.Scope, 0, km.Metric), g.BySeed(km.Scope, 0, km.Metric)
			var seeds []uint64
			for seed := range bs {
				if _, ok := vs[seed]; ok {
					seeds = append(seeds, seed)
				}
			}
			sort.Slice(seeds, func(i, j int) bool { return seeds[i] < seeds[j] })
			var b, v []float64
			for _, seed := range seeds {
				b, v = append(b, bs[seed]), append(v, vs[seed])
			}
			c := metrics.PairedChangeIn(b, v, metrics.DomainOf(km.Scope, km.Metric))
			diff := "–"
			if c.Diff.N > 0 {
				diff = FormatSigned(unit, c.Diff.Mean)
				if !math.IsNaN(c.Diff.CI) {
					diff += " ± " + FormatValue(unit, c.Diff.CI)
				}
			}
			change, paired := relative(c.Baseline.Mean, c.Variant.Mean, sc), "n/a"
			if !strings.HasPrefix(change, "n/a") && c.Paired.N > 0 {
				paired = fmt.Sprintf("%+.1f %%", c.Paired.Mean)
				if !math.IsNaN(c.Paired.CI) {
					paired += fmt.Sprintf(" ± %.1f", c.Paired.CI)
				}
			}
			row := append(d.paramCells(g), g.Backend, km.Title, SummaryCell(unit, c.Baseline), SummaryCell(unit, c.Variant), diff, change, paired)
			t.Rows = append(t.Rows, row)
		}
	}
	return t, len(t.Rows) > 0
}

// formatSigned formats a difference with its sign.
func FormatSigned(unit string, v float64) string {
	s := FormatValue(unit, v)
	if v > 0 {
		return "+" + s
	}
	return s
}

// provenanceTable lists the builds and hosts that produced the runs
// (RunRecord.Provenance), with how many runs each produced per backend.
func (d *ReportData) provenanceTable() (Table, bool) {
	type key struct{ version, commit, goVer, platform, kernel, build string }
	counts := map[key]map[string]int{}
	var order []key
	for _, g := range d.Groups {
		for _, r := range g.Runs {
			p := r.Provenance
			k := key{r.Version, p.Commit, p.Go, p.OS + "/" + p.Arch, p.Kernel, p.Build}
			if p.Go == "" {
				k = key{r.Version, "–", "–", "–", "–", "not recorded (run before schema 2)"}
			}
			if counts[k] == nil {
				counts[k] = map[string]int{}
				order = append(order, k)
			}
			counts[k][g.Backend]++
		}
	}
	if len(order) == 0 {
		return Table{}, false
	}
	t := Table{Title: "Provenance",
		Caption: "The builds and hosts that produced this version's runs (each run stores cclab's version and commit, the Go version, " +
			"the OS and kernel, and the build identity that its point hash includes: docs/store.md). -version on every tool prints the same."}
	t.Head = []string{"cclab version", "commit", "Go", "platform", "kernel", "build identity"}
	t.Head = append(t.Head, d.Backends...)
	for _, k := range order {
		commit := k.commit
		if commit == "" {
			commit = "unknown (go run or -buildvcs=false)"
		}
		build := k.build
		if len(build) > 24 {
			build = build[:24] + "…"
		}
		row := []string{k.version, commit, k.goVer, k.platform, k.kernel, build}
		for _, b := range d.Backends {
			row = append(row, strconv.Itoa(counts[k][b]))
		}
		t.Rows = append(t.Rows, row)
	}
	return t, true
}

// settingsText returns the resolved settings of the first run (indented
// JSON), or "".
func (d *ReportData) settingsText() string {
	for _, g := range d.Groups {
		for _, r := range g.Runs {
			if len(r.Settings) == 0 {
				continue
			}
			var b bytes.Buffer
			if json.Indent(&b, r.Settings, "", "  ") == nil {
				return b.String()
			}
		}
	}
	return ""
}

// flowShares returns flow id's share of the aggregate throughput in every
// run of g that measured both.
func (g *Group) FlowShares(id int64) []float64 {
	var shares []float64
	for _, r := range g.Runs {
		tp, ok1 := r.Value(metrics.ScopeFlow, id, "mean_throughput")
		agg, ok2 := r.Value(metrics.ScopeNetwork, 0, "agg_throughput")
		if ok1 && ok2 && agg > 0 {
			shares = append(shares, tp/agg)
		}
	}
	return shares
}

// shareCell formats the mean of shares as a percentage.
func ShareCell(shares []float64) string {
	if len(shares) == 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f %%", 100*metrics.Summarize(shares).Mean)
}
