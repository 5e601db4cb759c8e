package campaign

import (
	"cmp"
	"math"
	"slices"
	"sort"
	"time"

	"cclab/report/studies"
)

// The buffer counted from a probe's own transmissions (docs/campaigns.md,
// "Probing"). Its queueing delay (RTT − min RTT) carries whatever the
// hosts add: a sender, relay or receiver that a loaded host stalls for
// 30-60 ms returns ACKs late, and a second link of the bottleneck's rate
// behind it (the receiver's access link inside a continent) queues the
// bursts the first one's timing lets through. The count below reads only
// the sender's send instants, the losses and the rate: a drop-tail queue
// is full, B packets, whenever it drops, and it holds what entered it
// less what the bottleneck drained.
const (
	// BufferSlack: a probe whose replayed queue (queueAtSends) kept a
	// packet with more than BufferSlack times the counted buffer held did
	// not overflow it (a drop-tail queue drops the packet it cannot
	// hold): the count is a bound.
	BufferSlack = 1.3
	// OverflowLossRatio: a buffer is measured when transmissions finding
	// the queue at least OverflowShare full were lost at least this many
	// times as often as those finding it less than half full (random
	// loss is the same at any queue; a full drop-tail queue drops a third
	// of a probe sent at gain 1.5). Not twice as often: a timeout's
	// retransmissions and the burst after a sender stall lose packets the
	// replay finds at a low queue, and in the multi-host test (loss
	// detected by timeouts 901 times in 922 in one probe) twice turned 6
	// of 12 buffers into bounds, 5 of them within ±8 % of the truth; the
	// twelve probes of one run showed 0.95 to 24 times (the 0.95 one a
	// bound, its count within 5 % of the truth).
	OverflowLossRatio = 1.2
)

// queueAtSends replays the transmissions (sentAt, in order; lost: those
// sent again later) through a queue drained at rate packets per second,
// busy whenever it holds one: before each transmission it drains by rate
// times the time since the last one (never below empty); a transmission
// lost adds nothing (dropped there or lost on the way), any
// other one packet. It returns the queue each transmission found.
func queueAtSends(sentAt []time.Duration, lost []bool, rate float64) []float64 {
	qs := make([]float64, len(sentAt))
	q, prev := 0.0, time.Duration(0)
	for i, at := range sentAt {
		if i > 0 && at > prev {
			q = max(0, q-rate*(at-prev).Seconds())
		}
		prev = max(prev, at)
		qs[i] = q
		if !lost[i] {
			q++
		}
	}
	return qs
}

// countedBuffer estimates a probe's bottleneck buffer, packets, from its
// transmissions at the bottleneck's rate (packets per second): the median
// of the queues the losses found at their fullest (those at least
// ProbePlateau times the ProbeQueueQuantile of all the losses' queues),
// the losses finding at least OverflowShare of it (overflows), and
// whether the transmissions show a drop-tail overflow (BufferSlack,
// OverflowLossRatio); without one the buffer is a bound: at least the
// largest queue kept.
func countedBuffer(sentAt []time.Duration, lost []bool, rate float64) (buffer float64, overflows int, overflowed bool) {
	if rate <= 0 || len(sentAt) != len(lost) {
		return 0, 0, false
	}
	qs := queueAtSends(sentAt, lost, rate)
	var atLoss []float64
	kept := 0.0
	for i, q := range qs {
		if lost[i] {
			atLoss = append(atLoss, q)
		} else {
			kept = max(kept, q+1)
		}
	}
	if len(atLoss) == 0 {
		return kept, 0, false
	}
	top := ProbePlateau * studies.Quantile(atLoss, ProbeQueueQuantile)
	var plateau []float64
	for _, q := range atLoss {
		if q >= top {
			plateau = append(plateau, q)
		}
	}
	buffer = studies.Quantile(plateau, 0.5)
	var fullSent, fullLost, lowSent, lowLost int
	for i, q := range qs {
		switch {
		case q >= OverflowShare*buffer:
			fullSent++
			if lost[i] {
				fullLost++
				overflows++
			}
		case q < buffer/2:
			lowSent++
			if lost[i] {
				lowLost++
			}
		}
	}
	lossFull := float64(fullLost) / float64(max(fullSent, 1))
	lossLow := float64(lowLost) / float64(max(lowSent, 1))
	overflowed = buffer > 0 && kept <= BufferSlack*buffer && lossFull >= OverflowLossRatio*lossLow
	if !overflowed {
		return max(kept, buffer), overflows, false
	}
	return buffer, overflows, true
}

