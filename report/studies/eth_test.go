package studies

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"cclab/internal/evaltest"
	"cclab/metrics"
	"cclab/store"
)

// TestETHVariant: controller × recovery pairs get the ETH study's names.
func TestETHVariant(t *testing.T) {
	for _, tc := range []struct{ cc, rec, want string }{
		{"reno", "reno", "reno"},
		{"reno", "newreno", "newreno"},
		{"reno", "sack", "sack"},
		{"reno", "fack", "fack"},
		{"reno", "ratehalving", "ratehalving"},
		{"reno", "ratehalving:lostretx", "ratehalving+lostretx"},
		{"reno", "newreno:nolt", "newreno"},
		{"reno", "sack:nolt", "sack"},
		{"reno", "ratehalving:draft", "ratehalving"},
		{"reno", "ratehalving:lostretx,draft", "ratehalving+lostretx"},
		{"reno", "ratehalving:nolt", "reno/ratehalving:nolt"},
		{"reno", "sack:draft", "reno/sack:draft"},
		{"reno:ca=acks", "sack:lostretx", "sack+lostretx"},
		{"vegas", "newreno", "vegas"},
		{"vegas:alpha=2", "sack", "vegas"},
		{"cubic", "sack", "cubic/sack"},
		{"reno", "sack:dupthresh=5", "reno/sack:dupthresh=5"},
		{"reno", "", "reno/"},
	} {
		if got := ETHVariant(tc.cc, tc.rec); got != tc.want {
			t.Errorf("ETHVariant(%q, %q): got %q, want %q", tc.cc, tc.rec, got, tc.want)
		}
	}
}

// TestQuantile checks Hyndman & Fan's definition 7 by hand: for 1, 2, 3, 4
// the quartiles are at h = 0.75 and 2.25: 1.75 and 3.25.
func TestQuantile(t *testing.T) {
	xs := []float64{4, 1, 3, 2}
	for _, tc := range []struct{ q, want float64 }{{0, 1}, {0.25, 1.75}, {0.5, 2.5}, {0.75, 3.25}, {1, 4}} {
		if got := Quantile(xs, tc.q); !evaltest.Near(got, tc.want) {
			t.Errorf("Quantile(%v): got %v, want %v", tc.q, got, tc.want)
		}
	}
	if got := Quantile(nil, 0.5); !math.IsNaN(got) {
		t.Errorf("quantile of nothing: got %v, want NaN", got)
	}
}

// TestWelchByHand: a = 1, 2, 3 and b = 4, 5, 6 have variances 1 each, so
// s²/n = 1/3 each, the standard error √(2/3), ν = (2/3)² / (2·(1/3)²/2) = 4
// and the half-width t(0.975, 4)·√(2/3) = 2.776445105·0.816496581 = 2.266959.
func TestWelchByHand(t *testing.T) {
	w := metrics.Welch([]float64{1, 2, 3}, []float64{4, 5, 6})
	for _, tc := range []struct {
		name      string
		got, want float64
	}{
		{"diff", w.Diff, 3}, {"df", w.DF, 4}, {"half", w.Half, 2.7764451051977987 * math.Sqrt(2.0/3)},
		{"mean a", w.MeanA, 2}, {"mean b", w.MeanB, 5},
	} {
		if !evaltest.Near(tc.got, tc.want) {
			t.Errorf("%s: got %.12g, want %.12g", tc.name, tc.got, tc.want)
		}
	}
	if w := metrics.Welch([]float64{0, 0}, []float64{1, 1}); w.Half != 0 || w.Diff != 1 {
		t.Errorf("constant samples: got diff %v half %v, want 1 and 0", w.Diff, w.Half)
	}
	if w := metrics.Welch([]float64{1}, []float64{1, 2}); !math.IsNaN(w.Half) {
		t.Errorf("one value: got half %v, want NaN", w.Half)
	}
}

