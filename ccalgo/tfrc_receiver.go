package ccalgo

import (
	"math"
	"time"

	"cclab/clock"
)

// TFRC receiver constants (RFC 5348 §5).
const (
	// TFRCNDupAck is NDUPACK of RFC 5348 §5.1: a packet is lost once this
	// many packets with higher sequence numbers have arrived.
	TFRCNDupAck = 3
	// TFRCLossIntervals is n of RFC 5348 §5.4, the loss intervals averaged.
	TFRCLossIntervals = 8
	// tfrcMaxHoles bounds the sequence gaps the receiver tracks at once;
	// beyond it the oldest gap is declared lost at once.
	tfrcMaxHoles = 64
)

// TFRCWeights are the weights w_0..w_7 of the average loss interval (RFC 5348
// §5.4): 1, 1, 1, 1, 0.8, 0.6, 0.4, 0.2.
var TFRCWeights = [TFRCLossIntervals]float64{1, 1, 1, 1, 0.8, 0.6, 0.4, 0.2}

// hole is a run lo..hi of missing sequence numbers with the packets that
// bound it (for the interpolated loss time of RFC 5348 §5.2) and the number
// of packets that arrived above it since.
type hole struct {
	lo, hi uint64
	sB, sA uint64     // sequence numbers before and after the gap
	tB, tA clock.Time // their arrival times
	above  int        // packets arrived above the gap
}

// TFRCReceiver is the receiver side of TFRC (RFC 5348 §5-§6) as CCID3 uses
// it (RFC 4342 §6): it detects losses (a packet missing with TFRCNDupAck
// later packets received; an ECN-CE mark counts as a loss at its arrival),
// groups losses into loss events (a lost packet whose interpolated loss
// time is more than one RTT after the start of the current event starts a
// new one; R is the sender's estimate carried in data packets), keeps the
// history of loss intervals and computes the loss event rate p = 1/I_mean
// with the weights TFRCWeights. The first loss interval is synthesized from
// the receive rate (§6.3.1). It reports X_recv and p once per RTT and at
// once on a new loss event.
//
// Not implemented: the history discounting of §5.5 (optional).
type TFRCReceiver struct {
	r        time.Duration // the sender's RTT estimate R_m, latest
	sMean    float64       // mean packet size, bytes (EWMA 1/8)
	any      bool
	hi       uint64
	hiAt     clock.Time
	received uint64
	holes    []hole

	evAny bool
	evSeq uint64     // first packet of the current loss event
	evAt  clock.Time // its loss time
	hist  [TFRCLossIntervals]float64
	nHist int // closed intervals in hist (hist[0] = I_1, the newest)
	p     float64
	evN   uint64

	bytesSince uint64 // since the last feedback
	pktsSince  uint64
	lastFb     clock.Time
	fbAt       clock.Time
	fbDue      bool
}

// NewTFRCReceiver returns a receiver with no history.
func NewTFRCReceiver() *TFRCReceiver {
	return &TFRCReceiver{lastFb: clock.Never, fbAt: clock.Never, holes: make([]hole, 0, 8)}
}

// LossEventRate returns p (0 before the first loss event).
func (t *TFRCReceiver) LossEventRate() float64 { return t.p }

// LossEvents returns the number of loss events detected.
func (t *TFRCReceiver) LossEvents() uint64 { return t.evN }

// Intervals returns the closed loss intervals, newest first, packets.
func (t *TFRCReceiver) Intervals() []float64 { return t.hist[:t.nHist] }

// Deadline returns when feedback is due (the feedback timer, or now after a
// new loss event); Never when no data arrived since the last report.
func (t *TFRCReceiver) Deadline() clock.Time {
	if t.pktsSince == 0 {
		return clock.Never
	}
	if t.fbDue {
		return t.hiAt
	}
	return t.fbAt
}

// FeedbackDue reports whether a report should be sent at now.
func (t *TFRCReceiver) FeedbackDue(now clock.Time) bool {
	return t.pktsSince > 0 && (t.fbDue || (t.fbAt != clock.Never && !now.Before(t.fbAt)))
}

