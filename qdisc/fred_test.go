package qdisc

import (
	"math"
	"testing"
	"time"
)

func newFREDT(t *testing.T, s string, env Env) *FRED {
	t.Helper()
	q, err := New(s, env)
	if err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return q.(*FRED)
}

// The average is updated when a packet is accepted (with q excluding it) and
// when one departs (q after the departure), [LM97]; avgcq = max(avg/nactive, 1).
func TestFREDAverage(t *testing.T) {
	f := newFREDT(t, "fred:min=100,max=200,wq=0.5,limit=1000", Env{})
	var g pktGen
	want := 0.0
	ops := "aaaaadaadddaaadddddd" // a: arrival of a new flow's packet, d: departure
	flows := 0
	for i, op := range ops {
		now := at(time.Duration(i) * time.Microsecond)
		if op == 'a' {
			q := float64(f.Len())
			f.Enqueue(now, g.pkt(uint64(flows), 100))
			flows++
			if q > 0 {
				want = 0.5*want + 0.5*q
			}
		} else {
			f.Dequeue(now)
			want = 0.5*want + 0.5*float64(f.Len())
		}
		if got := f.Avg(); math.Abs(got-want) > 1e-12 {
			t.Fatalf("op %d (%c): avg got %v, want %v", i, op, got, want)
		}
		wantCQ := want
		if f.nactive > 0 {
			wantCQ = want / float64(f.nactive)
		}
		if got := f.AvgCQ(); got != max(wantCQ, 1) {
			t.Fatalf("op %d: avgcq got %v, want %v", i, got, max(wantCQ, 1))
		}
		if got, want := f.nactive, f.Len(); got != want { // one packet per flow
			t.Fatalf("op %d: nactive got %d, want %d", i, got, want)
		}
	}
	if got, want := len(f.flows), 0; got != want {
		t.Errorf("state tables after drain got %d, want %d", got, want)
	}
}

// Per-flow limit and strikes: a flow may queue at most maxq = min_th packets
// (avg < max_th); each excess arrival is dropped and counts a strike; a flow
// with more than one strike is dropped whenever qlen_i >= avgcq.
func TestFREDStrikes(t *testing.T) {
	rc := &rec{}
	f := newFREDT(t, "fred:min=5,max=10,wq=1e-9,limit=100", Env{Handler: rc})
	var g pktGen
	accepted := 0
	for i := 0; i < 8; i++ {
		if f.Enqueue(at(0), g.pkt(1, 100)) {
			accepted++
		}
	}
	if got, want := accepted, 5; got != want {
		t.Errorf("accepted from one flow got %d, want maxq = min_th = %d", got, want)
	}
	if got, want := rc.count(DropFlowLimit), 3; got != want {
		t.Errorf("flow-limit drops got %d, want %d", got, want)
	}
	if got, want := f.Strikes(1), 3; got != want {
		t.Errorf("strikes got %d, want %d", got, want)
	}
	// Drain flow 1 down to 2 packets: it is below maxq but has strikes > 1
	// and qlen >= avgcq (= 1), so it is still dropped; flow 2, also holding
	// 2 packets but without strikes, is accepted.
	f.Dequeue(at(0))
	f.Dequeue(at(0))
	f.Dequeue(at(0))
	f.Enqueue(at(0), g.pkt(2, 100))
	f.Enqueue(at(0), g.pkt(2, 100))
	n := len(rc.drops)
	if f.Enqueue(at(0), g.pkt(1, 100)) {
		t.Errorf("struck flow with qlen 2 >= avgcq: accepted, want dropped")
	}
	if !f.Enqueue(at(0), g.pkt(2, 100)) {
		t.Errorf("clean flow with qlen 2: dropped, want accepted")
	}
	if got, want := len(rc.drops)-n, 1; got != want {
		t.Errorf("drops got %d, want %d", got, want)
	}
	// When flow 1's last packet departs, its state (and strikes) is deleted.
	for f.Len() > 0 {
		f.Dequeue(at(0))
	}
	if got, want := f.Strikes(1), 0; got != want || len(f.flows) != 0 {
		t.Errorf("after drain: strikes got %d (tables %d), want %d (0)", got, len(f.flows), want)
	}
}

