package metrics

import (
	"math"
	"math/rand/v2"
	"sort"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/stat/distuv"
)

// Confidence is the level of the confidence intervals the harness reports.
const Confidence = 0.95

// Domain is the closed range of values a metric can take; intervals are kept
// inside it (docs/eval.md, "Confidence intervals").
type Domain struct {
	Min, Max float64
}

// Domains of metrics.
var (
	Unbounded   = Domain{math.Inf(-1), math.Inf(1)}
	NonNegative = Domain{0, math.Inf(1)} // counts, rates, times, sizes
	Fraction    = Domain{0, 1}           // utilizations, loss and drop rates, Jain's index
)

// fractionMetrics are the catalog metrics confined to [0, 1].
var fractionMetrics = map[string]bool{
	"bw_utilization": true, "utilization": true, "loss_rate": true, "drop_rate": true, "jain_fairness": true,
}

// DomainOf returns the range of a metric: [0, 1] for fractions, [0, ∞) for
// every other metric of the catalog (all are counts, rates, times, sizes,
// variances or non-negative ratios).
func DomainOf(_ Scope, metric string) Domain {
	if fractionMetrics[metric] {
		return Fraction
	}
	return NonNegative
}

// Interval methods (Summary.Method).
const (
	MethodT         = "t"         // Student's t interval of the mean
	MethodBootstrap = "bootstrap" // percentile bootstrap interval of the mean
)

// Summary describes a metric over repeated runs (one value per seed).
type Summary struct {
	N      int     // number of values
	Mean   float64 // arithmetic mean
	SD     float64 // sample standard deviation (n−1); 0 when N < 2
	Min    float64 // smallest value
	Max    float64 // largest value
	Median float64 // median
	CI     float64 // half-width of the 95 % Student's t interval; NaN when N < 2
	// Low and High bound the reported 95 % confidence interval of the mean:
	// the t interval Mean ± CI when it lies inside the metric's domain, else
	// the percentile bootstrap interval (Method says which). NaN when N < 2.
	Low, High float64
	Method    string // MethodT or MethodBootstrap; "" when N < 2
}

// Lo returns the lower end of the confidence interval.
func (s Summary) Lo() float64 { return s.Low }

// Hi returns the upper end of the confidence interval.
func (s Summary) Hi() float64 { return s.High }

// TQuantile returns the p-quantile of Student's t distribution with df degrees
// of freedom (e.g. TQuantile(0.975, 4) = 2.776).
func TQuantile(p float64, df int) float64 { return tQuantile(p, float64(df)) }

// tQuantile is TQuantile for real degrees of freedom nu > 0 (Welch's
// interval has fractional ones), from gonum's distuv.StudentsT; the lower
// tail is the upper one negated, so the quantiles are exactly symmetric.
func tQuantile(p, nu float64) float64 {
	if p < 0.5 {
		return -tQuantile(1-p, nu)
	}
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: nu}.Quantile(p)
}

// WelchDiff is the comparison of the means of two independent samples.
type WelchDiff struct {
	NA, NB       int     // sample sizes (NaN values left out)
	MeanA, MeanB float64 // sample means
	Diff         float64 // MeanB − MeanA
	// Half is the half-width of the 95 % Welch interval of Diff:
	// t(0.975, ν)·√(s²_A/n_A + s²_B/n_B) with the Welch–Satterthwaite
	// degrees of freedom ν = (s²_A/n_A + s²_B/n_B)² / ((s²_A/n_A)²/(n_A−1) +
	// (s²_B/n_B)²/(n_B−1)) (Welch, Biometrika 34, 1947); 0 when both samples
	// are constant, NaN when either has fewer than 2 values.
	Half float64
	DF   float64 // ν (NaN when undefined)
}

// Welch compares the mean of b with the mean of a, two independent samples
// (Welch's unequal-variances t interval; NaN values skipped).
func Welch(a, b []float64) WelchDiff {
	sa, sb := Summarize(a), Summarize(b)
	w := WelchDiff{NA: sa.N, NB: sb.N, MeanA: sa.Mean, MeanB: sb.Mean, Diff: sb.Mean - sa.Mean, Half: math.NaN(), DF: math.NaN()}
	if sa.N < 2 || sb.N < 2 {
		return w
	}
	va, vb := sa.SD*sa.SD/float64(sa.N), sb.SD*sb.SD/float64(sb.N)
	if va+vb == 0 {
		w.Half = 0
		return w
	}
	w.DF = (va + vb) * (va + vb) / (va*va/float64(sa.N-1) + vb*vb/float64(sb.N-1))
	w.Half = tQuantile(1-(1-Confidence)/2, w.DF) * math.Sqrt(va+vb)
	return w
}

