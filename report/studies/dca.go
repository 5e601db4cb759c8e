package studies

import (
	"fmt"
	"html/template"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"cclab/metrics"
	"cclab/report"
	"cclab/scenario"
)

// The DCA study's report sections (Scenario.Study == StudyDCA;
// docs/studies/dca.md). They read the cases of experiments/dca-vs-reno.yaml
// by name: DCACaseSingle (Table 8-1 and the Reno baseline of the variants),
// DCACasePair (Tables 8-2/8-3 and 8-5/8-6), DCACaseVariants and DCACaseShare
// (Fig. 8-4); the path models are the values of the topology axis.
const (
	DCACaseSingle   = "single"
	DCACasePair     = "pair"
	DCACaseVariants = "variants"
	DCACaseShare    = "share"
	DCACaseLive     = "live"
)

// The study's link IDs: the forward directions of hop 0 and hop 1 of a
// two-hop chain (plan: hop i forward is link 2i).
var dcaLinks = []struct {
	id   int64
	name string
}{{0, "hop 0 (q0>q1)"}, {2, "hop 1 (q1>q2)"}}

// pairedValues returns the per-seed paired comparison of one metric between two
// groups: the values of the seeds both have, in seed order.
func pairedValues(base, variant *report.Group, scope metrics.Scope, id int64, metric string) (b, v []float64) {
	bs, vs := base.BySeed(scope, id, metric), variant.BySeed(scope, id, metric)
	var seeds []uint64
	for s := range bs {
		if _, ok := vs[s]; ok {
			seeds = append(seeds, s)
		}
	}
	sort.Slice(seeds, func(i, j int) bool { return seeds[i] < seeds[j] })
	for _, s := range seeds {
		b, v = append(b, bs[s]), append(v, vs[s])
	}
	return b, v
}

// pairedChange compares a metric of variant against base, paired by seed.
func pairedChange(d *report.ReportData, base, variant *report.Group, scope metrics.Scope, id int64, metric string) metrics.Change {
	b, v := pairedValues(base, variant, scope, id, metric)
	return metrics.PairedChangeIn(b, v, metrics.DomainOf(scope, metric))
}

// pctCells formats the per-seed paired percent changes as mean, standard
// deviation and 95 % CI, the chapter's three columns.
func pctCells(c metrics.Change) []string {
	s := c.Paired
	if s.N == 0 {
		return []string{"–", "–", "–"}
	}
	ci := "–"
	if !math.IsNaN(s.CI) {
		ci = fmt.Sprintf("[%+.1f, %+.1f]", s.Mean-s.CI, s.Mean+s.CI)
	}
	return []string{fmt.Sprintf("%+.1f %%", s.Mean), fmt.Sprintf("%.1f", s.SD), ci}
}

// pctCell formats the paired percent change as mean ± CI half-width.
func pctCell(c metrics.Change) string {
	s := c.Paired
	switch {
	case s.N == 0:
		return "–"
	case math.IsNaN(s.CI):
		return fmt.Sprintf("%+.1f %%", s.Mean)
	}
	return fmt.Sprintf("%+.1f %% ± %.1f", s.Mean, s.CI)
}

// dcaGroup returns the group of the case with the given other parameters
// (axis short name or path → value) on the sim backend, or nil.
func dcaGroup(d *report.ReportData, caseName string, params map[string]string) *report.Group {
	for _, g := range d.Groups {
		if g.Backend != scenario.BackendSim || g.Param(scenario.CaseAxis) != caseName {
			continue
		}
		ok := true
		for axis, want := range params {
			got := ""
			for _, p := range g.Params {
				if p.Axis == axis || scenario.ShortName(p.Axis) == axis {
					got = p.Value
				}
			}
			if got != want {
				ok = false
			}
		}
		if ok {
			return g
		}
	}
	return nil
}

// axisValues returns the values of the axis (short name or path) among the
// groups of a case, in first-seen order.
func axisValues(d *report.ReportData, caseName, axis string) []string {
	var out []string
	for _, g := range d.Groups {
		if g.Param(scenario.CaseAxis) != caseName {
			continue
		}
		for _, p := range g.Params {
			if (p.Axis == axis || scenario.ShortName(p.Axis) == axis) && !slices.Contains(out, p.Value) {
				out = append(out, p.Value)
			}
		}
	}
	return out
}

// isReno reports whether a controller spec is plain Reno.
func isReno(cc string) bool { return cc == "reno" || strings.HasPrefix(cc, "reno:") }