// ethCellTransfers is a hand-computed cell (see TestETHAnalyzeByHand).
func ethCellTransfers() []ETHTransfer {
	return []ETHTransfer{
		{Variant: "sack", Group: "intra", GoodputBps: 1e6, DeliveredBytes: 1e6, PacketsSent: 1000, Retransmits: 10, Unnecessary: 5,
			RTOs: 1, RTOCauses: map[string]int64{ETHCauseTooFewDupAcks: 1}, LossRate: 0.01},
		{Variant: "sack", Group: "intra", GoodputBps: 2e6, DeliveredBytes: 2e6, PacketsSent: 2000, Retransmits: 40,
			RTOs: 3, RTOCauses: map[string]int64{ETHCauseBurstLoss: 2, ETHCauseLostRetransmission: 1}, LossRate: 0.02},
		{Variant: "sack", Group: "intra", GoodputBps: 3e6, DeliveredBytes: 1e6, PacketsSent: 1100, RTOCauses: map[string]int64{"unknown": 0}},
		{Variant: "sack", Group: "intra", Failed: true, DeliveredBytes: 5e5, PacketsSent: 600, Retransmits: 30, Unnecessary: 3,
			RTOs: 2, RTOCauses: map[string]int64{ETHCauseTooFewDupAcks: 2}, LossRate: 0.05},
		{Variant: "sack", Group: "intra", Failed: true},
	}
}

// TestETHAnalyzeByHand checks one cell against a hand computation. Five
// transfers, two failed (one sent nothing). Goodput of the three completed:
// 1, 2, 3 Mbit/s: mean and median 2, quartiles 1.5 and 2.5. Retransmissions
// per MB of the four that sent: 10/1, 40/2, 0/1, 30/0.5 = 10, 20, 0, 60,
// mean 22.5; pooled 80/4.5 = 17.78. Unnecessary share of the three that
// retransmitted: 0.5, 0, 0.1, mean 0.2; pooled 8/80 = 0.1. Timeouts per
// transfer: 1, 3, 0, 2 (mean 1.5); non-trigger 1, 0, 0, 2 (0.75); burst
// loss 0, 2, 0, 0 (0.5). Loss rate: 0.01, 0.02, 0, 0.05, mean 0.02.
func TestETHAnalyzeByHand(t *testing.T) {
	s := ethAnalyze("sack", "intra", ethCellTransfers())
	if s.Transfers != 5 || s.Failed != 2 || s.Goodput.N != 3 || s.RTOs.N != 4 || s.Unnecessary.N != 3 {
		t.Fatalf("counts: got %d transfers, %d failed, goodput n %d, timeouts n %d, unnecessary n %d; want 5, 2, 3, 4, 3",
			s.Transfers, s.Failed, s.Goodput.N, s.RTOs.N, s.Unnecessary.N)
	}
	for _, tc := range []struct {
		name      string
		got, want float64
	}{
		{"goodput mean", s.Goodput.Mean, 2e6}, {"goodput sd", s.Goodput.SD, 1e6}, {"goodput median", s.Goodput.Median, 2e6},
		{"goodput t half-width", s.Goodput.CI, 4.302652729749464 * 1e6 / math.Sqrt(3)},
		{"Q1", s.Q1, 1.5e6}, {"Q3", s.Q3, 2.5e6},
		{"retx per MB", s.RetxPerMB.Mean, 22.5}, {"retx per MB pooled", s.RetxPerMBPooled, 80 / 4.5},
		{"unnecessary", s.Unnecessary.Mean, 0.2}, {"unnecessary pooled", s.UnnecessaryPooled, 0.1},
		{"timeouts", s.RTOs.Mean, 1.5}, {"non-trigger", s.Causes[ETHCauseTooFewDupAcks].Mean, 0.75},
		{"burst loss", s.Causes[ETHCauseBurstLoss].Mean, 0.5}, {"lost retransmission", s.Causes[ETHCauseLostRetransmission].Mean, 0.25},
		{"other", s.Causes[ETHCauseOther].Mean, 0}, {"loss rate", s.LossRate.Mean, 0.02},
		{"unknown and handshake are other", ethAnalyze("x", "g", []ETHTransfer{{PacketsSent: 1, RTOs: 3,
			RTOCauses: map[string]int64{"unknown": 1, "handshake": 1, ETHCauseOther: 1}}}).Causes[ETHCauseOther].Mean, 3},
	} {
		if !evaltest.Near(tc.got, tc.want) {
			t.Errorf("%s: got %.12g, want %.12g", tc.name, tc.got, tc.want)
		}
	}
	// The goodput's t interval would reach below 0: the bootstrap interval
	// (inside the values' range) is reported instead.
	if s.Goodput.Method != metrics.MethodBootstrap || s.Goodput.Low < 1e6 || s.Goodput.High > 3e6 {
		t.Errorf("goodput interval: got %s [%v, %v], want bootstrap within [1e6, 3e6]", s.Goodput.Method, s.Goodput.Low, s.Goodput.High)
	}
}

