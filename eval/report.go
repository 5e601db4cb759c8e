package eval

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Group is the completed runs of one point on one backend.
type Group struct {
	Point   int
	Params  []Param
	Label   string
	Backend string
	Runs    []RunRecord // by seed
}

// Values returns the metric of every run of g (NaN where absent), in seed order.
func (g *Group) Values(scope Scope, id int64, metric string) []float64 {
	out := make([]float64, len(g.Runs))
	for i := range g.Runs {
		out[i], _ = g.Runs[i].Value(scope, id, metric)
	}
	return out
}

// bySeed returns the metric by seed.
func (g *Group) bySeed(scope Scope, id int64, metric string) map[uint64]float64 {
	out := map[uint64]float64{}
	for i := range g.Runs {
		if v, ok := g.Runs[i].Value(scope, id, metric); ok {
			out[g.Runs[i].Seed] = v
		}
	}
	return out
}

func (g *Group) param(axis string) string {
	for _, p := range g.Params {
		if p.Axis == axis {
			return p.Value
		}
	}
	return ""
}

// ReportData is an experiment's results grouped for a report.
type ReportData struct {
	Experiment string
	Version    *VersionRecord  // the version reported on; nil for a store without versions
	Versions   []VersionRecord // every version of the experiment, newest first
	Source     string          // scenario YAML of the version ("" if it was not kept)
	Exp        *Experiment     // parsed scenario; nil if it no longer parses
	Axes       []Axis
	Baseline   []Param
	Groups     []*Group    // by point, then backend
	Failed     []RunRecord // runs whose last attempt failed
	Backends   []string    // backends with results
}

// LoadReport reads the runs of an experiment's version from the store and
// groups them: version is a sequence number (VersionRecord.Seq), 0 for the
// newest (last run) version. Runs of other versions are never included.
func LoadReport(ctx context.Context, st Store, experiment string, version int) (*ReportData, error) {
	exps, err := st.Experiments(ctx)
	if err != nil {
		return nil, err
	}
	d := &ReportData{Experiment: experiment}
	found := false
	for _, e := range exps {
		if e.Name == experiment {
			d.Source, found = e.Scenario, true
		}
	}
	if !found {
		var names []string
		for _, e := range exps {
			names = append(names, e.Name)
		}
		return nil, fmt.Errorf("no experiment %q in the store (stored: %s)", experiment, strings.Join(names, ", "))
	}
	if d.Versions, err = st.Versions(ctx, experiment); err != nil {
		return nil, err
	}
	for i := range d.Versions {
		if (version == 0 && i == 0) || d.Versions[i].Seq == version {
			d.Version = &d.Versions[i]
		}
	}
	if d.Version == nil && (version != 0 || len(d.Versions) > 0) {
		var have []string
		for _, v := range d.Versions {
			have = append(have, v.Label())
		}
		return nil, fmt.Errorf("experiment %q has no version v%d (stored: %s)", experiment, version, strings.Join(have, ", "))
	}
	var vid int64
	if d.Version != nil {
		vid, d.Source = d.Version.ID, d.Version.Scenario
	}
	if d.Source != "" {
		if exp, err := ParseScenario(experiment+".yaml", []byte(d.Source)); err == nil {
			d.Exp, d.Axes = exp, exp.Axes
			d.Baseline = exp.Base.Baseline
		}
	}
	runs, err := st.Runs(ctx, experiment, vid)
	if err != nil {
		return nil, err
	}
	idx := map[string]*Group{}
	for _, r := range runs {
		if r.Status != StatusDone {
			d.Failed = append(d.Failed, r)
			continue
		}
		k := strconv.Itoa(r.Point) + "/" + r.Backend
		g := idx[k]
		if g == nil {
			g = &Group{Point: r.Point, Params: r.Params, Backend: r.Backend, Label: Point{Params: r.Params}.Label(d.Axes)}
			idx[k] = g
			d.Groups = append(d.Groups, g)
			if !contains(d.Backends, r.Backend) {
				d.Backends = append(d.Backends, r.Backend)
			}
		}
		g.Runs = append(g.Runs, r)
	}
	// Axes from the stored params when the scenario no longer parses.
	if d.Axes == nil && len(d.Groups) > 0 {
		for _, p := range d.Groups[0].Params {
			a := Axis{Path: p.Axis, Short: shortName(p.Axis)}
			for _, g := range d.Groups {
				if v := g.param(p.Axis); !contains(a.Values, v) {
					a.Values = append(a.Values, v)
				}
			}
			d.Axes = append(d.Axes, a)
		}
	}
	sort.SliceStable(d.Groups, func(i, j int) bool {
		if d.Groups[i].Point != d.Groups[j].Point {
			return d.Groups[i].Point < d.Groups[j].Point
		}
		return d.Groups[i].Backend > d.Groups[j].Backend // sim before live
	})
	sort.Sort(sort.Reverse(sort.StringSlice(d.Backends)))
	return d, nil
}

