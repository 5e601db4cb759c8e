package qdisc

import (
	"math"
	"testing"
	"time"

	"cclab/clock"
)

func newCSFQT(t *testing.T, s string, env Env) *CSFQ {
	t.Helper()
	q, err := New(s, env)
	if err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return q.(*CSFQ)
}

// Eq. (3)/(5): r_new = (1-e^{-T/K}) l/T + e^{-T/K} r_old.
func TestCSFQExpRate(t *testing.T) {
	tests := []struct {
		old, bits, T, K float64
		want            float64
	}{
		{0, 8000, 0.1, 0.1, (1 - math.Exp(-1)) * 80000},
		{1e6, 8000, 0.1, 0.1, (1-math.Exp(-1))*80000 + math.Exp(-1)*1e6},
		{1e6, 8000, 0.001, 0.1, (1-math.Exp(-0.01))*8e6 + math.Exp(-0.01)*1e6},
		{5e5, 8000, 0, 0.1, 5e5 + 8000/0.1}, // T -> 0 limit
		{8e6, 8000, 0.001, 0.1, 8e6},        // steady state: l/T = r_old
	}
	for _, tt := range tests {
		if got := expRate(tt.old, tt.bits, tt.T, tt.K); math.Abs(got-tt.want) > 1e-9*tt.want {
			t.Errorf("expRate(%v, %v, %v, %v) got %v, want %v", tt.old, tt.bits, tt.T, tt.K, got, tt.want)
		}
	}
}

// Edge role: each flow's packets are labelled with its own rate estimate,
// which converges to the flow's sending rate; silent flows are forgotten.
func TestCSFQEdgeLabels(t *testing.T) {
	c := newCSFQT(t, "csfq:k=100ms,limit=100000p,edge", Env{Rate: 1e12})
	var g pktGen
	rates := map[uint64]float64{1: 1e6, 2: 8e6, 3: 20e6} // bits/s, 1000-byte packets
	next := map[uint64]time.Duration{1: 0, 2: 0, 3: 0}
	last := map[uint64]float64{}
	for now := time.Duration(0); now < 2*time.Second; now += 100 * time.Microsecond {
		for f, r := range rates {
			if now >= next[f] {
				p := g.pkt(f, 1000)
				c.Enqueue(at(now), p)
				last[f] = p.Label
				next[f] += time.Duration(8000 / r * 1e9)
			}
		}
		c.Dequeue(at(now))
	}
	for f, r := range rates {
		if math.Abs(last[f]-r) > 0.02*r {
			t.Errorf("flow %d: label got %.0f, want about %.0f", f, last[f], r)
		}
	}
	if got, want := c.EdgeFlows(), 3; got != want {
		t.Errorf("edge flows got %d, want %d", got, want)
	}
	// After 10·K of silence a flow's state is dropped on the next arrival.
	c.Enqueue(at(2*time.Second+1001*time.Millisecond), g.pkt(4, 1000))
	if got, want := c.EdgeFlows(), 1; got != want {
		t.Errorf("edge flows after 1 s of silence got %d, want %d", got, want)
	}
	// A core hop (edge=false) keeps the incoming label.
	core := newCSFQT(t, "csfq:edge=false", Env{Rate: 1e12})
	p := g.pkt(5, 1000)
	p.Label = 12345
	core.Enqueue(at(0), p)
	if p.Label != 12345 || core.EdgeFlows() != 0 {
		t.Errorf("core hop: label got %v (flows %d), want 12345 (0)", p.Label, core.EdgeFlows())
	}
}

// Core drop probability max(0, 1 - alpha/label) and relabelling of
// survivors with min(label, alpha). K_c is huge and C far above the load so
// alpha stays where the test puts it.
func TestCSFQDropProbability(t *testing.T) {
	const alpha = 1e6
	for _, ratio := range []float64{0.5, 1, 2, 4, 10} {
		rc := &rec{}
		c := newCSFQT(t, "csfq:edge=false,kc=10000s,limit=100000p", Env{Rate: 1e15, Handler: rc, Rand: seeded(11)})
		c.setAlpha(alpha)
		var g pktGen
		const n = 20000
		for i := 0; i < n; i++ {
			p := g.pkt(1, 1000)
			p.Label = ratio * alpha
			if c.Enqueue(at(time.Duration(i)*time.Microsecond), p) {
				want := ratio * alpha
				if ratio > 1 {
					want = alpha
				}
				if p.Label != want {
					t.Fatalf("label/alpha %v: survivor label got %v, want %v", ratio, p.Label, want)
				}
				c.Dequeue(at(0))
			}
		}
		want := max(0, 1-1/ratio)
		got := float64(rc.count(DropCSFQ)) / n
		if math.Abs(got-want) > 0.015 {
			t.Errorf("label/alpha %v: drop fraction got %.4f, want %.4f", ratio, got, want)
		}
		if c.Alpha() != alpha {
			t.Errorf("label/alpha %v: alpha moved to %v", ratio, c.Alpha())
		}
	}
}