// ethMade returns transfers of a variant in a group with the given goodputs
// (Mbit/s) and non-trigger timeouts.
func ethMade(variant, group string, goodMbps []float64, nonTrigger []int64) []ETHTransfer {
	var out []ETHTransfer
	for i, g := range goodMbps {
		out = append(out, ETHTransfer{Variant: variant, Group: group, GoodputBps: g * 1e6, DeliveredBytes: 1e6, PacketsSent: 800,
			RTOs: nonTrigger[i], RTOCauses: map[string]int64{ETHCauseTooFewDupAcks: nonTrigger[i]}})
	}
	return out
}

// TestETHAnswers: the answers follow the numbers. SACK (4, 5, 6 Mbit/s)
// against Reno (1, 2, 3): +3 Mbit/s, 95 % Welch interval 3 ± 2.267 (ν = 4,
// TestWelchByHand), above 0, so SACK beats Reno; FACK (1, 2, 3) does not
// differ. Rate-Halving's non-trigger timeouts (0, 0, 0) against Reno's
// (3, 4, 5): −4, ν = 2, half-width t(0.975, 2)·√(1/3) = 2.484, so fewer;
// against FACK's (0, 0, 0): none in either. With the data reversed the
// answers reverse.
func TestETHAnswers(t *testing.T) {
	var ts []ETHTransfer
	ts = append(ts, ethMade("reno", "inter", []float64{1, 2, 3}, []int64{3, 4, 5})...)
	ts = append(ts, ethMade("sack", "inter", []float64{4, 5, 6}, []int64{1, 1, 2})...)
	ts = append(ts, ethMade("fack", "inter", []float64{1, 2, 3}, []int64{0, 0, 0})...)
	ts = append(ts, ethMade("ratehalving", "inter", []float64{2, 2, 3}, []int64{0, 0, 0})...)
	ans := ethAnswers(ts)
	if len(ans) != 2 {
		t.Fatalf("answers: got %d, want 2 (SACK vs Reno, Rate-Halving) for one group: %v", len(ans), ans)
	}
	for _, want := range []string{"Higher goodput than Reno: sack (+3 Mbit/s, 95 % CI [+0.733, +5.27])",
		"no difference distinguishable at 95 %: fack (+0 Mbit/s"} {
		if !strings.Contains(ans[0][1], want) {
			t.Errorf("SACK answer: got %q, want it to contain %q", ans[0][1], want)
		}
	}
	if !strings.HasSuffix(ans[0][0], "inter") || !strings.Contains(ans[1][0], "Rate-Halving") {
		t.Errorf("questions: got %q and %q", ans[0][0], ans[1][0])
	}
	for _, want := range []string{"Fewer: ratehalving than reno (0.000 vs 4.000 per transfer, difference 95 % CI [-6.48, -1.52])",
		"ratehalving and fack (none in either)"} {
		if !strings.Contains(ans[1][1], want) {
			t.Errorf("Rate-Halving answer: got %q, want it to contain %q", ans[1][1], want)
		}
	}
	// Reversed: Reno ahead of SACK, Rate-Halving with more non-trigger timeouts.
	var rev []ETHTransfer
	rev = append(rev, ethMade("reno", "intra", []float64{4, 5, 6}, []int64{0, 0, 0})...)
	rev = append(rev, ethMade("sack", "intra", []float64{1, 2, 3}, []int64{0, 0, 0})...)
	rev = append(rev, ethMade("ratehalving", "intra", []float64{1, 2, 3}, []int64{3, 4, 5})...)
	ans = ethAnswers(rev)
	if len(ans) != 2 || !strings.HasPrefix(ans[0][1], "Lower goodput than Reno: sack (-3 Mbit/s") ||
		!strings.HasPrefix(ans[1][1], "More: ratehalving than reno (4.000 vs 0.000") {
		t.Errorf("reversed answers: got %v", ans)
	}
	// Every Reno transfer failed: no goodput to compare with, said so.
	failed := append(ethMade("reno", "inter", []float64{1, 1}, []int64{0, 0}), ethMade("sack", "inter", []float64{2, 3}, []int64{0, 0})...)
	failed[0].Failed, failed[1].Failed = true, true
	if ans := ethAnswers(failed); len(ans) != 1 || !strings.Contains(ans[0][1], "Too few transfers to compare: sack") {
		t.Errorf("every Reno transfer failed: got %v", ans)
	}
	// One transfer each: no interval, said so.
	one := append(ethMade("reno", "intra", []float64{1}, []int64{0}), ethMade("sack", "intra", []float64{2}, []int64{0})...)
	if ans := ethAnswers(one); len(ans) != 1 || !strings.Contains(ans[0][1], "Too few transfers to compare: sack") {
		t.Errorf("one transfer each: got %v", ans)
	}
}

