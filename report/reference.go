package report

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"cclab/metrics"
	"cclab/scenario"
)

// ConformanceBand is the band of the sim/reference goodput ratio a point is
// held to: outside ±10 % it is marked (issue 25's acceptance for NewReno,
// Reno and CUBIC; docs/compat.md).
const ConformanceBand = 0.10

// ConformanceModelBand is the wider goodput band for the controllers whose
// ns-3 models depart from cclab's on purpose or by a bug, Vegas and BBR
// (issue 25's acceptance: [0.85, 1.15], or the deviation explained by a cited
// difference of the ns-3 model; docs/compat.md).
const ConformanceModelBand = 0.15

// ConformanceRetransFactor is the factor by which cclab's retransmissions may
// differ from ns-3's at a conformance point (issue 25's acceptance: within
// 1.5×).
const ConformanceRetransFactor = 1.5

// modelBandControllers are the controllers held to ConformanceModelBand.
var modelBandControllers = []string{"vegas", "bbr"}

// referenceMetrics are the metrics the simulator-vs-ns-3 table compares.
var referenceMetrics = reportMetricsNamed("agg_throughput", "total_retransmissions", "total_rtos")

// simNS3Table compares cclab's simulator with ns-3 point by point: the
// means with their intervals on both backends and the ratio sim/ns3, marked
// where goodput is outside its band (conformanceBand) or retransmissions
// differ by more than ConformanceRetransFactor; timeouts are shown, not
// held to a tolerance.
func (d *ReportData) simNS3Table() (Table, bool) {
	t := Table{Title: "Simulator vs ns-3",
		Caption: fmt.Sprintf("Mean over seeds on each backend with its 95 %% confidence interval, and the ratio sim / ns3 of the means; "+
			"goodput outside [%.2f, %.2f] ([%.2f, %.2f] for %s, whose ns-3 models differ: docs/compat.md) or retransmissions outside "+
			"[1/%g, %g] are marked ✗ (a count above 0 against none as well); timeouts are shown, not held to a tolerance. "+
			"ns-3 runs the same plan (docs/ns3.md); each stack's settings on both sides are "+
			"the scenario's flows, mapped as docs/ns3.md says. Below each goodput row, the seeds' medians and the ratio of the medians with its "+
			"95 %% bootstrap interval, marked the same way: beside the mean, not instead of it (one seed in another regime can decide a mean of 16; docs/compat.md).", 1-ConformanceBand, 1+ConformanceBand,
			1-ConformanceModelBand, 1+ConformanceModelBand, strings.Join(modelBandControllers, " and "),
			ConformanceRetransFactor, ConformanceRetransFactor) + BootstrapNote}
	t.Head = append(d.axisHeads(), "metric", "sim", "ns3", "sim / ns3", "")
	for _, g := range d.Groups {
		if g.Backend != scenario.BackendSim {
			continue
		}
		ref := d.group(g.Point, scenario.BackendNS3)
		if ref == nil {
			continue
		}
		band := d.conformanceBand(g)
		for _, km := range referenceMetrics {
			unit := metrics.UnitOf(km.Scope, km.Metric)
			s, r := g.Summary(km.Scope, 0, km.Metric), ref.Summary(km.Scope, 0, km.Metric)
			lo, hi := toleranceOf(km.Metric, band, ConformanceRetransFactor)
			ratio, mark := ratioCells(s.Mean, r.Mean, lo, hi)
			t.Rows = append(t.Rows, append(d.paramCells(g), km.Title, SummaryCell(unit, s), SummaryCell(unit, r), ratio, mark))
			if km.Metric == "agg_throughput" {
				t.Rows = append(t.Rows, append(d.paramCells(g), medianRow(km.Title, unit, g.Values(km.Scope, 0, km.Metric),
					ref.Values(km.Scope, 0, km.Metric), 1-band, 1+band)...))
			}
		}
	}
	return t, len(t.Rows) > 0
}

// medianRow returns the cells of the simulator-vs-ns-3 table's row of the
// seeds' median goodput: metric, sim median, ns3 median, the ratio of the
// medians with its 95 % bootstrap interval (metrics.MedianRatio: the two
// sides resampled independently) and ✗ if that ratio is outside [lo, hi].
// With 16 seeds one run in another regime (an ns-3 seed at 7× the others'
// goodput, docs/compat.md) decides the ratio of the means; this row shows
// the point without it, beside the mean, not instead of it.
func medianRow(title, unit string, sim, ns3 []float64, lo, hi float64) []string {
	sim, ns3 = finite(sim), finite(ns3)
	cells := []string{title + ", median of seeds", "–", "–", "n/a", ""}
	if len(sim) == 0 || len(ns3) == 0 {
		return cells
	}
	q, qlo, qhi := metrics.MedianRatio(sim, ns3, metrics.Confidence)
	cells[1] = FormatValue(unit, metrics.Median(sim))
	cells[2] = FormatValue(unit, metrics.Median(ns3))
	if math.IsNaN(q) {
		return cells
	}
	cells[3] = fmt.Sprintf("%.3f [%.3f, %.3f]", q, qlo, qhi)
	if q < lo || q > hi {
		cells[4] = "✗"
	}
	return cells
}