// Summarize returns the mean, sample standard deviation and the 95 %
// confidence interval of the mean, mean ± t(0.975, n−1)·sd/√n, of xs, with no
// bound on the values. NaN values are skipped (a metric absent in a run).
func Summarize(xs []float64) Summary { return SummarizeIn(xs, Unbounded) }

// SummarizeIn summarizes xs whose values lie in dom. The interval is the
// Student's t interval when it lies inside dom; when it would leave dom (a
// count whose interval reaches below 0, a fraction above 1) it is the
// percentile bootstrap interval of the mean (Bootstrap), which lies within
// the values' range and so inside dom.
func SummarizeIn(xs []float64, dom Domain) Summary {
	data := make([]float64, 0, len(xs))
	for _, x := range xs {
		if !math.IsNaN(x) {
			data = append(data, x)
		}
	}
	s := Summary{N: len(data), CI: math.NaN(), Low: math.NaN(), High: math.NaN()}
	if s.N == 0 {
		s.Mean, s.SD, s.Min, s.Max, s.Median = math.NaN(), math.NaN(), math.NaN(), math.NaN(), math.NaN()
		return s
	}
	// Two-pass mean: the second pass corrects the first's rounding (equal
	// values give exactly their value).
	s.Mean = floats.Sum(data) / float64(s.N)
	var corr float64
	for _, x := range data {
		corr += x - s.Mean
	}
	s.Mean += corr / float64(s.N)
	s.Min, s.Max = floats.Min(data), floats.Max(data)
	sorted := append([]float64(nil), data...)
	sort.Float64s(sorted)
	if s.N%2 == 1 {
		s.Median = sorted[s.N/2]
	} else {
		s.Median = (sorted[s.N/2-1] + sorted[s.N/2]) / 2
	}
	if s.N < 2 {
		return s
	}
	var ss float64
	for _, x := range data {
		ss += (x - s.Mean) * (x - s.Mean)
	}
	s.SD = math.Sqrt(ss / float64(s.N-1)) // sample standard deviation (n−1)
	s.CI = TQuantile(1-(1-Confidence)/2, s.N-1) * s.SD / math.Sqrt(float64(s.N))
	s.Low, s.High, s.Method = s.Mean-s.CI, s.Mean+s.CI, MethodT
	if s.Low < dom.Min || s.High > dom.Max {
		s.Low, s.High = Bootstrap(data, Confidence)
		s.Method = MethodBootstrap
	}
	return s
}

// exactBootstrapMax is the largest sample for which Bootstrap enumerates
// every resample (C(2n−1, n) = 92 378 compositions for n = 10).
const exactBootstrapMax = 10

// bootstrapResamples is the number of resamples Bootstrap draws above
// exactBootstrapMax (seeded: the interval is reproducible).
const bootstrapResamples = 20000

// Bootstrap returns the percentile bootstrap interval (Efron & Tibshirani,
// An Introduction to the Bootstrap, 1993, §13.3) of the mean of xs at level
// conf: the (1−conf)/2 and (1+conf)/2 quantiles of the distribution of the
// mean of n values drawn from xs with replacement. For n ≤ 10 that
// distribution is computed exactly (every multiset of draws weighted by its
// multinomial probability); above, from 20 000 seeded resamples. The interval
// lies within [min(xs), max(xs)].
func Bootstrap(xs []float64, conf float64) (lo, hi float64) {
	n := len(xs)
	if n == 0 {
		return math.NaN(), math.NaN()
	}
	type wv struct{ v, w float64 }
	var dist []wv
	if n <= exactBootstrapMax {
		// Enumerate the counts k_1..k_n (Σk = n) of each value in a
		// resample; its probability is n!/(Πk_i!)/n^n.
		lgN := lgamma(float64(n) + 1)
		logNN := float64(n) * math.Log(float64(n))
		counts := make([]int, n)
		var rec func(i, left int, sum, logw float64)
		rec = func(i, left int, sum, logw float64) {
			if i == n-1 {
				k := left
				counts[i] = k
				w := math.Exp(lgN - logw - lgamma(float64(k)+1) - logNN)
				dist = append(dist, wv{(sum + float64(k)*xs[i]) / float64(n), w})
				return
			}
			for k := 0; k <= left; k++ {
				counts[i] = k
				rec(i+1, left-k, sum+float64(k)*xs[i], logw+lgamma(float64(k)+1))
			}
		}
		rec(0, n, 0, 0)
	} else {
		r := rand.New(rand.NewPCG(1, 2))
		dist = make([]wv, bootstrapResamples)
		for b := range dist {
			sum := 0.0
			for j := 0; j < n; j++ {
				sum += xs[r.IntN(n)]
			}
			dist[b] = wv{sum / float64(n), 1.0 / bootstrapResamples}
		}
	}
	sort.Slice(dist, func(i, j int) bool { return dist[i].v < dist[j].v })
	quantile := func(p float64) float64 {
		cum := 0.0
		for _, d := range dist {
			cum += d.w
			if cum >= p-1e-12 {
				return d.v
			}
		}
		return dist[len(dist)-1].v
	}
	return quantile((1 - conf) / 2), quantile((1 + conf) / 2)
}

