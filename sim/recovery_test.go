package sim

import (
	"testing"
	"time"

	"cclab/ccalgo"
	"cclab/clock"
	"cclab/event"
	"cclab/traffic"
	"cclab/transport"
)

// Acceptance checks in the simulator, seeds fixed.

// TestDCAReactsBeforeLoss: a DCA flow (reduction 0.5) in congestion avoidance
// on a bottleneck with a large buffer; at 15 s a 9.5 Mbit/s CBR UDP flow
// starts and the queue builds up. DCA's decision trace must show a
// congested decision that reduced cwnd (by half) after the cross traffic
// began and before the first packet loss the flow sees after it.
func TestDCAReactsBeforeLoss(t *testing.T) {
	e := NewEngine()
	const rtt = 40 * time.Millisecond
	rate := 10e6
	bdp := int(rate * rtt.Seconds() / 8 / 1228)
	db, err := NewDumbbell(e, DumbbellConfig{Flows: 2, Rate: rate, Delay: rtt / 2, Queue: "droptail:" + itoa(8*bdp) + "p"},
		Options{Seed: 1, Sink: event.Discard})
	if err != nil {
		t.Fatal(err)
	}
	crossStart := clock.Start.Add(15 * time.Second)
	var firstLoss clock.Time
	sink := event.Func(func(ev *event.Event) {
		if ev.Kind == event.PacketLost && ev.Time.After(crossStart) && firstLoss == clock.Never {
			firstLoss = ev.Time
		}
	})
	s := New(db.Net, nil)
	gen, err := traffic.New("greedy", traffic.Env{Rand: traffic.Stream(1, "traffic/dca")})
	if err != nil {
		t.Fatal(err)
	}
	f := s.AddTCPFlow("dca", db.Senders[0], db.Receivers[0], gen.(traffic.StreamGen),
		transport.Config{CC: "dca:reduction=0.5", Sink: sink}, clock.Start)
	cbr, err := traffic.New("cbr:rate=9.5Mbit,size=1200,start=15s", traffic.Env{Rand: traffic.Stream(1, "traffic/cbr")})
	if err != nil {
		t.Fatal(err)
	}
	s.AddUDPFlow("cbr", db.Senders[1], db.Receivers[1], 10000, cbr.(traffic.DatagramGen), clock.Start)
	var decisions []ccalgo.DCADecision
	var qlen []int // bottleneck queue (packets) at each decision
	traced := false
	for e.Now() < clock.Start.Add(40*time.Second) {
		e.RunFor(10 * time.Millisecond)
		if !traced && f.Conn() != nil && f.Conn().Controller() != nil {
			d, ok := f.Conn().Controller().(*ccalgo.DCA)
			if !ok {
				t.Fatalf("controller %T, want *ccalgo.DCA", f.Conn().Controller())
			}
			d.SetTrace(func(x ccalgo.DCADecision) {
				decisions = append(decisions, x)
				qlen = append(qlen, db.Forward.Queue().Len())
			})
			traced = true
		}
		if firstLoss != clock.Never {
			break
		}
	}
	var react *ccalgo.DCADecision
	q := 0
	for i := range decisions {
		d := &decisions[i]
		if d.Reacted && d.Now.After(crossStart) {
			react, q = d, qlen[i]
			break
		}
	}
	if react == nil {
		t.Fatalf("no DCA reaction after the cross traffic began (%d decisions traced, first loss at %v)", len(decisions), sec(firstLoss))
	}
	if firstLoss != clock.Never && !react.Now.Before(firstLoss) {
		t.Errorf("DCA reacted at %.3f s, first loss at %.3f s: want the reaction before the loss", sec(react.Now), sec(firstLoss))
	}
	// The build-up: the queue at the reaction exceeds the largest queue the
	// DCA flow had built by itself in the 5 s before the cross traffic.
	qBefore := 0
	for i, d := range decisions {
		if d.Now.After(crossStart.Add(-5*time.Second)) && d.Now.Before(crossStart) {
			qBefore = max(qBefore, qlen[i])
		}
	}
	if q <= qBefore {
		t.Errorf("queue at the reaction got %d packets, want a build-up above the %d the flow kept alone", q, qBefore)
	}
	if drops := db.Forward.Stats().TotalDrops(); drops != 0 && firstLoss == clock.Never {
		t.Errorf("bottleneck dropped %d packets but the flow saw no loss", drops)
	}
	if !react.Congested || react.SampledRTT <= react.WindowAvg+react.Threshold {
		t.Errorf("reaction without the DCA condition: sampledRTT %v windowAvg %v threshold %v", react.SampledRTT, react.WindowAvg, react.Threshold)
	}
	if want := react.CwndBefore - react.CwndBefore/2; react.CwndAfter > want+1 || react.CwndAfter < want-int(float64(react.CwndBefore)*0.01)-1 {
		t.Errorf("reaction cwnd %d -> %d, want halved (reduction 0.5)", react.CwndBefore, react.CwndAfter)
	}
	t.Logf("cross traffic at 15 s; DCA reacted at %.3f s with %d packets queued (at most %d before the cross traffic; sampledRTT %v > windowAvg %v + sd %v, cwnd %d -> %d); first loss after the cross traffic at %.3f s (-1: none; run ended at %.0f s)",
		sec(react.Now), q, qBefore, react.SampledRTT, react.WindowAvg, react.Threshold, react.CwndBefore, react.CwndAfter, sec(firstLoss), sec(e.Now()))
}

func sec(t clock.Time) float64 {
	if t == clock.Never {
		return -1
	}
	return t.Sub(clock.Start).Seconds()
}

func itoa(n int) string {
	b := []byte{}
	for n >= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	return string(append([]byte{byte('0' + n)}, b...))
}
