package studies

import (
	"math"
	"strings"
	"testing"

	"cclab/metrics"
	"cclab/report"
	"cclab/scenario"
	"cclab/store"
)

// TestPairedChangeByHand checks the paired comparison against a hand
// computation. Baseline 10, 12, 9, 11, 13 and variant 8, 11, 9, 10, 10 (pairs
// share a seed):
//
//	differences −2, −1, 0, −1, −3: mean −1.4; deviations −0.6, 0.4, 1.4,
//	0.4, −1.6, squares summing to 5.2, sd = √(5.2/4) = 1.140175425;
//	t(0.975, 4) = 2.776445105, CI half-width 2.776445105 · 1.140175425 / √5
//	= 1.415714777;
//	percent changes −20, −8.333…, 0, −9.0909…, −23.0769…: mean −12.1002331,
//	sd 9.38822728, CI half-width 2.776445105 · 9.38822728 / √5 = 11.6570238.
func TestPairedChangeByHand(t *testing.T) {
	c := metrics.PairedChange([]float64{10, 12, 9, 11, 13}, []float64{8, 11, 9, 10, 10})
	for _, tc := range []struct {
		name      string
		got, want float64
	}{
		{"difference mean", c.Diff.Mean, -1.4},
		{"difference sd", c.Diff.SD, 1.140175425099138},
		{"difference CI", c.Diff.CI, 1.4157147769822749},
		{"percent mean", c.Paired.Mean, -12.100233100233101},
		{"percent sd", c.Paired.SD, 9.388227279976224},
		{"percent CI", c.Paired.CI, 11.65702382050095},
		{"change of the means", c.Percent, 100 * (9.6 - 11) / 11},
		{"t(0.975, 4)", metrics.TQuantile(0.975, 4), 2.7764451051977987},
	} {
		if math.Abs(tc.got-tc.want) > 1e-9*math.Max(1, math.Abs(tc.want)) {
			t.Errorf("%s: got %.12g, want %.12g", tc.name, tc.got, tc.want)
		}
	}
	if c.Diff.N != 5 || c.Paired.N != 5 {
		t.Errorf("pairs: got %d and %d, want 5", c.Diff.N, c.Paired.N)
	}
}

// dcaRun is a stored run of the DCA study with the given summaries.
func dcaRun(point int, caseName string, params []scenario.Param, seed uint64, vals map[string]float64) store.RunRecord {
	r := store.RunRecord{Point: point, Backend: scenario.BackendSim, Seed: seed, Status: store.StatusDone,
		Params: append([]scenario.Param{{Axis: scenario.CaseAxis, Value: caseName}}, params...)}
	for k, v := range vals {
		scope, id, metric := metrics.ScopeFlow, int64(1), k
		if s, m, ok := strings.Cut(k, ":"); ok {
			metric = m
			switch s {
			case "f2":
				id = 2
			case "l0":
				scope, id = metrics.ScopeLink, 0
			case "l2":
				scope, id = metrics.ScopeLink, 2
			}
		}
		r.Summaries = append(r.Summaries, store.SummaryRecord{Scope: scope, ScopeID: id, Metric: metric, Value: v})
	}
	return r
}

