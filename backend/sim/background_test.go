package simrun

import (
	"testing"

	"cclab/metrics"
)

// backgroundSrc has a window-capped measured flow and a hop's background:
// two window-capped greedy Reno flows and a UDP source.
const backgroundSrc = `name: background
duration: 10s
warmup: 2s
topology:
  kind: chain
  hops:
    - rate: 100Mbit
      delay: 5ms
      queue: droptail:200p
      background:
        - {name: big, count: 2, traffic: greedy, window: 24000B, rtt: 40ms}
        - {name: u, mode: udp, traffic: "cbr:rate=2Mbit,size=1000"}
    - {rate: 100Mbit, delay: 5ms}
flows:
  - {name: m, cc: reno, window: 12000B, rtt: 40ms}
`

// TestBackgroundAndWindow runs the scenario: the measured flow's goodput is
// its window per RTT (the cap, not the link, limits it); the background
// flows and the UDP group load hop 0 only and appear in no flow's metrics.
func TestBackgroundAndWindow(t *testing.T) {
	_, _, res := runFirstPoint(t, backgroundSrc)
	if got := len(res.Metrics.Flows); got != 1 || res.Metrics.Flows[0].ID != 1 {
		t.Fatalf("flow results: got %d, want the measured flow only", got)
	}
	// 12000 B of which 10 segments of payload per 40 ms RTT: at most
	// 2.4 Mbit/s; a little less (segment headers, delayed ACKs).
	if tp := res.Metrics.Flows[0].Values["mean_throughput"]; tp < 1.8e6 || tp > 2.4e6 {
		t.Errorf("measured flow: goodput %.2f Mbit/s, want in [1.8, 2.4] (window 12000 B per 40 ms)", tp/1e6)
	}
	// Hop 0 carries the measured flow, 2 × 24000 B per 40 ms of background
	// and 2 Mbit/s of UDP: about 2.4 + 9.6 + 2 Mbit/s; hop 1 the measured
	// flow only.
	u0, u1 := linkOf(t, res, 0)["utilization"], linkOf(t, res, 2)["utilization"]
	if u0 < 0.10 || u0 > 0.16 {
		t.Errorf("hop 0 utilization %.3f, want in [0.10, 0.16]", u0)
	}
	if u1 < 0.018 || u1 > 0.026 {
		t.Errorf("hop 1 utilization %.3f, want in [0.018, 0.026] (the measured flow alone)", u1)
	}
}

// dcaSrc puts a DCA flow through a queue that greedy Reno background flows
// keep filling, so its delay decisions fire.
const dcaSrc = `name: dca-signals
duration: 20s
topology:
  kind: dumbbell
  bottleneck:
    rate: 10Mbit
    delay: 10ms
    queue: droptail:100p
    background: [{count: 3, traffic: greedy, rtt: 40ms}]
flows:
  - {name: m, cc: dca, rtt: 40ms}
`

// TestDelayReductions checks that each window reduction of DCA is a
// congestion signal of reason delay: total_delay_reductions counts them.
func TestDelayReductions(t *testing.T) {
	_, _, res := runFirstPoint(t, dcaSrc)
	v := res.Metrics.Flows[0].Values
	if v["total_delay_reductions"] < 1 || v["total_delay_reductions"] != v["total_congestion_signals"] {
		t.Errorf("total_delay_reductions %v, total_congestion_signals %v: want at least 1 and equal (no ECN)",
			v["total_delay_reductions"], v["total_congestion_signals"])
	}
}

// TestEndpointSinkConns: a run with background ON/OFF stream flows (a new
// connection per ON period, whose receiving sides report to the endpoint's
// sink) and a datagram-mode flow that stops early keeps at most one entry per
// datagram-mode flow in the connection map, and measures the datagram flow's
// receiving side (deliveries) through it.
func TestEndpointSinkConns(t *testing.T) {
	_, s, res := runFirstPoint(t, `name: conns
duration: 6s
topology:
  kind: chain
  hops:
    - rate: 20Mbit
      delay: 5ms
      queue: droptail:100p
      background:
        - {name: bg, count: 3, traffic: "onoff:size=20kB,off=exp(200ms)", rtt: 20ms}
    - {rate: 20Mbit, delay: 5ms}
flows:
  - {name: d, cc: ccid2, stop: 3s, rtt: 20ms}
  - {name: m, cc: reno, traffic: "greedy", rtt: 20ms}
`)
	if got, want := len(s.conns), len(s.dgram); got > want || want != 1 {
		t.Errorf("connection map: got %d entries for %d datagram-mode flows, want at most one each (and one such flow)", got, want)
	}
	var d metrics.Result
	for _, f := range res.Metrics.Flows {
		if f.Name == "d" {
			d = f
		}
	}
	if d.Values["total_delivered"] == 0 {
		t.Errorf("datagram-mode flow d: total_delivered %v, want its receiving side measured", d.Values["total_delivered"])
	}
}
