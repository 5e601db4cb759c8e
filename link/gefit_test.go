package link

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"cclab/clock"
)

// TestFitGEByHand: the sequence 0 0 1 1 0 1 0 0 (1 = lost) has the pairs
// 00, 01, 11, 10, 01, 10, 00: n00 = 2, n01 = 2, n10 = 2, n11 = 1, so the
// simple Gilbert fit is p = 2/4, r = 2/3; 3 losses in 2 bursts.
func TestFitGEByHand(t *testing.T) {
	seq := []bool{false, false, true, true, false, true, false, false}
	f, err := FitGE(seq)
	if err != nil {
		t.Fatal(err)
	}
	if f.Packets != 8 || f.Losses != 3 || f.Bursts != 2 || f.Rate != 3.0/8 || f.MeanBurst != 1.5 {
		t.Errorf("counts: got %+v, want 8 packets, 3 losses, 2 bursts, rate 0.375, mean burst 1.5", f)
	}
	if f.Simple != (GEConfig{P: 0.5, R: 2.0 / 3, H: 0, K: 1}) {
		t.Errorf("simple: got %+v, want p 0.5, r 2/3, h 0, k 1", f.Simple)
	}
	if f, _ := FitGE(make([]bool, 10)); f.Simple != (GEConfig{P: 0, R: 1, K: 1}) || f.Best != f.Simple || f.GilbertOK {
		t.Errorf("no loss: got %+v, want the loss-free model", f)
	}
	if f, _ := FitGE([]bool{true, true, true}); f.Simple.P != 1 || f.Simple.R != 0 {
		t.Errorf("all lost: got %+v, want p 1, r 0", f.Simple)
	}
	if _, err := FitGE([]bool{true}); err == nil || !strings.Contains(err.Error(), "at least 2") {
		t.Errorf("one packet: got %v, want an error asking for 2", err)
	}
}

// gilbertStats returns Gilbert's statistics of the model with k = 1
// computed from its definition (GEFit.Gilbert): a = π_B·e, b = e(1−r),
// c = e(1−r)²/((1−r)² + rp), e = 1−h, π_B = p/(p+r).
func gilbertStats(c GEConfig) (a, b, cc float64) {
	e, q := 1-c.H, 1-c.R
	return e * c.P / (c.P + c.R), e * q, e * q * q / (q*q + c.R*c.P)
}

// TestGilbertMomentsExact: the estimator inverts Gilbert's equations: from
// a model's exact statistics it returns the model.
func TestGilbertMomentsExact(t *testing.T) {
	for _, want := range []GEConfig{{P: 0.02, R: 0.25, H: 0.3, K: 1}, {P: 0.005, R: 0.5, H: 0.5, K: 1}, {P: 0.1, R: 0.6, H: 0.1, K: 1},
		{P: 0.01, R: 0.3, H: 0, K: 1}} {
		got, ok := gilbertMoments(gilbertStats(want))
		if !ok || math.Abs(got.P-want.P) > 1e-9 || math.Abs(got.R-want.R) > 1e-9 || math.Abs(got.H-want.H) > 1e-9 || got.K != 1 {
			t.Errorf("model %+v: got %+v (ok %v), want the model back", want, got, ok)
		}
	}
	if _, ok := gilbertMoments(0.5, 0.5, 0.5); ok {
		t.Errorf("a = b = c (independent losses): got a model, want none (ac = b²)")
	}
}

// geSequence draws n packets' losses from link's own Gilbert-Elliott loss
// model (the "ge" loss stage) with a seeded stream.
func geSequence(cfg GEConfig, n int, seed uint64) []bool {
	g := &gilbertElliott{cfg: cfg}
	r := rand.New(rand.NewPCG(seed, 7))
	out := make([]bool, n)
	for i := range out {
		out[i] = g.lose(r, clock.Start)
	}
	return out
}

