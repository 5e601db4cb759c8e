package report

import (
	"fmt"

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
			ratio, mark := "n/a", ""
			if r.Mean > 0 {
				q := s.Mean / r.Mean
				ratio = fmt.Sprintf("%.3f", q)
				if q < 1-ConformanceBand || q > 1+ConformanceBand {
					mark = "✗"
				}
			}
			t.Rows = append(t.Rows, append(d.paramCells(g), km.Title, SummaryCell(unit, s), SummaryCell(unit, r), ratio, mark))
		}
	}
	return t, len(t.Rows) > 0
}