// Drop modes by average: no-drop below min_th (count -1); random drop between
// the thresholds only for flows with qlen_i >= max(minq, avgcq); drop-tail at
// or above max_th, where maxq = 2 makes flows with 2+ packets strike.
func TestFREDModes(t *testing.T) {
	tests := []struct {
		name       string
		avg        float64
		qlen       int // packets the arriving packet's flow already holds
		wantReason DropReason
		wantStrike int
	}{
		{"no-drop mode", 4, 3, 0, 0},
		{"random mode, fragile flow (qlen < minq)", 8, 1, 0, 0},
		{"random mode, robust flow", 8, 3, DropEarly, 0},
		{"drop-tail mode, new flow", 10, 0, DropForced, 0},
		{"drop-tail mode, qlen 1", 10, 1, DropForced, 0},
		{"drop-tail mode, qlen >= maxq = 2", 10, 2, DropFlowLimit, 1},
	}
	for _, tt := range tests {
		rc := &rec{}
		f := newFREDT(t, "fred:min=5,max=10,maxp=0.02,minq=2,wq=1e-9,limit=100", Env{Handler: rc})
		var g pktGen
		// Five other flows with one packet each keep avgcq = avg/6 small.
		for k := uint64(10); k < 15; k++ {
			f.Enqueue(at(0), g.pkt(k, 100))
		}
		for i := 0; i < tt.qlen; i++ {
			f.Enqueue(at(0), g.pkt(1, 100))
		}
		f.avg.avg = tt.avg
		f.setAvgCQ()
		f.count = 1000 // count·p_b >= 1: a random-mode decision is certain
		ok := f.Enqueue(at(0), g.pkt(1, 100))
		var got DropReason
		if len(rc.drops) > 0 {
			got = rc.drops[0].reason
		}
		if got != tt.wantReason || ok != (tt.wantReason == 0) {
			t.Errorf("%s: reason got %v (accepted %v), want %v", tt.name, got, ok, tt.wantReason)
		}
		if s := f.Strikes(1); s != tt.wantStrike {
			t.Errorf("%s: strikes got %d, want %d", tt.name, s, tt.wantStrike)
		}
		if tt.avg < 5 && f.count != -1 {
			t.Errorf("%s: count got %d, want -1", tt.name, f.count)
		}
	}
}

// Random drops follow RED's p_a = p_b/(1 - count·p_b) among robust flows:
// gaps in [1, 1/p_b], mean about 1/(2 p_b); with wait, ns-2's wait_ rule:
// gaps in [1/p_b, 2/p_b], mean about 1.5/p_b.
func TestFREDRandomRate(t *testing.T) {
	tests := []struct {
		spec           string
		minGap, maxGap int
		wantMean       float64
	}{
		{"fred:min=5,max=10,maxp=0.1,minq=2,wq=1e-9,limit=100", 1, 20, 1/(2*0.05) + 0.5},
		{"fred:min=5,max=10,maxp=0.1,minq=2,wq=1e-9,limit=100,wait", 20, 40, 1.5 / 0.05},
	}
	for _, tt := range tests {
		rc := &rec{}
		f := newFREDT(t, tt.spec, Env{Handler: rc, Rand: seeded(4)})
		var g pktGen
		for k := uint64(10); k < 17; k++ {
			f.Enqueue(at(0), g.pkt(k, 100))
		}
		for i := 0; i < 3; i++ {
			f.Enqueue(at(0), g.pkt(1, 100))
		}
		f.avg.avg = 7.5 // p_b = 0.05
		f.setAvgCQ()
		minGap, maxGap, gap, drops := 1<<30, 0, 0, 0
		for i := 0; i < 8000; i++ {
			gap++
			if !f.Enqueue(at(0), g.pkt(1, 100)) {
				if drops > 0 { // the first gap starts before count was set
					minGap, maxGap = min(minGap, gap), max(maxGap, gap)
				}
				drops++
				gap = 0
				continue
			}
			// Take the accepted packet back out (white box) so flow 1 keeps
			// holding 3 packets and avg stays put.
			f.q.popBack()
			f.flows[1].qlen--
		}
		if minGap < tt.minGap || maxGap > tt.maxGap {
			t.Errorf("%s: gaps between random drops got [%d, %d], want within [%d, %d]", tt.spec, minGap, maxGap, tt.minGap, tt.maxGap)
		}
		if mean := 8000 / float64(drops); math.Abs(mean-tt.wantMean) > 0.15*tt.wantMean {
			t.Errorf("%s: mean gap got %.2f, want about %.2f", tt.spec, mean, tt.wantMean)
		}
		if got := rc.count(DropEarly); got != drops {
			t.Errorf("%s: early drops got %d, want %d", tt.spec, got, drops)
		}
	}
}