// finite returns the values of xs that are not NaN or infinite (a run
// without the metric).
func finite(xs []float64) []float64 {
	var out []float64
	for _, x := range xs {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			out = append(out, x)
		}
	}
	return out
}

// toleranceOf returns the band [lo, hi] a ratio of the metric is held to:
// goodput ±band, retransmissions within retrans×, anything else none.
func toleranceOf(metric string, band, retrans float64) (lo, hi float64) {
	switch metric {
	case "agg_throughput":
		return 1 - band, 1 + band
	case "total_retransmissions":
		return 1 / retrans, retrans
	}
	return math.Inf(-1), math.Inf(1) // shown, not held to a tolerance
}

// conformanceBand returns the goodput band of g's point: ConformanceModelBand
// if one of its flows runs a controller of modelBandControllers, otherwise
// ConformanceBand.
func (d *ReportData) conformanceBand(g *Group) float64 {
	for _, cc := range d.pointControllers(g) {
		name, _, _ := strings.Cut(cc, ":")
		if slices.Contains(modelBandControllers, strings.TrimSpace(name)) {
			return ConformanceModelBand
		}
	}
	return ConformanceBand
}

// pointControllers returns the controller specs of g's point: its flows'
// in the parsed scenario, or, without it, the values of its axes over a
// flow's cc.
func (d *ReportData) pointControllers(g *Group) []string {
	var ccs []string
	if d.Exp != nil {
		for _, p := range d.Exp.Points {
			if p.Index != g.Point {
				continue
			}
			for _, f := range p.Scenario.Flows {
				ccs = append(ccs, f.CC)
			}
			return ccs
		}
	}
	for _, p := range g.Params {
		if p.Axis == "cc" || strings.HasSuffix(p.Axis, ".cc") {
			ccs = append(ccs, p.Value)
		}
	}
	return ccs
}

// kernelTable compares kernel TCP with cclab live point by point: for each
// live point of a sweep over a flow's stack whose value is kernel, the point
// that differs only in that axis being cclab; the means with their
// intervals, the ratio cclab / kernel, marked where goodput is outside
// ±ConformanceBand or retransmissions differ by more than
// KernelRetransFactor (docs/compat.md).
func (d *ReportData) kernelTable() (Table, bool) {
	t := Table{Title: "Kernel TCP vs cclab (live)",
		Caption: fmt.Sprintf("The same path live through the link shell, with the flows run by the host's TCP and by cclab (docs/scenarios.md "+
			"\"Kernel TCP flows\"); mean over seeds with its 95 %% confidence interval, and the ratio cclab / kernel of the means: goodput outside "+
			"[%.2f, %.2f] or retransmissions outside [1/%g, %g] are marked ✗.", 1-ConformanceBand, 1+ConformanceBand, KernelRetransFactor, KernelRetransFactor) + BootstrapNote}
	t.Head = append(d.axisHeads(), "metric", "kernel", "cclab", "cclab / kernel", "")
	for _, g := range d.Groups {
		if g.Backend != scenario.BackendLive {
			continue
		}
		ref := d.stackPair(g)
		if ref == nil {
			continue
		}
		for _, km := range referenceMetrics {
			unit := metrics.UnitOf(km.Scope, km.Metric)
			k, c := g.Summary(km.Scope, 0, km.Metric), ref.Summary(km.Scope, 0, km.Metric)
			lo, hi := toleranceOf(km.Metric, ConformanceBand, KernelRetransFactor)
			ratio, mark := ratioCells(c.Mean, k.Mean, lo, hi)
			t.Rows = append(t.Rows, append(d.paramCells(g), km.Title, SummaryCell(unit, k), SummaryCell(unit, c), ratio, mark))
		}
	}
	return t, len(t.Rows) > 0
}

// ratioCells formats num / den and marks it ✗ outside [lo, hi]. Without a
// positive den it is "n/a", marked if num is positive and the ratio is held
// to a finite upper bound (e.g. retransmissions where the reference has
// none).
func ratioCells(num, den, lo, hi float64) (ratio, mark string) {
	if !(den > 0) {
		if num > 0 && !math.IsInf(hi, 1) {
			mark = "✗"
		}
		return "n/a", mark
	}
	q := num / den
	if q < lo || q > hi {
		mark = "✗"
	}
	return fmt.Sprintf("%.3f", q), mark
}

// KernelRetransFactor is the factor by which cclab's retransmissions may
// differ from kernel TCP's at a conformance point (docs/compat.md).
const KernelRetransFactor = 2.0

// stackPair returns, for a live group whose params set a flow's stack to
// kernel, the live group at the same params with that stack cclab; nil if
// g is not such a group or there is none.
func (d *ReportData) stackPair(g *Group) *Group {
	i := slices.IndexFunc(g.Params, func(p scenario.Param) bool {
		return strings.HasSuffix(p.Axis, ".stack") && p.Value == scenario.StackKernel
	})
	if i < 0 {
		return nil
	}
	want := slices.Clone(g.Params)
	want[i].Value = scenario.StackCclab
	for _, o := range d.Groups {
		if o.Backend == g.Backend && slices.Equal(o.Params, want) {
			return o
		}
	}
	return nil
}
