package liverun

import (
	"testing"

	"cclab/plan"
	"cclab/relay"
)

// TestLiveMultiHopCrossTraffic runs a chain whose hops differ in rate, delay
// and buffer, with the relay's cross traffic entering before each hop, an
// end-to-end flow and a flow through the relay's entry for hop 1 only. The
// results carry the plan's identities; cross traffic enters only its hop;
// the one-hop flow sees only hop 1's delay; the flows share what the cross
// traffic leaves of hop 1. Loose bounds: the machine is shared.
func TestLiveMultiHopCrossTraffic(t *testing.T) {
	skipShort(t)
	spec := liveSpec(t, `name: live-multihop
duration: 4s
warmup: 1s
backends: [live]
topology:
  kind: chain
  hops:
    - {rate: 50Mbit, delay: 5ms, queue: droptail:60p, cross: ["cbr:rate=6Mbit,size=1000"]}
    - {rate: 10Mbit, delay: 10ms, queue: droptail:40p, cross: ["cbr:rate=3Mbit,size=1000"]}
flows:
  - {name: e2e, cc: reno, recovery: sack}
  - {name: hop1, cc: reno, recovery: sack, path: 1}
`)
	p, err := plan.New(spec.Point.Scenario, 1)
	if err != nil {
		t.Fatal(err)
	}
	var rl *relay.Relay
	res := runLive(t, Runner{onRelay: func(r *relay.Relay) { rl = r }}, spec)
	if len(res.Metrics.Flows) != len(p.Flows) || len(res.Metrics.Links) != 4 {
		t.Fatalf("results: %d flows, %d links; want %d and 4", len(res.Metrics.Flows), len(res.Metrics.Links), len(p.Flows))
	}
	for i, f := range res.Metrics.Flows {
		if f.ID != int64(p.Flows[i].ID) || f.Name != p.Flows[i].Name {
			t.Errorf("flow %d: %d %q, want the plan's %d %q", i, f.ID, f.Name, p.Flows[i].ID, p.Flows[i].Name)
		}
	}
	for i, h := range p.Links() {
		if l := res.Metrics.Links[i]; l.ID != int64(h.ID) || l.Name != h.Name {
			t.Errorf("link %d: %d %q, want the plan's %d %q", i, l.ID, l.Name, h.ID, h.Name)
		}
	}
	fwd, rev := rl.HopStats(relay.Fwd), rl.HopStats(relay.Rev)
	if fwd[0].Injected == 0 || fwd[1].Injected == 0 || rev[0].Injected != 0 || rev[1].Injected != 0 {
		t.Errorf("injected: forward %d %d, reverse %d %d; want cross traffic on the forward hops only",
			fwd[0].Injected, fwd[1].Injected, rev[0].Injected, rev[1].Injected)
	}
	e2e, one := res.Metrics.Flows[0].Values, res.Metrics.Flows[1].Values
	t.Logf("e2e %.2f Mbit/s (min RTT %.1f ms), hop-1 flow %.2f Mbit/s (min RTT %.1f ms), hop 1 utilization %.3f; conditions %v",
		e2e["mean_throughput"]/1e6, e2e["min_rtt"]*1e3, one["mean_throughput"]/1e6, one["min_rtt"]*1e3,
		res.Metrics.Links[2].Values["utilization"], res.Notes)
	if tp := e2e["mean_throughput"] + one["mean_throughput"]; tp < 3e6 || tp > 7.2e6 {
		t.Errorf("the flows' goodput %.2f Mbit/s, want in [3, 7.2] (6.9 left by the cross traffic)", tp/1e6)
	}
	if a, b := e2e["min_rtt"], one["min_rtt"]; a < 0.030 || b < 0.020 || b >= a {
		t.Errorf("min RTTs: end-to-end %.1f ms (want >= 30), hop-1 flow %.1f ms (want >= 20 and below the end-to-end one)", a*1e3, b*1e3)
	}
}
