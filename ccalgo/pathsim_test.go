package ccalgo

import (
	"testing"
	"time"

	"cclab/clock"
)

// pathResult summarises a run of one controller through pathModel.
type pathResult struct {
	util       float64 // delivered packets / (rate * duration)
	meanQueue  float64 // mean queue length seen by arrivals in the second half, packets
	drops      int
	firstDrop  clock.Time
	lossEvents int
}

// pathModel is a deliberately small, deterministic model of one flow through
// a DropTail bottleneck, used to check each controller's dynamics end to end
// (not a substitute for the simulator): the sender is ACK-clocked and limited
// by cwnd (by ssthresh while in recovery), the bottleneck serves rate
// packets/s from a FIFO of limit packets, every packet is acknowledged
// individually after the base RTT plus its queueing delay, a drop is noticed
// when a later packet's ACK arrives (one congestion signal per window: the
// NewReno recovery point), and dropped data is not retransmitted (the
// transport's business).
func pathModel(t *testing.T, c Controller, rate float64, base time.Duration, limit int, dur time.Duration) pathResult {
	t.Helper()
	type pkt struct {
		seq     uint64 // packet number
		sent    clock.Time
		ackAt   clock.Time
		dropped bool
	}
	serv := time.Duration(float64(time.Second) / rate)
	start := clock.Start
	now := start
	end := start.Add(dur)
	var (
		inflight     []pkt // FIFO in send order; ACK times are monotonic (FIFO queue, fixed delay)
		departs      []clock.Time
		lastDep      clock.Time
		next         uint64
		delivered    int
		res          pathResult
		qSum, qN     float64
		inRec        bool
		recPoint     uint64
		pendingDrops int
		srtt         time.Duration
	)
	send := func() {
		lim := c.Cwnd()
		if inRec {
			lim = c.Ssthresh()
		}
		for len(inflight)*testMSS < lim {
			for len(departs) > 0 && !departs[0].After(now) {
				departs = departs[1:]
			}
			q := len(departs)
			if now.Sub(start) > dur/2 {
				qSum += float64(q)
				qN++
			}
			p := pkt{seq: next, sent: now}
			next++
			c.OnSent(now, testMSS, (len(inflight)+1)*testMSS)
			if q >= limit {
				p.dropped = true
				res.drops++
				if res.firstDrop == clock.Never {
					res.firstDrop = now
				}
				// The drop is noticed when the next packet's ACK comes back.
			} else {
				dep := clock.Time(max(int64(now), int64(lastDep))).Add(serv)
				lastDep = dep
				departs = append(departs, dep)
				p.ackAt = dep.Add(base)
			}
			inflight = append(inflight, p)
		}
	}
	send()
	for now.Before(end) && len(inflight) > 0 {
		// Next ACK: the first non-dropped packet in flight.
		i := 0
		for i < len(inflight) && inflight[i].dropped {
			i++
		}
		if i == len(inflight) {
			// Everything in flight was dropped: a timeout.
			now = now.Add(time.Second)
			c.OnRTO(now, len(inflight)*testMSS)
			inflight = inflight[:0]
			inRec = false
			send()
			continue
		}
		p := inflight[i]
		now = p.ackAt
		pendingDrops += i
		inflight = append(inflight[:0], inflight[i+1:]...)
		delivered++
		rtt := now.Sub(p.sent)
		if srtt == 0 {
			srtt = rtt
		} else {
			srtt = (7*srtt + rtt) / 8
		}
		flight := (len(inflight) + pendingDrops) * testMSS
		if pendingDrops > 0 && !inRec {
			c.OnCongestion(Congestion{Now: now, Kind: Loss, InFlight: flight + testMSS, SndNxt: next * testMSS})
			inRec, recPoint = true, next
			res.lossEvents++
		}
		pendingDrops = 0
		if inRec && p.seq >= recPoint {
			c.OnRecoveryExit(now, len(inflight)*testMSS)
			inRec = false
		}
		c.OnAck(Ack{Now: now, Acked: testMSS, AckedPackets: 1, RTT: rtt, SRTT: srtt,
			InFlight: len(inflight) * testMSS, CumAck: (p.seq + 1) * testMSS, SndNxt: next * testMSS,
			InRecovery: inRec})
		send()
	}
	res.util = float64(delivered) / (rate * now.Sub(start).Seconds())
	if qN > 0 {
		res.meanQueue = qSum / qN
	}
	return res
}

