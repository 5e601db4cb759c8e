package metrics

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
	"time"

	"cclab/event"
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

// TestDelayPercentiles: the collector's p50/p95/p99 of RTT samples (per flow
// and pooled over the flows) and of queue sojourn times (per link and for the
// network's bottleneck) match the sample percentiles within the sketch's
// accuracy.
func TestDelayPercentiles(t *testing.T) {
	info := RunInfo{Start: at(0), End: at(10), Interval: time.Second, Bottleneck: 0,
		Links: []LinkInfo{{Index: 0, Name: "bottleneck", Rate: 1e6}}}
	var ev []event.Event
	var f1, f2, pooled, soj []float64
	for i := 0; i < 100; i++ {
		r1 := time.Duration(10+i) * time.Millisecond // flow 1: 10..109 ms
		r2 := time.Duration(200+2*i) * time.Millisecond
		ev = append(ev,
			event.Event{Time: at(0.05 * float64(i)), Kind: event.MetricsUpdated, Flow: 1, Link: -1, SRTT: r1, RTT: r1, MinRTT: 10 * time.Millisecond},
			event.Event{Time: at(0.05 * float64(i)), Kind: event.MetricsUpdated, Flow: 2, Link: -1, SRTT: r2, RTT: r2, MinRTT: 200 * time.Millisecond},
			event.Event{Time: at(0.05 * float64(i)), Kind: event.Dequeue, Flow: 1, Link: 0, Sojourn: time.Duration(i) * time.Millisecond})
		f1, f2, soj = append(f1, r1.Seconds()), append(f2, r2.Seconds()), append(soj, (time.Duration(i)*time.Millisecond).Seconds())
	}
	pooled = append(append(pooled, f1...), f2...)
	m := Compute(info, ev)
	exact := func(xs []float64, q float64) float64 {
		s := append([]float64(nil), xs...)
		sort.Float64s(s)
		return s[int(math.Floor(q*float64(len(s)-1)))]
	}
	check := func(what string, got float64, ok bool, want float64) {
		if !ok || math.Abs(got-want) > sketchAlpha*want+1e-12 {
			t.Errorf("%s: got %v (present %v), want %v within %.1f %%", what, got, ok, want, 100*sketchAlpha)
		}
	}
	for _, q := range []struct {
		name string
		q    float64
	}{{"p50", 0.5}, {"p95", 0.95}, {"p99", 0.99}} {
		v, ok := m.Flows[0].Get(q.name + "_rtt")
		check("flow 1 "+q.name+"_rtt", v, ok, exact(f1, q.q))
		v, ok = m.Flows[1].Get(q.name + "_rtt")
		check("flow 2 "+q.name+"_rtt", v, ok, exact(f2, q.q))
		v, ok = m.Network.Get(q.name + "_rtt")
		check("network "+q.name+"_rtt", v, ok, exact(pooled, q.q))
		v, ok = m.Links[0].Get(q.name + "_queue_delay")
		check("link "+q.name+"_queue_delay", v, ok, exact(soj, q.q))
		v, ok = m.Network.Get(q.name + "_queue_delay")
		check("network "+q.name+"_queue_delay", v, ok, exact(soj, q.q))
	}
}

