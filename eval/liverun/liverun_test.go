package liverun

import (
	"context"
	"testing"

	"cclab/eval"
)

// TestLiveRun runs one short flow through the relay on loopback. Its
// assertions are deliberately loose (the machine is shared): the flow
// delivers data, its metrics come from real events, and utilization is a
// fraction of the bottleneck.
func TestLiveRun(t *testing.T) {
	if testing.Short() {
		t.Skip("live run takes real time")
	}
	exp, err := eval.ParseScenario("live.yaml", []byte(`name: live-test
duration: 2s
backends: [live]
topology:
  kind: dumbbell
  bottleneck: {rate: 8Mbit, delay: 5ms, queue: droptail:20p, loss: [0, 0.05]}
flows: [{cc: reno}]
`))
	if err != nil {
		t.Fatal(err)
	}
	var tput [2]float64
	for i, p := range exp.Points {
		res, err := Runner{}.Run(context.Background(), eval.RunSpec{Experiment: exp.Name, Point: p, Backend: eval.BackendLive, Seed: 1})
		if err != nil {
			t.Fatalf("point %d: %v", i, err)
		}
		if len(res.Metrics.Flows) != 1 {
			t.Fatalf("point %d: flows %d, want 1", i, len(res.Metrics.Flows))
		}
		f := res.Metrics.Flows[0].Values
		t.Logf("loss %s: throughput %.2f Mbit/s, utilization %.3f, retransmissions %v, RTOs %v, mean srtt %.1f ms",
			p.Scenario.Topology.Hops[0].Loss, f["mean_throughput"]/1e6, f["bw_utilization"], f["total_retransmissions"], f["total_rtos"], f["mean_srtt"]*1e3)
		if f["total_delivered"] <= 0 || f["total_packets_sent"] <= 0 || f["mean_srtt"] <= 0 {
			t.Errorf("point %d: no data or RTT measured: %v", i, f)
		}
		if u := f["bw_utilization"]; u <= 0 || u > 1.1 {
			t.Errorf("point %d: utilization %v, want in (0, 1.1]", i, u)
		}
		if minRTT := f["min_rtt"]; minRTT < 0.010 {
			t.Errorf("point %d: min RTT %v s below the 10 ms the relay adds", i, minRTT)
		}
		tput[i] = f["mean_throughput"]
		if res.Notes[NoteRelayPkts] <= 0 {
			t.Errorf("point %d: notes lack the relay's packet count: %v", i, res.Notes)
		}
		t.Logf("conditions: %v", res.Notes)
		if i == 1 && f["total_retransmissions"] == 0 {
			t.Errorf("5%% loss: no retransmissions")
		}
		if n := res.Metrics.Network.Values["bw_utilization"]; n != f["bw_utilization"] {
			t.Errorf("network utilization %v differs from the single flow's %v", n, f["bw_utilization"])
		}
	}
}

// TestLiveCCID2 runs a CCID2 datagram-mode flow live.
func TestLiveCCID2(t *testing.T) {
	if testing.Short() {
		t.Skip("live run takes real time")
	}
	exp, err := eval.ParseScenario("live.yaml", []byte(`name: live-ccid2
duration: 2s
backends: [live]
topology:
  kind: dumbbell
  bottleneck: {rate: 8Mbit, delay: 5ms, queue: droptail:20p}
flows: [{cc: ccid2}]
`))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Runner{}.Run(context.Background(), eval.RunSpec{Experiment: exp.Name, Point: exp.Points[0], Backend: eval.BackendLive, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	f := res.Metrics.Flows[0].Values
	t.Logf("CCID2 live: throughput %.2f Mbit/s, utilization %.3f, lost %v, mean srtt %.1f ms",
		f["mean_throughput"]/1e6, f["bw_utilization"], f["total_lost"], f["mean_srtt"]*1e3)
	if f["total_delivered"] <= 0 || f["total_packets_sent"] <= 0 {
		t.Errorf("no data measured: %v", f)
	}
	if u := f["bw_utilization"]; u <= 0 || u > 1.1 {
		t.Errorf("utilization %v, want in (0, 1.1]", u)
	}
}