// delayAtSends returns for each transmission (sentAt) the queueing delay
// (RTT − minRTT) that the packets sent within w of it met: the median of
// the RTT samples whose packets were sent then (a sample taken at at of
// rtt was sent at at − rtt), or −1 when no sample was.
func delayAtSends(sentAt []time.Duration, rtts []rttSample, minRTT, w time.Duration) []time.Duration {
	type sent struct{ at, q time.Duration }
	ss := make([]sent, len(rtts))
	for i, s := range rtts {
		ss[i] = sent{s.at - s.rtt, max(s.rtt-minRTT, 0)}
	}
	slices.SortFunc(ss, func(a, b sent) int { return cmp.Compare(a.at, b.at) })
	out := make([]time.Duration, len(sentAt))
	var qs []float64
	for i, at := range sentAt {
		j := sort.Search(len(ss), func(k int) bool { return ss[k].at >= at-w })
		qs = qs[:0]
		for ; j < len(ss) && ss[j].at <= at+w; j++ {
			qs = append(qs, float64(ss[j].q))
		}
		out[i] = -1
		if len(qs) > 0 {
			out[i] = time.Duration(studies.Quantile(qs, 0.5))
		}
	}
	return out
}

// The delay side of a counted buffer (docs/campaigns.md, "Probing"). A
// count can pass countedBuffer's overflow test without an overflow: a
// Gilbert-Elliott loss burst while the queue is part full loses a run of
// packets at one queue, which then reads as the fullest (a clean-clone CI
// run at load 1: 114 packets [114, 124] against 200), and a timeout's
// retransmissions of a window that was delivered take packets out of the
// count, which then finds every later overflow below the buffer (a
// simulated probe of the multi-host test's inter-continental path: 102
// packets against 200). A drop-tail queue drops only when full, so the
// packets sent beside its drops met its full queueing delay, the same at
// every drop: tailDrop checks that in the RTT samples.
const (
	// ProbeTrainPackets: a probe's transmissions are cut into trains of
	// this many, in their order; the overflows of a drop-tail queue come
	// in every train while the queue is full (a probe at gain 1.5 loses a
	// third of it), a loss burst in one or two.
	ProbeTrainPackets = 64
	// ProbeTrains is the least number of trains whose overflow losses
	// met the full queue's delay for a count to be measured.
	ProbeTrains = 3
	// ProbePlateauShare is the least share of the trains with an overflow
	// loss whose losses met the full queue's delay. Not most of them: on a
	// loaded host the stalls that hold ACKs back raise the RTT plateau
	// above the full queue's delay (77 ms against 49 ms on one
	// intra-continental probe of the multi-host test at load 22-26), and
	// the overflows of the other trains then fall below it (5 of 10
	// trains at it, the count 76 packets against 100).
	ProbePlateauShare = 1.0 / 3
	// ProbeDelayWindow: the queueing delay at a transmission is the median
	// of the RTT samples of the packets sent within this many packet
	// times (at the rate) of it.
	ProbeDelayWindow = 4
	// ProbeHeldMeasured and ProbePlateauFlat: a train holds the full
	// queue's delay when the median delay of its transmissions whose delay
	// was measured, at least ProbeHeldMeasured of them, is within
	// ProbePlateauFlat of it. Measured ones, not all: after a timeout
	// resends the flight, Karn's rule leaves most of an RTT's
	// transmissions without a sample (a probe of the multi-host test,
	// its queue full at 195 ms in 9 trains with losses, had held it in 1
	// by half of all 64). Within ±5 %: a full queue is flat, while a ramp
	// at gain 1.5 rises by about 21 packets a train and passes through
	// that band of a 200-packet plateau in about one.
	ProbeHeldMeasured = ProbeTrainPackets / 4
	ProbePlateauFlat  = 0.05
	// BufferAgreement: a count and the queueing delay at its overflows
	// (in packets at the rate) agree within this share; otherwise the
	// buffer is stated with an interval holding both.
	BufferAgreement = 0.2
)

