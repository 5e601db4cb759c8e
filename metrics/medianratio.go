package metrics

import (
	"math"
	"math/rand/v2"
	"slices"
)

// medianRatioResamples is the number of resamples MedianRatio draws (seeded:
// the interval is reproducible).
const medianRatioResamples = 4000

// MedianRatio returns median(a)/median(b) and its percentile bootstrap
// interval at level conf (Efron & Tibshirani, An Introduction to the
// Bootstrap, 1993, §13.3), each resample drawing len(a) values from a and
// len(b) values from b with replacement, independently: the samples are not
// paired (two simulators' runs of the same seed draw their losses from
// different random streams, so seed i of one says nothing about seed i of
// the other). A ratio of medians is insensitive to a single run in a
// different regime (docs/compat.md: one seed of 16 whose goodput is 7x the
// others' moves the ratio of the means from 0.89 to 0.64); it is not a
// replacement for the ratio of the means, which is what a mean throughput
// claim needs. Empty inputs or a resample with median(b) <= 0 give NaN
// (ratio) or a NaN bound.
func MedianRatio(a, b []float64, conf float64) (ratio, lo, hi float64) {
	if len(a) == 0 || len(b) == 0 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	ratio = divPos(SortedMedian(slices.Sorted(slices.Values(a))), SortedMedian(slices.Sorted(slices.Values(b))))
	r := rand.New(rand.NewPCG(1, 2))
	ra, rb := make([]float64, len(a)), make([]float64, len(b))
	dist := make([]float64, medianRatioResamples)
	for i := range dist {
		for j := range ra {
			ra[j] = a[r.IntN(len(a))]
		}
		for j := range rb {
			rb[j] = b[r.IntN(len(b))]
		}
		slices.Sort(ra)
		slices.Sort(rb)
		dist[i] = divPos(SortedMedian(ra), SortedMedian(rb))
	}
	lo, hi = percentiles(dist, conf)
	return ratio, lo, hi
}

// percentiles sorts a bootstrap distribution and returns its (1-conf)/2 and
// (1+conf)/2 quantiles, NaN if it holds a NaN.
func percentiles(dist []float64, conf float64) (lo, hi float64) {
	slices.Sort(dist) // NaN sorts first
	if math.IsNaN(dist[0]) {
		return math.NaN(), math.NaN()
	}
	q := func(p float64) float64 {
		return dist[min(len(dist)-1, max(0, int(math.Ceil(p*float64(len(dist))))-1))]
	}
	return q((1 - conf) / 2), q((1 + conf) / 2)
}

// Median returns the median of xs (NaN if empty); xs is not modified.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	return SortedMedian(slices.Sorted(slices.Values(xs)))
}

// SortedMedian is the median of sorted, non-empty xs (the mean of the two
// middle values for an even count).
func SortedMedian(xs []float64) float64 {
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

// divPos is x/y, NaN unless y > 0.
func divPos(x, y float64) float64 {
	if !(y > 0) {
		return math.NaN()
	}
	return x / y
}

// PairedMedianRatio returns the median of the per-pair ratios a[i]/b[i] and
// its percentile bootstrap interval at level conf (Efron & Tibshirani 1993,
// §13.3), each resample drawing len(a) pairs with replacement: for samples
// that are paired, such as two simulators' runs of one seed that drop the
// same packets (link "hashed" loss). Pairs with b[i] <= 0 are left out;
// unequal lengths or no pair left give NaN.
func PairedMedianRatio(a, b []float64, conf float64) (ratio, lo, hi float64) {
	if len(a) != len(b) {
		return math.NaN(), math.NaN(), math.NaN()
	}
	var rs []float64
	for i := range a {
		if b[i] > 0 {
			rs = append(rs, a[i]/b[i])
		}
	}
	if len(rs) == 0 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	ratio = Median(rs)
	r := rand.New(rand.NewPCG(1, 2))
	re := make([]float64, len(rs))
	dist := make([]float64, medianRatioResamples)
	for i := range dist {
		for j := range re {
			re[j] = rs[r.IntN(len(rs))]
		}
		slices.Sort(re)
		dist[i] = SortedMedian(re)
	}
	lo, hi = percentiles(dist, conf)
	return ratio, lo, hi
}
