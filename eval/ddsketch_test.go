package eval

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

// TestDDSketchRelativeError checks the sketch's guarantee (Masson et al.
// 2019, Prop. 3): every quantile estimate is within a factor 1 ± α of the
// exact sample quantile of the same rank, for values spread over several
// decades, and merging two sketches equals sketching all values.
func TestDDSketchRelativeError(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var xs []float64
	a, b, all := NewDDSketch(sketchAlpha), NewDDSketch(sketchAlpha), NewDDSketch(sketchAlpha)
	for i := 0; i < 20000; i++ {
		x := math.Exp(r.NormFloat64()*2 - 4) // log-normal: 1e-4 .. 10
		xs = append(xs, x)
		all.Add(x)
		if i%2 == 0 {
			a.Add(x)
		} else {
			b.Add(x)
		}
	}
	a.Merge(b)
	sort.Float64s(xs)
	for _, q := range []float64{0, 0.01, 0.25, 0.5, 0.9, 0.95, 0.99, 0.999, 1} {
		want := xs[int(math.Floor(q*float64(len(xs)-1)))]
		for name, sk := range map[string]*DDSketch{"one sketch": all, "merged": a} {
			got := sk.Quantile(q)
			if math.Abs(got-want) > sketchAlpha*want*(1+1e-9) {
				t.Errorf("%s: q=%v got %v, want %v within %.1f %%", name, q, got, want, 100*sketchAlpha)
			}
		}
	}
	if all.Count() != 20000 || a.Count() != 20000 {
		t.Errorf("counts: got %d and %d, want 20000", all.Count(), a.Count())
	}
}

func TestDDSketchZerosAndEmpty(t *testing.T) {
	s := NewDDSketch(sketchAlpha)
	if !math.IsNaN(s.Quantile(0.5)) {
		t.Errorf("empty sketch: got %v, want NaN", s.Quantile(0.5))
	}
	for _, x := range []float64{0, 0, 0, 5} {
		s.Add(x)
	}
	if got := s.Quantile(0.5); got != 0 {
		t.Errorf("median of 0,0,0,5: got %v, want 0", got)
	}
	if got := s.Quantile(1); math.Abs(got-5) > 5*sketchAlpha {
		t.Errorf("max of 0,0,0,5: got %v, want 5 ± %.1f %%", got, 100*sketchAlpha)
	}
}