// tailDrop is the delay side of a counted buffer: at is the queueing
// delay at its overflow losses (the median over the trains with one of
// their trains' medians), in packets at the rate; trains the trains with
// an overflow loss whose packets were sent with a measured delay, and
// atPlateau those whose median delay at the losses was at least
// OverflowShare of the full queue's (the RTT plateau).
type tailDrop struct {
	at                float64
	trains, atPlateau int
	// atCount counts the trains with a loss that found the replayed
	// queue at the count or above: a drop-tail queue holds the count
	// through every train once full, a queue still rising when the probe
	// ended reaches it in its last.
	atCount int
}

// confirmed reports whether the overflows came at the full queue's delay
// in at least ProbeTrains trains and in at least ProbePlateauShare of the
// trains with one (not mostly losses at lower delays: those were no
// overflows).
func (d tailDrop) confirmed() bool {
	return d.atPlateau >= ProbeTrains && float64(d.atPlateau) >= ProbePlateauShare*float64(d.trains) && d.atCount >= ProbeTrains
}

// checkTailDrop returns the delay side of the count buffer (packets,
// counted at rate packets per second) of a probe's trace: the overflow
// losses are the transmissions sent again (t.resent) that found the
// replayed queue at least OverflowShare of buffer, their delay
// (delayAtSends) against plateau, the full queue's queueing delay.
func checkTailDrop(t traceEstimate, minRTT time.Duration, rate, buffer float64, plateau time.Duration) tailDrop {
	var d tailDrop
	if rate <= 0 || buffer <= 0 || len(t.sentAt) != len(t.resent) {
		return d
	}
	qs := queueAtSends(t.sentAt, t.resent, rate)
	ds := delayAtSends(t.sentAt, t.rtts, minRTT, time.Duration(ProbeDelayWindow/rate*float64(time.Second)))
	byTrain := map[int][]float64{}
	atCount := map[int]bool{}
	for i, q := range qs {
		// A transmission sent again whose retransmission was found
		// spurious arrived: no drop, whatever queue it found.
		dropped := t.resent[i] && (len(t.arrived) != len(qs) || !t.arrived[i])
		if dropped && q >= buffer {
			atCount[i/ProbeTrainPackets] = true
		}
		if dropped && q >= OverflowShare*buffer && ds[i] >= 0 {
			byTrain[i/ProbeTrainPackets] = append(byTrain[i/ProbeTrainPackets], float64(ds[i]))
		}
	}
	var meds []float64
	for _, ds := range byTrain {
		m := studies.Quantile(ds, 0.5)
		meds = append(meds, m)
		if m >= OverflowShare*float64(plateau) {
			d.atPlateau++
		}
	}
	d.trains, d.atCount = len(meds), len(atCount)
	if len(meds) > 0 {
		d.at = studies.Quantile(meds, 0.5) / float64(time.Second) * rate
	}
	return d
}