// TestFitGEFromLinkModel: sequences drawn from link's ge model with known
// parameters are fitted back within tolerance (p and r within 10 %, h
// within 0.05); the fitted model's spec replays through the loss stage.
// 400,000 packets per model keep the estimators' spread well inside the
// tolerance (e.g. r of the first model from ~4,000 bursts: sd ≈ 1 %).
func TestFitGEFromLinkModel(t *testing.T) {
	for _, tc := range []struct {
		cfg     GEConfig
		gilbert bool // the fit should pick Gilbert's three-parameter model
	}{
		{GEConfig{P: 0.01, R: 0.3, H: 0, K: 1}, false},
		{GEConfig{P: 0.05, R: 0.5, H: 0, K: 1}, false},
		{GEConfig{P: 0.02, R: 0.25, H: 0.3, K: 1}, true},
		{GEConfig{P: 0.01, R: 0.2, H: 0.5, K: 1}, true},
	} {
		f, err := FitGE(geSequence(tc.cfg, 400_000, 1))
		if err != nil {
			t.Fatal(err)
		}
		got := f.Best
		if tc.gilbert != (got == f.Gilbert && f.GilbertOK) {
			t.Errorf("%s: best %+v (Gilbert ok %v: %+v), want the three-parameter model %v", tc.cfg.Spec(), got, f.GilbertOK, f.Gilbert, tc.gilbert)
		}
		rel := func(g, w float64) float64 { return math.Abs(g-w) / w }
		if rel(got.P, tc.cfg.P) > 0.1 || rel(got.R, tc.cfg.R) > 0.1 || math.Abs(got.H-tc.cfg.H) > 0.05 || got.K != 1 {
			t.Errorf("%s: fitted %s, want within 10 %% (p, r) and 0.05 (h)", tc.cfg.Spec(), got.Spec())
		}
		if rel(f.Rate, tc.cfg.LossRate()) > 0.1 {
			t.Errorf("%s: loss rate %v, want %v within 10 %%", tc.cfg.Spec(), f.Rate, tc.cfg.LossRate())
		}
		m, err := parseLoss(got.Spec(), 0)
		if err != nil {
			t.Fatalf("%s: the fit's spec %q does not parse: %v", tc.cfg.Spec(), got.Spec(), err)
		}
		if ge, ok := m.(*gilbertElliott); !ok || ge.cfg != got {
			t.Errorf("%s: spec %q parsed to %+v, want %+v", tc.cfg.Spec(), got.Spec(), m, got)
		}
	}
}

// TestFitGilbertCounts: 1000 packets, 50 lost in 20 bursts: p = 20/950,
// r = 20/50; and the fields named in errors.
func TestFitGilbertCounts(t *testing.T) {
	got, err := FitGilbertCounts(1000, 50, 20)
	if err != nil || got != (GEConfig{P: 20.0 / 950, R: 0.4, H: 0, K: 1}) {
		t.Errorf("got %+v, %v; want p 20/950, r 0.4", got, err)
	}
	if got, _ := FitGilbertCounts(10, 0, 0); got != (GEConfig{P: 0, R: 1, K: 1}) {
		t.Errorf("no loss: got %+v, want the loss-free model", got)
	}
	for _, tc := range []struct {
		packets, losses, bursts int64
		field                   string
	}{{0, 0, 0, "packets"}, {10, 11, 1, "losses"}, {10, 5, 0, "bursts"}, {10, 5, 6, "bursts"}, {10, 8, 4, "bursts"}} {
		if _, err := FitGilbertCounts(tc.packets, tc.losses, tc.bursts); err == nil || !strings.Contains(err.Error(), tc.field+"=") {
			t.Errorf("FitGilbertCounts(%d, %d, %d): got %v, want an error naming %s", tc.packets, tc.losses, tc.bursts, err, tc.field)
		}
	}
	// The counts of a drawn sequence give the sequence fit's p and r up to
	// the ends (one transition).
	seq := geSequence(GEConfig{P: 0.01, R: 0.3, K: 1}, 100_000, 2)
	f, _ := FitGE(seq)
	c, err := FitGilbertCounts(f.Packets, f.Losses, f.Bursts)
	if err != nil || math.Abs(c.P-f.Simple.P) > 1e-3*f.Simple.P+1e-5 || math.Abs(c.R-f.Simple.R) > 1e-2*f.Simple.R {
		t.Errorf("counts fit %+v, sequence fit %+v: want nearly equal", c, f.Simple)
	}
}