// OnData handles one data packet: sequence number seq, size bytes, whether
// it was CE-marked, and the sender's RTT estimate carried in it (0: none).
// It returns true when a report should go out at once (first packet, or a
// new loss event: RFC 5348 §6.1, §6.3).
func (t *TFRCReceiver) OnData(now clock.Time, seq uint64, size int, ce bool, rtt time.Duration) bool {
	if rtt > 0 {
		t.r = rtt
	}
	if t.sMean == 0 {
		t.sMean = float64(size)
	} else {
		t.sMean += (float64(size) - t.sMean) / 8
	}
	t.bytesSince += uint64(size)
	t.pktsSince++
	if !t.any {
		t.any, t.hi, t.hiAt = true, seq, now
		t.received++
		t.fbDue = true
		return true
	}
	newEv := false
	switch {
	case seq > t.hi:
		for i := range t.holes {
			t.holes[i].above++
		}
		if seq > t.hi+1 {
			if len(t.holes) == tfrcMaxHoles {
				h := t.holes[0]
				t.holes = t.holes[:copy(t.holes, t.holes[1:])]
				newEv = t.lost(h) || newEv
			}
			t.holes = append(t.holes, hole{lo: t.hi + 1, hi: seq - 1, sB: t.hi, tB: t.hiAt, sA: seq, tA: now, above: 1})
		}
		t.hi, t.hiAt = seq, now
	case !t.fill(seq):
		return false // duplicate, or too late (already declared lost)
	}
	t.received++
	for len(t.holes) > 0 && t.holes[0].above >= TFRCNDupAck {
		h := t.holes[0]
		t.holes = t.holes[:copy(t.holes, t.holes[1:])]
		newEv = t.lost(h) || newEv
	}
	if ce {
		newEv = t.lossAt(seq, now) || newEv
	}
	if t.evAny {
		t.p = t.lossEventRate()
	}
	if !t.fbDue && t.fbAt == clock.Never && t.r > 0 {
		t.fbAt = max(t.lastFb.Add(t.r), now)
	}
	if newEv {
		t.fbDue = true
	}
	return newEv
}

// fill removes seq from the gap it belongs to (a reordered arrival) and
// counts it above the gaps below it; false if seq is in no gap.
func (t *TFRCReceiver) fill(seq uint64) bool {
	for i := range t.holes {
		h := &t.holes[i]
		if seq < h.lo {
			return false
		}
		if seq > h.hi {
			continue
		}
		for j := range t.holes[:i] {
			t.holes[j].above++
		}
		switch {
		case h.lo == h.hi:
			t.holes = append(t.holes[:i], t.holes[i+1:]...)
		case seq == h.lo:
			h.lo++
		case seq == h.hi:
			h.hi--
		default: // split: the upper part has seq above it
			up := *h
			up.lo = seq + 1
			h.hi = seq - 1
			h.above++
			t.holes = append(t.holes, hole{})
			copy(t.holes[i+2:], t.holes[i+1:])
			t.holes[i+1] = up
		}
		return true
	}
	return false
}

// lost declares every packet of h lost, in sequence order, with the
// interpolated loss times of RFC 5348 §5.2; it reports a new loss event.
func (t *TFRCReceiver) lost(h hole) bool {
	newEv := false
	span, dt := float64(h.sA-h.sB), float64(h.tA.Sub(h.tB))
	at := func(s uint64) clock.Time { return h.tB.Add(time.Duration(dt * float64(s-h.sB) / span)) }
	for s := h.lo; s <= h.hi; {
		if t.lossAt(s, at(s)) {
			newEv = true
			s++
			continue
		}
		if s <= t.evSeq { // below a CE mark that opened the event
			s = t.evSeq + 1
			continue
		}
		// The next packet whose loss time is more than R after the event's start.
		if dt <= 0 || t.r <= 0 {
			break
		}
		off := float64(t.evAt.Add(t.r).Sub(h.tB)) * span / dt
		next := s + 1
		if off >= 0 && off < span {
			next = max(next, h.sB+uint64(off)+1)
		} else if off >= span {
			break // every packet left in the gap is within R of the event's start
		}
		s = next
	}
	return newEv
}