// The buffer from the queueing delay at a probe's losses alone
// (docs/campaigns.md, "Probing"). A count fails its own overflow test when
// transmissions of packets that were delivered are sent again: a timeout
// resends everything outstanding, the count takes each as dropped, and its
// replayed queue falls below the real one, so the later overflows seem to
// come at part-full queues and the low queues seem as lossy as the full
// one (three probes of the multi-host test counted 110-119 packets of
// 200 with 570-605 transmissions sent again, their RTT plateaus worth
// 177-204 packets). The RTT samples do not depend on what was sent again:
// a drop-tail queue drops only at its full queue's delay, so when the
// losses come at that delay in enough trains, and there far more often
// than at under half of it, the buffer is that delay at the rate.

// delayTail is the delay side of a probe on its own: trains the trains
// of ProbeTrainPackets transmissions with a loss (a transmission sent
// again and not found spurious) whose delay was measured, atPlateau those
// with a loss at least OverflowShare of the full queue's delay, lost those
// losses, and lossFull and lossLow the loss rates of the transmissions
// sent at that delay and at under half of it.
type delayTail struct {
	trains, atPlateau, lost int
	lossFull, lossLow       float64
	// held counts the trains whose measured transmissions were sent at
	// the full queue's delay (ProbeHeldMeasured, ProbePlateauFlat): a
	// drop-tail queue, once full,
	// holds that delay through whole trains while the probe outpaces it;
	// the top of a ramp that ended before the queue filled, or a few
	// stalls, hold it for less (two simulated probes whose RTT plateau
	// was worth 162 and 169 packets of 200 held it in 2 and 1 trains,
	// six that were full in 4 to 9).
	held int
}

// confirmed reports whether the losses show a drop-tail overflow in delay
// alone: the full queue's delay held through at least ProbeTrains trains,
// the losses at that delay in at least ProbeTrains trains and
// ProbePlateauShare of those with a loss, at least OverflowLosses of them,
// and lost at least OverflowLossRatio times as often there as at under
// half the delay (random loss is the same at any delay).
func (d delayTail) confirmed() bool {
	return d.held >= ProbeTrains && d.atPlateau >= ProbeTrains && float64(d.atPlateau) >= ProbePlateauShare*float64(d.trains) &&
		d.lost >= OverflowLosses && d.lossFull > 0 && d.lossFull >= OverflowLossRatio*d.lossLow
}

// checkDelayTail returns the delay side of a probe's trace at rate
// packets per second whose full queue's queueing delay is plateau: each
// transmission's delay (delayAtSends) against plateau.
func checkDelayTail(t traceEstimate, minRTT time.Duration, rate float64, plateau time.Duration) delayTail {
	var d delayTail
	if rate <= 0 || plateau <= 0 || len(t.sentAt) != len(t.resent) {
		return d
	}
	ds := delayAtSends(t.sentAt, t.rtts, minRTT, time.Duration(ProbeDelayWindow/rate*float64(time.Second)))
	trains, full, measured := map[int]bool{}, map[int]bool{}, map[int][]float64{}
	var fullSent, lowSent, lowLost int
	for i, q := range ds {
		if q < 0 {
			continue
		}
		measured[i/ProbeTrainPackets] = append(measured[i/ProbeTrainPackets], float64(q))
		dropped := t.resent[i] && (len(t.arrived) != len(ds) || !t.arrived[i])
		if dropped {
			trains[i/ProbeTrainPackets] = true
		}
		switch {
		case float64(q) >= OverflowShare*float64(plateau):
			fullSent++
			if dropped {
				d.lost++
				full[i/ProbeTrainPackets] = true
			}
		case q < plateau/2:
			lowSent++
			if dropped {
				lowLost++
			}
		}
	}
	d.trains, d.atPlateau = len(trains), len(full)
	for _, qs := range measured {
		if len(qs) >= ProbeHeldMeasured && math.Abs(studies.Quantile(qs, 0.5)/float64(plateau)-1) <= ProbePlateauFlat {
			d.held++
		}
	}
	d.lossFull = float64(d.lost) / float64(max(fullSent, 1))
	d.lossLow = float64(lowLost) / float64(max(lowSent, 1))
	return d
}
