package qdisc

import (
	"math"
	"slices"
	"strconv"
	"testing"
	"time"

	"cclab/ecn"
)

func newREDT(t *testing.T, s string, env Env) *RED {
	t.Helper()
	q, err := New(s, env)
	if err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return q.(*RED)
}

// EWMA rule [FJ93] Fig. 2: on each arrival to a non-empty queue,
// avg <- (1-w_q) avg + w_q q, with q the queue the arrival finds.
func TestREDEWMA(t *testing.T) {
	for _, wq := range []float64{0.002, 0.1, 0.5} {
		r := newREDT(t, "red:min=1000,max=2000,limit=1000p,wq="+ftoa(wq), Env{})
		var g pktGen
		want := 0.0
		for i := 0; i < 200; i++ {
			if i > 0 { // the first arrival finds an empty, idle queue
				want = (1-wq)*want + wq*float64(i)
			}
			r.Enqueue(at(time.Duration(i)*time.Microsecond), g.pkt(1, 1000))
			if got := r.Avg(); math.Abs(got-want) > 1e-9*max(1, want) {
				t.Fatalf("wq=%v arrival %d: avg got %v, want %v", wq, i, got, want)
			}
		}
	}
}

// Idle-time rule [FJ93] Fig. 2: an arrival to an empty queue sets
// avg <- (1-w_q)^m avg with m = idle time / transmission time of a mean-sized
// packet (Env.Rate, Env.MTU).
func TestREDIdleCorrection(t *testing.T) {
	tests := []struct {
		rate float64 // bits/s
		mtu  int     // bytes
		idle time.Duration
		m    float64 // expected number of "empty slots"
	}{
		{8e6, 1000, 0, 0},
		{8e6, 1000, time.Millisecond, 1}, // s = 1000·8/8e6 = 1 ms
		{8e6, 1000, 10 * time.Millisecond, 10},
		{8e6, 1000, 2500 * time.Microsecond, 2.5},
		{80e6, 1500, 30 * time.Millisecond, 200}, // s = 150 µs
		{0, 1500, time.Second, 0},                // rate unknown: no correction
	}
	for _, tt := range tests {
		r := newREDT(t, "red:min=1000,max=2000,limit=1000p,wq=0.2", Env{Rate: tt.rate, MTU: tt.mtu})
		var g pktGen
		for i := 0; i < 30; i++ {
			r.Enqueue(at(0), g.pkt(1, 100))
		}
		drain(r, at(time.Second))
		avg0 := r.Avg()
		if avg0 < 1 {
			t.Fatalf("setup: avg %v too small", avg0)
		}
		r.Enqueue(at(time.Second+tt.idle), g.pkt(1, 100))
		want := avg0 * math.Pow(1-0.2, tt.m)
		if got := r.Avg(); math.Abs(got-want) > 1e-9*avg0 {
			t.Errorf("rate=%v mtu=%d idle=%v: avg got %v, want %v", tt.rate, tt.mtu, tt.idle, got, want)
		}
	}
}

