package report

import (
	"fmt"
	"html/template"
	"image/color"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot/vg"

	"cclab/metrics"
	"cclab/scenario"
)

// plotMetrics are drawn against the swept parameter, one small multiple per
// combination of the other parameters; the first carries the model curves.
var plotMetrics = []keyMetric{
	{metrics.ScopeNetwork, "bw_utilization", "bandwidth utilization"},
	{metrics.ScopeNetwork, "agg_throughput", "throughput"},
	{metrics.ScopeNetwork, "p95_rtt", "95th-percentile RTT"},
	{metrics.ScopeNetwork, "total_retransmissions", "retransmissions"},
	{metrics.ScopeNetwork, "total_rtos", "RTOs"},
	{metrics.ScopeNetwork, "mean_srtt", "mean srtt"},
}

// Backend colours in small multiples (palette indices).
const (
	colorSim  = 0 // blue
	colorLive = 1 // vermillion
)

// Model curve styles.
var (
	mathisColor = color.RGBA{120, 120, 120, 255}
	pftkColor   = color.RGBA{0, 0, 0, 255}
	mathisDash  = []vg.Length{vg.Points(1.5), vg.Points(2.5)}
	pftkDash    = []vg.Length{vg.Points(6), vg.Points(2), vg.Points(1.5), vg.Points(2)}
)

// lines returns the combinations of the parameters other than x (lineKey),
// in the order their first group appears, with their groups.
func (d *ReportData) lines(x scenario.Axis) ([]string, map[string][]*Group) {
	by := map[string][]*Group{}
	var keys []string
	for _, g := range d.Groups {
		k := lineKey(g, x, d.Axes)
		if _, ok := by[k]; !ok {
			keys = append(keys, k)
		}
		by[k] = append(by[k], g)
	}
	return keys, by
}

// summary summarizes a metric of g's runs, its interval kept in the
// metric's domain.
func (g *Group) Summary(scope metrics.Scope, id int64, metric string) metrics.Summary {
	return metrics.SummarizeIn(g.Values(scope, id, metric), metrics.DomainOf(scope, metric))
}

// legendHTML returns the key of the small multiples: the backends and, if
// drawn, the model curves.
func legendHTML(backends []string, models bool) template.HTML {
	var b strings.Builder
	item := func(svg, text string) {
		fmt.Fprintf(&b, `<span class="key"><svg width="34" height="12" viewBox="0 0 34 12">%s</svg> %s</span>`, svg, text)
	}
	hex := func(i int) string {
		r, g, bb, _ := ColorAt(i).RGBA()
		return fmt.Sprintf("#%02x%02x%02x", r>>8, g>>8, bb>>8)
	}
	if slices.Contains(backends, scenario.BackendSim) {
		item(`<line x1="1" y1="6" x2="33" y2="6" stroke="`+hex(colorSim)+`" stroke-width="1.5"/><circle cx="17" cy="6" r="3" fill="`+hex(colorSim)+`"/>`,
			"simulator (mean, 95 % CI)")
	}
	if slices.Contains(backends, scenario.BackendLive) {
		item(`<line x1="1" y1="6" x2="33" y2="6" stroke="`+hex(colorLive)+`" stroke-width="1.5" stroke-dasharray="5 3"/><rect x="14" y="3" width="6" height="6" fill="`+hex(colorLive)+`"/>`,
			"live (mean, 95 % CI)")
	}
	if models {
		item(`<line x1="1" y1="6" x2="33" y2="6" stroke="#787878" stroke-width="1.2" stroke-dasharray="1.5 2.5"/>`, "Mathis et al. 1997")
		item(`<line x1="1" y1="6" x2="33" y2="6" stroke="#000" stroke-width="1.2" stroke-dasharray="6 2 1.5 2"/>`, "PFTK (Padhye et al. 1998)")
	}
	return template.HTML(b.String())
}

// comparisonNote explains what every comparison figure shares: the panels,
// the intervals and the x axis.
func comparisonNote(xs xScale, others []string) string {
	n := "One panel per " + strings.Join(others, ", ") + " (small multiples), all panels of a figure on the same scales; " +
		"the simulator and live runs of a configuration share its panel. Marks are means over the seeds with 95 % confidence intervals: " +
		"Student's t, or — where the t interval would leave the metric's range (a count below 0, a fraction above 1) — the percentile " +
		"bootstrap interval (exact over all resamples; marked † in the tables). A point with one run has no interval."
	if xs.Kind == xLog {
		n += " The x axis is logarithmic because the swept values of " + xs.Axis.Short + " are a geometric series"
		if !math.IsNaN(xs.ZeroAt) {
			n += "; the point at " + xs.Axis.Short + " = 0 is drawn one step left of the smallest value, where a log axis has no 0"
		}
		n += "."
	}
	return n
}