func lgamma(x float64) float64 {
	v, _ := math.Lgamma(x)
	return v
}

// PercentChange returns 100·(variant − baseline)/baseline, or NaN when the
// baseline is 0.
func PercentChange(baseline, variant float64) float64 {
	if baseline == 0 {
		return math.NaN()
	}
	return 100 * (variant - baseline) / baseline
}

// Change describes a variant against a paired baseline.
type Change struct {
	Baseline Summary // the baseline's values
	Variant  Summary // the variant's values
	// Percent is the percent change of the means, 100·(mean(v) − mean(b))/mean(b).
	Percent float64
	// Diff summarizes the per-pair differences v_i − b_i (pairs share a seed).
	Diff Summary
	// Paired summarizes the per-pair percent changes 100·(v_i − b_i)/b_i
	// (pairs share a seed, so background traffic and loss draws are the same):
	// its CI says whether the change is distinguishable from 0.
	Paired Summary
	// OfMeans is the percent change of the paired means, 100·(mean(v)/mean(b) − 1)
	// over the pairs, with the delta-method (linearization) interval of a ratio
	// of means: its values are 100·(R − 1) + 100·(v_i − R·b_i)/mean(b) with
	// R = mean(v)/mean(b), whose mean is the change and whose t interval is the
	// ratio estimator's (Cochran, Sampling Techniques, 3rd ed., §6.4). Unlike
	// Paired it is not biased upward when the baselines are noisy (short runs:
	// the mean of v_i/b_i exceeds mean(v)/mean(b) by about the baseline's squared
	// coefficient of variation, Jensen's inequality). N = 0 without pairs or
	// when mean(b) = 0.
	OfMeans Summary
}

// PairedChange compares variant against baseline; baseline[i] and variant[i]
// come from runs with the same seed. Pairs with a NaN are left out; pairs with
// a zero baseline are left out of the paired percent changes.
func PairedChange(baseline, variant []float64) Change {
	return PairedChangeIn(baseline, variant, Unbounded)
}

// PairedChangeIn is PairedChange for a metric whose values lie in dom (the
// intervals of the baseline and variant summaries stay inside it).
func PairedChangeIn(baseline, variant []float64, dom Domain) Change {
	c := Change{Baseline: SummarizeIn(baseline, dom), Variant: SummarizeIn(variant, dom)}
	c.Percent = PercentChange(c.Baseline.Mean, c.Variant.Mean)
	var pcts, diffs, bs, vs []float64
	for i := range baseline {
		if i >= len(variant) || math.IsNaN(baseline[i]) || math.IsNaN(variant[i]) {
			continue
		}
		diffs = append(diffs, variant[i]-baseline[i])
		bs, vs = append(bs, baseline[i]), append(vs, variant[i])
		if baseline[i] != 0 {
			pcts = append(pcts, PercentChange(baseline[i], variant[i]))
		}
	}
	c.Diff = Summarize(diffs)
	c.Paired = Summarize(pcts)
	c.OfMeans = percentOfMeans(bs, vs)
	return c
}

// percentOfMeans is Change.OfMeans over the pairs (b[i], v[i]).
func percentOfMeans(b, v []float64) Summary {
	if len(b) == 0 {
		return Summarize(nil)
	}
	mb, mv := floats.Sum(b)/float64(len(b)), floats.Sum(v)/float64(len(v))
	if mb == 0 {
		return Summarize(nil)
	}
	r := mv / mb
	lin := make([]float64, len(b))
	for i := range b {
		lin[i] = 100*(r-1) + 100*(v[i]-r*b[i])/mb
	}
	return Summarize(lin)
}
