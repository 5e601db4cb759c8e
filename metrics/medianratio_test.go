package metrics

import (
	"math"
	"testing"
)

// TestMedianRatio checks the ratio of medians and its bootstrap interval:
// the ratio by hand, the interval around it, a degenerate sample whose
// every resample gives the same ratio, insensitivity to one outlying run
// (the mean ratio of the same samples is far off), and NaN without a
// positive reference median.
func TestMedianRatio(t *testing.T) {
	for _, c := range []struct {
		name           string
		a, b           []float64
		want           float64 // the ratio; NaN: NaN wanted
		wantLo, wantHi float64 // the interval if exact (degenerate); NaN: only lo <= ratio <= hi checked
	}{
		{"odd sizes", []float64{1, 3, 2}, []float64{4, 8, 6, 2, 10}, 2.0 / 6, math.NaN(), math.NaN()},
		{"even size", []float64{1, 2, 3, 4}, []float64{2, 2}, 2.5 / 2, math.NaN(), math.NaN()},
		{"constant", []float64{3, 3, 3}, []float64{2, 2, 2, 2}, 1.5, 1.5, 1.5},
		{"one outlying run", []float64{2, 2.1, 1.9, 2, 2.2, 1.8, 2, 2.05, 1.95, 2, 2.1, 1.9, 2, 2.2, 1.8, 17.7},
			[]float64{2, 2.1, 1.9, 2, 2.2, 1.8, 2, 2.05, 1.95, 2, 2.1, 1.9, 2, 2.2, 1.8, 2}, 1, math.NaN(), math.NaN()},
		{"zero reference", []float64{1}, []float64{0, 0, 0}, math.NaN(), math.NaN(), math.NaN()},
		{"empty", nil, []float64{1}, math.NaN(), math.NaN(), math.NaN()},
	} {
		got, lo, hi := MedianRatio(c.a, c.b, Confidence)
		if math.IsNaN(c.want) {
			if !math.IsNaN(got) {
				t.Errorf("%s: got ratio %v, want NaN", c.name, got)
			}
			continue
		}
		if math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s: got ratio %v, want %v", c.name, got, c.want)
		}
		if !(lo <= got && got <= hi) {
			t.Errorf("%s: got interval [%v, %v], want it around the ratio %v", c.name, lo, hi, got)
		}
		if !math.IsNaN(c.wantLo) && (lo != c.wantLo || hi != c.wantHi) {
			t.Errorf("%s: got interval [%v, %v], want [%v, %v]", c.name, lo, hi, c.wantLo, c.wantHi)
		}
	}
	// The outlier case: the ratio of the means is 1.98, the median ratio's
	// interval stays within ±10 %.
	a := []float64{2, 2.1, 1.9, 2, 2.2, 1.8, 2, 2.05, 1.95, 2, 2.1, 1.9, 2, 2.2, 1.8, 17.7}
	b := []float64{2, 2.1, 1.9, 2, 2.2, 1.8, 2, 2.05, 1.95, 2, 2.1, 1.9, 2, 2.2, 1.8, 2}
	if _, lo, hi := MedianRatio(a, b, Confidence); lo < 0.9 || hi > 1.1 {
		t.Errorf("one outlying run: got interval [%v, %v], want within [0.9, 1.1]", lo, hi)
	}
	// Reproducible: the same inputs give the same interval.
	_, lo1, hi1 := MedianRatio(a, b, Confidence)
	_, lo2, hi2 := MedianRatio(a, b, Confidence)
	if lo1 != lo2 || hi1 != hi2 {
		t.Errorf("MedianRatio not reproducible: [%v, %v] then [%v, %v]", lo1, hi1, lo2, hi2)
	}
}

// TestPairedMedianRatio checks the median of per-pair ratios: pairs whose
// ratios agree give a degenerate interval even where the values spread.
func TestPairedMedianRatio(t *testing.T) {
	for _, c := range []struct {
		name           string
		a, b           []float64
		want           float64 // NaN: NaN wanted
		wantLo, wantHi float64 // NaN: only lo <= ratio <= hi checked
	}{
		{"equal ratios, spread values", []float64{1, 10, 100}, []float64{2, 20, 200}, 0.5, 0.5, 0.5},
		{"odd", []float64{1, 3, 8}, []float64{1, 1, 2}, 3, math.NaN(), math.NaN()},
		{"even, zero reference left out", []float64{1, 2, 3, 4, 5}, []float64{1, 1, 1, 1, 0}, 2.5, math.NaN(), math.NaN()},
		{"unequal lengths", []float64{1}, []float64{1, 2}, math.NaN(), math.NaN(), math.NaN()},
		{"empty", nil, nil, math.NaN(), math.NaN(), math.NaN()},
	} {
		got, lo, hi := PairedMedianRatio(c.a, c.b, Confidence)
		if math.IsNaN(c.want) {
			if !math.IsNaN(got) {
				t.Errorf("%s: got ratio %v, want NaN", c.name, got)
			}
			continue
		}
		if math.Abs(got-c.want) > 1e-12 || !(lo <= got && got <= hi) {
			t.Errorf("%s: got %v [%v, %v], want %v inside its interval", c.name, got, lo, hi, c.want)
		}
		if !math.IsNaN(c.wantLo) && (lo != c.wantLo || hi != c.wantHi) {
			t.Errorf("%s: got interval [%v, %v], want [%v, %v]", c.name, lo, hi, c.wantLo, c.wantHi)
		}
	}
}
