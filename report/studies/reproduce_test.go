package studies

import (
	"testing"

	"cclab/report"
	"cclab/scenario"
)

// TestReproductionTable checks the Reproduction table against the
// hand-computed change of the mean throughputs over the paired seeds (Reno
// 2.0, 2.2, 1.8; DCA 1.5, 1.65, 1.26 Mbit/s: R = 1.47/2 = 0.735, −26.5 %;
// linearized values −26.5 + 100·(v_i − R·b_i)/2 = +1.5, +1.65, −3.15 points
// around it, SD 2.729, t(0.975, 2) 4.303: ±6.78), not the mean of the per-seed
// changes (−26.67 %, Table 8-1's column, TestPairedReport), and the
// publication's interval or spread: inside, outside, a stated
// tolerance, and a quantity the study does not compute; and that it opens
// the study section.
func TestReproductionTable(t *testing.T) {
	d := &report.ReportData{}
	emory := func(cc string) []scenario.Param {
		return []scenario.Param{{Axis: "topology", Value: "emory"}, {Axis: "flows[0].cc", Value: cc}}
	}
	add := func(point int, cc string, runs ...map[string]float64) {
		params := emory(cc)
		g := &report.Group{Point: point, Params: append([]scenario.Param{{Axis: scenario.CaseAxis, Value: DCACaseSingle}}, params...), Backend: scenario.BackendSim}
		for i, v := range runs {
			g.Runs = append(g.Runs, dcaRun(point, DCACaseSingle, params, uint64(i+1), v))
		}
		d.Groups = append(d.Groups, g)
	}
	add(0, "reno", map[string]float64{"mean_throughput": 2e6}, map[string]float64{"mean_throughput": 2.2e6}, map[string]float64{"mean_throughput": 1.8e6})
	add(1, "dca", map[string]float64{"mean_throughput": 1.5e6}, map[string]float64{"mean_throughput": 1.65e6}, map[string]float64{"mean_throughput": 1.26e6})
	d.Exp = &scenario.Experiment{Base: &scenario.Scenario{Published: []scenario.Published{
		{ID: "t8-1/emory/throughput", What: "chapter", Value: -37, Interval: []float64{-42, -31}, Unit: "%", Source: "s"},
		{ID: "t8-1/emory/throughput", What: "wide", Value: -25, Interval: []float64{-30, -20}, Unit: "%", Source: "s"},
		{ID: "t8-1/emory/throughput", What: "tolerance", Value: -30, Tolerance: 0.25, Unit: "%", Source: "s"},
		{ID: "t8-1/asu/throughput", What: "not run", Value: -13.2, Unit: "%", Source: "s"},
	}}}
	_, tables, _, err := withReproduction(dcaReport, dcaValue)(d)
	if err != nil || len(tables) == 0 || tables[0].Title != "Reproduction: the publication's numbers and cclab's" {
		t.Fatalf("first table: got %v (err %v), want the Reproduction table", tables, err)
	}
	rows := tables[0].Rows
	want := [][]string{
		{"chapter", "-37.0 %", "[-42.0 %, -31.0 %]", "s", "sim", "3", "-26.5 % [-33.3 %, -19.7 %]", "no"},
		{"wide", "-25.0 %", "[-30.0 %, -20.0 %]", "s", "sim", "3", "-26.5 % [-33.3 %, -19.7 %]", "yes"},
		{"tolerance", "-30.0 %", "[-37.5 %, -22.5 %] (±25 %)", "s", "sim", "3", "-26.5 % [-33.3 %, -19.7 %]", "yes"},
		{"not run", "-13.2 %", "–", "s", "–", "0", "not run", "–"},
	}
	if len(rows) != len(want) {
		t.Fatalf("rows: got %d %q, want %d", len(rows), rows, len(want))
	}
	for i := range want {
		for j := range want[i] {
			if rows[i][j] != want[i][j] {
				t.Errorf("row %d column %s: got %q, want %q", i, tables[0].Head[j], rows[i][j], want[i][j])
			}
		}
	}
	d.Exp.Base.Published = nil
	if _, tables, _, _ := withReproduction(dcaReport, dcaValue)(d); len(tables) > 0 && tables[0].Title == "Reproduction: the publication's numbers and cclab's" {
		t.Errorf("a Reproduction table without published numbers")
	}
}
