package campaign

import (
	"bytes"
	"context"
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