// TestDurationIndex checks the table of duration buckets against the
// formula it stands for, bucketOf(d.Seconds()) = ⌈ln x / ln γ⌉: every
// nanosecond of several ranges (the shortest durations, and around the
// delays of typical runs), log-uniform random durations up to the table's
// bound, and every cell's ends and the durations around its split; and
// that a sketch fed durations through it equals one fed their seconds
// through Add; and that an accuracy of 2^−8 gets a table (the coarsest
// cell is no wider than its buckets) and a finer one, 2^−12, none.
func TestDurationIndex(t *testing.T) {
	x := newDurationIndex(sketchAlpha)
	check := func(d int64) {
		t.Helper()
		if got, want := x.bucket(time.Duration(d)), x.formula(d); got != want {
			t.Fatalf("duration %d ns: got bucket %d, want %d", d, got, want)
		}
	}
	for _, r := range [][2]int64{{1, 300000}, {999000, 1001000}, {39800000, 40200000}, {79900000, 80100000}, {1e9 - 200000, 1e9 + 200000}, {maxIndexedDuration - 100000, maxIndexedDuration - 1}} {
		for d := r[0]; d <= r[1]; d++ {
			check(d)
		}
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for range 300000 {
		check(int64(math.Exp2(rng.Float64() * 40)))
	}
	// Every cell below the bound, at its ends and on both sides of its
	// split: where bucketOf changes value within the cell, and so where a
	// rounding error of the formula would show.
	for k := range cellKey(maxIndexedDuration) {
		first, last := cellStart(k), min(maxIndexedDuration-1, cellStart(k+1)-1)
		if first > last { // a cell holding no whole nanosecond
			continue
		}
		split := x.cells[k].split
		for _, d := range []int64{first, first + 1, split - 2, split - 1, split, split + 1, last - 1, last} {
			if d >= first && d <= last {
				check(d)
			}
		}
	}
	// An accuracy whose buckets are narrower than a cell has no table.
	if edge := newDurationIndex(1.0 / 256); edge == nil {
		t.Errorf("duration table of alpha 2^-8: got nil, want one (no cell holds more than two buckets)")
	}
	if fine := newDurationIndex(1.0 / 4096); fine != nil {
		t.Errorf("duration table of alpha 2^-12: got one, want nil (cells hold more than two buckets)")
	}
	formula, table := NewDDSketch(sketchAlpha), NewDDSketch(sketchAlpha)
	table.durs = newDurationIndex(sketchAlpha)
	for _, d := range []time.Duration{-5, 0, 1, 999, 20 * time.Millisecond, 20*time.Millisecond + 1, 3 * time.Microsecond, maxIndexedDuration, 2 * time.Hour, 80 * time.Millisecond} {
		formula.Add(d.Seconds())
		table.addDuration(d)
	}
	if formula.n != table.n || formula.zeros != table.zeros || formula.offset != table.offset || !slices.Equal(formula.counts, table.counts) {
		t.Errorf("sketch of durations: got n %v zeros %v offset %d counts %v, want n %v zeros %v offset %d counts %v",
			table.n, table.zeros, table.offset, table.counts, formula.n, formula.zeros, formula.offset, formula.counts)
	}
}

// TestDurationBucketsShared: collectors share one table of duration
// buckets, built once.
func TestDurationBucketsShared(t *testing.T) {
	a, b := NewCollector(RunInfo{}), NewCollector(RunInfo{})
	if a.durs != b.durs || a.durs != durationBuckets() {
		t.Errorf("duration tables: got %p and %p, want both the shared %p", a.durs, b.durs, durationBuckets())
	}
}

// BenchmarkDurationIndexBuild times the one-time build of the table of
// duration buckets.
func BenchmarkDurationIndexBuild(b *testing.B) {
	for b.Loop() {
		newDurationIndex(sketchAlpha)
	}
}

// TestDDSketchGrowth: values arriving in decreasing (or increasing) order,
// a new bucket each, reallocate the dense buckets a logarithmic number of
// times (before, every new bucket below the lowest copied the whole array
// to a new one), and the sketch answers exactly as one filled in the
// opposite order.
func TestDDSketchGrowth(t *testing.T) {
	const n = 2000 // buckets
	gamma := NewDDSketch(sketchAlpha).gamma
	fill := func(sk *DDSketch, down bool) {
		for k := range n {
			if down {
				k = n - 1 - k
			}
			sk.Add(math.Pow(gamma, float64(k-n/2)))
		}
	}
	for _, down := range []bool{true, false} {
		var sk *DDSketch
		allocs := testing.AllocsPerRun(1, func() {
			sk = NewDDSketch(sketchAlpha)
			fill(sk, down)
		})
		if max := 2 * math.Log2(n); allocs > max {
			t.Errorf("down %v: %v allocations for %d new buckets, want at most %v", down, allocs, n, max)
		}
		ref := NewDDSketch(sketchAlpha)
		fill(ref, !down)
		for _, q := range []float64{0, 0.01, 0.25, 0.5, 0.75, 0.99, 1} {
			if got, want := sk.Quantile(q), ref.Quantile(q); got != want {
				t.Errorf("down %v: Quantile(%v) = %v, want %v (filled the other way)", down, q, got, want)
			}
		}
	}
}
