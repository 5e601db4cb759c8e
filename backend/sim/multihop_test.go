package simrun

import (
	"testing"

	"cclab/metrics"
	"cclab/plan"
)

// multihop is a chain whose hops differ in rate, delay and buffer, with
// open-loop cross traffic entering before each hop and leaving after it, an
// end-to-end flow and a flow that crosses hop 1 (the bottleneck) only.
const multihop = `name: multihop
duration: 12s
warmup: 2s
topology:
  kind: chain
  hops:
    - {rate: 50Mbit, delay: 5ms, queue: droptail:60p, cross: ["cbr:rate=6Mbit,size=1000"]}
    - {rate: 10Mbit, delay: 10ms, queue: droptail:40p, cross: ["cbr:rate=3Mbit,size=1000"]}
flows:
  - {name: e2e, cc: reno, recovery: sack}
  - {name: hop1, cc: reno, recovery: sack, path: 1}
`

// TestMultiHopCrossTraffic runs the chain in the simulator: results carry
// the plan's link and flow identities; the cross traffic of each hop takes
// its rate there and nowhere else; the two flows share what hop 1's cross
// traffic leaves, and the one-hop flow sees only hop 1's delay.
func TestMultiHopCrossTraffic(t *testing.T) {
	p, s, res := runFirstPoint(t, multihop)
	checkIdentities(t, p, res)
	// Cross traffic enters only its own hop, forward.
	inj := []int64{s.Links[0].Stats().Injected, s.Links[1].Stats().Injected, s.Links[2].Stats().Injected, s.Links[3].Stats().Injected}
	if inj[0] == 0 || inj[2] == 0 || inj[1] != 0 || inj[3] != 0 {
		t.Errorf("injected per link %v, want cross traffic on links 0 and 2 only", inj)
	}
	hop1 := linkOf(t, res, 2)
	if u := hop1["utilization"]; u < 0.9 {
		t.Errorf("hop 1 utilization %.3f, want >= 0.9 (the flows fill what the cross traffic leaves)", u)
	}
	e2e, one := res.Metrics.Flows[0].Values, res.Metrics.Flows[1].Values
	// Hop 1 carries 3 Mbit/s of cross payload (+28 bytes per 1000): about
	// 6.9 Mbit/s is left, of which the flows' payload is 1200/1228.
	if tp := e2e["mean_throughput"] + one["mean_throughput"]; tp < 5.5e6 || tp > 6.9e6 {
		t.Errorf("the flows' goodput %.2f Mbit/s, want in [5.5, 6.9]", tp/1e6)
	}
	if a, b := e2e["min_rtt"], one["min_rtt"]; a < 0.030 || b < 0.020 || b >= 0.030 {
		t.Errorf("min RTTs: end-to-end %.1f ms (want >= 30), hop-1 flow %.1f ms (want 20-30)", a*1e3, b*1e3)
	}
	var flowDrops float64
	for _, f := range res.Metrics.Flows {
		flowDrops += f.Values["total_link_drops"]
	}
	if all := res.Metrics.Network.Values["total_drops"]; flowDrops > all {
		t.Errorf("flows' drops %v exceed the links' %v", flowDrops, all)
	}
	t.Logf("e2e %.2f Mbit/s, hop-1 flow %.2f Mbit/s, hop 1 utilization %.3f, drops %v (flows %v)",
		e2e["mean_throughput"]/1e6, one["mean_throughput"]/1e6, hop1["utilization"], res.Metrics.Network.Values["total_drops"], flowDrops)
}

// checkIdentities checks that a run's results carry the plan's flow
// numbers and names and its link IDs and names.
func checkIdentities(t *testing.T, p *plan.Plan, res metrics.RunResult) {
	t.Helper()
	if len(res.Metrics.Flows) != len(p.Flows) {
		t.Fatalf("results have %d flows, the plan %d", len(res.Metrics.Flows), len(p.Flows))
	}
	for i, f := range res.Metrics.Flows {
		if f.ID != int64(p.Flows[i].ID) || f.Name != p.Flows[i].Name {
			t.Errorf("flow %d: %d %q, want the plan's %d %q", i, f.ID, f.Name, p.Flows[i].ID, p.Flows[i].Name)
		}
	}
	links := p.Links()
	if len(res.Metrics.Links) != len(links) {
		t.Fatalf("results have %d links, the plan %d", len(res.Metrics.Links), len(links))
	}
	for i, l := range res.Metrics.Links {
		if l.ID != int64(links[i].ID) || l.Name != links[i].Name {
			t.Errorf("link %d: %d %q, want the plan's %d %q", i, l.ID, l.Name, links[i].ID, links[i].Name)
		}
	}
}
