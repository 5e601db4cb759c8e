package campaign

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	simrun "cclab/backend/sim"
	"cclab/eval"
	"cclab/link"
	"cclab/metrics"
	"cclab/scenario"
	"cclab/store"
)

// TestValidateSimulatedCampaign closes the loop on known paths: a campaign
// whose transfers are themselves simulated over known networks (10 Mbit/s,
// 80 ms, 100 packets; one clean, one with Gilbert-Elliott loss of 3.2 %) is
// profiled and replayed by Validate; every variant's replayed goodput must
// be within ±25 % of the measured one (the acceptance bound for
// paths with loss up to 5 %), and the runs are stored in the results store
// under the campaign's replay experiment, where StoredComparisons finds them.
func TestValidateSimulatedCampaign(t *testing.T) {
	clean := PathProfile{Name: "clean", RateBps: 10e6, MinRTT: 80 * time.Millisecond, QueuePackets: 100, Loss: link.GEConfig{R: 1, K: 1}}
	lossy := clean
	lossy.Name, lossy.Loss = "lossy", link.GEConfig{P: 0.01, R: 0.3, K: 1}
	sp := testSpec(t, 2, 2, ValidateSeeds, "") // as many rounds as the replay's seeds: replayed run for run
	sp.Transfer.Qlog = true
	truths := map[Pair]PathProfile{sp.Pairs[0]: clean, sp.Pairs[1]: lossy}
	var rows []Row
	for _, it := range sp.Plan() {
		r := simTransfer(t, sp, truths[it.Pair], it.Variant.Name, uint64(it.Round)) // the replay's seed of this round
		r.Digest, r.Seq, r.Attempt, r.Round, r.From, r.To, r.Status = sp.Digest(), it.Seq, 1, it.Round, it.Pair.From, it.Pair.To, StatusDone
		r.FromGroup, r.ToGroup = sp.Host(it.Pair.From).Group, sp.Host(it.Pair.To).Group
		r.Variant, r.CC, r.Recovery = it.Variant.Name, it.Variant.CC, it.Variant.Recovery
		rows = append(rows, r)
	}
	st, err := store.Open(filepath.Join(t.TempDir(), "v.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	cs, stats, err := Validate(ctx, sp, rows, ValidateOptions{Store: st, Runners: map[string]eval.Runner{scenario.BackendSim: simrun.Runner{}}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := stats.Ran, len(sp.Pairs)*len(sp.Variants)*sp.Schedule.Rounds; got != want {
		t.Errorf("replay runs: got %d, want %d (paths × variants × rounds)", got, want)
	}
	if got, want := len(cs), len(sp.Pairs)*len(sp.Variants); got != want {
		t.Fatalf("comparisons: got %d, want %d (one per path and variant)", got, want)
	}
	for _, c := range cs {
		t.Logf("%s %s %s: goodput %s vs %s ratio %s; retransmissions %s; RTT %s", c.Path, c.Variant, c.Backend,
			SummaryText("bit/s", c.Goodput.Measured), SummaryText("bit/s", c.Goodput.Predicted), RatioText(c.Goodput),
			RatioText(c.Retransmissions), RatioText(c.RTT))
		if c.Goodput.Measured.N != sp.Schedule.Rounds || c.Goodput.Predicted.N != sp.Schedule.Rounds {
			t.Errorf("%s %s: %d measured and %d replayed transfers, want %d each", c.Path, c.Variant, c.Goodput.Measured.N, c.Goodput.Predicted.N, sp.Schedule.Rounds)
		}
		if !c.Goodput.Within {
			t.Errorf("%s %s: replayed goodput / measured = %.3f, want within ±25 %%", c.Path, c.Variant, c.Goodput.Ratio)
		}
		if !c.RTT.Within {
			t.Errorf("%s %s: replayed RTT / measured = %.3f, want within ±25 %%", c.Path, c.Variant, c.RTT.Ratio)
		}
	}
	again, err := StoredComparisons(ctx, st, sp, rows)
	if err != nil {
		t.Fatal(err)
	}
	if len(again) != len(cs) || again[0].Goodput.Ratio != cs[0].Goodput.Ratio {
		t.Errorf("stored comparisons: %d, first ratio %v; want %d, %v", len(again), again[0].Goodput.Ratio, len(cs), cs[0].Goodput.Ratio)
	}
	var b bytes.Buffer
	if err := WriteReport(&b, sp, "v.db", rows, again); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	if !strings.Contains(html, "<h2>Replay against measurement (cclab campaign validate)</h2>") {
		t.Errorf("report lacks the replay table")
	}
	if got, want := strings.Count(html, "<td>simulator</td>"), len(cs); got != want {
		t.Errorf("replay rows: got %d, want %d", got, want)
	}
	// Per path: the goodput CDF and the qlog series (cwnd and SRTT panels).
	if got, want := strings.Count(html, "<svg"), len(sp.Pairs)*3; got < want {
		t.Errorf("plots: got %d SVGs, want at least %d (per path a CDF and two series panels)", got, want)
	}
}

// TestMetricComparison: the ratio of the means, its range from the
// intervals' ends, the ±25 % verdict, and the edge cases (no values, zero
// means, a zero measurement).
func TestMetricComparison(t *testing.T) {
	meas := []float64{9, 10, 11}   // mean 10, t interval 10 ± 2.484 (t(0.975, 2) = 4.303)
	pred := []float64{11, 12, 13}  // mean 12
	far := []float64{13, 13.5, 14} // mean 13.5
	mSum := metrics.SummarizeIn(meas, metrics.NonNegative)
	pSum := metrics.SummarizeIn(pred, metrics.NonNegative)
	cases := []struct {
		name           string
		measured, pred []float64
		ratio, lo, hi  float64
		within         bool
	}{
		{"within", meas, pred, 1.2, pSum.Low / mSum.High, pSum.High / mSum.Low, true},
		{"outside", meas, far, 1.35, math.NaN(), math.NaN(), false},
		{"equal", meas, meas, 1, mSum.Low / mSum.High, mSum.High / mSum.Low, true},
		{"both zero", []float64{0, 0}, []float64{0, 0}, 1, math.NaN(), math.NaN(), true},
		{"zero measured", []float64{0, 0}, []float64{1, 1}, math.Inf(1), math.NaN(), math.NaN(), false},
		{"nothing replayed", meas, nil, math.NaN(), math.NaN(), math.NaN(), false},
		{"one transfer each", []float64{10}, []float64{8}, 0.8, math.NaN(), math.NaN(), true},
	}
	same := func(a, b float64) bool { return (math.IsNaN(a) && math.IsNaN(b)) || math.Abs(a-b) < 1e-9 || a == b }
	for _, c := range cases {
		m := NewMetricComparison("goodput", "bit/s", c.measured, c.pred)
		if c.name == "outside" {
			c.lo, c.hi = m.Predicted.Low/m.Measured.High, m.Predicted.High/m.Measured.Low
		}
		if !same(m.Ratio, c.ratio) || !same(m.RatioLo, c.lo) || !same(m.RatioHi, c.hi) || m.Within != c.within {
			t.Errorf("%s: got ratio %v [%v, %v] within %v, want %v [%v, %v] within %v", c.name, m.Ratio, m.RatioLo, m.RatioHi, m.Within,
				c.ratio, c.lo, c.hi, c.within)
		}
	}
	if got, want := RatioText(NewMetricComparison("goodput", "bit/s", meas, pred)), "1.20 [0.76, 1.93] ok"; got != want {
		t.Errorf("RatioText: got %q, want %q", got, want)
	}
	if got, want := RatioText(NewMetricComparison("retransmissions", "packet", []float64{0, 0}, []float64{3, 5})), "n/a (+4 pkts)"; got != want {
		t.Errorf("RatioText with nothing measured: got %q, want %q", got, want)
	}
	if got, want := SummaryText("bit/s", metrics.SummarizeIn([]float64{9e6, 10e6, 11e6}, metrics.NonNegative)), "10 [7.52, 12.5] Mbit/s"; got != want {
		t.Errorf("SummaryText: got %q, want %q", got, want)
	}
}

// TestCompareHostLimited: measured transfers their sender or receiver
// marked host-limited are left out of the comparison and counted with
// their reasons; a cell with all of them host-limited is not compared; with
// includeHostLimited every transfer is compared.
func TestCompareHostLimited(t *testing.T) {
	sp := testSpec(t, 2, 1, 3, "")
	pair, variant := sp.Pairs[0], sp.Variants[0].Name
	profiles := []PathProfile{{Name: "p", Pair: pair}}
	var runs []store.RunRecord
	for seed := range 3 {
		runs = append(runs, store.RunRecord{Status: store.StatusDone, Backend: scenario.BackendSim, Seed: uint64(seed + 1),
			Params: []scenario.Param{{Axis: "topology", Value: "p"}, {Axis: scenario.CaseAxis, Value: variant}},
			Flows:  []metrics.ScopeRecord{{ID: 1}},
			Summaries: []store.SummaryRecord{{Scope: metrics.ScopeFlow, ScopeID: 1, Metric: "mean_throughput", Value: 12e6},
				{Scope: metrics.ScopeFlow, ScopeID: 1, Metric: "mean_srtt", Value: 0.012}}})
	}
	const (
		clean   = `{"end":{"host_limit":{"role":"sender","host_limited":false}}}`
		busy    = `{"end":{"host_limit":{"role":"sender","host_limited":true,"reasons":[{"code":"cpu_busy","detail":"0.95 cores"}]}}}`
		rclean  = `{"host_limit":{"role":"receiver","host_limited":false}}`
		rlate   = `{"host_limit":{"role":"receiver","host_limited":true,"reasons":[{"code":"timer_late"},{"code":"cpu_starved"}]}}`
		goodput = 8e6 // a transfer that was not host-limited
		stalled = 4e6 // one that was
	)
	type transfer struct{ sender, receiver string }
	cases := []struct {
		name      string
		transfers []transfer
		include   bool
		measured  int // transfers compared
		excluded  int
		reasons   string
		only      bool    // host-limited: not compared
		mean      float64 // measured goodput's mean, bit/s
	}{
		{"none limited", []transfer{{clean, rclean}, {clean, rclean}, {clean, rclean}}, false, 3, 0, "", false, goodput},
		{"no host_limit blocks", []transfer{{"", ""}, {"{}", "not json"}, {clean, rclean}}, false, 3, 0, "", false, goodput},
		{"sender limited", []transfer{{busy, rclean}, {clean, rclean}, {clean, rclean}}, false, 2, 1, "sender cpu_busy 1", false, goodput},
		{"receiver limited", []transfer{{clean, rlate}, {clean, rclean}, {clean, rclean}}, false, 2, 1, "receiver cpu_starved 1, receiver timer_late 1", false, goodput},
		{"both", []transfer{{busy, rlate}, {busy, rclean}, {clean, rclean}}, false, 1, 2,
			"sender cpu_busy 2, receiver cpu_starved 1, receiver timer_late 1", false, goodput},
		{"all limited", []transfer{{busy, rclean}, {busy, rclean}, {clean, rlate}}, false, 0, 3,
			"sender cpu_busy 2, receiver cpu_starved 1, receiver timer_late 1", true, math.NaN()},
		{"all limited, included", []transfer{{busy, rclean}, {busy, rclean}, {clean, rlate}}, true, 3, 0, "", false, stalled},
		{"sender limited, included", []transfer{{busy, rclean}, {clean, rclean}, {clean, rclean}}, true, 3, 0, "", false, (stalled + 2*goodput) / 3},
	}
	for _, c := range cases {
		var rows []Row
		for i, it := range sp.Plan() {
			if it.Pair != pair || it.Variant.Name != variant {
				continue
			}
			tr := c.transfers[len(rows)]
			g := float64(goodput)
			if len(transferHostLimits(Row{SenderJSON: tr.sender, ReceiverJSON: tr.receiver})) > 0 {
				g = stalled
			}
			rows = append(rows, Row{Digest: sp.Digest(), Seq: it.Seq, Attempt: 1, Round: it.Round, From: pair.From, To: pair.To,
				Variant: variant, Status: StatusDone, GoodputBps: g, MeanSRTTms: 12 + float64(i), SenderJSON: tr.sender, ReceiverJSON: tr.receiver})
		}
		cs := Compare(sp, rows, profiles, runs, c.include)
		if len(cs) != 1 {
			t.Fatalf("%s: got %d comparisons, want 1", c.name, len(cs))
		}
		got := cs[0]
		if got.Goodput.Measured.N != c.measured || got.Transfers != len(rows) || got.Excluded != c.excluded || got.Exclusions != c.reasons ||
			got.HostLimitedOnly() != c.only {
			t.Errorf("%s: got %d compared of %d, %d excluded (%q), host-limited only %v; want %d of %d, %d (%q), %v", c.name,
				got.Goodput.Measured.N, got.Transfers, got.Excluded, got.Exclusions, got.HostLimitedOnly(),
				c.measured, len(rows), c.excluded, c.reasons, c.only)
		}
		if m := got.Goodput.Measured.Mean; !(math.IsNaN(m) && math.IsNaN(c.mean)) && math.Abs(m-c.mean) > 1e-6 {
			t.Errorf("%s: measured goodput mean: got %v, want %v", c.name, m, c.mean)
		}
		if got.Goodput.Predicted.N != len(runs) {
			t.Errorf("%s: replayed: got %d, want %d", c.name, got.Goodput.Predicted.N, len(runs))
		}
		var b bytes.Buffer
		if err := WriteComparisons(&b, cs); err != nil {
			t.Fatal(err)
		}
		if got, want := strings.Contains(b.String(), NotCompared), c.only; got != want {
			t.Errorf("%s: table says %q: got %v, want %v:\n%s", c.name, NotCompared, got, want, b.String())
		}
		if c.excluded > 0 && !strings.Contains(b.String(), fmt.Sprintf("%d of %d: %s", c.excluded, len(rows), c.reasons)) {
			t.Errorf("%s: table lacks the exclusions %q:\n%s", c.name, c.reasons, b.String())
		}
	}
}