// keyMetric is a metric shown in the report's tables and plots.
type keyMetric struct {
	Scope  Scope
	Metric string
	Title  string
}

// ReportMetrics are the network-scope metrics of the report's tables.
var ReportMetrics = []keyMetric{
	{ScopeNetwork, "agg_throughput", "throughput"},
	{ScopeNetwork, "bw_utilization", "bandwidth utilization"},
	{ScopeNetwork, "total_retransmissions", "retransmissions"},
	{ScopeNetwork, "total_rtos", "RTOs"},
	{ScopeNetwork, "mean_srtt", "mean srtt"},
	{ScopeNetwork, "loss_rate", "loss rate"},
	{ScopeNetwork, "mean_queue_delay", "queue delay"},
	{ScopeNetwork, "jain_fairness", "Jain index"},
}

// plotMetrics are drawn against the swept parameter.
var plotMetrics = []keyMetric{
	{ScopeNetwork, "bw_utilization", "bandwidth utilization"},
	{ScopeNetwork, "agg_throughput", "throughput"},
	{ScopeNetwork, "total_retransmissions", "retransmissions"},
	{ScopeNetwork, "total_rtos", "RTOs"},
	{ScopeNetwork, "mean_srtt", "mean srtt"},
}

// xAxis picks the swept parameter for the x axis: the first axis whose
// values are all numbers and that has several, else the first axis.
func (d *ReportData) xAxis() (Axis, bool) {
	for _, a := range d.Axes {
		if len(a.Values) < 2 {
			continue
		}
		numeric := true
		for _, v := range a.Values {
			if _, err := strconv.ParseFloat(v, 64); err != nil {
				numeric = false
			}
		}
		if numeric {
			return a, true
		}
	}
	for _, a := range d.Axes {
		if len(a.Values) > 1 {
			return a, true
		}
	}
	return Axis{}, false
}

// lineKey labels a group by its parameters other than the x axis.
func lineKey(g *Group, x Axis, axes []Axis) string {
	var parts []string
	for _, p := range g.Params {
		if p.Axis == x.Path {
			continue
		}
		parts = append(parts, axisShort(axes, p.Axis)+"="+p.Value)
	}
	if len(parts) == 0 {
		return "all"
	}
	return strings.Join(parts, " ")
}

type figure struct {
	Title   string
	Caption string
	SVG     template.HTML
}

type table struct {
	Title   string
	Caption string
	Head    []string
	Rows    [][]string
}

type seriesFigure struct {
	Label   string
	Backend string
	Seed    uint64
	SVG     template.HTML
}

type reportPage struct {
	Title      string
	Generated  string
	Version    string
	Source     string
	Runs       int
	Failed     int
	Backends   string
	Axes       []Axis
	Figures    []figure
	CDFs       []figure
	Tables     []table
	Series     []seriesFigure
	FailedRows [][]string
	Files      []string
}

func summaryCell(unit string, s Summary) string {
	if s.N == 0 {
		return "–"
	}
	if s.N < 2 || math.IsNaN(s.CI) {
		return formatValue(unit, s.Mean)
	}
	return formatValue(unit, s.Mean) + " ± " + formatValue(unit, s.CI)
}

