package scenario

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"cclab/experiments"
)

// TestScenarioYAMLRoundTrip: a scenario written with YAML parses back into
// an equal scenario (so `cclab sim -emit-scenario` shows exactly the
// scenario its flags run), for scenarios made from cclab sim's numbers and
// for a parsed file that uses every key of the format. (The built-in
// experiments' points round-trip too: TestBuiltinsRoundTrip.)
func TestScenarioYAMLRoundTrip(t *testing.T) {
	var scs []Scenario
	for _, s := range []Simple{
		{},
		{Flows: 3, CC: []string{"reno", "cubic"}, RTTs: []time.Duration{20 * time.Millisecond, 70 * time.Millisecond},
			Buffer: "0.5bdp", Queue: "red:min=5,max=15,maxp=0.1,ecn", ECN: true, ReverseRate: -1, Seed: 9,
			Warmup: 3 * time.Second, Stagger: time.Second, UDP: "cbr:rate=1Mbit", UDPFlows: 2, Recovery: "sack"},
		{Topology: KindChain, Hops: 3, Cross: 2, Rate: 45e6 / 7, RTT: 77 * time.Millisecond, Buffer: "30kB",
			Traffic: "onoff:size=pareto(48kB/1.2),off=exp(15s)", CrossSpec: "greedy:1MB", PayloadOnly: true,
			AccessRate: 100e6, UntilDone: true, MaxDatagram: 1400},
	} {
		sc, err := s.Scenario()
		if err != nil {
			t.Fatalf("%+v: %v", s, err)
		}
		scs = append(scs, sc)
	}
	exp, err := ParseScenario("rich.yaml", []byte(`name: rich
duration: 5s
warmup: 1s
epoch_threshold: 30%
seeds: [4, 5]
topology:
  kind: chain
  hops:
    - {rate: 20Mbit, delay: 2ms, queue: droptail:50p, jitter: 1ms, rev_rate: 1Mbit,
       cross: ["cbr:rate=2Mbit,size=1000", {traffic: "udponoff:rate=1Mbit,on=exp(1s),off=exp(1s)", dir: rev}]}
    - {rate: 8Mbit, delay: 3ms, queue: "red:min=5,max=15,maxp=0.1", loss: "ge:p=0.01,r=0.3", reorder: true, rev_loss: 0.01, rev_rate: unlimited,
       background: [{count: 2, traffic: greedy, window: 8KiB, rtt: 60ms}, {name: u, count: 2, mode: udp, traffic: "cbr:rate=1Mbit"}]}
  access: {rate: 1Gbit, delay: 1ms, queue: droptail:1000p}
  mtu: 1500B
  payload_only: true
description: "every key"
live_runs: 1
interval: 50ms
backends: [sim, live]
until_done: true
study: dca
trace: {flow: 2, from: 1s, to: 3s}
published:
  - {id: t/x, what: "a number", value: -37, unit: "%", interval: [-42, -31], source: "a paper"}
  - {id: t/y, what: "another", value: 2.5, tolerance: 0.25, source: "a table"}
flows:
  - {name: a, cc: [cubic, reno], recovery: prr, count: 2, start: 1s, stop: 4s, stagger: 100ms, access_delay: 5ms, ecn: true,
     min_rto: 1s, ack_every: 3, delayed_ack: 0s, recv_window: 64KiB, window: 32KiB, alt_cc: dca, alt_share: 0.5, datagram: 1400B}
  - {name: b, cc: ccid2, traffic: "cbr:rate=1Mbit", path: 1}
  - {name: c, mode: udp, traffic: "cbr:rate=1Mbit", path: 0-1}
  - {name: d, rtt: 80ms, delayed_ack: 10ms, recovery: auto}
baseline:
  flows[0].cc: reno
`))
	if err != nil {
		t.Fatal(err)
	}
	if src := string(exp.Points[0].Scenario.YAML()); !strings.Contains(src, `baseline: {"flows[0].cc": "reno"}`) {
		t.Errorf("the baseline is not written as a mapping of axis to value:\n%s", src)
	}
	scs = append(scs, exp.Points[0].Scenario)
	for i, sc := range scs {
		roundTrip(t, fmt.Sprint("scenario ", i), sc)
	}
}

// roundTrip checks that sc written with YAML parses back into sc. A point's
// baseline names swept fields, which the one point written does not have,
// and its case is set only by a scenario with cases: both are left out.
func roundTrip(t *testing.T, name string, sc Scenario) {
	t.Helper()
	sc.Baseline, sc.Case = nil, ""
	src := sc.YAML()
	back, err := ParseScenario("emitted.yaml", src)
	if err != nil {
		t.Fatalf("%s: emitted YAML does not parse: %v\n%s", name, err, src)
	}
	if len(back.Points) != 1 {
		t.Fatalf("%s: %d points, want 1", name, len(back.Points))
	}
	if got := back.Points[0].Scenario; !reflect.DeepEqual(got, sc) {
		t.Errorf("%s: round trip changed it\n got %+v\nwant %+v\n%s", name, got, sc, src)
	}
}

// TestBuiltinsRoundTrip: every point of every built-in experiment written
// with YAML parses back into the same scenario.
func TestBuiltinsRoundTrip(t *testing.T) {
	for _, n := range experiments.Names() {
		src, _ := experiments.Source(n)
		exp, err := ParseScenario(n+".yaml", src)
		if err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		for _, p := range exp.Points {
			roundTrip(t, fmt.Sprintf("%s point %d", n, p.Index), p.Scenario)
		}
	}
}

func TestSimpleErrors(t *testing.T) {
	for _, c := range []struct {
		s    Simple
		want string
	}{
		{Simple{Topology: "ring"}, "topology"},
		{Simple{Buffer: "lots"}, "buffer"},
		{Simple{Traffic: "cbr"}, "datagram generator"},
		{Simple{CC: []string{"nosuch"}}, "unknown congestion controller"},
		{Simple{CC: []string{"ccid2"}}, "datagram mode only"},
		{Simple{Queue: "droptail:limit=5p"}, "limit"},
		{Simple{Duration: time.Second, Warmup: 2 * time.Second}, "warm-up"},
		{Simple{UDPFlows: 1, UDP: "greedy"}, "udp traffic"},
	} {
		_, err := c.s.Scenario()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: got %v, want an error mentioning %q", c.s, err, c.want)
		}
	}
}