// dcaReport is the DCA study's report section (StudySections).
func dcaReport(d *report.ReportData) (string, []report.Table, []report.Figure, error) {
	var figs []report.Figure
	f, ok, err := dcaShareFigure(d)
	if err != nil {
		return "", nil, nil, err
	}
	if ok {
		figs = append(figs, f)
	}
	return "The DCA study (Martin's thesis, chapter 8; docs/studies/dca.md)", dcaTables(d), figs, nil
}

// dcaTables returns the study's tables, each laid out as the chapter's.
func dcaTables(d *report.ReportData) []report.Table {
	var out []report.Table
	for _, f := range []func(*report.ReportData) (report.Table, bool){dcaTable81, dcaVariantsTable, dcaShareTable} {
		if t, ok := f(d); ok {
			out = append(out, t)
		}
	}
	for _, model := range axisValues(d, DCACasePair, "topology") {
		if t, ok := dcaPairTable(d, model); ok {
			out = append(out, t)
		}
	}
	return out
}

// dcaChangeHead is the head of the tables of dcaChangeRow's rows.
var dcaChangeHead = []string{"path model", "DCA", "n", "loss change", "std", "95 % CI", "throughput change", "std", "95 % CI",
	"Reno loss", "DCA loss", "Reno throughput", "DCA throughput", "DCA reactions"}

// dcaTable81 is Table 8-1: per path model, the per-seed paired percent
// change of the measured flow's loss rate and throughput, DCA against Reno.
func dcaTable81(d *report.ReportData) (report.Table, bool) {
	t := report.Table{Title: "Table 8-1: DCA against Reno, one measured flow",
		Caption: "Per path model, the measured flow (flow 1) once as Reno and once as DCA on the same seeds (common random numbers: every " +
			"background generator draws the same sample path). Change: the per-seed paired percent change 100·(DCA − Reno)/Reno, its mean, " +
			"standard deviation (n−1) and 95 % confidence interval (Student's t, n−1 degrees of freedom). Loss: the flow's network loss rate " +
			"(loss_rate); throughput: its goodput (mean_throughput); reactions: DCA's window reductions per run (total_delay_reductions). " +
			"The Reproduction table gives the change of the means over the same pairs instead: in short runs a seed whose Reno run saw few " +
			"losses makes a large per-seed change, and the mean of the per-seed changes is biased upward (docs/studies/dca.md)."}
	t.Head = dcaChangeHead
	for _, model := range axisValues(d, DCACaseSingle, "topology") {
		for _, cc := range axisValues(d, DCACaseSingle, "cc") {
			if isReno(cc) {
				continue
			}
			if row, ok := dcaChangeRow(d, model, cc, dcaGroup(d, DCACaseSingle, map[string]string{"topology": model, "cc": cc})); ok {
				t.Rows = append(t.Rows, row)
			}
		}
	}
	return t, len(t.Rows) > 0
}

// dcaChangeRow compares the group v (a DCA form of the measured flow) with
// the Reno group of case single on the same path model.
func dcaChangeRow(d *report.ReportData, model, cc string, v *report.Group) ([]string, bool) {
	var base *report.Group
	for _, rc := range axisValues(d, DCACaseSingle, "cc") {
		if isReno(rc) {
			base = dcaGroup(d, DCACaseSingle, map[string]string{"topology": model, "cc": rc})
		}
	}
	if base == nil || v == nil {
		return nil, false
	}
	loss := pairedChange(d, base, v, metrics.ScopeFlow, 1, "loss_rate")
	tput := pairedChange(d, base, v, metrics.ScopeFlow, 1, "mean_throughput")
	react := v.Summary(metrics.ScopeFlow, 1, "total_delay_reductions")
	row := []string{model, cc, strconv.Itoa(loss.Paired.N)}
	row = append(row, pctCells(loss)...)
	row = append(row, pctCells(tput)...)
	row = append(row, report.SummaryCell("1", loss.Baseline), report.SummaryCell("1", loss.Variant),
		report.SummaryCell("bit/s", tput.Baseline), report.SummaryCell("bit/s", tput.Variant), report.SummaryCell("1", react))
	return row, true
}

