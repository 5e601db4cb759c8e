package report

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"cclab/metrics"
	"cclab/scenario"
)

// ConformanceBand is the band of the sim/reference ratio a point is held
// to: outside ±10 % it is marked (docs/compat.md).
const ConformanceBand = 0.10

// referenceMetrics are the metrics the simulator-vs-ns-3 table compares.
var referenceMetrics = reportMetricsNamed("agg_throughput", "total_retransmissions", "total_rtos")

// simNS3Table compares cclab's simulator with ns-3 point by point: the
// means with their intervals on both backends and the ratio sim/ns3, marked
// where it is outside [1-ConformanceBand, 1+ConformanceBand].
func (d *ReportData) simNS3Table() (Table, bool) {
	t := Table{Title: "Simulator vs ns-3",
		Caption: fmt.Sprintf("Mean over seeds on each backend with its 95 %% confidence interval, and the ratio sim / ns3 of the means; "+
			"a ratio outside [%.2f, %.2f] is marked ✗. ns-3 runs the same plan (docs/ns3.md); each stack's settings on both sides are "+
			"the scenario's flows, mapped as docs/ns3.md says.", 1-ConformanceBand, 1+ConformanceBand) + BootstrapNote}
	t.Head = append(d.axisHeads(), "metric", "sim", "ns3", "sim / ns3", "")
	for _, g := range d.Groups {
		if g.Backend != scenario.BackendSim {
			continue
		}
		ref := d.group(g.Point, scenario.BackendNS3)
		if ref == nil {
			continue
		}
		for _, km := range referenceMetrics {
			unit := metrics.UnitOf(km.Scope, km.Metric)
			s, r := g.Summary(km.Scope, 0, km.Metric), ref.Summary(km.Scope, 0, km.Metric)
			ratio, mark := ratioCells(s.Mean, r.Mean, 1-ConformanceBand, 1+ConformanceBand)
			t.Rows = append(t.Rows, append(d.paramCells(g), km.Title, SummaryCell(unit, s), SummaryCell(unit, r), ratio, mark))
		}
	}
	return t, len(t.Rows) > 0
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
			lo, hi := 1-ConformanceBand, 1+ConformanceBand
			switch km.Metric {
			case "total_retransmissions":
				lo, hi = 1/KernelRetransFactor, KernelRetransFactor
			case "agg_throughput":
			default:
				lo, hi = math.Inf(-1), math.Inf(1) // shown, not held to a tolerance
			}
			ratio, mark := ratioCells(c.Mean, k.Mean, lo, hi)
			t.Rows = append(t.Rows, append(d.paramCells(g), km.Title, SummaryCell(unit, k), SummaryCell(unit, c), ratio, mark))
		}
	}
	return t, len(t.Rows) > 0
}

// ratioCells formats num / den and marks it ✗ outside [lo, hi]; "n/a"
// without a positive den.
func ratioCells(num, den, lo, hi float64) (ratio, mark string) {
	if !(den > 0) {
		return "n/a", ""
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
