package campaign

import (
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