// TestPairedReport builds the study's report sections from stored runs and
// checks Table 8-1's cells (hand-computed paired percent changes with their
// standard deviations and Student's t intervals), the variants' baseline,
// Table 8-2's rows and Fig. 8-4's data.
func TestPairedReport(t *testing.T) {
	d := &report.ReportData{}
	add := func(point int, caseName string, params []scenario.Param, runs ...map[string]float64) {
		g := &report.Group{Point: point, Params: append([]scenario.Param{{Axis: scenario.CaseAxis, Value: caseName}}, params...), Backend: scenario.BackendSim}
		for i, v := range runs {
			g.Runs = append(g.Runs, dcaRun(point, caseName, params, uint64(i+1), v))
		}
		d.Groups = append(d.Groups, g)
	}
	emory := func(cc string) []scenario.Param {
		return []scenario.Param{{Axis: "topology", Value: "emory"}, {Axis: "flows[0].cc", Value: cc}}
	}
	// Loss 1.0, 1.2, 0.8 % → 0.8, 1.0, 0.7 %: changes −20, −16.67, −12.5 %,
	// mean −16.39, sd 3.758, 95 % CI (t(0.975, 2) = 4.3027) [−25.7, −7.1].
	// Throughput 2, 2.2, 1.8 → 1.5, 1.65, 1.26 Mbit/s: −25, −25, −30 %, mean
	// −26.67, sd 2.887, CI [−33.8, −19.5].
	add(0, DCACaseSingle, emory("reno"),
		map[string]float64{"loss_rate": 0.010, "mean_throughput": 2e6},
		map[string]float64{"loss_rate": 0.012, "mean_throughput": 2.2e6},
		map[string]float64{"loss_rate": 0.008, "mean_throughput": 1.8e6})
	add(1, DCACaseSingle, emory("dca"),
		map[string]float64{"loss_rate": 0.008, "mean_throughput": 1.5e6, "total_delay_reductions": 10},
		map[string]float64{"loss_rate": 0.010, "mean_throughput": 1.65e6, "total_delay_reductions": 12},
		map[string]float64{"loss_rate": 0.007, "mean_throughput": 1.26e6, "total_delay_reductions": 14})
	add(2, DCACaseVariants, emory("dca:reduction=0.25"),
		map[string]float64{"loss_rate": 0.009, "mean_throughput": 2e6},
		map[string]float64{"loss_rate": 0.012, "mean_throughput": 2.2e6},
		map[string]float64{"loss_rate": 0.008, "mean_throughput": 1.8e6})
	pair := func(cc string) []scenario.Param {
		return []scenario.Param{{Axis: "topology", Value: "emory"}, {Axis: "flows[1].cc", Value: cc}}
	}
	add(3, DCACasePair, pair("reno"),
		map[string]float64{"mean_srtt": 0.200, "l0:drop_rate": 0.01, "l0:mean_queue_len": 100, "l0:total_queue_oscillations": 10},
		map[string]float64{"mean_srtt": 0.220, "l0:drop_rate": 0.01, "l0:mean_queue_len": 110, "l0:total_queue_oscillations": 12})
	add(4, DCACasePair, pair("dca"),
		map[string]float64{"mean_srtt": 0.180, "l0:drop_rate": 0.008, "l0:mean_queue_len": 90, "l0:total_queue_oscillations": 11},
		map[string]float64{"mean_srtt": 0.200, "l0:drop_rate": 0.009, "l0:mean_queue_len": 100, "l0:total_queue_oscillations": 13})
	for i, share := range []string{"0", "0.5"} {
		add(5+i, DCACaseShare, []scenario.Param{{Axis: "topologies.share.bottleneck.background[0].alt_share", Value: share}},
			map[string]float64{"l0:drop_rate": 0.01 - 0.002*float64(i), "l0:mean_queue_len": 100},
			map[string]float64{"l0:drop_rate": 0.012 - 0.002*float64(i), "l0:mean_queue_len": 120})
	}

	tables := map[string]report.Table{}
	for _, tb := range dcaTables(d) {
		tables[strings.SplitN(tb.Title, ":", 2)[0]] = tb
	}
	t81, ok := tables["Table 8-1"]
	if !ok || len(t81.Rows) != 1 {
		t.Fatalf("Table 8-1: got %+v, want one row", t81)
	}
	want := []string{"emory", "dca", "3", "-16.4 %", "3.8", "[-25.7, -7.1]", "-26.7 %", "2.9", "[-33.8, -19.5]"}
	if got := t81.Rows[0][:len(want)]; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("Table 8-1 row:\n got %q\nwant %q", got, want)
	}
	if got := t81.Rows[0][len(t81.Rows[0])-1]; !strings.HasPrefix(got, "12 ± ") {
		t.Errorf("DCA reactions: got %q, want 12 ± CI", got)
	}
	v := tables["Variants"]
	if len(v.Rows) != 2 || v.Rows[0][1] != "dca" || v.Rows[1][1] != "dca:reduction=0.25" || v.Rows[1][3] != "-3.3 %" {
		t.Errorf("variants: got %q, want the default then reduction=0.25 at -3.3 %% loss against case single's Reno", v.Rows)
	}
	t82, ok := tables["Tables 8-2/8-3"]
	if !ok {
		t.Fatalf("no Tables 8-2/8-3 (Emory's two-flow tables) in %v", dcaTables(d))
	}
	rows := map[string][]string{}
	for _, r := range t82.Rows {
		rows[r[0]] = r
	}
	if r := rows["flow 1 (Reno): mean RTT"]; r == nil || r[1] != "210.00 ms ± 127.06 ms" || r[2] != "190.00 ms ± 127.06 ms" {
		t.Errorf("Reno RTT row: got %q, want 210 ± 127.06 ms (t(0.975,1) = 12.706 · 0.01414 / √2) and 190 ± 127.06 ms", r)
	}
	if r := rows["hop 0 (q0>q1): queue oscillations"]; r == nil || r[3] != "+1 ± 0" {
		t.Errorf("oscillations row: got %q, want a difference of +1 ± 0", r)
	}
	if len(tables["Fig. 8-4 (data)"].Rows) != 2 {
		t.Errorf("Fig. 8-4 data: got %q, want 2 shares", tables["Fig. 8-4 (data)"].Rows)
	}
	if f, ok, err := dcaShareFigure(d); err != nil || !ok || len(f.Panels) != 2 {
		t.Errorf("Fig. 8-4: got %d panels, ok %v, err %v; want 2", len(f.Panels), ok, err)
	}
}

// TestDCAPairTableNumbers checks the chapter's numbering of the two-flow
// tables: flows and network of Emory are Tables 8-2/8-3, of ASU 8-5/8-6
// (8-3 is Emory's network table, not ASU's).
func TestDCAPairTableNumbers(t *testing.T) {
	for _, tc := range []struct {
		model  string
		models []string
		want   string
	}{
		{"emory", []string{"emory", "asu"}, "Tables 8-2/8-3"},
		{"asu", []string{"emory", "asu"}, "Tables 8-5/8-6"},
		{"asu", []string{"asu"}, "Tables 8-5/8-6"},
		{"a", []string{"a", "b"}, "Tables 8-2/8-3"},
		{"b", []string{"a", "b"}, "Tables 8-5/8-6"},
		{"c", []string{"a", "b", "c"}, "Two-flow table"},
	} {
		if got := dcaPairTableNumbers(tc.model, tc.models); got != tc.want {
			t.Errorf("%s in %v: got %q, want %q", tc.model, tc.models, got, tc.want)
		}
	}
}
