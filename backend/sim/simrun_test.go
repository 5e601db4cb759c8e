package simrun

import (
	"context"
	"testing"

	"cclab/metrics"
	"cclab/plan"
	"cclab/scenario"
)

func parseScenario(t *testing.T, src string) *scenario.Experiment {
	t.Helper()
	exp, err := scenario.ParseScenario("test.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return exp
}

// runFirstPoint plans the first point of the scenario src with seed 1, runs
// it in the simulator and returns the plan, the run and the result.
func runFirstPoint(t *testing.T, src string) (*plan.Plan, *Sim, metrics.RunResult) {
	t.Helper()
	return runPoint(t, parseScenario(t, src).Points[0].Scenario, 1)
}

// runPoint plans the scenario sc with the given seed, runs it in the
// simulator and returns the plan, the run and the result.
func runPoint(t *testing.T, sc scenario.Scenario, seed uint64) (*plan.Plan, *Sim, metrics.RunResult) {
	t.Helper()
	p, err := plan.New(sc, seed)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Build(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return p, s, res
}

const lossy = `name: simrun-test
duration: 4s
interval: 100ms
topology:
  kind: dumbbell
  bottleneck: {rate: 16Mbit, delay: 7.5ms, queue: droptail:20p, loss: [0, 0.05]}
flows: [{cc: reno, recovery: sack}]
`

func run(t *testing.T, exp *scenario.Experiment, point int, seed uint64) metrics.RunResult {
	t.Helper()
	p := exp.Points[point]
	res, err := Runner{}.Run(context.Background(), scenario.RunSpec{Experiment: exp.Name, Point: p, Backend: scenario.BackendSim, Seed: seed})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return res
}

func TestSimRunUtilization(t *testing.T) {
	exp := parseScenario(t, lossy)
	clean := run(t, exp, 0, 1)
	if len(clean.Metrics.Flows) != 1 {
		t.Fatalf("flows: got %d, want 1", len(clean.Metrics.Flows))
	}
	f := clean.Metrics.Flows[0]
	// Reno with a 20-packet buffer and a 15 ms RTT (BDP 20 packets of 1500 B)
	// keeps a 16 Mbit/s bottleneck busy: utilization well above 0.8. (SACK
	// recovery: NewReno without SACK spends a good part of a 4 s run
	// repairing the slow-start overshoot one hole per RTT.)
	if u := f.Values["bw_utilization"]; u < 0.8 || u > 1.0 {
		t.Errorf("loss 0: utilization %v, want in [0.8, 1]", u)
	}
	if d := f.Values["total_delivered"]; d <= 0 {
		t.Errorf("nothing delivered")
	}
	if minRTT := f.Values["min_rtt"]; minRTT < 0.015 || minRTT > 0.020 {
		t.Errorf("min_rtt %v s, want about 15 ms", minRTT)
	}
	var bl *metrics.Result
	for i := range clean.Metrics.Links {
		if clean.Metrics.Links[i].ID == int64(clean.Info.Bottleneck) {
			bl = &clean.Metrics.Links[i]
		}
	}
	if bl == nil {
		t.Fatalf("bottleneck link %d not measured", clean.Info.Bottleneck)
	}
	if bl.Values["total_drops_overflow"] == 0 {
		t.Errorf("Reno never overflowed a 20-packet queue in 4 s")
	}
	lossy := run(t, exp, 1, 1)
	lf := lossy.Metrics.Flows[0]
	// 5 % random loss: Reno's throughput collapses (Mathis: ~1.22·MSS/(RTT·√p) ≈ 4 Mbit/s).
	if lf.Values["mean_throughput"] >= f.Values["mean_throughput"]*0.7 {
		t.Errorf("5%% loss: throughput %v not well below the lossless %v", lf.Values["mean_throughput"], f.Values["mean_throughput"])
	}
	if lf.Values["total_retransmissions"] == 0 || lf.Values["total_lost"] == 0 {
		t.Errorf("5%% loss: no losses or retransmissions recorded: %v", lf.Values)
	}
	if bl := lossy.Metrics.Network.Values; bl["total_drops"] == 0 {
		t.Errorf("5%% loss: no drops at the links")
	}
	if lf.Values["total_link_drops"] == 0 {
		t.Errorf("5%% loss: no link drops attributed to the flow")
	}
}

func TestSimRunDeterministic(t *testing.T) {
	exp := parseScenario(t, lossy)
	a := run(t, exp, 1, 7)
	b := run(t, exp, 1, 7)
	c := run(t, exp, 1, 8)
	for name, v := range a.Metrics.Flows[0].Values {
		if b.Metrics.Flows[0].Values[name] != v {
			t.Errorf("same seed, %s: %v vs %v", name, v, b.Metrics.Flows[0].Values[name])
		}
	}
	if a.Metrics.Flows[0].Values["total_delivered"] == c.Metrics.Flows[0].Values["total_delivered"] &&
		a.Metrics.Flows[0].Values["total_lost"] == c.Metrics.Flows[0].Values["total_lost"] {
		t.Errorf("seeds 7 and 8 gave identical runs")
	}
}

func TestSimRunChain(t *testing.T) {
	exp := parseScenario(t, `name: chain
duration: 2s
topology:
  kind: chain
  hops: [{rate: 20Mbit, delay: 2ms, queue: droptail:50p}, {rate: 8Mbit, delay: 3ms, queue: droptail:30p}]
flows: [{cc: reno, count: 2}]
`)
	res := run(t, exp, 0, 1)
	if len(res.Metrics.Flows) != 2 {
		t.Fatalf("flows: got %d, want 2", len(res.Metrics.Flows))
	}
	// The 8 Mbit/s second hop is the bottleneck.
	if got := res.Metrics.Network.Values["bw_utilization"]; got < 0.7 || got > 1.0 {
		t.Errorf("chain utilization of the 8 Mbit/s hop: got %v, want in [0.7, 1]", got)
	}
	if res.Metrics.Flows[0].Values["min_rtt"] < 0.010 {
		t.Errorf("min_rtt %v below the 10 ms propagation RTT", res.Metrics.Flows[0].Values["min_rtt"])
	}
}

// TestSimRunDatagramBackground adds a raw UDP CBR flow as background
// traffic: it takes its share of the bottleneck and is measured like any
// flow (its datagrams sent and delivered).
func TestSimRunDatagramBackground(t *testing.T) {
	exp := parseScenario(t, `name: bg
duration: 3s
topology:
  kind: dumbbell
  bottleneck: {rate: 10Mbit, delay: 5ms, queue: droptail:30p}
flows:
  - {name: tcp, cc: reno}
  - {name: cbr, mode: udp, traffic: "cbr:rate=4Mbit"}
`)
	res := run(t, exp, 0, 1)
	if len(res.Metrics.Flows) != 2 {
		t.Fatalf("flows with metrics: got %d, want 2 (the stream flow and the UDP flow)", len(res.Metrics.Flows))
	}
	tcp := res.Metrics.Flows[0].Values["mean_throughput"]
	// The CBR flow sends 4 Mbit/s of payload and loses some of it in the shared queue.
	if cbr := res.Metrics.Flows[1].Values["mean_throughput"]; cbr > 4e6 || cbr < 3e6 {
		t.Errorf("UDP CBR throughput %v bit/s, want within [3, 4] Mbit/s", cbr)
	}
	// The CBR flow takes about 4 of the 10 Mbit/s; Reno gets at most the rest.
	if tcp > 6.5e6 || tcp < 3e6 {
		t.Errorf("stream throughput beside 4 Mbit/s of CBR: %v bit/s, want within [3, 6.5] Mbit/s", tcp)
	}
	var util float64
	for _, l := range res.Metrics.Links {
		if l.ID == int64(res.Info.Bottleneck) {
			util = l.Values["utilization"]
		}
	}
	if util < 0.85 {
		t.Errorf("bottleneck utilization %v, want the two flows to fill it (> 0.85)", util)
	}
}

// TestSimRunCCID2 runs datagram-mode flows: CCID2 (chosen by its name, no
// mode given) fills the bottleneck; an uncontrolled flow sends at its rate.
func TestSimRunCCID2(t *testing.T) {
	exp := parseScenario(t, `name: dccp
duration: 4s
topology:
  kind: dumbbell
  bottleneck: {rate: 16Mbit, delay: 7.5ms, queue: droptail:20p}
flows:
  - {name: d, cc: ccid2}
`)
	if m := exp.Points[0].Scenario.Flows[0].Mode; m != scenario.ModeDatagram {
		t.Fatalf("cc ccid2 without a mode: got mode %q, want datagram", m)
	}
	res := run(t, exp, 0, 1)
	if len(res.Metrics.Flows) != 1 {
		t.Fatalf("flows: got %d, want 1", len(res.Metrics.Flows))
	}
	f := res.Metrics.Flows[0].Values
	if u := f["bw_utilization"]; u < 0.6 || u > 1 {
		t.Errorf("CCID2 utilization %v, want in [0.6, 1]", u)
	}
	if f["total_packets_sent"] == 0 || f["mean_srtt"] == 0 || f["total_link_drops"] == 0 {
		t.Errorf("CCID2 flow: sent %v, srtt %v, link drops %v; want all measured", f["total_packets_sent"], f["mean_srtt"], f["total_link_drops"])
	}

	exp = parseScenario(t, `name: none
duration: 3s
topology:
  kind: dumbbell
  bottleneck: {rate: 16Mbit, delay: 7.5ms, queue: droptail:20p}
flows:
  - {name: u, cc: none, traffic: "cbr:rate=4Mbit"}
`)
	res = run(t, exp, 0, 1)
	f = res.Metrics.Flows[0].Values
	// Payload at 4 Mbit/s: goodput just under 4 Mbit/s (nothing is lost).
	if tp := f["mean_throughput"]; tp < 3.5e6 || tp > 4.1e6 {
		t.Errorf("uncontrolled 4 Mbit/s flow: throughput %v, want about 4 Mbit/s", tp)
	}
}
