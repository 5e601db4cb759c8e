package liverun

import (
	"context"
	"encoding/binary"
	"slices"
	"strings"
	"testing"
	"time"

	"cclab/metrics"
	"cclab/plan"
	"cclab/relay"
	"cclab/scenario"
	"cclab/transport"
)

// TestLiveRun runs one short flow through the relay on loopback. Its
// assertions are deliberately loose (the machine is shared): the flow
// delivers data, its metrics come from real events, and utilization is a
// fraction of the bottleneck.
func TestLiveRun(t *testing.T) {
	skipShort(t)
	exp, err := scenario.ParseScenario("live.yaml", []byte(`name: live-test
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
		res, err := Runner{}.Run(context.Background(), scenario.RunSpec{Experiment: exp.Name, Point: p, Backend: scenario.BackendLive, Seed: 1})
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

// TestLiveControllers runs one flow live through the relay with each of
// the controllers that need more than a window: CCID2 (datagram mode:
// Ack Vectors, Ack Ratio), CCID3 (TFRC: the receiver's once-per-RTT
// reports reach the sender over real sockets and its paced rate follows
// them) and BBR (stream mode: delivery-rate samples and pacing through the
// socket driver's timer). minUtil is loose: the machine is shared, and
// CCID3 starts at 1 packet/s until its first report.
func TestLiveControllers(t *testing.T) {
	skipShort(t)
	for _, tc := range []struct {
		cc       string
		duration string
		minUtil  float64
	}{
		{"ccid2", "2s", 0}, {"ccid3", "3s", 0.2}, {"bbr", "3s", 0.5},
	} {
		res := runLive(t, Runner{}, liveSpec(t, `name: live-`+tc.cc+`
duration: `+tc.duration+`
backends: [live]
topology:
  kind: dumbbell
  bottleneck: {rate: 8Mbit, delay: 5ms, queue: droptail:20p}
flows: [{cc: `+tc.cc+`}]
`))
		f := res.Metrics.Flows[0].Values
		t.Logf("%s live: throughput %.2f Mbit/s, utilization %.3f, lost %v, mean srtt %.1f ms",
			tc.cc, f["mean_throughput"]/1e6, f["bw_utilization"], f["total_lost"], f["mean_srtt"]*1e3)
		if f["total_delivered"] <= 0 || f["total_packets_sent"] <= 0 || f["mean_srtt"] <= 0 {
			t.Errorf("%s: no data or RTT measured: %v", tc.cc, f)
		}
		if u := f["bw_utilization"]; u <= tc.minUtil || u > 1.1 {
			t.Errorf("%s: utilization %v, want in (%v, 1.1]", tc.cc, u, tc.minUtil)
		}
	}
}

// TestLiveLinkMetrics runs one sized flow live through a small bottleneck
// queue and checks that the relay's link events reach metrics.Collector like
// the simulator's: under the simulator's link IDs and names, the data
// packets' drops attributed to the flow, and the link metrics equal to the
// relay's own counters (the flow ends well inside the window, so every link
// event is measured).
func TestLiveLinkMetrics(t *testing.T) {
	skipShort(t)
	spec := liveSpec(t, `name: live-links
duration: 4s
backends: [live]
topology:
  kind: dumbbell
  bottleneck: {rate: 8Mbit, delay: 5ms, queue: droptail:8p}
flows: [{cc: reno, traffic: "greedy:400000"}]
`)
	var rl *relay.Relay
	res := runLive(t, Runner{onRelay: func(r *relay.Relay) { rl = r }}, spec)
	if len(res.Metrics.Flows) != 1 {
		t.Fatalf("flows %d, want 1", len(res.Metrics.Flows))
	}
	flow := res.Metrics.Flows[0].Values
	if _, ok := flow["fct"]; !ok {
		t.Fatalf("the 400 kB flow did not complete within the 4 s window (metrics %v); the comparison with the relay's counters needs every packet inside the window", flow)
	}
	// The simulator's dumbbell: link 0 is left>right (the bottleneck, the
	// relay's forward hop), link 1 right>left (the reverse hop).
	want := []struct {
		id   int64
		name string
		dir  int
	}{{0, "left>right", relay.Fwd}, {1, "right>left", relay.Rev}}
	if len(res.Metrics.Links) != len(want) {
		t.Fatalf("links %d, want %d", len(res.Metrics.Links), len(want))
	}
	for i, w := range want {
		l := res.Metrics.Links[i]
		st := rl.HopStats(w.dir)[0]
		if l.ID != w.id || l.Name != w.name {
			t.Errorf("link %d: got ID %d name %q, want %d %q (the simulator's)", i, l.ID, l.Name, w.id, w.name)
		}
		v := l.Values
		t.Logf("%s: mean queue %.2f pkt (max %v), queue delay %.2f ms, drops %v, departed %v B, utilization %.3f, oscillations %v; relay: drops %d, departed %d B",
			l.Name, v["mean_queue_len"], v["max_queue_len"], v["mean_queue_delay"]*1e3, v["total_drops"], v["total_departed"],
			v["utilization"], v["total_queue_oscillations"], st.TotalDrops(), st.DepartureBytes)
		checks := []struct {
			name      string
			got, want float64
		}{
			{"total_drops", v["total_drops"], float64(st.TotalDrops())},
			{"total_departed (bytes)", v["total_departed"], float64(st.DepartureBytes)},
			{"total_enqueued", v["total_enqueued"], float64(st.Enqueued)},
			{"total_marks", v["total_marks"], float64(st.Marks)},
		}
		for _, c := range checks {
			if c.got != c.want {
				t.Errorf("%s: %s got %v, want the relay's %v", l.Name, c.name, c.got, c.want)
			}
		}
		if v["total_departed"] <= 0 {
			t.Errorf("%s: nothing departed", l.Name)
		}
	}
	b := res.Metrics.Links[0].Values
	if b["total_drops"] <= 0 {
		t.Errorf("bottleneck: no drops (slow start into an 8-packet queue must overflow it)")
	}
	if b["max_queue_len"] < 1 || b["mean_queue_len"] <= 0 || b["mean_queue_delay"] <= 0 {
		t.Errorf("bottleneck: queue length mean %v max %v, delay %v; want > 0", b["mean_queue_len"], b["max_queue_len"], b["mean_queue_delay"])
	}
	if b["max_queue_len"] > 8 {
		t.Errorf("bottleneck: max queue length %v above the 8-packet limit", b["max_queue_len"])
	}
	if got := flow["total_link_drops"]; got != b["total_drops"] {
		t.Errorf("flow's total_link_drops got %v, want the bottleneck's %v (all its drops are the flow's data packets)", got, b["total_drops"])
	}
	var qlen *metrics.Series
	for i := range res.Metrics.Links[0].Series {
		if s := &res.Metrics.Links[0].Series[i]; s.Name == "queue_len" {
			qlen = s
		}
	}
	if qlen == nil || len(qlen.V) == 0 {
		t.Errorf("bottleneck: no queue_len time series")
	} else if m := slices.Max(qlen.V); m <= 0 {
		t.Errorf("bottleneck: queue_len series is all zero")
	}
	if _, ok := res.Metrics.Network.Values["utilization"]; !ok {
		t.Errorf("network: no bottleneck utilization")
	}
	var bn bool
	for _, l := range res.Links {
		if l.ID == 0 && strings.HasPrefix(l.Info, "bottleneck") {
			bn = true
		}
	}
	if !bn {
		t.Errorf("link descriptions %v: link 0 not described as the bottleneck", res.Links)
	}
}

// TestLiveReceiverSettings: a flow's receiver settings reach the live
// run's shared receiver (its request names the flow, receiverConfig): a
// 12000-byte receive window caps the flow at window / base RTT (2.4 Mbit/s
// over 40 ms) on a 20 Mbit/s path, whatever the machine's load (a bound
// from above); the delayed-ACK keys ride along.
func TestLiveReceiverSettings(t *testing.T) {
	skipShort(t)
	res := runLive(t, Runner{}, liveSpec(t, `name: live-recv
duration: 3s
backends: [live]
topology:
  kind: dumbbell
  bottleneck: {rate: 20Mbit, delay: 20ms, queue: droptail:100p}
flows: [{cc: reno, recv_window: 12000B, ack_every: 1, delayed_ack: 100ms}]
`))
	f := res.Metrics.Flows[0].Values
	limit := 12000 * 8 / 0.040
	t.Logf("throughput %.2f Mbit/s, window / base RTT %.2f Mbit/s", f["mean_throughput"]/1e6, limit/1e6)
	if got := f["mean_throughput"]; got <= 0 || got > 1.2*limit {
		t.Errorf("throughput %.0f bit/s with a 12000-byte receive window, want above 0 and at most 1.2 × %.0f", got, limit)
	}
}

// TestReceiverConfig: the shared receiver's hook gives a connection the
// settings of the flow its request names, and leaves others (no request,
// a malformed or unknown one, a flow without settings) at the defaults.
func TestReceiverConfig(t *testing.T) {
	spec := liveSpec(t, `name: r
duration: 1s
topology:
  kind: dumbbell
  bottleneck: {rate: 20Mbit, delay: 20ms}
flows: [{name: a, recv_window: 64KiB, ack_every: 3, delayed_ack: 0s, ack_first: true}, {name: b}]
`)
	p, err := plan.New(spec.Point.Scenario, 1)
	if err != nil {
		t.Fatal(err)
	}
	hook := receiverConfig(p)
	def := transport.DefaultConfig()
	for _, tc := range []struct {
		req  []byte
		want transport.Config // AckEvery, DelayedAck, RecvWindow, AckFirst
	}{
		{binary.AppendUvarint(nil, 1), transport.Config{AckEvery: 3, DelayedAck: transport.NoDelayedAck, RecvWindow: 64 << 10, AckFirst: true}},
		{binary.AppendUvarint(nil, 2), def},
		{binary.AppendUvarint(nil, 3), def},
		{nil, def},
		{[]byte{0x81}, def},
		{append(binary.AppendUvarint(nil, 1), 0), def},
	} {
		cfg := transport.DefaultConfig()
		hook(tc.req, &cfg)
		if cfg.AckEvery != tc.want.AckEvery || cfg.DelayedAck != tc.want.DelayedAck || cfg.RecvWindow != tc.want.RecvWindow || cfg.AckFirst != tc.want.AckFirst {
			t.Errorf("request %x: AckEvery %d DelayedAck %v RecvWindow %d AckFirst %v, want %d %v %d %v", tc.req, cfg.AckEvery, cfg.DelayedAck,
				cfg.RecvWindow, cfg.AckFirst, tc.want.AckEvery, tc.want.DelayedAck, tc.want.RecvWindow, tc.want.AckFirst)
		}
	}
}

// TestLiveSizedOutlastsDrain: a sized transfer has until the end of the run
// to finish, not only the drain time. 200 kB at 2 Mbit/s (0.8 s on the wire,
// plus slow start over 100 ms) with a 300 ms drain and a 6 s run: it must
// complete (fct), where the drain alone cut it short.
func TestLiveSizedOutlastsDrain(t *testing.T) {
	skipShort(t)
	res := runLive(t, Runner{Drain: 300 * time.Millisecond}, liveSpec(t, `name: live-sized-test
duration: 6s
backends: [live]
topology:
  kind: dumbbell
  bottleneck: {rate: 2Mbit, delay: 50ms, queue: droptail:30p}
flows: [{cc: reno, recovery: sack, traffic: "greedy:bytes=200kB"}]
`))
	f := res.Metrics.Flows[0].Values
	t.Logf("delivered %v bytes, fct %v s", f["total_delivered"], f["fct"])
	if f["total_delivered"] != 200e3 || f["fct"] <= 0.8 {
		t.Errorf("delivered %v bytes, fct %v: want all 200000 bytes and a completion time above 0.8 s", f["total_delivered"], f["fct"])
	}
}

// liveSpec parses a test's scenario (YAML text) and returns the spec of a
// live run of its first point with seed 1.
func liveSpec(t *testing.T, text string) scenario.RunSpec {
	t.Helper()
	exp, err := scenario.ParseScenario("test.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return scenario.RunSpec{Experiment: exp.Name, Point: exp.Points[0], Backend: scenario.BackendLive, Seed: 1}
}

// skipShort skips a test that runs live (in real time) under -short.
func skipShort(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("live run takes real time")
	}
}

// runLive runs spec through r.
func runLive(t *testing.T, r Runner, spec scenario.RunSpec) metrics.RunResult {
	t.Helper()
	res, err := r.Run(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	return res
}