// comparisonFigures draws each plot metric against the x axis, one line per
// combination of the other parameters and backend (sim solid, live dashed).
func (d *ReportData) comparisonFigures() ([]figure, error) {
	x, ok := d.xAxis()
	if !ok {
		return nil, nil
	}
	pos := map[string]float64{}
	for i, v := range x.Values {
		pos[v] = float64(i)
	}
	type lineID struct{ key, backend string }
	var figs []figure
	for _, km := range plotMetrics {
		unit := UnitOf(km.Scope, km.Metric)
		scale, ulabel := scaleFor(unit)
		lines := map[lineID]*curve{}
		var order []lineID
		keys := map[string]int{}
		for _, g := range d.Groups {
			xv, ok := pos[g.param(x.Path)]
			if !ok {
				continue
			}
			k := lineKey(g, x, d.Axes)
			if _, ok := keys[k]; !ok {
				keys[k] = len(keys)
			}
			id := lineID{k, g.Backend}
			c := lines[id]
			if c == nil {
				c = &curve{Label: k, Color: keys[k], Dashed: g.Backend == BackendLive}
				lines[id] = c
				order = append(order, id)
			}
			s := Summarize(g.Values(km.Scope, 0, km.Metric))
			c.X = append(c.X, xv)
			c.Y = append(c.Y, s.Mean*scale)
			c.CI = append(c.CI, s.CI*scale)
		}
		var curves []curve
		for _, id := range order {
			curves = append(curves, *lines[id])
		}
		if len(curves) == 0 {
			continue
		}
		ylabel := km.Title
		if ulabel != "1" && ulabel != "" {
			ylabel += " (" + ulabel + ")"
		}
		svg, err := comparisonSVG(km.Title+" vs "+x.Short, x.Short, ylabel, x.Values, curves)
		if err != nil {
			return nil, err
		}
		figs = append(figs, figure{Title: km.Title + " against " + x.Short,
			Caption: fmt.Sprintf("Mean over seeds of %s (%s) against %s; error bars: 95 %% confidence interval (Student's t). Solid lines, round marks: simulator; dashed lines, square marks: live.", km.Metric, unit, x.Path),
			SVG:     template.HTML(svg)})
	}
	// Sim-vs-live difference of bandwidth utilization.
	if contains(d.Backends, BackendSim) && contains(d.Backends, BackendLive) {
		lines := map[string]*curve{}
		var order []string
		keys := map[string]int{}
		for _, g := range d.Groups {
			if g.Backend != BackendSim {
				continue
			}
			live := d.group(g.Point, BackendLive)
			xv, ok := pos[g.param(x.Path)]
			if live == nil || !ok {
				continue
			}
			k := lineKey(g, x, d.Axes)
			if _, ok := keys[k]; !ok {
				keys[k] = len(keys)
				lines[k] = &curve{Label: k, Color: keys[k]}
				order = append(order, k)
			}
			s := Summarize(g.Values(ScopeNetwork, 0, "bw_utilization"))
			l := Summarize(live.Values(ScopeNetwork, 0, "bw_utilization"))
			c := lines[k]
			c.X = append(c.X, xv)
			c.Y = append(c.Y, l.Mean-s.Mean)
			c.CI = append(c.CI, math.NaN())
		}
		var curves []curve
		for _, k := range order {
			curves = append(curves, *lines[k])
		}
		if len(curves) > 0 {
			svg, err := comparisonSVG("live − sim: bandwidth utilization", x.Short, "utilization difference (live − sim)", x.Values, curves)
			if err != nil {
				return nil, err
			}
			figs = append(figs, figure{Title: "Sim vs live: difference in bandwidth utilization",
				Caption: "Mean live utilization minus mean simulated utilization at each point; 0 means the model predicts the live system.",
				SVG:     template.HTML(svg)})
		}
	}
	return figs, nil
}

func (d *ReportData) group(point int, backend string) *Group {
	for _, g := range d.Groups {
		if g.Point == point && g.Backend == backend {
			return g
		}
	}
	return nil
}