// estimate_alpha ([SSZ98] Figure 3) step by step.
func TestCSFQEstimateAlpha(t *testing.T) {
	const C = 10e6
	c := newCSFQT(t, "csfq:kc=100ms,edge=false", Env{Rate: C})
	type step struct {
		t         time.Duration
		a, f      float64 // A and F before the call (F after, for the rescale)
		label     float64
		wantAlpha float64
		wantCong  bool
	}
	steps := []step{
		// Uncongested: the first call closes the (empty) initial window.
		{0, 5e6, 0, 1e6, 0, false},
		// Within K_c: tmp_alpha collects the largest label.
		{10 * time.Millisecond, 5e6, 0, 3e6, 0, false},
		{50 * time.Millisecond, 5e6, 0, 2e6, 0, false},
		// After K_c: alpha = largest label of the window.
		{101 * time.Millisecond, 5e6, 0, 1e6, 3e6, false},
		// A >= C: congestion starts; alpha unchanged.
		{120 * time.Millisecond, 12e6, 0, 1e6, 3e6, true},
		{200 * time.Millisecond, 12e6, 0, 1e6, 3e6, true},
		// Congested for more than K_c: alpha <- alpha · C/F.
		{221 * time.Millisecond, 12e6, 12e6, 1e6, 3e6 * C / 12e6, true},
		// A < C again: leave congestion, reset tmp_alpha.
		{250 * time.Millisecond, 9e6, 12e6, 7e6, 3e6 * C / 12e6, false},
		{300 * time.Millisecond, 9e6, 12e6, 4e6, 3e6 * C / 12e6, false},
		{351 * time.Millisecond, 9e6, 12e6, 1e6, 4e6, false},
	}
	for i, s := range steps {
		c.a = s.a
		if s.f > 0 {
			c.f = s.f
		}
		c.estimateAlpha(at(s.t), 0, s.label, true) // dropped: F left as set
		if math.Abs(c.alpha-s.wantAlpha) > 1e-6 || c.congest != s.wantCong {
			t.Errorf("step %d (t=%v): alpha, congested got %.0f, %v, want %.0f, %v",
				i, s.t, c.alpha, c.congest, s.wantAlpha, s.wantCong)
		}
	}
}

// On buffer overflow alpha decreases by 1% per overflow, but by no more than
// 25% below its last regular value ([SSZ98] §2.3).
func TestCSFQOverflowDecrease(t *testing.T) {
	tests := []struct {
		overflows int
		want      float64
	}{
		{1, 0.99e6},
		{10, 1e6 * math.Pow(0.99, 10)},
		{28, 1e6 * math.Pow(0.99, 28)},
		{29, 0.75e6}, // 0.99^29 = 0.747 < 0.75
		{200, 0.75e6},
	}
	for _, tt := range tests {
		rc := &rec{}
		c := newCSFQT(t, "csfq:edge=false,kc=10000s,limit=5p", Env{Rate: 1e15, Handler: rc})
		c.setAlpha(1e6)
		var g pktGen
		for i := 0; i < 5+tt.overflows; i++ {
			p := g.pkt(1, 1000)
			p.Label = 1e5 // below alpha: never a CSFQ drop
			c.Enqueue(at(time.Duration(i)*time.Microsecond), p)
		}
		if got := rc.count(DropOverflow); got != tt.overflows {
			t.Fatalf("overflows got %d, want %d", got, tt.overflows)
		}
		t.Logf("alpha %.3f Mbit/s; drops: csfq %d, overflow %d", c.Alpha()/1e6, rc.count(DropCSFQ), rc.count(DropOverflow))
		if got := c.Alpha(); math.Abs(got-tt.want) > 1e-6*tt.want {
			t.Errorf("%d overflows: alpha got %.1f, want %.1f", tt.overflows, got, tt.want)
		}
	}
}

// End to end ([SSZ98] §3): flows sending 1, 2, 8 and 12 Mbit/s through a
// 10 Mbit/s CSFQ link (edge and core in one hop) get close to their max-min
// fair shares 1, 2, 3.5 and 3.5 Mbit/s.
func TestCSFQMaxMinFairness(t *testing.T) {
	const C = 10e6
	rc := &rec{}
	c := newCSFQT(t, "csfq:limit=64kb", Env{Rate: C, Handler: rc, Rand: seeded(5)})
	rates := []float64{1e6, 2e6, 8e6, 12e6}
	fair := []float64{1e6, 2e6, 3.5e6, 3.5e6}
	const size = 1000
	next := make([]clock.Time, len(rates))
	for i := range next {
		next[i] = at(time.Duration(i) * 37 * time.Microsecond)
	}
	tx := time.Duration(size * 8 / C * 1e9)
	nextDep := at(0)
	var g pktGen
	served := make([]float64, len(rates))
	end, measureFrom := at(6*time.Second), at(2*time.Second)
	for {
		// Earliest arrival.
		fi := 0
		for i := range next {
			if next[i] < next[fi] {
				fi = i
			}
		}
		now := next[fi]
		if now > end {
			break
		}
		// Departures up to now, one per transmission time while backlogged.
		for nextDep <= now {
			if p := c.Dequeue(nextDep); p != nil {
				if nextDep >= measureFrom {
					served[p.Flow] += float64(p.Size * 8)
				}
				nextDep = nextDep.Add(tx)
			} else {
				nextDep = now
				break
			}
		}
		c.Enqueue(now, g.pkt(uint64(fi), size))
		next[fi] = now.Add(time.Duration(size * 8 / rates[fi] * 1e9))
	}
	secs := end.Sub(measureFrom).Seconds()
	for i := range served {
		got := served[i] / secs
		t.Logf("flow %d offered %.1f Mbit/s: got %.3f Mbit/s, fair %.1f", i, rates[i]/1e6, got/1e6, fair[i]/1e6)
		if math.Abs(got-fair[i]) > 0.12*fair[i] {
			t.Errorf("flow %d (offered %.0f): throughput got %.0f, want about %.0f", i, rates[i], got, fair[i])
		}
	}
	t.Logf("alpha %.3f Mbit/s; drops: csfq %d, overflow %d", c.Alpha()/1e6, rc.count(DropCSFQ), rc.count(DropOverflow))
	if got := c.Alpha(); math.Abs(got-3.5e6) > 0.25*3.5e6 {
		t.Errorf("alpha got %.0f, want about 3.5e6", got)
	}
	if rc.count(DropCSFQ) == 0 {
		t.Errorf("no CSFQ drops")
	}
}
