package metrics_test

import (
	"math"
	"reflect"
	"slices"
	"testing"

	"cclab/event"
	"cclab/internal/evaltest"
	"cclab/metrics"
)

// The tests on evaltest.SyntheticRun, the hand-made run that the harness's
// packages share: an external test package, since evaltest imports metrics.

func near(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

func TestMetricsByHand(t *testing.T) {
	info, ev := evaltest.SyntheticRun()
	m := metrics.Compute(info, ev)
	if len(m.Flows) != 2 {
		t.Fatalf("flows: got %d, want 2 (flow 1, and flow 2 seen only in a drop)", len(m.Flows))
	}
	f := m.Flows[0]
	// Active time: first PacketSent (0 s) to End (2 s) = 2 s.
	flowWant := map[string]float64{
		"total_delivered":       2000,           // 99999 bytes fall after End
		"mean_throughput":       2000 * 8 / 2.0, // 8000 bit/s
		"mean_send_rate":        3000 * 8 / 2.0,
		"mean_delivery_rate":    2500 * 8 / 2.0, // bytes acknowledged
		"total_packets_sent":    3,
		"mean_cwnd":             3000,                     // 2000 for 1 s, 4000 for 1 s
		"var_cwnd":              (4e6+16e6)/2 - 3000*3000, // 1e6
		"cov_cwnd":              1000.0 / 3000,            // sd 1000
		"mean_inflight":         2000,                     // 1000 for 1 s, 3000 for 1 s
		"mean_srtt":             0.030,                    // 20 ms for 1 s, 40 ms for 1 s
		"var_srtt":              0.0001,                   // time-weighted variance
		"cov_srtt":              0.01 / 0.03,              // sd 10 ms
		"mean_qdelay_est":       0.020,                    // mean srtt 30 ms − min RTT 10 ms
		"min_rtt":               0.010,                    //
		"total_lost":            1,                        //
		"declared_loss_rate":    1.0 / 3,                  // 1 declared lost of 3 sent
		"total_link_drops":      3,                        // 2 overflow + 1 random
		"loss_rate":             1.0,                      // 3 dropped in the network of 3 sent
		"total_rtos":            1,                        //
		"total_recoveries":      1,                        //
		"mean_recovery_time":    0.4,                      // 0.8 s → 1.2 s
		"bw_utilization":        8000 / 8e6,               // flow's bottleneck rate
		"bdp_utilization":       2000 / (8e6 * 0.010 / 8), // BDP 10000 bytes
		"power":                 8000 / 0.030,             //
		"var_throughput":        0,                        // 8000 bit/s in both intervals
		"cov_throughput":        0,                        //
		"total_sent":            3000,                     //
		"total_retransmissions": 1,                        // Retransmit and flagged PacketSent are one retransmission
		"total_rtos_burst_loss": 1,                        //
	}
	for name, want := range flowWant {
		got, ok := f.Get(name)
		if !ok || !near(got, want) {
			t.Errorf("flow %s: got %v (present %v), want %v", name, got, ok, want)
		}
	}
	if _, ok := f.Get("fct"); ok {
		t.Errorf("fct present for an unlimited flow, want absent")
	}
	series := func(r metrics.Result, name string) metrics.Series {
		for _, s := range r.Series {
			if s.Name == name {
				return s
			}
		}
		t.Fatalf("series %s missing", name)
		return metrics.Series{}
	}
	checkSeries := func(what string, s metrics.Series, wantT, wantV []float64) {
		t.Helper()
		if len(s.V) != len(wantV) {
			t.Errorf("%s: got %v at %v, want %v", what, s.V, s.T, wantV)
			return
		}
		for i := range wantV {
			if !near(s.V[i], wantV[i]) || !near(s.T[i], wantT[i]) {
				t.Errorf("%s[%d]: got (%v, %v), want (%v, %v)", what, i, s.T[i], s.V[i], wantT[i], wantV[i])
			}
		}
	}
	checkSeries("throughput", series(f, "throughput"), []float64{0, 1}, []float64{8000, 8000})
	checkSeries("cwnd", series(f, "cwnd"), []float64{0, 1}, []float64{2000, 4000})
	checkSeries("delivery_rate", series(f, "delivery_rate"), []float64{0, 1}, []float64{8000, 12000})
	checkSeries("srtt", series(f, "srtt"), []float64{0, 1}, []float64{0.020, 0.040})
	checkSeries("losses", series(f, "losses"), []float64{0, 1}, []float64{1, 0})

	l := m.Links[0]
	// Queue length: 1 for 0.5 s, 6 for 0.5 s, 0 for 0.5 s (drops leave it 0), 5 for 0.5 s.
	linkWant := map[string]float64{
		"mean_queue_len":           3,                   // (0.5 + 3 + 0 + 2.5) / 2
		"var_queue_len":            (1+36+0+25)/4.0 - 9, // 6.5
		"max_queue_len":            6,
		"mean_queue_delay":         0.5,
		"total_enqueued":           3,
		"total_drops":              4,
		"total_drops_overflow":     2,
		"total_drops_early":        1,
		"total_drops_random_loss":  1,
		"total_marks":              1,
		"drop_rate":                4.0 / 7,
		"total_departed":           2000,
		"utilization":              2000 * 8 / (16000 * 2.0),
		"total_queue_oscillations": 1, // θ = 0.5 × 10 = 5: 1 → 6 (> 5: one), → 0 (≤ 2.5: ends), → 5 (not > 5)
		"total_loss_events":        3, // {1.1, 1.15}, {1.4}, {1.9}; the random drop is not congestion
		"mean_queue_bytes":         (500 + 3000 + 0 + 2500) / 2.0,
	}
	for name, want := range linkWant {
		got, ok := l.Get(name)
		if !ok || !near(got, want) {
			t.Errorf("link %s: got %v (present %v), want %v", name, got, ok, want)
		}
	}
	checkSeries("queue_len", series(l, "queue_len"), []float64{0, 1}, []float64{3.5, 2.5})
	checkSeries("drops", series(l, "drops"), []float64{0, 1}, []float64{0, 4})

	n := m.Network
	netWant := map[string]float64{
		"agg_throughput": 8000,
		"jain_fairness":  metrics.JainIndex([]float64{8000, 0}), // flow 2 delivered nothing
		"bw_utilization": 8000 / 16000.0,                        // the bottleneck link's rate
		"total_drops":    4,
		"utilization":    0.5,
		"mean_srtt":      0.030, // flow 2 has no srtt
	}
	for name, want := range netWant {
		got, ok := n.Get(name)
		if !ok || !near(got, want) {
			t.Errorf("network %s: got %v (present %v), want %v", name, got, ok, want)
		}
	}
}

// TestUsesFlow: the events whose Flow the collector does not use
// (metrics.UsesFlow false: the simulator leaves their flow keys unmapped) can carry
// any flow without changing a metric, and those it uses change some.
func TestUsesFlow(t *testing.T) {
	info, ev := evaltest.SyntheticRun()
	want := metrics.Compute(info, ev)
	for k := event.Kind(0); k <= event.SpuriousRTO; k++ {
		changed := slices.Clone(ev)
		n := 0
		for i := range changed {
			if changed[i].Kind == k {
				changed[i].Flow += 1000
				n++
			}
		}
		if n == 0 {
			continue
		}
		got := metrics.Compute(info, changed)
		same := reflect.DeepEqual(got, want)
		if !metrics.UsesFlow(k) && !same {
			t.Errorf("%v: metrics.UsesFlow false, but the metrics change with the events' flow", k)
		}
		if metrics.UsesFlow(k) && same && k != event.Unknown {
			t.Errorf("%v: metrics.UsesFlow true, but the metrics do not change with the events' flow", k)
		}
	}
}

// TestPacketTrace: the Collector keeps the traced flow's sent packets (new
// and retransmitted), declared losses and timeouts in the trace window,
// times from the run's origin, and nothing of other flows, other kinds or
// outside the window (before the measurement window too).
func TestPacketTrace(t *testing.T) {
	info, _ := evaltest.SyntheticRun()
	info.Start = evaltest.At(1) // the measurement window starts after the trace's
	info.Trace = &metrics.TraceWindow{Flow: 1, Origin: evaltest.At(0), From: evaltest.At(0.5), To: evaltest.At(1.6)}
	ev := []event.Event{
		{Time: evaltest.At(0.4), Kind: event.PacketSent, Flow: 1, Seq: 1},                                   // before the window
		{Time: evaltest.At(0.5), Kind: event.PacketSent, Flow: 1, Seq: 2},                                   // its first instant
		{Time: evaltest.At(0.6), Kind: event.PacketSent, Flow: 2, Seq: 9},                                   // another flow
		{Time: evaltest.At(0.7), Kind: event.PacketAcked, Flow: 1, Seq: 2},                                  // not traced
		{Time: evaltest.At(0.8), Kind: event.PacketLost, Flow: 1, Seq: 2},                                   // loss
		{Time: evaltest.At(1.0), Kind: event.PacketSent, Flow: 1, Seq: 2, Reason: event.SentRetransmission}, // retransmission
		{Time: evaltest.At(1.1), Kind: event.Drop, Flow: 1, Link: 0, Seq: 77},                               // a link's drop: not traced
		{Time: evaltest.At(1.6), Kind: event.RTO, Flow: 1, Seq: 3},                                          // its last instant
		{Time: evaltest.At(1.7), Kind: event.PacketSent, Flow: 1, Seq: 4},                                   // after
	}
	m := metrics.Compute(info, ev)
	want := []metrics.TracePoint{{0.5, metrics.TraceSent, 2}, {0.8, metrics.TraceLost, 2}, {1.0, metrics.TraceResent, 2}, {1.6, metrics.TraceTimeout, 3}}
	if !reflect.DeepEqual(m.Trace, want) || m.TraceFlow != 1 {
		t.Errorf("trace: got flow %d %v, want flow 1 %v", m.TraceFlow, m.Trace, want)
	}
	info.Trace = nil
	if m := metrics.Compute(info, ev); m.Trace != nil || m.TraceFlow != 0 {
		t.Errorf("no trace key: got flow %d %v, want none", m.TraceFlow, m.Trace)
	}
}
