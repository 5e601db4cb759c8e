package eval

import (
	"math"

	"github.com/montanaflynn/stats"
	"gonum.org/v1/gonum/stat/distuv"
)

// Confidence is the level of the confidence intervals the harness reports.
const Confidence = 0.95

// Summary describes a metric over repeated runs (one value per seed).
type Summary struct {
	N      int     // number of values
	Mean   float64 // arithmetic mean
	SD     float64 // sample standard deviation (n−1); 0 when N < 2
	Min    float64 // smallest value
	Max    float64 // largest value
	Median float64 // median
	CI     float64 // half-width of the 95 % confidence interval; NaN when N < 2
}

// Lo returns the lower end of the confidence interval.
func (s Summary) Lo() float64 { return s.Mean - s.CI }

// Hi returns the upper end of the confidence interval.
func (s Summary) Hi() float64 { return s.Mean + s.CI }

// TQuantile returns the p-quantile of Student's t distribution with df degrees
// of freedom (e.g. TQuantile(0.975, 4) = 2.776).
func TQuantile(p float64, df int) float64 {
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(df)}.Quantile(p)
}

// Summarize returns the mean, sample standard deviation and the 95 %
// confidence interval of the mean, mean ± t(0.975, n−1)·sd/√n, of xs.
// NaN values are skipped (a metric absent in a run).
func Summarize(xs []float64) Summary {
	var data stats.Float64Data
	for _, x := range xs {
		if !math.IsNaN(x) {
			data = append(data, x)
		}
	}
	s := Summary{N: len(data), CI: math.NaN()}
	if s.N == 0 {
		s.Mean, s.SD, s.Min, s.Max, s.Median = math.NaN(), math.NaN(), math.NaN(), math.NaN(), math.NaN()
		return s
	}
	s.Mean, _ = stats.Mean(data)
	s.Min, _ = stats.Min(data)
	s.Max, _ = stats.Max(data)
	s.Median, _ = stats.Median(data)
	if s.N >= 2 {
		s.SD, _ = stats.StandardDeviationSample(data)
		s.CI = TQuantile(1-(1-Confidence)/2, s.N-1) * s.SD / math.Sqrt(float64(s.N))
	}
	return s
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
	// Paired summarizes the per-pair percent changes 100·(v_i − b_i)/b_i
	// (pairs share a seed, so background traffic and loss draws are the same):
	// its CI says whether the change is distinguishable from 0.
	Paired Summary
}

// PairedChange compares variant against baseline; baseline[i] and variant[i]
// come from runs with the same seed. Pairs with a NaN or a zero baseline are
// left out of the paired summary.
func PairedChange(baseline, variant []float64) Change {
	c := Change{Baseline: Summarize(baseline), Variant: Summarize(variant)}
	c.Percent = PercentChange(c.Baseline.Mean, c.Variant.Mean)
	var pcts []float64
	for i := range baseline {
		if i >= len(variant) || math.IsNaN(baseline[i]) || math.IsNaN(variant[i]) || baseline[i] == 0 {
			continue
		}
		pcts = append(pcts, PercentChange(baseline[i], variant[i]))
	}
	c.Paired = Summarize(pcts)
	return c
}