// Drop probability p_b ([FJ93] Fig. 2, gentle variant, byte mode).
func TestREDProbability(t *testing.T) {
	tests := []struct {
		spec       string
		mtu        int
		avg        float64
		size       int
		wantPb     float64
		wantForced bool
	}{
		{"red:min=5,max=15,maxp=0.1", 0, 4.99, 1500, 0, false},
		{"red:min=5,max=15,maxp=0.1", 0, 5, 1500, 0, false},
		{"red:min=5,max=15,maxp=0.1", 0, 10, 1500, 0.05, false},
		{"red:min=5,max=15,maxp=0.1", 0, 14.9, 1500, 0.099, false},
		{"red:min=5,max=15,maxp=0.1", 0, 15, 1500, 1, true},
		{"red:min=5,max=15,maxp=0.1", 0, 29, 1500, 1, true},
		// gentle: p_b = max_p + (1-max_p)(avg-max_th)/max_th on [max_th, 2 max_th).
		{"red:min=5,max=15,maxp=0.1,gentle", 0, 10, 1500, 0.05, false},
		{"red:min=5,max=15,maxp=0.1,gentle", 0, 15, 1500, 0.1, false},
		{"red:min=5,max=15,maxp=0.1,gentle", 0, 22.5, 1500, 0.55, false},
		{"red:min=5,max=15,maxp=0.1,gentle", 0, 30, 1500, 1, true},
		// byte mode: thresholds ×MTU, p_b scaled by size/MTU.
		{"red:min=5,max=15,maxp=0.1,bytes", 1000, 10000, 1000, 0.05, false},
		{"red:min=5,max=15,maxp=0.1,bytes", 1000, 10000, 500, 0.025, false},
		{"red:min=5000b,max=15kb,maxp=0.1,bytes", 1000, 10000, 250, 0.0125, false},
		{"red:min=5,max=15,maxp=0.1,bytes", 1000, 15000, 500, 1, true},
		// byte thresholds in packet mode are converted with the MTU.
		{"red:min=5000b,max=15000b,maxp=0.2", 1000, 10, 1000, 0.1, false},
	}
	for _, tt := range tests {
		r := newREDT(t, tt.spec, Env{MTU: tt.mtu})
		r.avg.avg = tt.avg
		pb, forced := r.pb(tt.size)
		if math.Abs(pb-tt.wantPb) > 1e-12 || forced != tt.wantForced {
			t.Errorf("%s avg=%v size=%d: p_b, forced got %v, %v, want %v, %v",
				tt.spec, tt.avg, tt.size, pb, forced, tt.wantPb, tt.wantForced)
		}
	}
}

// Count rule [FJ93] Fig. 2: count increments on every arrival with
// min_th <= avg < max_th, p_a = p_b/(1-count·p_b), count <- 0 after a drop,
// so the gap between drops never exceeds 1/p_b arrivals.
func TestREDCount(t *testing.T) {
	for _, avg := range []float64{7, 10, 13} {
		rc := &rec{}
		// w_q tiny: avg stays where the test sets it.
		r := newREDT(t, "red:min=5,max=15,maxp=0.1,wq=1e-12,limit=1000p", Env{Handler: rc, Rand: seeded(3)})
		var g pktGen
		for i := 0; i < 10; i++ {
			r.Enqueue(at(0), g.pkt(1, 100))
		}
		r.avg.avg = avg
		pb := 0.1 * (avg - 5) / 10
		// The setup arrivals left count = -1 (avg was below min_th).
		count, gap, maxGap, drops := -1, 0, 0, 0
		for i := 0; i < 5000; i++ {
			before := len(rc.drops)
			r.Enqueue(at(0), g.pkt(1, 100))
			count++
			gap++
			want := 1.0
			if d := 1 - float64(count)*pb; d > 0 {
				want = min(1, pb/d)
			}
			if got := r.lastProb; math.Abs(got-want) > 1e-6 {
				t.Fatalf("avg=%v arrival %d (count %d): p_a got %v, want %v", avg, i, count, got, want)
			}
			if len(rc.drops) > before {
				if got, want := rc.drops[before].reason, DropEarly; got != want {
					t.Fatalf("drop reason got %v, want %v", got, want)
				}
				if got, want := r.count, 0; got != want {
					t.Fatalf("count after drop got %d, want %d", got, want)
				}
				maxGap = max(maxGap, gap)
				count, gap = 0, 0
				drops++
			} else {
				r.Dequeue(at(0))
			}
		}
		if limit := int(math.Ceil(1 / pb)); maxGap > limit {
			t.Errorf("avg=%v: max gap between drops got %d, want <= 1/p_b = %d", avg, maxGap, limit)
		}
		// With uniform spacing the mean gap is about 1/(2 p_b) + 1/2.
		if mean, want := 5000/float64(drops), 1/(2*pb)+0.5; math.Abs(mean-want) > 0.15*want {
			t.Errorf("avg=%v: mean gap got %.2f, want about %.2f", avg, mean, want)
		}
	}
}