// comparisonFigures draws each plot metric against the x axis as small
// multiples: one panel per combination of the other parameters (e.g. per
// controller) with the simulator and live curves, sharing the y range. The
// utilization panels of a loss sweep with one flow carry the Mathis and PFTK
// model curves.
func (d *ReportData) comparisonFigures() ([]Figure, string, error) {
	xa, ok := d.xAxis()
	if !ok {
		return nil, "", nil
	}
	xs := newXScale(xa)
	keys, by := d.lines(xa)
	var model *modelParams
	if d.Exp != nil && isLossAxis(xa) {
		if m, ok := modelFor(d.Exp.Base); ok {
			model = &m
		}
	}
	var figs []Figure
	for i, km := range plotMetrics {
		unit := metrics.UnitOf(km.Scope, km.Metric)
		scale, ulabel := scaleFor(unit)
		dom := metrics.DomainOf(km.Scope, km.Metric)
		ymax := 0.0
		type built struct {
			key    string
			curves []panelCurve
		}
		var panels []built
		any := false
		for _, k := range keys {
			var curves []panelCurve
			for _, b := range d.Backends {
				c := panelCurve{Label: b, Color: colorSim, Dashed: b == scenario.BackendLive}
				if b == scenario.BackendLive {
					c.Color = colorLive
				}
				for _, g := range by[k] {
					if g.Backend != b {
						continue
					}
					xv, ok := xs.Pos[g.Param(xa.Path)]
					if !ok {
						continue
					}
					s := g.Summary(km.Scope, 0, km.Metric)
					if s.N == 0 {
						continue
					}
					any = true
					c.X = append(c.X, xv)
					c.Y = append(c.Y, s.Mean*scale)
					c.Low = append(c.Low, s.Low*scale)
					c.High = append(c.High, s.High*scale)
					ymax = math.Max(ymax, s.Mean*scale)
					if !math.IsNaN(s.High) {
						ymax = math.Max(ymax, s.High*scale)
					}
				}
				if len(c.X) > 0 {
					curves = append(curves, c)
				}
			}
			panels = append(panels, built{k, curves})
		}
		if !any {
			continue
		}
		ytop := ymax * 1.08
		if dom == metrics.Fraction {
			ytop = math.Max(1.05, ymax*1.02)
		}
		if ytop <= 0 {
			ytop = 1
		}
		ylabel := km.Title
		if ulabel != "1" && ulabel != "" {
			ylabel += " (" + ulabel + ")"
		}
		withModel := i == 0 && model != nil && km.Metric == "bw_utilization"
		var models []modelCurve
		if withModel {
			models = modelCurves(*model, xs)
		}
		f := Figure{Title: km.Title + " against " + xa.Short, Legend: legendHTML(d.Backends, withModel)}
		for _, pn := range panels {
			svg, err := panelSVG(panelSpec{Title: pn.key, YLabel: ylabel, X: xs, YMin: 0, YMax: ytop, Curves: pn.curves, Models: models})
			if err != nil {
				return nil, "", err
			}
			f.Panels = append(f.Panels, template.HTML(svg))
		}
		f.Caption = fmt.Sprintf("%s (%s, %s) against %s.", km.Title, km.Metric, unit, xa.Path)
		if withModel {
			f.Caption += " Reference curves, as utilization B·8 / bottleneck rate capped at 1: Mathis et al. 1997, B = (MSS/RTT)·√(3/(2b))/√p; " +
				"PFTK (Padhye, Firoiu, Towsley, Kurose 1998, eq. 31), which adds timeouts and the window limit, " +
				"B = MSS·min(Wmax/RTT, 1/(RTT·√(2bp/3) + T0·min(1, 3√(3bp/8))·p·(1+32p²))); with this scenario's " + model.describe() +
				". They model TCP Reno's congestion avoidance under random loss p: a Reno-like controller should follow them where the swept loss, " +
				"not the queue, sets the loss rate; at small p the queue's own drops dominate, and other controllers are measured against Reno's curve."
		}
		figs = append(figs, f)
	}
	return figs, comparisonNote(xs, otherAxes(d.Axes, xa)), nil
}

// modelCurves samples the two models over the x axis's nonzero range.
func modelCurves(m modelParams, xs xScale) []modelCurve {
	lo, hi := math.Inf(1), 0.0
	for _, p := range xs.Pos {
		if p > 0 && p != xs.ZeroAt {
			lo, hi = math.Min(lo, p), math.Max(hi, p)
		}
	}
	if xs.Kind == xLinear {
		lo = math.Max(xs.Min, hi/1000) // the curves rise to the cap as p → 0
	}
	if !(hi > lo) {
		return nil
	}
	mathis := modelCurve{Label: "Mathis et al. 1997", Color: mathisColor, Dashes: mathisDash}
	pftk := modelCurve{Label: "PFTK 1998", Color: pftkColor, Dashes: pftkDash}
	const n = 80
	for i := 0; i <= n; i++ {
		var p float64
		if xs.Kind == xLog {
			p = lo * math.Pow(hi/lo, float64(i)/n)
		} else {
			p = lo + (hi-lo)*float64(i)/n
		}
		a, b := m.Utilizations(p)
		mathis.X, mathis.Y = append(mathis.X, p), append(mathis.Y, a)
		pftk.X, pftk.Y = append(pftk.X, p), append(pftk.Y, b)
	}
	return []modelCurve{mathis, pftk}
}

