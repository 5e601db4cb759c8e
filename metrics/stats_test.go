package metrics

import (
	"math"
	"math/rand/v2"
	"sort"
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

// TestPairedChangeOfMeans checks Change.OfMeans, the percent change of the
// paired means with its delta-method interval, against hand computations,
// and that it keeps the sign of the means where the mean of the per-pair
// percent changes (Paired) is pulled up by a small, noisy baseline.
func TestPairedChangeOfMeans(t *testing.T) {
	tests := []struct {
		name       string
		base, vari []float64
		// by hand: R = mean(v)/mean(b); the linearized values
		// 100(R−1) + 100(v_i − R b_i)/mean(b), their SD and t interval
		paired, mean, sd, ci float64
	}{
		// means 2 and 2: R = 1; linearized 50, −50, 0 (SD 50); per pair +100, −50, 0 %
		{"zero change of the means", []float64{1, 2, 3}, []float64{2, 1, 3}, 100.0 / 6, 0, 50, 4.302652729911275 * 50 / math.Sqrt(3)},
		// means 2.5 and 2: R = 0.8, −20 %; linearized −20 + 48 = 28 and −20 − 48 = −68
		// (SD 48√2); per pair +100 and −50 %: a mean of +25 % against the means' −20 %
		{"sign differs", []float64{1, 4}, []float64{2, 2}, 25, -20, 48 * math.Sqrt2, 12.706204736174696 * 48},
		// +10 % in every pair: both are 10 with no spread
		{"uniform", []float64{100, 200, 400}, []float64{110, 220, 440}, 10, 10, 0, 0},
	}
	for _, tc := range tests {
		c := PairedChange(tc.base, tc.vari)
		if !near(c.Paired.Mean, tc.paired) {
			t.Errorf("%s: Paired.Mean got %v, want %v", tc.name, c.Paired.Mean, tc.paired)
		}
		o := c.OfMeans
		if o.N != len(tc.base) || !near(o.Mean, tc.mean) || !near(o.SD, tc.sd) || !near(o.CI, tc.ci) {
			t.Errorf("%s: OfMeans got N %d mean %v sd %v ci %v, want %d, %v, %v, %v", tc.name, o.N, o.Mean, o.SD, o.CI, len(tc.base), tc.mean, tc.sd, tc.ci)
		}
		if !near(o.Mean, c.Percent) {
			t.Errorf("%s: OfMeans.Mean %v differs from Percent %v over the same pairs", tc.name, o.Mean, c.Percent)
		}
	}
	if o := PairedChange([]float64{0, 0}, []float64{1, 2}).OfMeans; o.N != 0 {
		t.Errorf("zero baseline mean: got N %d, want 0", o.N)
	}
	if o := PairedChange(nil, nil).OfMeans; o.N != 0 {
		t.Errorf("no pairs: got N %d, want 0", o.N)
	}
}

// bruteBootstrap enumerates all n^n ordered resamples of xs (the bootstrap's
// definition) and returns the (1−conf)/2 and (1+conf)/2 quantiles of their
// means, each resample weighing n^−n.
func bruteBootstrap(xs []float64, conf float64) (float64, float64) {
	n := len(xs)
	total := 1
	for i := 0; i < n; i++ {
		total *= n
	}
	means := make([]float64, 0, total)
	for k := 0; k < total; k++ {
		rest, sum := k, 0.0
		for i := 0; i < n; i++ {
			sum += xs[rest%n]
			rest /= n
		}
		means = append(means, sum/float64(n))
	}
	sort.Float64s(means)
	q := func(p float64) float64 {
		// smallest mean whose cumulative weight reaches p
		i := int(math.Ceil(p*float64(total)-1e-9)) - 1
		if i < 0 {
			i = 0
		}
		return means[i]
	}
	return q((1 - conf) / 2), q((1 + conf) / 2)
}

// TestBootstrapExact checks the multinomial enumeration against the
// definition (every ordered resample) for small samples.
func TestBootstrapExact(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for n := 1; n <= 6; n++ {
		for trial := 0; trial < 3; trial++ {
			xs := make([]float64, n)
			for i := range xs {
				xs[i] = math.Round(r.Float64()*100) / 4
			}
			gotLo, gotHi := Bootstrap(xs, Confidence)
			wantLo, wantHi := bruteBootstrap(xs, Confidence)
			if !near(gotLo, wantLo) || !near(gotHi, wantHi) {
				t.Errorf("Bootstrap(%v): got [%v, %v], want [%v, %v]", xs, gotLo, gotHi, wantLo, wantHi)
			}
		}
	}
	// Two values {0, 10}: resample means 0 (1/4), 5 (1/2), 10 (1/4).
	if lo, hi := Bootstrap([]float64{0, 10}, 0.95); lo != 0 || hi != 10 {
		t.Errorf("Bootstrap({0, 10}): got [%v, %v], want [0, 10]", lo, hi)
	}
	if lo, hi := Bootstrap([]float64{0, 10}, 0.4); lo != 5 || hi != 5 {
		t.Errorf("Bootstrap({0, 10}) at 40 %%: got [%v, %v], want [5, 5]", lo, hi)
	}
}

// TestBootstrapSampled checks the sampled bootstrap (n > 10) against the
// normal approximation of the mean's distribution: for 40 values the
// percentile interval is close to mean ± 1.96·sd/√n.
func TestBootstrapSampled(t *testing.T) {
	xs := make([]float64, 40)
	for i := range xs {
		xs[i] = float64(i)
	}
	lo, hi := Bootstrap(xs, Confidence)
	s := Summarize(xs)
	// The bootstrap uses the plug-in sd (divisor n).
	half := 1.96 * s.SD * math.Sqrt(39.0/40) / math.Sqrt(40)
	if math.Abs(lo-(s.Mean-half)) > 0.1*half || math.Abs(hi-(s.Mean+half)) > 0.1*half {
		t.Errorf("Bootstrap of 0..39: got [%.3f, %.3f], want about [%.3f, %.3f]", lo, hi, s.Mean-half, s.Mean+half)
	}
	lo2, hi2 := Bootstrap(xs, Confidence)
	if lo2 != lo || hi2 != hi {
		t.Errorf("Bootstrap is not reproducible: [%v, %v] then [%v, %v]", lo, hi, lo2, hi2)
	}
}

// TestSummarizeInDomain: intervals stay inside the metric's domain.
func TestSummarizeInDomain(t *testing.T) {
	cases := []struct {
		name   string
		xs     []float64
		dom    Domain
		method string
	}{
		{"count near 0", []float64{0, 0, 12}, NonNegative, MethodBootstrap},
		{"count far from 0", []float64{100, 110, 120}, NonNegative, MethodT},
		{"fraction near 1", []float64{0.97, 0.99, 1}, Fraction, MethodBootstrap},
		{"fraction inside", []float64{0.5, 0.52, 0.51}, Fraction, MethodT},
		{"unbounded", []float64{0, 0, 12}, Unbounded, MethodT},
	}
	for _, c := range cases {
		s := SummarizeIn(c.xs, c.dom)
		if s.Method != c.method {
			t.Errorf("%s: method got %q, want %q", c.name, s.Method, c.method)
		}
		if s.Low < c.dom.Min || s.High > c.dom.Max || s.Low > s.Mean || s.High < s.Mean {
			t.Errorf("%s: interval [%v, %v] around mean %v leaves the domain [%v, %v]", c.name, s.Low, s.High, s.Mean, c.dom.Min, c.dom.Max)
		}
		if c.method == MethodT && (!near(s.Low, s.Mean-s.CI) || !near(s.High, s.Mean+s.CI)) {
			t.Errorf("%s: t interval got [%v, %v], want mean ± %v", c.name, s.Low, s.High, s.CI)
		}
	}
}

// TestTQuantileSymmetry: the lower quantiles mirror the upper ones and the
// median is 0; with many degrees of freedom t approaches the normal 1.960.
func TestTQuantileSymmetry(t *testing.T) {
	for _, df := range []int{1, 3, 10} {
		if got, want := TQuantile(0.025, df), -TQuantile(0.975, df); got != want {
			t.Errorf("TQuantile(0.025, %d): got %v, want %v", df, got, want)
		}
		if got := TQuantile(0.5, df); got != 0 {
			t.Errorf("TQuantile(0.5, %d): got %v, want 0", df, got)
		}
	}
	if got := TQuantile(0.975, 100000); math.Abs(got-1.95996) > 0.0001 {
		t.Errorf("TQuantile(0.975, 1e5): got %v, want the normal 1.95996", got)
	}
}
