package transport

import (
	"time"

	"cclab/ccalgo"
	"cclab/clock"
)

// pacing spaces a connection's data packets at its controller's pacing rate
// (ccalgo.Pacer). Each packet sent moves the next send time on by its
// transmission time at the rate; the next send time may run ahead of the
// clock by at most one send quantum (ccalgo.SendQuantum, bytes) less one
// packet, so a controller with a quantum of q bytes sends bursts of at most
// q bytes back to back and the average rate is the pacing rate exactly. A
// controller without a quantum is paced packet by packet. After an idle
// period the schedule restarts from now (no credit is saved up). The last
// packet's transmission time is taken at the rate in force when the next
// one is due (RFC 5348 §4.6 recomputes t_ipi from the current X), so a rate
// raised by a report takes effect at once.
type pacing struct {
	p    ccalgo.Pacer       // nil: no pacing
	q    ccalgo.SendQuantum // nil: one packet
	base clock.Time         // the schedule's instant of the last packet sent
	last int                // bytes of that packet (0: none)
	mss  int                // bytes of one full packet
}

// set takes the controller's pacing interfaces, if it has them.
func (pc *pacing) set(cc ccalgo.Controller, mss int) {
	pc.p, _ = cc.(ccalgo.Pacer)
	pc.q, _ = cc.(ccalgo.SendQuantum)
	pc.mss = mss
}

// slack is how far the schedule may run ahead of the clock.
func (pc *pacing) slack(rate float64) time.Duration {
	if pc.q == nil || rate <= 0 {
		return 0
	}
	q := pc.q.SendQuantum() - pc.mss
	if q <= 0 {
		return 0
	}
	return time.Duration(float64(q) * 8 / rate * 1e9)
}

// at returns the instant from which a packet may be sent (clock.Never's
// opposite: the past when not pacing). Without a pacer it is inlined.
func (pc *pacing) at() clock.Time {
	if pc.p == nil {
		return 0
	}
	return pc.pacedAt()
}

// pacedAt is at for a controller that paces.
func (pc *pacing) pacedAt() clock.Time {
	rate := pc.p.PacingRate()
	if rate <= 0 {
		return 0
	}
	return pc.next(rate).Add(-pc.slack(rate))
}

// next is the schedule's instant for the next packet at rate.
func (pc *pacing) next(rate float64) clock.Time {
	return pc.base.Add(time.Duration(float64(pc.last) * 8 / rate * 1e9))
}

// blocked reports whether the schedule holds the next packet back at now.
func (pc *pacing) blocked(now clock.Time) bool { return now.Before(pc.at()) }

// sent moves the schedule on by one packet of bytes sent at now.
func (pc *pacing) sent(now clock.Time, bytes int) {
	if pc.p == nil {
		return
	}
	if rate := pc.p.PacingRate(); rate > 0 {
		pc.base = max(pc.next(rate), now)
		pc.last = bytes
	}
}

// reset restarts the schedule at now (after a timeout).
func (pc *pacing) reset(now clock.Time) { pc.base, pc.last = now, 0 }