func (d *ReportData) summaryTable() table {
	t := table{Title: "Results by point and backend",
		Caption: "Network metrics over the runs (seeds) of each point: mean ± half-width of the 95 % confidence interval (Student's t); n = runs."}
	for _, a := range d.Axes {
		t.Head = append(t.Head, a.Short)
	}
	t.Head = append(t.Head, "backend", "n")
	for _, km := range ReportMetrics {
		t.Head = append(t.Head, km.Title)
	}
	for _, g := range d.Groups {
		var row []string
		for _, a := range d.Axes {
			row = append(row, g.param(a.Path))
		}
		row = append(row, g.Backend, strconv.Itoa(len(g.Runs)))
		for _, km := range ReportMetrics {
			row = append(row, summaryCell(UnitOf(km.Scope, km.Metric), Summarize(g.Values(km.Scope, 0, km.Metric))))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// simLiveTable compares the two backends point by point.
func (d *ReportData) simLiveTable() (table, bool) {
	t := table{Title: "Simulator vs live",
		Caption: "Mean over seeds on each backend, the difference live − sim and the difference relative to sim. " +
			"A difference is a finding about the real system (timers, scheduling, the OS), or about the model. " +
			"Rows named after a link compare that link (the live relay's hops carry the simulator's link names and IDs)."}
	for _, a := range d.Axes {
		t.Head = append(t.Head, a.Short)
	}
	t.Head = append(t.Head, "metric", "sim", "live", "live − sim", "relative")
	metrics := []keyMetric{ReportMetrics[0], ReportMetrics[1], ReportMetrics[2], ReportMetrics[3], ReportMetrics[4]}
	for _, g := range d.Groups {
		if g.Backend != BackendSim {
			continue
		}
		live := d.group(g.Point, BackendLive)
		if live == nil {
			continue
		}
		row := func(title string, scope Scope, id int64, metric string, s, l Summary) {
			unit := UnitOf(scope, metric)
			var row []string
			for _, a := range d.Axes {
				row = append(row, g.param(a.Path))
			}
			rel := PercentChange(s.Mean, l.Mean)
			relText := "–"
			if !math.IsNaN(rel) {
				relText = fmt.Sprintf("%+.1f %%", rel)
			}
			row = append(row, title, summaryCell(unit, s), summaryCell(unit, l), formatValue(unit, l.Mean-s.Mean), relText)
			t.Rows = append(t.Rows, row)
		}
		for _, km := range metrics {
			row(km.Title, km.Scope, 0, km.Metric, Summarize(g.Values(km.Scope, 0, km.Metric)), Summarize(live.Values(km.Scope, 0, km.Metric)))
		}
		// Per link: both backends give a path's links the simulator's IDs.
		if len(g.Runs) == 0 {
			continue
		}
		for _, ln := range g.Runs[0].Links {
			for _, km := range linkCompareMetrics {
				sv, lv := g.present(ScopeLink, ln.ID, km.Metric), live.present(ScopeLink, ln.ID, km.Metric)
				if len(sv) == 0 || len(lv) == 0 {
					continue
				}
				row(ln.Name+": "+km.Title, ScopeLink, ln.ID, km.Metric, Summarize(sv), Summarize(lv))
			}
		}
	}
	return t, len(t.Rows) > 0
}

// linkCompareMetrics are the per-link rows of the sim-vs-live table.
var linkCompareMetrics = []keyMetric{
	{ScopeLink, "mean_queue_len", "queue length"},
	{ScopeLink, "mean_queue_delay", "queue delay"},
	{ScopeLink, "total_drops", "drops"},
	{ScopeLink, "utilization", "link utilization"},
}

// present returns the metric of the runs that have it.
func (g *Group) present(scope Scope, id int64, metric string) []float64 {
	var out []float64
	for i := range g.Runs {
		if v, ok := g.Runs[i].Value(scope, id, metric); ok {
			out = append(out, v)
		}
	}
	return out
}

// conditionsTable lists the notes of the runs that have them (live runs:
// host load, relay lateness), to judge a sim-vs-live difference.
func (d *ReportData) conditionsTable() (table, bool) {
	var keys []string
	for _, g := range d.Groups {
		for _, r := range g.Runs {
			for k := range r.Notes {
				if !contains(keys, k) {
					keys = append(keys, k)
				}
			}
		}
	}
	if len(keys) == 0 {
		return table{}, false
	}
	sort.Strings(keys)
	t := table{Title: "Run conditions",
		Caption: "Measurements of each run's conditions rather than of the network: for live runs the host's 1-minute load average " +
			"(2 cores: above 2 the relay, senders and receiver compete for the CPU) and how late the relay wrote packets against " +
			"the link model's instants. A live run under load or with many late writes is a weak witness against the model."}
	for _, a := range d.Axes {
		t.Head = append(t.Head, a.Short)
	}
	t.Head = append(t.Head, "backend", "seed")
	t.Head = append(t.Head, keys...)
	for _, g := range d.Groups {
		for _, r := range g.Runs {
			if len(r.Notes) == 0 {
				continue
			}
			var row []string
			for _, a := range d.Axes {
				row = append(row, g.param(a.Path))
			}
			row = append(row, g.Backend, strconv.FormatUint(r.Seed, 10))
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
func (d *ReportData) baselineTable() (table, bool) {
	if len(d.Baseline) == 0 {
		return table{}, false
	}
	isBase := func(g *Group) bool {
		for _, b := range d.Baseline {
			match := false
			for _, p := range g.Params {
				if (p.Axis == b.Axis || shortName(p.Axis) == b.Axis) && p.Value == b.Value {
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
			if axis == b.Axis || shortName(axis) == b.Axis {
				return true
			}
		}
		return false
	}
	var bl []string
	for _, b := range d.Baseline {
		bl = append(bl, b.Axis+"="+b.Value)
	}
	t := table{Title: "Change against the baseline (" + strings.Join(bl, ", ") + ")",
		Caption: "Percent change of the mean against the baseline point with the same other parameters and backend; " +
			"paired: mean ± 95 % CI of the per-seed percent changes (runs with the same seed share background traffic and loss draws)."}
	for _, a := range d.Axes {
		t.Head = append(t.Head, a.Short)
	}
	t.Head = append(t.Head, "backend", "metric", "baseline", "variant", "change", "paired change")
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
				if !baseAxis(p.Axis) && h.param(p.Axis) != p.Value {
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
		for _, km := range ReportMetrics[:5] {
			unit := UnitOf(km.Scope, km.Metric)
			bs, vs := base.bySeed(km.Scope, 0, km.Metric), g.bySeed(km.Scope, 0, km.Metric)
			var b, v []float64
			for seed, x := range bs {
				if y, ok := vs[seed]; ok {
					b, v = append(b, x), append(v, y)
				}
			}
			c := PairedChange(b, v)
			var row []string
			for _, a := range d.Axes {
				row = append(row, g.param(a.Path))
			}
			change, paired := "–", "–"
			if !math.IsNaN(c.Percent) {
				change = fmt.Sprintf("%+.1f %%", c.Percent)
			}
			if c.Paired.N > 0 {
				paired = fmt.Sprintf("%+.1f %%", c.Paired.Mean)
				if !math.IsNaN(c.Paired.CI) {
					paired += fmt.Sprintf(" ± %.1f", c.Paired.CI)
				}
			}
			row = append(row, g.Backend, km.Title, summaryCell(unit, c.Baseline), summaryCell(unit, c.Variant), change, paired)
			t.Rows = append(t.Rows, row)
		}
	}
	return t, len(t.Rows) > 0
}

// seriesFigures draws the time series of the first run (lowest seed) of every group.
func (d *ReportData) seriesFigures(ctx context.Context, st Store) ([]seriesFigure, error) {
	var out []seriesFigure
	for _, g := range d.Groups {
		if len(g.Runs) == 0 {
			continue
		}
		r := g.Runs[0]
		series, err := st.Series(ctx, r.ID)
		if err != nil {
			return nil, err
		}
		get := func(scope Scope, id int64, metric string) *SeriesRecord {
			for i := range series {
				if series[i].Scope == scope && series[i].ScopeID == id && series[i].Metric == metric {
					return &series[i]
				}
			}
			return nil
		}
		tput := panel{Title: "throughput at the receiver", YLabel: "Mbit/s", MarkLabel: "loss"}
		cwnd := panel{Title: "congestion window", YLabel: "kB"}
		srtt := panel{Title: "smoothed RTT", YLabel: "ms", MarkLabel: "loss"}
		for i, f := range r.Flows {
			if s := get(ScopeFlow, f.ID, "throughput"); s != nil {
				tput.Lines = append(tput.Lines, tsLine{Label: f.Name, Color: i, T: s.T, V: s.V, Scale: 1e-6})
			}
			if s := get(ScopeFlow, f.ID, "cwnd"); s != nil {
				cwnd.Lines = append(cwnd.Lines, tsLine{Label: f.Name, Color: i, T: s.T, V: s.V, Scale: 1e-3})
			}
			if s := get(ScopeFlow, f.ID, "srtt"); s != nil {
				srtt.Lines = append(srtt.Lines, tsLine{Label: f.Name, Color: i, T: s.T, V: s.V, Scale: 1e3})
			}
			if s := get(ScopeFlow, f.ID, "losses"); s != nil {
				for k := range s.T {
					if s.V[k] > 0 {
						tput.Marks = append(tput.Marks, s.T[k])
						srtt.Marks = append(srtt.Marks, s.T[k])
					}
				}
			}
		}
		panels := []panel{tput, cwnd, srtt}
		if bl := bottleneckOf(&r); bl >= 0 {
			if s := get(ScopeLink, bl, "queue_len"); s != nil {
				panels = append(panels, panel{Title: "bottleneck queue length", YLabel: "packets",
					Lines: []tsLine{{Label: "queue", T: s.T, V: s.V}}})
			}
		}
		svg, err := timeSeriesSVG(panels)
		if err != nil {
			return nil, err
		}
		out = append(out, seriesFigure{Label: g.Label, Backend: g.Backend, Seed: r.Seed, SVG: template.HTML(svg)})
	}
	return out, nil
}

// cdfFigures draws, for each combination of the parameters other than the
// x axis, the distribution of the per-interval throughput over every run of
// each point (sim solid, live dashed): how steady each configuration is, not
// only its mean.
func (d *ReportData) cdfFigures(ctx context.Context, st Store) ([]figure, error) {
	x, hasX := d.xAxis()
	byLine := map[string][]*Group{}
	var lines []string
	for _, g := range d.Groups {
		k := "all"
		if hasX {
			k = lineKey(g, x, d.Axes)
		}
		if _, ok := byLine[k]; !ok {
			lines = append(lines, k)
		}
		byLine[k] = append(byLine[k], g)
	}
	var figs []figure
	for _, k := range lines {
		var curves []cdfCurve
		for _, g := range byLine[k] {
			var vals []float64
			for _, r := range g.Runs {
				series, err := st.Series(ctx, r.ID)
				if err != nil {
					return nil, err
				}
				for _, s := range series {
					if s.Scope == ScopeFlow && s.Metric == "throughput" {
						vals = append(vals, s.V...)
					}
				}
			}
			label, color := g.Backend, 0
			if hasX {
				xv := g.param(x.Path)
				label = x.Short + "=" + xv
				for i, v := range x.Values {
					if v == xv {
						color = i
					}
				}
			}
			curves = append(curves, cdfCurve{Label: label, Color: color, Dashed: g.Backend == BackendLive, Values: vals})
		}
		svg, err := cdfSVG("per-interval throughput: "+k, "throughput (Mbit/s)", 1e-6, curves)
		if err != nil {
			return nil, err
		}
		figs = append(figs, figure{Title: "Distribution of throughput, " + k,
			Caption: "Empirical CDF of each flow's throughput per interval over all runs of each point; solid: simulator, dashed: live.",
			SVG:     template.HTML(svg)})
	}
	return figs, nil
}

// bottleneckOf returns the ID of the run's bottleneck link (the link whose
// info starts with "bottleneck", else the first link), or -1.
func bottleneckOf(r *RunRecord) int64 {
	for _, l := range r.Links {
		if strings.HasPrefix(l.Info, "bottleneck") {
			return l.ID
		}
	}
	if len(r.Links) > 0 {
		return r.Links[0].ID
	}
	return -1
}

// AggregateRow is one metric of one point and backend summarized over seeds.
type AggregateRow struct {
	Point   int     `json:"point"`
	Params  []Param `json:"params"`
	Backend string  `json:"backend"`
	Scope   Scope   `json:"scope"`
	ScopeID int64   `json:"scope_id"`
	Metric  string  `json:"metric"`
	Unit    string  `json:"unit"`
	N       int     `json:"n"`
	Mean    float64 `json:"mean"`
	SD      float64 `json:"sd"`
	CI95    float64 `json:"ci95"` // half-width; NaN (null in JSON) when n < 2
}

// Aggregate summarizes every metric of every group over its seeds.
func (d *ReportData) Aggregate() []AggregateRow {
	var out []AggregateRow
	for _, g := range d.Groups {
		type key struct {
			scope  Scope
			id     int64
			metric string
		}
		var keys []key
		seen := map[key]bool{}
		for _, r := range g.Runs {
			for _, s := range r.Summaries {
				k := key{s.Scope, s.ScopeID, s.Metric}
				if !seen[k] {
					seen[k] = true
					keys = append(keys, k)
				}
			}
		}
		for _, k := range keys {
			s := Summarize(g.Values(k.scope, k.id, k.metric))
			out = append(out, AggregateRow{Point: g.Point, Params: g.Params, Backend: g.Backend, Scope: k.scope, ScopeID: k.id,
				Metric: k.metric, Unit: UnitOf(k.scope, k.metric), N: s.N, Mean: s.Mean, SD: s.SD, CI95: s.CI})
		}
	}
	return out
}

// jsonFloat writes NaN as null.
type jsonFloat float64

func (f jsonFloat) MarshalJSON() ([]byte, error) {
	if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
		return []byte("null"), nil
	}
	return json.Marshal(float64(f))
}

func writeAggregate(dir string, rows []AggregateRow) error {
	f, err := os.Create(filepath.Join(dir, "aggregate.csv"))
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	w.Write([]string{"point", "params", "backend", "scope", "scope_id", "metric", "unit", "n", "mean", "sd", "ci95"})
	num := func(v float64) string {
		if math.IsNaN(v) {
			return ""
		}
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	type jrow struct {
		AggregateRow
		Mean jsonFloat `json:"mean"`
		SD   jsonFloat `json:"sd"`
		CI95 jsonFloat `json:"ci95"`
	}
	var js []jrow
	for _, r := range rows {
		w.Write([]string{strconv.Itoa(r.Point), paramsString(r.Params), r.Backend, string(r.Scope), strconv.FormatInt(r.ScopeID, 10),
			r.Metric, r.Unit, strconv.Itoa(r.N), num(r.Mean), num(r.SD), num(r.CI95)})
		js = append(js, jrow{r, jsonFloat(r.Mean), jsonFloat(r.SD), jsonFloat(r.CI95)})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	b, err := json.MarshalIndent(js, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "aggregate.json"), b, 0o644)
}

// WriteReport writes the report of the experiment's newest version into
// outDir/<experiment>/ (WriteVersionReport).
func WriteReport(ctx context.Context, st Store, experiment, outDir string) (string, error) {
	return WriteVersionReport(ctx, st, experiment, 0, outDir)
}

// WriteVersionReport writes the report of one version of the experiment
// (VersionRecord.Seq; 0: the newest) into outDir/<experiment>/ for the
// newest and outDir/<experiment>/v<seq>/ for another: index.html (offline:
// inline SVG, no scripts or external resources), runs.json and runs.csv
// (every run's summaries), aggregate.json and aggregate.csv (summaries over
// seeds). It returns the HTML file's path.
func WriteVersionReport(ctx context.Context, st Store, experiment string, version int, outDir string) (string, error) {
	d, err := LoadReport(ctx, st, experiment, version)
	if err != nil {
		return "", err
	}
	dir := filepath.Join(outDir, experiment)
	var vid int64
	if d.Version != nil {
		vid = d.Version.ID
		if version != 0 {
			dir = filepath.Join(dir, d.Version.Label())
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	for name, export := range map[string]func(context.Context, Store, string, int64, io.Writer) error{
		"runs.json": ExportJSON,
		"runs.csv":  ExportCSV,
	} {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			return "", err
		}
		if err := export(ctx, st, experiment, vid, f); err != nil {
			f.Close()
			return "", err
		}
		if err := f.Close(); err != nil {
			return "", err
		}
	}
	if err := writeAggregate(dir, d.Aggregate()); err != nil {
		return "", err
	}
	page := reportPage{Title: experiment, Generated: time.Now().UTC().Format("2006-01-02 15:04 UTC"), Version: Version,
		Source: d.Source, Failed: len(d.Failed), Backends: strings.Join(d.Backends, ", "), Axes: d.Axes,
		Files: []string{"runs.json", "runs.csv", "aggregate.json", "aggregate.csv"}}
	for _, g := range d.Groups {
		page.Runs += len(g.Runs)
	}
	if page.Figures, err = d.comparisonFigures(); err != nil {
		return "", err
	}
	if page.CDFs, err = d.cdfFigures(ctx, st); err != nil {
		return "", err
	}
	page.Tables = append(page.Tables, d.summaryTable())
	if t, ok := d.simLiveTable(); ok {
		page.Tables = append(page.Tables, t)
	}
	if t, ok := d.conditionsTable(); ok {
		page.Tables = append(page.Tables, t)
	}
	if t, ok := d.baselineTable(); ok {
		page.Tables = append(page.Tables, t)
	}
	if page.Series, err = d.seriesFigures(ctx, st); err != nil {
		return "", err
	}
	for _, r := range d.Failed {
		page.FailedRows = append(page.FailedRows, []string{Point{Params: r.Params}.Label(d.Axes), r.Backend, strconv.FormatUint(r.Seed, 10), r.Error})
	}
	path := filepath.Join(dir, "index.html")
	f, err := os.Create(path)
	if err != nil {
		return "", err
	}
	if err := reportTemplate.Execute(f, page); err != nil {
		f.Close()
		return "", err
	}
	return path, f.Close()
}

var reportTemplate = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>cclab report: {{.Title}}</title>
<style>
body { font-family: sans-serif; margin: 2em auto; max-width: 70em; padding: 0 1em; color: #222; }
h1 { font-size: 1.6em; } h2 { font-size: 1.3em; margin-top: 2em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; margin: 1em 0; font-size: 0.85em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.5em; text-align: right; }
th { background: #f0f0f0; } td:first-child, th:first-child { text-align: left; }
figure { margin: 1.5em 0; } figcaption { font-size: 0.85em; color: #555; max-width: 50em; }
pre { background: #f7f7f7; padding: 0.8em; overflow-x: auto; font-size: 0.85em; }
details { margin: 0.5em 0; } summary { cursor: pointer; }
.meta { color: #555; font-size: 0.9em; }
</style>
</head>
<body>
<h1>cclab report: {{.Title}}</h1>
<p class="meta">{{.Runs}} completed runs on {{if .Backends}}{{.Backends}}{{else}}no backend{{end}}{{if .Failed}}, {{.Failed}} failed{{end}}.
Generated {{.Generated}} by cclab {{.Version}}.
Data: {{range $i, $f := .Files}}{{if $i}}, {{end}}<a href="{{$f}}">{{$f}}</a>{{end}}.</p>
{{if .Axes}}<p>Swept: {{range $i, $a := .Axes}}{{if $i}}; {{end}}<code>{{$a.Path}}</code> ∈ { {{- range $j, $v := $a.Values}}{{if $j}}, {{end}}{{$v}}{{end}} }{{end}}.</p>{{end}}

{{if .Figures}}<h2>Comparison across the sweep</h2>
{{range .Figures}}<figure>
{{.SVG}}
<figcaption><b>{{.Title}}.</b> {{.Caption}}</figcaption>
</figure>
{{end}}{{end}}

{{if .CDFs}}<h2>Distributions</h2>
{{range .CDFs}}<details>
<summary>{{.Title}}</summary>
<figure>
{{.SVG}}
<figcaption>{{.Caption}}</figcaption>
</figure>
</details>
{{end}}{{end}}

{{range .Tables}}<h2>{{.Title}}</h2>
<p class="meta">{{.Caption}}</p>
<table>
<thead><tr>{{range .Head}}<th>{{.}}</th>{{end}}</tr></thead>
<tbody>{{range .Rows}}
<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>{{end}}
</tbody>
</table>
{{end}}

{{if .Series}}<h2>Time series</h2>
<p class="meta">First run (lowest seed) of each point and backend: throughput at the receiver, congestion window and smoothed RTT per flow
(red crosses: intervals in which the sender declared a loss), and the bottleneck's queue length.</p>
{{range .Series}}<details>
<summary>{{.Label}} — {{.Backend}}, seed {{.Seed}}</summary>
<figure>
{{.SVG}}
</figure>
</details>
{{end}}{{end}}

{{if .FailedRows}}<h2>Failed runs</h2>
<table><thead><tr><th>point</th><th>backend</th><th>seed</th><th>error</th></tr></thead><tbody>
{{range .FailedRows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>
{{end}}</tbody></table>{{end}}

<h2>Scenario</h2>
<pre>{{.Source}}</pre>
</body>
</html>
`))
