package report

import (
	"slices"
	"strings"
	"testing"

	"cclab/metrics"
	"cclab/scenario"
	"cclab/store"
)

// refGroup returns a group of one run at point with the network's goodput,
// retransmissions and timeouts.
func refGroup(point int, backend, cc string, goodput, retx, rtos float64) *Group {
	run := store.RunRecord{Point: point, Backend: backend, Seed: 1}
	for m, v := range map[string]float64{"agg_throughput": goodput, "total_retransmissions": retx, "total_rtos": rtos} {
		run.Summaries = append(run.Summaries, store.SummaryRecord{Scope: metrics.ScopeNetwork, Metric: m, Value: v})
	}
	return &Group{Point: point, Backend: backend, Runs: []store.RunRecord{run},
		Params: []scenario.Param{{Axis: "flows[0].cc", Value: cc}}}
}

// TestSimNS3TableMarks checks which cells of the simulator-vs-ns-3 table
// are marked: goodput outside ±10 % (±15 % for Vegas and BBR),
// retransmissions outside 1.5×, timeouts never.
func TestSimNS3TableMarks(t *testing.T) {
	type point struct {
		cc                  string
		sim, ns3            [3]float64 // goodput, retransmissions, timeouts
		goodput, retx, rtos string     // the marks
	}
	points := []point{
		{"newreno", [3]float64{1.05e6, 100, 1}, [3]float64{1e6, 100, 1}, "", "", ""},
		{"newreno", [3]float64{1.12e6, 100, 1}, [3]float64{1e6, 100, 1}, "✗", "", ""},
		{"cubic:linux=true", [3]float64{0.88e6, 100, 1}, [3]float64{1e6, 100, 1}, "✗", "", ""},
		// retransmissions within 1.5× and timeouts 2× are not marked
		{"newreno", [3]float64{1e6, 140, 2}, [3]float64{1e6, 100, 1}, "", "", ""},
		{"newreno", [3]float64{1e6, 160, 1}, [3]float64{1e6, 100, 1}, "", "✗", ""},
		{"newreno", [3]float64{1e6, 60, 1}, [3]float64{1e6, 100, 1}, "", "✗", ""},
		{"vegas", [3]float64{1.14e6, 100, 1}, [3]float64{1e6, 100, 1}, "", "", ""},
		{"vegas", [3]float64{1.16e6, 100, 1}, [3]float64{1e6, 100, 1}, "✗", "", ""},
		{"bbr:ns3exit=true", [3]float64{0.86e6, 100, 1}, [3]float64{1e6, 100, 1}, "", "", ""},
		// retransmissions where ns-3 has none are marked; none on both sides is not
		{"newreno", [3]float64{1e6, 5, 1}, [3]float64{1e6, 0, 0}, "", "✗", ""},
		{"newreno", [3]float64{1e6, 0, 0}, [3]float64{1e6, 0, 0}, "", "", ""},
	}
	d := &ReportData{Axes: []scenario.Axis{{Path: "flows[0].cc", Short: "cc"}}}
	for i, p := range points {
		d.Groups = append(d.Groups, refGroup(i, scenario.BackendSim, p.cc, p.sim[0], p.sim[1], p.sim[2]),
			refGroup(i, scenario.BackendNS3, p.cc, p.ns3[0], p.ns3[1], p.ns3[2]))
	}
	tab, ok := d.simNS3Table()
	if !ok || len(tab.Rows) != 4*len(points) {
		t.Fatalf("simNS3Table: %d rows (ok %v), want %d", len(tab.Rows), ok, 4*len(points))
	}
	for i, p := range points {
		// goodput, its median row (one seed: the median is the mean), retransmissions, timeouts
		for j, want := range []string{p.goodput, p.goodput, p.retx, p.rtos} {
			row := tab.Rows[4*i+j]
			if got := row[len(row)-1]; got != want {
				t.Errorf("point %d (%s), %s: sim/ns3 %s marked %q, want %q", i, p.cc, row[1], row[len(row)-2], got, want)
			}
		}
	}
}

// TestMedianRow checks the simulator-vs-ns-3 table's median goodput row: one
// outlying ns-3 seed (the ratio of the means 0.668) leaves the ratio of the
// medians at 1 and unmarked; a shift of every seed is marked; a side without
// runs gives no ratio.
func TestMedianRow(t *testing.T) {
	base := []float64{2.0, 2.1, 1.9, 2.0, 2.2, 1.8, 2.0, 2.05, 1.95, 2.0, 2.1, 1.9, 2.0, 2.2, 1.8, 2.0}
	jump := slices.Clone(base)
	jump[14] = 17.7
	low := make([]float64, len(base))
	for i, v := range base {
		low[i] = 0.8 * v
	}
	for _, c := range []struct {
		name      string
		sim, ns3  []float64
		wantRatio string // the ratio cell's leading figure
		wantMark  string
	}{
		{"same", base, base, "1.000", ""},
		{"one ns-3 seed jumps", base, jump, "1.000", ""},
		{"every seed 20 % low", low, base, "0.800", "✗"},
		{"no ns-3 runs", base, nil, "n/a", ""},
	} {
		got := medianRow("goodput", "bit/s", c.sim, c.ns3, 0.9, 1.1)
		if len(got) != 5 {
			t.Fatalf("%s: got %d cells, want 5", c.name, len(got))
		}
		if !strings.HasPrefix(got[3], c.wantRatio) || got[4] != c.wantMark {
			t.Errorf("%s: got ratio %q mark %q, want %s… mark %q", c.name, got[3], got[4], c.wantRatio, c.wantMark)
		}
	}
	if m := metrics.Median(jump); m != 2.0 {
		t.Errorf("median of the jump sample: got %v, want 2", m)
	}
}

// TestConformanceBand checks the goodput band of a point by its flows'
// controllers, from the parsed scenario or else from the point's cc axis.
func TestConformanceBand(t *testing.T) {
	for _, c := range []struct {
		exp  []string // the point's flows' cc in the parsed scenario; nil: none parsed
		axis string
		want float64
	}{
		{nil, "newreno:ca=acks", ConformanceBand},
		{nil, "vegas", ConformanceModelBand},
		{nil, "bbr:rtorestore=false", ConformanceModelBand},
		{[]string{"cubic"}, "", ConformanceBand},
		{[]string{"reno", "bbr"}, "", ConformanceModelBand},
	} {
		d := &ReportData{}
		g := refGroup(3, scenario.BackendSim, c.axis, 1, 1, 1)
		if c.exp != nil {
			g.Params = nil
			var flows []scenario.Flow
			for _, cc := range c.exp {
				flows = append(flows, scenario.Flow{CC: cc})
			}
			d.Exp = &scenario.Experiment{Points: []scenario.Point{{Index: 3, Scenario: scenario.Scenario{Flows: flows}}}}
		}
		if got := d.conformanceBand(g); got != c.want {
			t.Errorf("flows %v, cc axis %q: band %v, want %v", c.exp, c.axis, got, c.want)
		}
	}
}