// lossAt records a lost (or CE-marked) packet seq with loss time at; it
// starts a new loss event if none is open or at is more than R after the
// current event began (RFC 5348 §5.2), and reports whether it did.
func (t *TFRCReceiver) lossAt(seq uint64, at clock.Time) bool {
	if t.evAny && (seq <= t.evSeq || at.Sub(t.evAt) <= t.r) {
		return false
	}
	if !t.evAny {
		t.hist[0] = t.firstInterval()
		t.nHist = 1
	} else {
		copy(t.hist[1:], t.hist[:TFRCLossIntervals-1])
		t.hist[0] = float64(seq - t.evSeq)
		t.nHist = min(t.nHist+1, TFRCLossIntervals)
	}
	t.evAny, t.evSeq, t.evAt = true, seq, at
	t.evN++
	return true
}

// firstInterval synthesizes the first loss interval (RFC 5348 §6.3.1): 1/p
// for the p at which the throughput equation gives the receive rate seen
// so far. Without an RTT or a rate it is the packets received so far.
func (t *TFRCReceiver) firstInterval() float64 {
	x := t.recvRate(t.hiAt)
	if t.r <= 0 || x <= 0 || t.sMean <= 0 {
		return float64(max(t.received, 1))
	}
	// TFRCThroughput falls as p grows: bisect p in (0, 1].
	lo, hi := 1e-9, 1.0
	if TFRCThroughput(t.sMean, t.r, lo) <= x {
		return 1 / lo
	}
	if TFRCThroughput(t.sMean, t.r, hi) >= x {
		return 1
	}
	for range 60 {
		mid := math.Sqrt(lo * hi)
		if TFRCThroughput(t.sMean, t.r, mid) > x {
			lo = mid
		} else {
			hi = mid
		}
	}
	return 1 / math.Sqrt(lo*hi)
}

// lossEventRate is p = 1/I_mean of RFC 5348 §5.4 over the open interval I_0
// and the k closed ones: I_mean = max(I_tot0, I_tot1)/W_tot.
func (t *TFRCReceiver) lossEventRate() float64 {
	i0 := float64(t.hi + 1 - t.evSeq) // packets since the current event began
	k := t.nHist
	var tot0, tot1, wTot float64
	for i := range k {
		in := i0
		if i > 0 {
			in = t.hist[i-1]
		}
		tot0 += in * TFRCWeights[i]
		tot1 += t.hist[i] * TFRCWeights[i]
		wTot += TFRCWeights[i]
	}
	mean := max(tot0, tot1) / wTot
	if mean <= 0 {
		return 1
	}
	return min(1, 1/mean)
}

// recvRate is the receive rate since the last report, bytes/s, over at
// least one RTT (as Linux does after the RFC 4342 errata 610/611).
func (t *TFRCReceiver) recvRate(now clock.Time) float64 {
	d := time.Duration(0)
	if t.lastFb != clock.Never {
		d = now.Sub(t.lastFb)
	}
	d = max(d, t.r)
	if d <= 0 {
		return 0
	}
	return float64(t.bytesSince) / d.Seconds()
}

// Feedback returns the report to send at now (X_recv in bytes/s and p) and
// restarts the feedback timer for one RTT (RFC 5348 §6.2).
func (t *TFRCReceiver) Feedback(now clock.Time) (xRecv, p float64) {
	xRecv = t.recvRate(now)
	t.bytesSince, t.pktsSince = 0, 0
	t.lastFb = now
	t.fbDue = false
	t.fbAt = clock.Never
	if t.r > 0 {
		t.fbAt = now.Add(t.r)
	}
	return xRecv, t.p
}
