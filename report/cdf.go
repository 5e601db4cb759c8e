package report

import (
	"html/template"

	"cclab/metrics"
	"cclab/scenario"
)

// cdfPanels are the distributions drawn per line: each flow's throughput,
// each flow's smoothed RTT and the bottleneck's queueing delay (the mean
// sojourn of the packets dequeued), per interval.
var cdfPanels = []struct {
	scope         metrics.Scope
	metric, title string
	xlabel        string
	scale         float64
}{
	{metrics.ScopeFlow, "throughput", "throughput", "throughput (Mbit/s)", 1e-6},
	{metrics.ScopeFlow, "srtt", "RTT", "smoothed RTT (ms)", 1e3},
	{metrics.ScopeLink, "queue_delay", "queueing delay", "bottleneck queueing delay (ms)", 1e3},
}

// cdfFigures draws, for each line (each combination of the parameters
// other than the x axis, e.g. each controller), the distributions of its
// per-interval throughput, RTT and queueing delay over every run of each
// point (a curve per x value; sim solid, live dashed): how steady each
// configuration is, and how much delay it causes, not only its means.
func (d *ReportData) cdfFigures(sc *seriesCache) ([]Figure, error) {
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
	var figs []Figure
	for _, k := range lines {
		f := Figure{Title: "Distributions of throughput, RTT and queueing delay, " + k,
			Caption: "Empirical CDFs over all runs of each point, one value per interval: each flow's throughput at the receiver, " +
				"each flow's smoothed RTT (time-weighted mean in the interval) and the bottleneck's queueing delay (mean sojourn of the packets dequeued in the interval; " +
				"intervals without a departure have none). Solid: simulator, dashed: live."}
		for _, cp := range cdfPanels {
			var curves []cdfCurve
			for _, g := range byLine[k] {
				vals, err := d.seriesValues(sc, g, cp.scope, cp.metric)
				if err != nil {
					return nil, err
				}
				label, color := g.Backend, 0
				if hasX {
					xv := g.Param(x.Path)
					label = x.Short + "=" + xv
					for i, v := range x.Values {
						if v == xv {
							color = i
						}
					}
				}
				curves = append(curves, cdfCurve{Label: label, Color: color, Dashed: g.Backend == scenario.BackendLive, Values: vals})
			}
			svg, err := cdfSVG(cp.title+": "+shortKey(k), cp.xlabel, cp.scale, curves)
			if err != nil {
				return nil, err
			}
			f.Panels = append(f.Panels, template.HTML(svg))
			f.names = append(f.names, cp.title)
		}
		figs = append(figs, f)
	}
	return figs, nil
}

// seriesValues are every value of a metric's series over g's runs: of
// every flow for a flow metric, of the bottleneck for a link metric.
func (d *ReportData) seriesValues(sc *seriesCache, g *Group, scope metrics.Scope, metric string) ([]float64, error) {
	var vals []float64
	for k := range g.Runs {
		r := &g.Runs[k]
		series, err := sc.of(r.ID)
		if err != nil {
			return nil, err
		}
		bl := bottleneckOf(r)
		for _, s := range series {
			if s.Scope == scope && s.Metric == metric && (scope != metrics.ScopeLink || s.ScopeID == bl) {
				vals = append(vals, s.V...)
			}
		}
	}
	return vals, nil
}