// Below min_th nothing is dropped and count is -1; at or above max_th
// (2·max_th when gentle) every arrival is dropped as forced.
func TestREDRegions(t *testing.T) {
	tests := []struct {
		spec       string
		avg        float64
		wantReason DropReason // 0: accepted
		wantCount  int
	}{
		{"red:min=5,max=15", 4, 0, -1},
		{"red:min=5,max=15", 15.001, DropForced, 0},
		{"red:min=5,max=15", 100, DropForced, 0},
		{"red:min=5,max=15,gentle", 29.99, 0, 1}, // p_a almost 1 but count 1: see rng below
		{"red:min=5,max=15,gentle", 30.001, DropForced, 0},
	}
	for _, tt := range tests {
		rc := &rec{}
		r := newREDT(t, tt.spec+",wq=1e-12", Env{Handler: rc, Rand: seeded(1)})
		r.avg.avg, r.avg.idle = tt.avg, false
		r.count = 7
		if tt.wantReason == 0 && tt.avg >= 15 {
			// gentle probabilistic region: p_b < 1, so it is an early drop
			// or an accept, never forced.
			r.Enqueue(at(0), (&pktGen{}).pkt(1, 100))
			for _, d := range rc.drops {
				if d.reason != DropEarly {
					t.Errorf("%s avg=%v: drop reason got %v, want %v", tt.spec, tt.avg, d.reason, DropEarly)
				}
			}
			continue
		}
		r.Enqueue(at(0), (&pktGen{}).pkt(1, 100))
		var got DropReason
		if len(rc.drops) > 0 {
			got = rc.drops[0].reason
		}
		if got != tt.wantReason {
			t.Errorf("%s avg=%v: reason got %v, want %v", tt.spec, tt.avg, got, tt.wantReason)
		}
		if r.count != tt.wantCount {
			t.Errorf("%s avg=%v: count got %d, want %d", tt.spec, tt.avg, r.count, tt.wantCount)
		}
	}
}

// ECN (RFC 3168 §7): in the early region ECT packets are marked CE and
// queued, not-ECT packets are dropped; forced drops apply to both.
func TestREDECN(t *testing.T) {
	tests := []struct {
		avg      float64
		ect      bool
		wantMark bool
		wantDrop DropReason
	}{
		{14.99, true, true, 0},
		{14.99, false, false, DropEarly},
		{15.001, true, false, DropForced},
		{15.001, false, false, DropForced},
	}
	for _, tt := range tests {
		rc := &rec{}
		r := newREDT(t, "red:min=5,max=15,maxp=1,wq=1e-12,ecn", Env{Handler: rc})
		r.avg.avg, r.avg.idle = tt.avg, false
		r.count = 100 // count·p_b >= 1: p_a = 1, the early decision is certain
		var g pktGen
		p := g.pkt(1, 100)
		if tt.ect {
			p.ECN = ecn.ECT0
		}
		ok := r.Enqueue(at(0), p)
		if got, want := len(rc.marks) == 1, tt.wantMark; got != want {
			t.Errorf("avg=%v ect=%v: marked got %v, want %v", tt.avg, tt.ect, got, want)
		}
		if tt.wantMark && (p.ECN != ecn.CE || !ok || r.Len() != 1) {
			t.Errorf("avg=%v: marked packet got ECN %v queued %v, want CE queued", tt.avg, p.ECN, ok)
		}
		var got DropReason
		if len(rc.drops) > 0 {
			got = rc.drops[0].reason
		}
		if got != tt.wantDrop {
			t.Errorf("avg=%v ect=%v: drop got %v, want %v", tt.avg, tt.ect, got, tt.wantDrop)
		}
	}
	// Without the ecn flag an ECT packet is dropped.
	rc := &rec{}
	r := newREDT(t, "red:min=5,max=15,maxp=1,wq=1e-12", Env{Handler: rc})
	r.avg.avg, r.avg.idle, r.count = 14.99, false, 100
	r.Enqueue(at(0), (&pktGen{}).ect(1, 100))
	if got, want := rc.count(DropEarly), 1; got != want || len(rc.marks) != 0 {
		t.Errorf("no ecn flag: early drops got %d marks %d, want %d and 0", got, len(rc.marks), want)
	}
}

