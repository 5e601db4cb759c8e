package studies

import (
	"strings"
	"testing"

	"cclab/metrics"
	"cclab/report"
	"cclab/scenario"
	"cclab/store"
)

// studyGroup is a point of case c with params, one run per throughput set
// (flow ID -> bits/s).
func studyGroup(c string, params map[string]string, runs ...map[int64]float64) *report.Group {
	g := &report.Group{Backend: "sim", Params: []scenario.Param{{Axis: "case", Value: c}}}
	for k, v := range params {
		g.Params = append(g.Params, scenario.Param{Axis: k, Value: v})
	}
	for i, tp := range runs {
		r := store.RunRecord{Seed: uint64(i + 1)}
		agg := 0.0
		for id, v := range tp {
			r.Summaries = append(r.Summaries, store.SummaryRecord{Scope: metrics.ScopeFlow, ScopeID: id, Metric: "mean_throughput", Value: v})
			agg += v
		}
		r.Summaries = append(r.Summaries, store.SummaryRecord{Scope: metrics.ScopeNetwork, Metric: "agg_throughput", Value: agg},
			store.SummaryRecord{Scope: metrics.ScopeNetwork, Metric: "bw_utilization", Value: agg / 10e6})
		g.Runs = append(g.Runs, r)
	}
	return g
}

// TestDCCPTCPReport: the study's tables take each case's points, name the
// swept axes as the study does and put the right flows in each column.
func TestDCCPTCPReport(t *testing.T) {
	d := &report.ReportData{Groups: []*report.Group{
		studyGroup("udp-vs-dccp", map[string]string{"flows[1].cc": "none"}, map[int64]float64{1: 0.1e6, 2: 0.2e6, 3: 4.5e6, 4: 4.9e6}),
		studyGroup("delay", map[string]string{"topology.bottleneck.delay": "20ms", "flows[1].cc": "ccid3"},
			map[int64]float64{1: 4e6, 2: 6e6}, map[int64]float64{1: 6e6, 2: 4e6}),
	}, Backends: []string{"sim"}}
	title, tables, figs, err := dccpTCPReport(d)
	if err != nil || !strings.Contains(title, "SAINT") {
		t.Fatalf("title %q err %v", title, err)
	}
	if len(tables) != 2 {
		t.Fatalf("tables: got %d, want 2 (only cases with points)", len(tables))
	}
	if len(figs) != 1 || !strings.Contains(figs[0].Title, "delay") || len(figs[0].Panels) != 1 || !strings.Contains(string(figs[0].Panels[0]), "TCP next to ccid3") {
		t.Errorf("figures: got %d, want the throughput-vs-delay figure with a line for TCP next to ccid3", len(figs))
	}
	u := tables[0]
	if got, want := strings.Join(u.Head, "|"), "real-time flows|backend|n|real-time 1|real-time 2|TCP 1|TCP 2|utilization"; got != want {
		t.Errorf("udp-vs-dccp head: got %s, want %s", got, want)
	}
	if got := u.Rows[0]; got[0] != "none" || !strings.HasPrefix(got[3], "4.5") || !strings.HasPrefix(got[6], "0.2") {
		t.Errorf("udp-vs-dccp row: got %v, want none, real-time 1 = flow 3 (4.5 Mbit/s), TCP 2 = flow 2 (0.2)", got)
	}
	dl := tables[1]
	if got := dl.Rows[0]; got[0] != "20ms" || got[1] != "ccid3" || got[3] != "2" || got[6] != "50.0 %" {
		t.Errorf("delay row: got %v, want γ 20ms, ccid3, n 2, DCCP share 50.0 %%", got)
	}
}