// TestWriteETHReport: the standalone report has every table, the answers
// and the meta lines, and a cell as ethAnalyze computes it.
func TestWriteETHReport(t *testing.T) {
	ts := append(ethCellTransfers(), ethMade("reno", "intra", []float64{1, 2, 3}, []int64{1, 0, 0})...)
	ts = append(ts, ethMade("ratehalving", "inter", []float64{1, 2}, []int64{0, 0})...)
	var b bytes.Buffer
	if err := WriteETHReport(&b, "c1", [][2]string{{"campaign", "c1 & co"}}, ts); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	for _, want := range []string{"<title>cclab ETH analysis: c1</title>", "c1 &amp; co", "10 transfers, 2 failed",
		"The study&#39;s questions, answered from the numbers", "Goodput per variant and path group", "Retransmissions and the unnecessary share",
		"Timeouts per transfer by cause", "Loss-rate bins", "Goodput: SACK variants against Reno", "Do SACK variants beat Reno (goodput)? — intra",
		"<td>22.5 [5, 47.5]†</td>", "<td>17.78</td>", "<style>"} {
		if !strings.Contains(html, want) {
			t.Errorf("report: missing %q", want)
		}
	}
	var e bytes.Buffer
	if err := WriteETHReport(&e, "empty", nil, nil); err != nil || !strings.Contains(e.String(), "No transfers.") {
		t.Errorf("empty report: err %v, want it to say no transfers", err)
	}
}

// TestETHRunTransfers: a stored run's measured stream flow becomes a
// transfer: variant from its Info, group from the topology's name, causes
// folded (unknown and handshake are other), failed without fct.
func TestETHRunTransfers(t *testing.T) {
	r := store.RunRecord{Flows: []metrics.ScopeRecord{{ID: 1, Info: "mode=stream cc=reno recovery=ratehalving:lostretx traffic=greedy:bytes=1MB"},
		{ID: 2, Info: "mode=udp traffic=cbr"}}}
	for m, v := range map[string]float64{"fct": 2, "mean_throughput": 4e6, "total_delivered": 1e6, "total_packets_sent": 900,
		"total_retransmissions": 20, "total_spurious_retransmissions": 4, "total_rtos": 4, "total_rtos_unknown": 1,
		"total_rtos_handshake": 1, "total_rtos_too_few_dupacks": 2, "loss_rate": 0.02} {
		r.Summaries = append(r.Summaries, store.SummaryRecord{Scope: metrics.ScopeFlow, ScopeID: 1, Metric: m, Value: v})
	}
	ts := ETHRunTransfers(&r, "inter-eu-us")
	if len(ts) != 1 {
		t.Fatalf("transfers: got %d, want 1 (the UDP flow is not one)", len(ts))
	}
	got := ts[0]
	if got.Variant != "ratehalving+lostretx" || got.Group != "inter" || got.Path != "inter-eu-us" || got.Failed || got.GoodputBps != 4e6 ||
		got.DeliveredBytes != 1e6 || got.PacketsSent != 900 || got.Retransmits != 20 || got.Unnecessary != 4 || got.RTOs != 4 ||
		got.RTOCauses[ETHCauseOther] != 2 || got.RTOCauses[ETHCauseTooFewDupAcks] != 2 || got.LossRate != 0.02 {
		t.Errorf("transfer: got %+v", got)
	}
	for i, s := range r.Summaries {
		if s.Metric == "fct" {
			r.Summaries = append(r.Summaries[:i], r.Summaries[i+1:]...)
			break
		}
	}
	if ts := ETHRunTransfers(&r, "intra"); !ts[0].Failed || ts[0].Group != "intra" {
		t.Errorf("without fct: got failed %v group %q, want failed in intra", ts[0].Failed, ts[0].Group)
	}
}