// The hard limit applies whatever the average.
func TestREDHardLimit(t *testing.T) {
	tests := []struct {
		limit      string
		size, n    int
		wantQueued int
	}{
		{"10p", 100, 25, 10},
		{"5000b", 1000, 25, 5},
		{"5500b", 1000, 25, 5},
	}
	for _, tt := range tests {
		rc := &rec{}
		r := newREDT(t, "red:min=1000,max=2000,limit="+tt.limit, Env{Handler: rc})
		var g pktGen
		for i := 0; i < tt.n; i++ {
			r.Enqueue(at(0), g.pkt(1, tt.size))
		}
		if got, want := r.Len(), tt.wantQueued; got != want {
			t.Errorf("limit=%s: Len got %d, want %d", tt.limit, got, want)
		}
		if got, want := rc.count(DropOverflow), tt.n-tt.wantQueued; got != want {
			t.Errorf("limit=%s: overflow drops got %d, want %d", tt.limit, got, want)
		}
	}
}

// RED serves in FIFO order.
func TestREDFIFO(t *testing.T) {
	r := newREDT(t, "red:min=1000,max=2000,limit=1000p", Env{})
	var g pktGen
	for i := 0; i < 50; i++ {
		r.Enqueue(at(0), g.pkt(uint64(i%4), 100))
	}
	ids := drain(r, at(0))
	if !slices.IsSorted(ids) || len(ids) != 50 {
		t.Errorf("dequeue order got %v, want 1..50", ids)
	}
}

// dropSequence offers a bursty overload to the queue built from spec and
// returns its drop sequence.
func dropSequence(t *testing.T, spec string, seed uint64, flows int) []dropRec {
	t.Helper()
	rc := &rec{}
	q, err := New(spec, Env{Handler: rc, Rand: seeded(seed), Rate: 10e6, MTU: 1000})
	if err != nil {
		t.Fatal(err)
	}
	var g pktGen
	now := at(0)
	for i := 0; i < 20000; i++ {
		// Arrivals at 1.5× the service rate for 75 slots, then a 25-slot
		// lull; one slot is 1000 bytes at 12 Mbit/s.
		now = now.Add(667 * time.Microsecond)
		if (i/25)%4 != 3 {
			q.Enqueue(now, g.pkt(uint64(i%flows), 1000))
		}
		if i%3 != 2 {
			q.Dequeue(now)
		}
	}
	return rc.drops
}

func TestSeedReproducible(t *testing.T) {
	for _, spec := range []string{"red:min=3,max=9,maxp=0.2,limit=30p,gentle", "fred:limit=30", "csfq:limit=30p"} {
		a := dropSequence(t, spec, 7, 5)
		b := dropSequence(t, spec, 7, 5)
		c := dropSequence(t, spec, 8, 5)
		if len(a) < 20 {
			t.Fatalf("%s: only %d drops; the load does not exercise the queue", spec, len(a))
		}
		if !slices.Equal(a, b) {
			t.Errorf("%s: same seed gave different drop sequences (%d vs %d drops)", spec, len(a), len(b))
		}
		if slices.Equal(a, c) {
			t.Errorf("%s: seeds 7 and 8 gave identical drop sequences", spec)
		}
	}
}

func ftoa(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