func TestFREDHardLimit(t *testing.T) {
	rc := &rec{}
	f := newFREDT(t, "fred:min=50,max=100,limit=10", Env{Handler: rc})
	var g pktGen
	for i := 0; i < 15; i++ {
		f.Enqueue(at(0), g.pkt(uint64(i), 100))
	}
	if got, want := rc.count(DropOverflow), 5; got != want {
		t.Errorf("overflow drops got %d, want %d", got, want)
	}
	if got, want := len(f.flows), 10; got != want {
		t.Errorf("state tables got %d, want %d (dropped flows keep none)", got, want)
	}
}

// [LM97]'s central claim: a fragile (low-rate) flow sharing a link with a
// non-adaptive flow sending at twice the link rate loses a large share of
// its packets under RED but none under FRED, which confines the aggressive
// flow to about maxq packets while keeping the link busy.
func TestFREDProtectsFragileFlow(t *testing.T) {
	run := func(spec string) (fragileLoss float64, idle int) {
		rc := &rec{}
		q, err := New(spec, Env{Handler: rc, Rand: seeded(9), Rate: 12e6, MTU: 1500})
		if err != nil {
			t.Fatal(err)
		}
		var g pktGen
		sent := 0
		for tick := 0; tick < 20000; tick++ { // one departure per 1 ms tick
			now := at(time.Duration(tick) * time.Millisecond)
			q.Enqueue(now, g.pkt(1, 1500)) // non-adaptive: 2 packets per tick
			q.Enqueue(now, g.pkt(1, 1500))
			if tick%20 == 0 { // fragile: one packet per 20 ticks
				q.Enqueue(now, g.pkt(2, 1500))
				sent++
			}
			if q.Dequeue(now.Add(500*time.Microsecond)) == nil {
				idle++
			}
		}
		lost := 0
		for _, d := range rc.drops {
			if d.flow == 2 {
				lost++
			}
		}
		return float64(lost) / float64(sent), idle
	}
	redLoss, _ := run("red:min=5,max=10,maxp=0.02,limit=100p")
	fredLoss, fredIdle := run("fred:min=5,max=10,maxp=0.02,limit=100")
	t.Logf("fragile-flow loss: RED %.3f, FRED %.3f", redLoss, fredLoss)
	if redLoss < 0.2 {
		t.Errorf("RED fragile-flow loss got %.3f, want > 0.2 (the scenario must hurt it)", redLoss)
	}
	if fredLoss != 0 {
		t.Errorf("FRED fragile-flow loss got %.3f, want 0", fredLoss)
	}
	if fredIdle > 0 {
		t.Errorf("FRED link idle ticks got %d, want 0", fredIdle)
	}
}