// dcaVariantsTable is the variant sweep: each DCA form against the Reno run
// of case single (same path model, same seeds).
func dcaVariantsTable(d *report.ReportData) (report.Table, bool) {
	t := report.Table{Title: "Variants: reduction, decision frequency, (x, w)",
		Caption: "Each DCA variant against the Reno run of Table 8-1 on the same path model and seeds: per-seed paired percent change of " +
			"the measured flow's loss rate and throughput, mean, standard deviation and 95 % CI (Student's t). The first rows of each model " +
			"(from Table 8-1) are the defaults: reduction 50 %, decision once per congestion epoch, (x, w) = (2, 20)."}
	t.Head = dcaChangeHead
	models := axisValues(d, DCACaseVariants, "topology")
	for _, model := range models {
		for _, cc := range axisValues(d, DCACaseSingle, "cc") {
			if !isReno(cc) {
				if row, ok := dcaChangeRow(d, model, cc, dcaGroup(d, DCACaseSingle, map[string]string{"topology": model, "cc": cc})); ok {
					t.Rows = append(t.Rows, row)
				}
			}
		}
		for _, cc := range axisValues(d, DCACaseVariants, "cc") {
			if row, ok := dcaChangeRow(d, model, cc, dcaGroup(d, DCACaseVariants, map[string]string{"topology": model, "cc": cc})); ok {
				t.Rows = append(t.Rows, row)
			}
		}
	}
	return t, len(t.Rows) > 0
}

// dcaPairTableNumbers names the chapter's tables a two-flow table stands for:
// its flows and network tables, Tables 8-2/8-3 on the Emory network and
// 8-5/8-6 on ASU (the first and second path model when they have other
// names).
func dcaPairTableNumbers(model string, models []string) string {
	switch {
	case model == "emory":
		return "Tables 8-2/8-3"
	case model == "asu":
		return "Tables 8-5/8-6"
	case len(models) > 0 && model == models[0]:
		return "Tables 8-2/8-3"
	case len(models) > 1 && model == models[1]:
		return "Tables 8-5/8-6"
	}
	return "Two-flow table"
}

// dcaPairTable is the chapter's two-flow tables of one path model (flows
// and network: Tables 8-2/8-3 on Emory, 8-5/8-6 on ASU): two measured
// flows, Reno+Reno in one run and Reno+DCA in the other.
func dcaPairTable(d *report.ReportData, model string) (report.Table, bool) {
	var base, v *report.Group
	var dca string
	for _, cc := range axisValues(d, DCACasePair, "cc") {
		g := dcaGroup(d, DCACasePair, map[string]string{"topology": model, "cc": cc})
		if isReno(cc) {
			base = g
		} else if v == nil {
			v, dca = g, cc
		}
	}
	if base == nil || v == nil {
		return report.Table{}, false
	}
	num := dcaPairTableNumbers(model, axisValues(d, DCACasePair, "topology"))
	t := report.Table{Title: fmt.Sprintf("%s: Reno+Reno against Reno+%s, path model %s", num, dca, model),
		Caption: "Two measured flows cross both hops: flow 1 is Reno in both runs, flow 2 is Reno in one run and DCA in the other, on the " +
			"same seeds. Reno+Reno and Reno+DCA columns: mean ± 95 % CI over the seeds (Student's t); change: mean ± 95 % CI of the per-seed " +
			"paired percent changes. Per link: its loss rate (drop_rate, every packet), mean queue length (time-weighted, packets) and " +
			"queue oscillations (total_queue_oscillations: congestion epochs, docs/metrics.md)." + report.BootstrapNote}
	t.Head = []string{"quantity", "Reno+Reno", "Reno+DCA", "difference", "change"}
	row := func(label, unit string, scope metrics.Scope, id int64, metric string) {
		c := pairedChange(d, base, v, scope, id, metric)
		diff := "–"
		if c.Diff.N > 0 {
			diff = report.FormatSigned(unit, c.Diff.Mean)
			if !math.IsNaN(c.Diff.CI) {
				diff += " ± " + report.FormatValue(unit, c.Diff.CI)
			}
		}
		t.Rows = append(t.Rows, []string{label, report.SummaryCell(unit, c.Baseline), report.SummaryCell(unit, c.Variant), diff, pctCell(c)})
	}
	row("flow 2 (Reno / DCA): throughput", "bit/s", metrics.ScopeFlow, 2, "mean_throughput")
	row("flow 2 (Reno / DCA): loss rate", "1", metrics.ScopeFlow, 2, "loss_rate")
	row("flow 2: DCA reactions", "1", metrics.ScopeFlow, 2, "total_delay_reductions")
	row("flow 1 (Reno): throughput", "bit/s", metrics.ScopeFlow, 1, "mean_throughput")
	row("flow 1 (Reno): loss rate", "1", metrics.ScopeFlow, 1, "loss_rate")
	row("flow 1 (Reno): mean RTT", "s", metrics.ScopeFlow, 1, "mean_srtt")
	for _, l := range dcaLinks {
		row(l.name+": loss rate", "1", metrics.ScopeLink, l.id, "drop_rate")
		row(l.name+": mean queue (packets)", "packet", metrics.ScopeLink, l.id, "mean_queue_len")
		row(l.name+": queue oscillations", "1", metrics.ScopeLink, l.id, "total_queue_oscillations")
	}
	return t, true
}

