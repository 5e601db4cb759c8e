package scenario

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestScenarioYAMLRoundTrip: a scenario written with YAML parses back into
// an equal scenario (so `cclab sim -emit-scenario` shows exactly the
// scenario its flags run), for scenarios made from cclab sim's numbers and
// for a parsed file that uses every hop and flow key.
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
    - {rate: 8Mbit, delay: 3ms, queue: "red:min=5,max=15,maxp=0.1", loss: "ge:p=0.01,r=0.3"}
  access: {rate: 1Gbit, delay: 1ms}
  mtu: 1500B
flows:
  - {name: a, cc: cubic, recovery: prr, count: 2, start: 1s, stop: 4s, stagger: 100ms, access_delay: 5ms}
  - {name: b, cc: ccid2, traffic: "cbr:rate=1Mbit", path: 1}
  - {name: c, mode: udp, traffic: "cbr:rate=1Mbit", path: 0-1}
`))
	if err != nil {
		t.Fatal(err)
	}
	scs = append(scs, exp.Points[0].Scenario)
	for i, sc := range scs {
		src := sc.YAML()
		back, err := ParseScenario("emitted.yaml", src)
		if err != nil {
			t.Fatalf("scenario %d: emitted YAML does not parse: %v\n%s", i, err, src)
		}
		if len(back.Points) != 1 {
			t.Fatalf("scenario %d: %d points, want 1", i, len(back.Points))
		}
		if got := back.Points[0].Scenario; !reflect.DeepEqual(got, sc) {
			t.Errorf("scenario %d: round trip changed it\n got %+v\nwant %+v\n%s", i, got, sc, src)
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