// otherAxes names the axes other than x (what a panel stands for).
func otherAxes(axes []scenario.Axis, x scenario.Axis) []string {
	var out []string
	for _, a := range axes {
		if a.Path != x.Path {
			out = append(out, a.Short)
		}
	}
	if len(out) == 0 {
		return []string{"configuration"}
	}
	return out
}

// shortKey shortens a line key for a label: "cc=reno" → "reno" when one
// parameter makes the key.
func shortKey(k string) string {
	if !strings.Contains(k, " ") {
		if _, v, ok := strings.Cut(k, "="); ok {
			return v
		}
	}
	return k
}

// delayThroughputFigure draws the Pantheon-style plot (Yan et al.,
// "Pantheon: the training ground for Internet congestion-control research",
// USENIX ATC 2018): throughput against 95th-percentile RTT, the delay axis
// reversed so that better is up and to the right; one panel per value of the
// swept parameter, each configuration a labelled mean over its runs (large)
// with the runs themselves (small); circles simulator, squares live.
func (d *ReportData) delayThroughputFigure() (Figure, bool, error) {
	xa, hasX := d.xAxis()
	keys, _ := d.lines(xa)
	color := map[string]int{}
	for i, k := range keys {
		color[k] = i
	}
	values := []string{""}
	if hasX {
		values = xa.Values
	}
	const tScale, dScale = 1e-6, 1e3
	xmin, xmax, ymax := math.Inf(1), 0.0, 0.0
	type panelPts struct {
		title       string
		runs, means []scatterPoint
	}
	var panels []panelPts
	for _, xv := range values {
		pp := panelPts{title: "all points"}
		if hasX {
			pp.title = xa.Short + " = " + xv
		}
		for _, g := range d.Groups {
			if hasX && g.Param(xa.Path) != xv {
				continue
			}
			k := lineKey(g, xa, d.Axes)
			if !hasX {
				k = g.Label
				if _, ok := color[k]; !ok {
					color[k] = len(color)
				}
			}
			live := g.Backend == scenario.BackendLive
			tp, dl := g.Values(metrics.ScopeNetwork, 0, "agg_throughput"), g.Values(metrics.ScopeNetwork, 0, "p95_rtt")
			var ts, ds []float64
			for i := range tp {
				if math.IsNaN(tp[i]) || math.IsNaN(dl[i]) {
					continue
				}
				pp.runs = append(pp.runs, scatterPoint{X: dl[i] * dScale, Y: tp[i] * tScale, Color: color[k], Box: live})
				ts, ds = append(ts, tp[i]*tScale), append(ds, dl[i]*dScale)
				xmin, xmax, ymax = math.Min(xmin, dl[i]*dScale), math.Max(xmax, dl[i]*dScale), math.Max(ymax, tp[i]*tScale)
			}
			if len(ts) == 0 {
				continue
			}
			label := shortKey(k)
			if live {
				label += " (live)"
			}
			pp.means = append(pp.means, scatterPoint{X: metrics.Summarize(ds).Mean, Y: metrics.Summarize(ts).Mean, Color: color[k], Box: live, Label: label})
		}
		if len(pp.means) > 0 {
			panels = append(panels, pp)
		}
	}
	if len(panels) == 0 {
		return Figure{}, false, nil
	}
	pad := 0.08 * (xmax - xmin)
	if pad == 0 {
		pad = 0.1 * xmax
	}
	f := Figure{Title: "Throughput against 95th-percentile RTT"}
	for _, pp := range panels {
		svg, err := scatterSVG(pp.title, "95th-percentile RTT (ms, reversed)", "throughput (Mbit/s)", math.Max(0, xmin-pad), xmax+pad, 0, ymax*1.1, pp.runs, pp.means)
		if err != nil {
			return Figure{}, false, err
		}
		f.Panels = append(f.Panels, template.HTML(svg))
	}
	f.Caption = "As Pantheon (Yan et al., USENIX ATC 2018) shows schemes: aggregate throughput (agg_throughput) against the 95th percentile of " +
		"the RTT samples (p95_rtt), the delay axis reversed so that better — more throughput, less delay — is up and to the right. " +
		"Large labelled marks: means over the runs; small pale marks: the runs; circles simulator, squares live. " +
		"One panel per value of the swept parameter, all on the same scales."
	return f, true, nil
}
