package report

import (
	"math"
	"testing"

	"cclab/scenario"
)

// TestMathis evaluates Mathis et al. 1997, eq. 3, by hand: MSS 1460 B,
// RTT 100 ms, p = 0.01, an ACK per packet (C = √1.5 = 1.2247):
// 1460/0.1 × 1.2247/0.1 = 178 813 B/s; delayed ACKs (b = 2) divide it by √2.
func TestMathis(t *testing.T) {
	if got, want := MathisThroughput(1460, 0.1, 0.01, 1), 178812.75; math.Abs(got-want) > 0.01 {
		t.Errorf("Mathis b=1: got %.2f, want %.2f", got, want)
	}
	if got, want := MathisThroughput(1460, 0.1, 0.01, 2), 178812.75/math.Sqrt2; math.Abs(got-want) > 0.01 {
		t.Errorf("Mathis b=2: got %.2f, want %.2f", got, want)
	}
}

// TestPFTK evaluates Padhye et al. 1998, eq. 31, by hand, and checks its
// limits: Mathis's formula as p → 0 (timeouts negligible) and the window
// limit Wmax/RTT.
func TestPFTK(t *testing.T) {
	// MSS 1000 B, RTT 0.1 s, T0 1 s, p 0.01, b 2:
	// RTT·√(2bp/3) = 0.0115470; T0·min(1, 3√(3bp/8))·p·(1+32p²) = 0.2598076·0.01·1.0032 = 0.0026064;
	// B = 1000 / 0.0141534 = 70 654.4 B/s.
	if got, want := PFTKThroughput(1000, 0.1, 1, 0.01, 1e6, 2), 70654.42; math.Abs(got-want) > 0.01 {
		t.Errorf("PFTK: got %.2f, want %.2f", got, want)
	}
	// loss-resilience at 10 % loss: MSS 1165, RTT 15 ms, T0 200 ms:
	// 0.0054772 + 0.2·min(1, 0.6708)·0.1·1.32 = 0.0054772 + 0.0216898; B = 42 882.8 B/s.
	if got, want := PFTKThroughput(1165, 0.015, 0.2, 0.1, 1e6, 2), 42882.85; math.Abs(got-want) > 0.01 {
		t.Errorf("PFTK at 10 %% loss: got %.2f, want %.2f", got, want)
	}
	if got, want := PFTKThroughput(1000, 0.1, 1, 1e-7, 1e9, 2), MathisThroughput(1000, 0.1, 1e-7, 2); math.Abs(got/want-1) > 0.01 {
		t.Errorf("PFTK as p → 0: got %.0f, want Mathis's %.0f within 1 %%", got, want)
	}
	if got, want := PFTKThroughput(1000, 0.1, 1, 1e-9, 10, 2), 1000*10/0.1; got != want {
		t.Errorf("PFTK window-limited: got %v, want Wmax·MSS/RTT = %v", got, want)
	}
}

func TestModelFor(t *testing.T) {
	exp, err := scenario.ParseScenario("m.yaml", []byte(`name: m
duration: 1s
topology: {kind: dumbbell, bottleneck: {rate: 16Mbit, delay: 7.5ms, loss: [0, 0.01]}}
flows: [{cc: reno}]
`))
	if err != nil {
		t.Fatal(err)
	}
	m, ok := modelFor(exp.Base)
	if !ok || m.MSS != 1200-35 || math.Abs(m.RTT-0.015) > 1e-12 || m.T0 != 0.2 || m.B != 1 || m.Rate != 16e6 {
		t.Errorf("modelFor: got %+v, %v; want MSS 1165, RTT 15 ms, T0 200 ms, b 1 (byte counting), 16 Mbit/s", m, ok)
	}
	if !isLossAxis(exp.Axes[0]) {
		t.Errorf("loss axis %+v not recognised", exp.Axes[0])
	}
	// 1 % loss, b = 1: Mathis 1165/0.015·1.2247/0.1 = 951.2 kB/s = 7.61 Mbit/s → utilization 0.476.
	mathis, pftk := m.Utilizations(0.01)
	if want := MathisThroughput(1165, 0.015, 0.01, 1) * 8 / 16e6; math.Abs(mathis-want) > 1e-12 || math.Abs(want-0.4756) > 0.001 {
		t.Errorf("Mathis utilization at 1 %%: got %v, want %v (≈ 0.476)", mathis, want)
	}
	if pftk >= mathis {
		t.Errorf("PFTK utilization %v not below Mathis's %v (timeouts only lower it)", pftk, mathis)
	}
	if mu, pu := m.Utilizations(1e-9); mu != 1 || pu != 1 {
		t.Errorf("utilization near p = 0: got %v, %v; want both capped at 1", mu, pu)
	}
	two := *exp.Base
	two.Flows = append(two.Flows, two.Flows[0])
	if _, ok := modelFor(&two); ok {
		t.Errorf("modelFor accepts two flows")
	}
}

// TestModelB checks that the models' b follows the flow's growth and ACK
// settings: 1 with byte counting (RFC 3465 §2.1) whatever the ACKs; with
// per-ACK growth (RFC 5681 eq. (3)) the packets per ACK.
func TestModelB(t *testing.T) {
	for _, tc := range []struct {
		flow string
		want int
	}{
		{"{cc: reno}", 1},
		{"{cc: reno, ack_every: 4}", 1},
		{"{cc: cubic}", 1},
		{"{cc: \"reno:ca=acks\"}", 2},
		{"{cc: \"newreno:ca=acks\", ack_every: 3}", 3},
		{"{cc: \"reno:ca=acks\", delayed_ack: 0s}", 1},
	} {
		exp, err := scenario.ParseScenario("m.yaml", []byte("name: m\nduration: 1s\ntopology: {kind: dumbbell, bottleneck: {rate: 16Mbit, delay: 7.5ms}}\nflows: ["+tc.flow+"]\n"))
		if err != nil {
			t.Fatalf("%s: %v", tc.flow, err)
		}
		m, ok := modelFor(exp.Base)
		if !ok || m.B != tc.want {
			t.Errorf("%s: b got %d (ok %v), want %d", tc.flow, m.B, ok, tc.want)
		}
	}
}
