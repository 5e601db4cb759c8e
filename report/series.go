package report

import (
	"context"
	"fmt"
	"html/template"
	"math"
	"slices"

	"cclab/metrics"
	"cclab/scenario"
	"cclab/store"
)

// seriesCache loads each run's time series from the store once (the
// distributions and the time series both read them).
type seriesCache struct {
	ctx  context.Context
	st   store.Store
	runs map[int64][]store.SeriesRecord
}

func newSeriesCache(ctx context.Context, st store.Store) *seriesCache {
	return &seriesCache{ctx: ctx, st: st, runs: map[int64][]store.SeriesRecord{}}
}

// of returns run's series.
func (c *seriesCache) of(run int64) ([]store.SeriesRecord, error) {
	if s, ok := c.runs[run]; ok {
		return s, nil
	}
	s, err := c.st.Series(c.ctx, run)
	if err != nil {
		return nil, err
	}
	c.runs[run] = s
	return s, nil
}

// get returns one series of a run, or nil.
func (c *seriesCache) get(run int64, scope metrics.Scope, id int64, metric string) (*store.SeriesRecord, error) {
	series, err := c.of(run)
	if err != nil {
		return nil, err
	}
	for i := range series {
		if series[i].Scope == scope && series[i].ScopeID == id && series[i].Metric == metric {
			return &series[i], nil
		}
	}
	return nil, nil
}

// seriesFigure is one point's time series: every backend's runs overlaid.
type seriesFigure struct {
	Label string
	Runs  string // which runs: "simulator: 5 seeds, live: 3 seeds"
	SVG   template.HTML
	Files []string // its panels as files beside the report (figfiles.go)
	names []string // its panels' metrics, for their files
}

// seriesPanels are the time-series panels: a flow metric or the
// bottleneck's queue, its title, unit and scale.
var seriesPanels = []struct {
	scope         metrics.Scope
	metric, title string
	ylabel        string
	scale         float64
}{
	{metrics.ScopeFlow, "throughput", "throughput at the receiver", "Mbit/s", 1e-6},
	{metrics.ScopeFlow, "cwnd", "congestion window", "kB", 1e-3},
	{metrics.ScopeFlow, "srtt", "smoothed RTT", "ms", 1e3},
	{metrics.ScopeLink, "queue_len", "bottleneck queue length", "packets", 1},
}

// seriesFigures draws, per point, each metric's time series over all runs
// of every backend on one panel: per backend (and flow) the median over the
// runs at each sample time, with a band from their minimum to their
// maximum; simulator solid, live dashed.
func (d *ReportData) seriesFigures(sc *seriesCache) ([]seriesFigure, error) {
	var labels []string
	byPoint := map[string][]*Group{}
	for _, g := range d.Groups {
		if len(g.Runs) == 0 {
			continue
		}
		if _, ok := byPoint[g.Label]; !ok {
			labels = append(labels, g.Label)
		}
		byPoint[g.Label] = append(byPoint[g.Label], g)
	}
	var out []seriesFigure
	for _, label := range labels {
		groups := byPoint[label]
		var panels []panel
		var names []string
		for _, sp := range seriesPanels {
			pn := panel{Title: sp.title, YLabel: sp.ylabel}
			for bi, g := range groups {
				lines, err := d.bandLines(sc, g, sp.scope, sp.metric, bi)
				if err != nil {
					return nil, err
				}
				for i := range lines {
					lines[i].Scale = sp.scale
				}
				pn.Bands = append(pn.Bands, lines...)
			}
			if len(pn.Bands) > 0 {
				panels = append(panels, pn)
				names = append(names, sp.metric)
			}
		}
		if len(panels) == 0 {
			continue
		}
		svg, err := timeSeriesSVG(panels)
		if err != nil {
			return nil, err
		}
		runs := ""
		for i, g := range groups {
			if i > 0 {
				runs += ", "
			}
			runs += fmt.Sprintf("%s: %d run(s)", BackendName(g.Backend), len(g.Runs))
		}
		out = append(out, seriesFigure{Label: label, Runs: runs, SVG: template.HTML(svg), names: names})
	}
	return out, nil
}

// bandLines are one backend's bands of a metric: one per flow (by its
// position in the runs' flow lists) for a flow metric, the bottleneck's
// for a link metric. Colours: by flow when there are several, else by
// backend; live dashed.
func (d *ReportData) bandLines(sc *seriesCache, g *Group, scope metrics.Scope, metric string, backend int) ([]bandLine, error) {
	ids := func(r *store.RunRecord) []int64 {
		if scope == metrics.ScopeLink {
			if bl := bottleneckOf(r); bl >= 0 {
				return []int64{bl}
			}
			return nil
		}
		var out []int64
		for _, f := range r.Flows {
			out = append(out, f.ID)
		}
		return out
	}
	flows := len(ids(&g.Runs[0]))
	var out []bandLine
	for i := 0; i < flows; i++ {
		var runs []*store.SeriesRecord
		for k := range g.Runs {
			r := &g.Runs[k]
			if id := ids(r); i < len(id) {
				s, err := sc.get(r.ID, scope, id[i], metric)
				if err != nil {
					return nil, err
				}
				if s != nil && len(s.T) > 0 {
					runs = append(runs, s)
				}
			}
		}
		if len(runs) == 0 {
			continue
		}
		bl := band(runs)
		bl.Label, bl.Color, bl.Dashed = BackendName(g.Backend), backend, g.Backend == scenario.BackendLive
		if flows > 1 && scope == metrics.ScopeFlow {
			bl.Label += " " + g.Runs[0].Flows[i].Name
			bl.Color = i
		}
		out = append(out, bl)
	}
	return out, nil
}

// band is the median and the min–max band over runs' series, sample by
// sample (the k-th samples of all runs, at the median of their times:
// every run samples at the scenario's interval from its start).
func band(runs []*store.SeriesRecord) bandLine {
	n := 0
	for _, r := range runs {
		n = max(n, len(r.T))
	}
	var b bandLine
	ts, vs := make([]float64, 0, len(runs)), make([]float64, 0, len(runs))
	for k := 0; k < n; k++ {
		ts, vs = ts[:0], vs[:0]
		for _, r := range runs {
			if k < len(r.T) && k < len(r.V) && !math.IsNaN(r.V[k]) {
				ts, vs = append(ts, r.T[k]), append(vs, r.V[k])
			}
		}
		if len(vs) == 0 {
			continue
		}
		slices.Sort(ts)
		slices.Sort(vs)
		b.T = append(b.T, metrics.SortedMedian(ts))
		b.Med = append(b.Med, metrics.SortedMedian(vs))
		b.Lo, b.Hi = append(b.Lo, vs[0]), append(b.Hi, vs[len(vs)-1])
	}
	b.Runs = len(runs)
	return b
}
