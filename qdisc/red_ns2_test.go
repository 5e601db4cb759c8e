package qdisc

import (
	"math"
	"testing"
)

// ns2RED is a reference model of ns-2's REDQueue::enque and modify_p
// (ns-2.35 queue/red.cc, packet mode, not gentle, ns1_compat_ false),
// written from its formulas, for a queue that never goes idle:
//
//	ave <- (1-q_w) ave + q_w qlen; ++count
//	if ave >= th_min && qlen > 1:
//	    ave >= th_max: forced drop
//	    else if old == 0: count <- 1, old <- 1
//	    else: p <- modify_p(max_p (ave-th_min)/(th_max-th_min), count, wait)
//	          drop if u <= p (count <- 0)
//	else old <- 0
//	qlen >= qlim: forced drop; every forced drop sets count <- 0
//
// modify_p with wait_: 0 while count·p < 1, p/(2-count·p) while count·p < 2,
// else 1; without: p/(1-count·p) while count·p < 1, else 1.
type ns2RED struct {
	minTh, maxTh, maxP, wq float64
	qlim                   int
	wait                   bool
	ave                    float64
	count                  int
	old                    bool
	qlen                   int
}

// arrive returns the probability used and whether the arrival is dropped;
// u draws the uniform variate only where red.cc's drop_early does.
func (m *ns2RED) arrive(u func() float64) (p float64, drop bool) {
	m.ave = (1-m.wq)*m.ave + m.wq*float64(m.qlen)
	m.count++
	forced := false
	if m.ave >= m.minTh && m.qlen > 1 {
		switch {
		case m.ave >= m.maxTh:
			forced, p = true, 1
		case !m.old:
			m.count, m.old = 1, true
		default:
			pb := m.maxP * (m.ave - m.minTh) / (m.maxTh - m.minTh)
			c := float64(m.count) * pb
			switch {
			case m.wait && c < 1:
				p = 0
			case m.wait && c < 2:
				p = pb / (2 - c)
			case !m.wait && c < 1:
				p = pb / (1 - c)
			default:
				p = 1
			}
			p = min(p, 1)
			if u() <= p {
				m.count = 0
				return p, true
			}
		}
	} else {
		m.old = false
	}
	if m.qlen >= m.qlim {
		forced = true
	}
	if forced {
		m.count = 0
		return p, true
	}
	m.qlen++
	return p, false
}

// cclab's RED with ns2 (and wait) makes the same decision as the reference
// model of red.cc on every arrival of a fixed sequence that drives the
// average through every region, drawing the same uniform variates.
func TestREDMatchesNS2(t *testing.T) {
	for _, wait := range []bool{false, true} {
		spec := "red:min=5,max=15,maxp=0.1,wq=0.02,limit=30p,ns2"
		if wait {
			spec += ",wait"
		}
		rc := &rec{}
		r := newREDT(t, spec, Env{Handler: rc, Rand: seeded(11)})
		ref := &ns2RED{minTh: 5, maxTh: 15, maxP: 0.1, wq: 0.02, qlim: 30, wait: wait}
		refRand := seeded(11)
		var g pktGen
		steps := seeded(12)
		// The queue keeps one packet, so it is never idle (the idle-time
		// rules of red.cc and [FJ93] differ and are not compared here).
		r.Enqueue(at(0), g.pkt(1, 1000))
		ref.qlen = 1
		var early, forced, crossings int
		for i := 0; i < 40000; i++ {
			// Phases of 2000 steps alternately fill and drain the queue.
			pArrive := 0.7
			if (i/2000)%2 == 1 {
				pArrive = 0.35
			}
			if steps.Float64() >= pArrive {
				if r.Len() > 1 {
					r.Dequeue(at(0))
					ref.qlen--
				}
				continue
			}
			wasOld := ref.old
			before := len(rc.drops)
			wantP, wantDrop := ref.arrive(refRand.Float64)
			r.Enqueue(at(0), g.pkt(1, 1000))
			gotDrop := len(rc.drops) > before
			if math.Abs(r.Avg()-ref.ave) > 1e-9 || math.Abs(r.lastProb-wantP) > 1e-12 || gotDrop != wantDrop || r.Len() != ref.qlen {
				t.Fatalf("wait=%v arrival %d: avg, p, drop, qlen got %v, %v, %v, %d, want %v, %v, %v, %d",
					wait, i, r.Avg(), r.lastProb, gotDrop, r.Len(), ref.ave, wantP, wantDrop, ref.qlen)
			}
			if gotDrop {
				switch rc.drops[before].reason {
				case DropEarly:
					early++
				case DropForced:
					forced++
				}
			}
			if ref.old && !wasOld {
				crossings++
			}
		}
		if early == 0 || forced == 0 || crossings < 2 {
			t.Errorf("wait=%v: the sequence exercised early %d, forced %d, crossings %d; want each > 0 (crossings >= 2)",
				wait, early, forced, crossings)
		}
	}
}

// ns-2's wait_ (red.cc modify_p): no early drop while count·p_b < 1, then
// p_b/(2-count·p_b), 1 from count·p_b = 2; so with a fixed average the gaps
// between early drops lie in [1/p_b, 2/p_b] arrivals, mean about 1.5/p_b.
func TestREDWait(t *testing.T) {
	tests := []struct {
		pb    float64
		count int
		want  float64
	}{
		{0.1, 1, 0},
		{0.1, 9, 0},
		{0.1, 10, 0.1},
		{0.1, 15, 0.2},
		{0.1, 18, 0.5},
		{0.1, 20, 1},
		{0.05, 30, 0.1},
	}
	for _, tt := range tests {
		if got := redPaWait(tt.pb, tt.count); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("redPaWait(%v, %d) got %v, want %v", tt.pb, tt.count, got, tt.want)
		}
	}
	const pb = 0.05 // avg 10 with min 5, max 15, max_p 0.1
	rc := &rec{}
	r := newREDT(t, "red:min=5,max=15,maxp=0.1,wq=1e-12,limit=1000p,wait", Env{Handler: rc, Rand: seeded(5)})
	var g pktGen
	for i := 0; i < 10; i++ {
		r.Enqueue(at(0), g.pkt(1, 100))
	}
	r.avg.avg = 10
	last, gaps, sum := -1, 0, 0
	for i := 0; i < 20000; i++ {
		before := len(rc.drops)
		r.Enqueue(at(0), g.pkt(1, 100))
		if len(rc.drops) == before {
			r.Dequeue(at(0))
			continue
		}
		if last >= 0 {
			gap := i - last
			if gap < int(math.Round(1/pb)) || gap > int(math.Round(2/pb)) {
				t.Fatalf("gap between early drops got %d arrivals, want in [%v, %v]", gap, 1/pb, 2/pb)
			}
			gaps, sum = gaps+1, sum+gap
		}
		last = i
	}
	if mean, want := float64(sum)/float64(gaps), 1.5/pb; math.Abs(mean-want) > 0.1*want {
		t.Errorf("mean gap got %.1f arrivals (%d gaps), want about %.1f", mean, gaps, want)
	}
}
