package simrun

import (
	"reflect"
	"testing"

	"cclab/experiments"
	"cclab/metrics"
	"cclab/report/studies"
	"cclab/scenario"
	"cclab/store"
)

// TestETHBulkDeterministic runs points of the eth-bulk quick form (the
// congested inter-continental profile, Reno and Rate-Halving with
// lost-retransmission detection; 1 MB until done) twice: the same seed gives
// the same trace hash (printed) and the same transfer as the ETH analysis
// sees it (studies.ETHTransfer), which completes and meets the profile's loss.
func TestETHBulkDeterministic(t *testing.T) {
	src, _ := experiments.Source("eth-bulk-quick")
	exp, err := scenario.ParseScenario("eth-bulk-quick.yaml", src)
	if err != nil {
		t.Fatal(err)
	}
	ran := 0
	for _, p := range exp.Points {
		c, _ := p.Get(scenario.CaseAxis)
		topo, _ := p.Get("topology")
		rec, _ := p.Get("recovery")
		v := studies.ETHVariant("reno", rec)
		if c != "bulk" || topo != "inter-congested" || (v != "reno" && v != "ratehalving+lostretx") {
			continue
		}
		ran++
		a, ra, _ := runStudy(t, p.Scenario, Options{Hash: true})
		b, rb, _ := runStudy(t, p.Scenario, Options{Hash: true})
		ha, na := a.TraceHash()
		hb, nb := b.TraceHash()
		t.Logf("eth-bulk-quick %s seed 1: trace hash %s over %d events", p.Label(exp.Axes), ha, na)
		if ha != hb || na != nb || na == 0 {
			t.Errorf("%s: trace hashes %s (%d events) and %s (%d events), want equal", p.Label(exp.Axes), ha, na, hb, nb)
		}
		ta, tb := ethTransfers(ra, topo), ethTransfers(rb, topo)
		if !reflect.DeepEqual(ta, tb) || len(ta) != 1 {
			t.Fatalf("%s: transfers %+v and %+v, want one, equal", p.Label(exp.Axes), ta, tb)
		}
		tr := ta[0]
		t.Logf("%s: %+v", p.Label(exp.Axes), tr)
		if tr.Failed || tr.DeliveredBytes != 1e6 || tr.Group != "inter" || tr.LossRate < 0.02 || tr.Retransmits == 0 {
			t.Errorf("%s: transfer %+v, want 1 MB delivered in group inter with loss of a few %% and retransmissions", p.Label(exp.Axes), tr)
		}
	}
	if ran != 2 {
		t.Fatalf("ran %d points, want 2", ran)
	}
}

// ethTransfers converts a run's result as the study report does.
func ethTransfers(res metrics.RunResult, topology string) []studies.ETHTransfer {
	var r store.RunRecord
	r.SetMetrics(res.Metrics)
	for i := range r.Flows { // the flows' Info, as the runner stores it
		for _, f := range res.Flows {
			if f.ID == r.Flows[i].ID {
				r.Flows[i].Info = f.Info
			}
		}
	}
	return studies.ETHRunTransfers(&r, topology)
}
