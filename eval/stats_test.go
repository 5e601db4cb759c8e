package eval

import (
	"math"
	"testing"
)

// Critical values of Student's t from standard tables (e.g. NIST/SEMATECH
// e-Handbook of Statistical Methods, Table 1.3.6.7.2), rounded to 3 decimals.
func TestTQuantileTextbook(t *testing.T) {
	cases := []struct {
		p    float64
		df   int
		want float64
	}{
		{0.975, 1, 12.706},
		{0.975, 2, 4.303},
		{0.975, 4, 2.776},
		{0.975, 9, 2.262},
		{0.975, 29, 2.045},
		{0.95, 10, 1.812},
		{0.995, 5, 4.032},
	}
	for _, c := range cases {
		if got := TQuantile(c.p, c.df); math.Abs(got-c.want) > 0.0005 {
			t.Errorf("TQuantile(%v, %d): got %.4f, want %.3f", c.p, c.df, got, c.want)
		}
	}
}

func TestSummarize(t *testing.T) {
	// 2, 4, 4, 4, 5, 5, 7, 9: mean 5, sample variance 32/7.
	xs := []float64{2, 4, 4, 4, 5, 5, 7, 9}
	s := Summarize(xs)
	sd := math.Sqrt(32.0 / 7)
	want := Summary{N: 8, Mean: 5, SD: sd, Min: 2, Max: 9, Median: 4.5, CI: 2.365 * sd / math.Sqrt(8)}
	if s.N != want.N || !near(s.Mean, want.Mean) || !near(s.SD, want.SD) || s.Min != want.Min || s.Max != want.Max || s.Median != want.Median {
		t.Errorf("Summarize: got %+v, want %+v", s, want)
	}
	// t(0.975, 7) = 2.365 to three decimals.
	if math.Abs(s.CI-want.CI) > 0.0005*sd {
		t.Errorf("CI half-width: got %v, want %v", s.CI, want.CI)
	}
	if !near(s.Lo(), 5-s.CI) || !near(s.Hi(), 5+s.CI) {
		t.Errorf("Lo/Hi: got %v/%v", s.Lo(), s.Hi())
	}
	// Five values: t(0.975, 4) = 2.776.
	s5 := Summarize([]float64{10, 12, 14, 16, 18}) // mean 14, sd sqrt(10)
	if wantCI := 2.776 * math.Sqrt(10) / math.Sqrt(5); math.Abs(s5.CI-wantCI) > 0.001 {
		t.Errorf("CI of 5 values: got %v, want %v", s5.CI, wantCI)
	}
	// NaN values are skipped; one value has no CI.
	s1 := Summarize([]float64{math.NaN(), 3})
	if s1.N != 1 || s1.Mean != 3 || s1.SD != 0 || !math.IsNaN(s1.CI) {
		t.Errorf("one value: got %+v, want N=1 Mean=3 SD=0 CI=NaN", s1)
	}
	if s0 := Summarize(nil); s0.N != 0 || !math.IsNaN(s0.Mean) {
		t.Errorf("no values: got %+v, want N=0 Mean=NaN", s0)
	}
}

func TestPairedChange(t *testing.T) {
	base := []float64{100, 200, 400}
	vari := []float64{110, 220, 440} // +10 % in every pair
	c := PairedChange(base, vari)
	if !near(c.Percent, 10) {
		t.Errorf("Percent: got %v, want 10", c.Percent)
	}
	if !near(c.Paired.Mean, 10) || !near(c.Paired.SD, 0) || !near(c.Paired.CI, 0) {
		t.Errorf("Paired: got %+v, want mean 10, sd 0, CI 0", c.Paired)
	}
	// Pairs: -50 %, +50 % → paired mean 0; means 150 → 150 (0 %).
	c = PairedChange([]float64{100, 200}, []float64{50, 300})
	if !near(c.Paired.Mean, 0) || !near(c.Percent, (175.0-150)/150*100) {
		t.Errorf("mixed: got paired %v percent %v, want 0 and %v", c.Paired.Mean, c.Percent, (175.0-150)/150*100)
	}
	if !math.IsNaN(PercentChange(0, 5)) {
		t.Errorf("PercentChange with a zero baseline: want NaN")
	}
}