// TestPathModel runs each controller through the model: a 1000 packet/s
// bottleneck (9.6 Mbit/s at 1200 B), 50 ms base RTT (BDP 50 packets), a
// 100-packet DropTail queue, 60 s.
func TestPathModel(t *testing.T) {
	dur := 60 * time.Second
	if testing.Short() {
		dur = 20 * time.Second
	}
	const rate, limit = 1000.0, 100
	base := 50 * time.Millisecond
	run := func(spec string) (Controller, pathResult) {
		c, err := New(spec, Env{MSS: testMSS})
		if err != nil {
			t.Fatal(err)
		}
		return c, pathModel(t, c, rate, base, limit, dur)
	}
	var renoFirstDrop clock.Time
	for _, spec := range []string{"reno", "cubic"} {
		_, r := run(spec)
		t.Logf("%s: %+v", spec, r)
		if spec == "reno" {
			renoFirstDrop = r.firstDrop
		}
		if r.util < 0.85 {
			t.Errorf("%s: utilization got %.3f, want >= 0.85 with a 2xBDP buffer", spec, r.util)
		}
		if r.lossEvents == 0 {
			t.Errorf("%s: no loss events: a loss-based controller must fill the buffer", spec)
		}
	}
	// Vegas holds its own queue between alpha and beta packets. With the
	// round minimum (rtt=min) slow start overshoots (see
	// DefaultVegasConfig), so drops are only forbidden with the mean.
	for _, tc := range []struct {
		spec        string
		alpha, beta float64
		noDrops     bool
	}{{"vegas", 2, 4, true}, {"vegas:alpha=1,beta=3", 1, 3, true}, {"vegas:rtt=min", 2, 4, false}} {
		_, r := run(tc.spec)
		t.Logf("%s: %+v", tc.spec, r)
		if r.meanQueue < tc.alpha-0.5 || r.meanQueue > tc.beta+0.5 {
			t.Errorf("%s: steady-state queue got %.2f packets, want within [alpha, beta] = [%v, %v]", tc.spec, r.meanQueue, tc.alpha, tc.beta)
		}
		if tc.noDrops && r.drops != 0 {
			t.Errorf("%s: %d drops, want none (the queue never fills)", tc.spec, r.drops)
		}
		if r.util < 0.9 {
			t.Errorf("%s: utilization got %.3f, want >= 0.9", tc.spec, r.util)
		}
	}
	// DCA reacts to the queue build-up of slow start before the queue
	// overflows (Reno's first drop on the same path).
	for _, spec := range []string{"dca", "dca:reduction=0.125", "dca:x=6,w=20,decision=rtt", "dca:tick=10ms"} {
		c, err := New(spec, Env{MSS: testMSS})
		if err != nil {
			t.Fatal(err)
		}
		var first clock.Time
		c.(*DCA).SetTrace(func(dd DCADecision) {
			if dd.Reacted && first == clock.Never {
				first = dd.Now
			}
		})
		r := pathModel(t, c, rate, base, limit, dur)
		_, _, reactions, epochs := c.(*DCA).Counts()
		t.Logf("%s: %+v reactions %d epochs %d first reaction %v", spec, r, reactions, epochs, first)
		if first == clock.Never || !first.Before(renoFirstDrop) {
			t.Errorf("%s: first reaction at %v, want before the queue overflows (reno's first drop at %v)", spec, first, renoFirstDrop)
		}
	}
}