// dcaShare returns the Fig. 8-4 groups by DCA share (sim), in share order.
func dcaShare(d *report.ReportData) (shares []float64, groups []*report.Group) {
	for _, v := range axisValues(d, DCACaseShare, "alt_share") {
		x, err := strconv.ParseFloat(v, 64)
		g := dcaGroup(d, DCACaseShare, map[string]string{"alt_share": v})
		if err != nil || g == nil {
			continue
		}
		shares, groups = append(shares, x), append(groups, g)
	}
	return shares, groups
}

// dcaShareTable is the data of Fig. 8-4.
func dcaShareTable(d *report.ReportData) (report.Table, bool) {
	shares, groups := dcaShare(d)
	t := report.Table{Title: "Fig. 8-4 (data): the link's loss rate and mean queue against the share of DCA flows",
		Caption: "One link with the ON/OFF population of Fig. 8-4; the share is the fraction of its TCP flows that run DCA (the same flows " +
			"with the same traffic draws at every share). Mean ± 95 % CI over the seeds (Student's t)." + report.BootstrapNote}
	t.Head = []string{"DCA share", "n", "loss rate", "mean queue (packets)", "queue oscillations", "utilization"}
	for i, g := range groups {
		t.Rows = append(t.Rows, []string{fmt.Sprintf("%.0f %%", 100*shares[i]), strconv.Itoa(len(g.Runs)),
			report.SummaryCell("1", g.Summary(metrics.ScopeLink, 0, "drop_rate")), report.SummaryCell("packet", g.Summary(metrics.ScopeLink, 0, "mean_queue_len")),
			report.SummaryCell("1", g.Summary(metrics.ScopeLink, 0, "total_queue_oscillations")), report.SummaryCell("1", g.Summary(metrics.ScopeLink, 0, "utilization"))})
	}
	return t, len(t.Rows) > 0
}

// dcaShareFigure is Fig. 8-4: loss rate and mean queue against the DCA
// share, with 95 % CI bars.
func dcaShareFigure(d *report.ReportData) (report.Figure, bool, error) {
	shares, groups := dcaShare(d)
	if len(groups) < 2 {
		return report.Figure{}, false, nil
	}
	f := report.Figure{Title: "Fig. 8-4: the link's loss rate and mean queue against the share of DCA traffic",
		Caption: "Means over the seeds with 95 % confidence intervals (Student's t); data in the table of the same name."}
	for _, m := range []struct{ metric, label, unit string }{
		{"drop_rate", "loss rate (%)", "1"}, {"mean_queue_len", "mean queue (packets)", "packet"}} {
		p := report.NewPlot("", "share of DCA flows (%)", m.label)
		pts := report.XyErr{XYs: make(plotter.XYs, len(groups)), YErrors: make(plotter.YErrors, len(groups))}
		scale := 1.0
		if m.unit == "1" {
			scale = 100
		}
		for i, g := range groups {
			s := g.Summary(metrics.ScopeLink, 0, m.metric)
			pts.XYs[i] = plotter.XY{X: 100 * shares[i], Y: scale * s.Mean}
			lo, hi := s.Mean, s.Mean
			if !math.IsNaN(s.Low) {
				lo, hi = s.Low, s.High
			}
			pts.YErrors[i].Low, pts.YErrors[i].High = scale*(s.Mean-lo), scale*(hi-s.Mean)
		}
		line, points, err := plotter.NewLinePoints(pts)
		if err != nil {
			return f, false, err
		}
		line.Color, points.Color = report.ColorAt(0), report.ColorAt(0)
		bars, err := plotter.NewYErrorBars(pts)
		if err != nil {
			return f, false, err
		}
		bars.Color = report.ColorAt(0)
		p.Add(line, points, bars)
		svg, err := report.SvgOf(p, 4*vg.Inch, 3*vg.Inch)
		if err != nil {
			return f, false, err
		}
		f.Panels = append(f.Panels, template.HTML(svg))
	}
	return f, true, nil
}