// TestFairQueueingReport: Table 3 takes the TCP flows' mean and standard
// deviation across flows 2.. and the UDP flow's share; Figure 6 puts K in
// rows and the disciplines in columns, normalized by the fair share.
func TestFairQueueingReport(t *testing.T) {
	g := &report.Group{Backend: "sim", Params: []scenario.Param{{Axis: "case", Value: "udp-tcp"}, {Axis: "topology.bottleneck.queue", Value: "drr:limit=64p"}}}
	r := store.RunRecord{Seed: 1}
	for id, bytes := range map[int64]float64{1: 500e3, 2: 400e3, 3: 600e3} {
		r.Flows = append(r.Flows, metrics.ScopeRecord{ID: id})
		r.Summaries = append(r.Summaries, store.SummaryRecord{Scope: metrics.ScopeFlow, ScopeID: id, Metric: "total_delivered", Value: bytes},
			store.SummaryRecord{Scope: metrics.ScopeFlow, ScopeID: id, Metric: "mean_throughput", Value: bytes * 8 / 10})
	}
	r.Summaries = append(r.Summaries, store.SummaryRecord{Scope: metrics.ScopeNetwork, Metric: "agg_throughput", Value: 1.5e6 * 8 / 10})
	g.Runs = []store.RunRecord{r}
	fair := 10e6 / 11 * 1000 / 1028
	m := &report.Group{Backend: "sim", Params: []scenario.Param{{Axis: "case", Value: "multihop-udp-csfq"}, {Axis: "topology", Value: "csfq-k3"}},
		Runs: []store.RunRecord{{Seed: 1, Summaries: []store.SummaryRecord{{Scope: metrics.ScopeFlow, ScopeID: 1, Metric: "mean_throughput", Value: 0.5 * fair}}}}}
	_, tables, _, err := fairQueueingReport(&report.ReportData{Groups: []*report.Group{g, m}})
	if err != nil || len(tables) != 2 {
		t.Fatalf("tables %d, err %v; want Table 3 and Figure 6 (UDP)", len(tables), err)
	}
	// 400 and 600 packets: mean 500, sample standard deviation 141.
	if got, want := strings.Join(tables[0].Rows[0], "|"), "DRR|sim|500|141|0.400 Mbit/s|33.3 %"; got != want {
		t.Errorf("Table 3 row: got %s, want %s", got, want)
	}
	if got := tables[1].Head; len(got) != 2 || got[1] != "CSFQ (sim)" {
		t.Errorf("Figure 6 head: got %v, want K and CSFQ (sim)", got)
	}
	if got := tables[1].Rows[2]; got[0] != "3" || got[1] != "0.50" {
		t.Errorf("Figure 6 row K=3: got %v, want 3 and 0.50", got)
	}
}

// TestDCCPTCPTraceFigure: the ack-ratio case's packet trace (of the first
// run of each backend's group) becomes the section's first figure, with
// every kind of point in its legend; runs without a trace give none.
func TestDCCPTCPTraceFigure(t *testing.T) {
	g := studyGroup("ack-ratio", nil, map[int64]float64{1: 5e6, 2: 4.5e6}, map[int64]float64{1: 5e6, 2: 4.5e6})
	g.Runs[0].ID, g.Runs[1].ID = 7, 8
	d := &report.ReportData{Groups: []*report.Group{g}, Backends: []string{"sim"}}
	var asked []int64
	d.Trace = func(run int64) (int64, []metrics.TracePoint, error) {
		asked = append(asked, run)
		return 2, []metrics.TracePoint{{T: 5.1, Kind: metrics.TraceSent, Seq: 100}, {T: 5.2, Kind: metrics.TraceSent, Seq: 101}, {T: 5.4, Kind: metrics.TraceLost, Seq: 100}, {T: 6, Kind: metrics.TraceTimeout, Seq: 102}}, nil
	}
	_, _, figs, err := dccpTCPReport(d)
	if err != nil {
		t.Fatal(err)
	}
	if len(figs) != 1 || len(asked) != 1 || asked[0] != 7 {
		t.Fatalf("got %d figures from runs %v, want 1 from run 7 (the first seed)", len(figs), asked)
	}
	f := figs[0]
	for _, want := range []string{"Sequence-number trace", "sim, flow 2, seed 1"} {
		if !strings.Contains(f.Title, want) {
			t.Errorf("title %q: want it to contain %q", f.Title, want)
		}
	}
	for _, want := range []string{"sent (2)", "declared lost (1)", "timeout (1)", "sequence number − 100"} {
		if len(f.Panels) != 1 || !strings.Contains(string(f.Panels[0]), want) {
			t.Errorf("figure: want %q in the SVG", want)
		}
	}
	d.Trace = func(int64) (int64, []metrics.TracePoint, error) { return 0, nil, nil }
	if _, _, figs, _ := dccpTCPReport(d); len(figs) != 0 {
		t.Errorf("runs without a trace: got %d figures, want 0", len(figs))
	}
}
