package transport

import (
	"math"
	"time"

	"cclab/ccalgo"
	"cclab/clock"
)

// The datagram mode's hooks for rate-based control (docs/dccp.md "CCID3"):
// pacing at the controller's rate, and TFRC (RFC 5348, as CCID3 of RFC 4342
// uses it). A sender whose controller is a ccalgo.TFRCSender puts its RTT
// estimate in a TFRC section of every data packet (instead of the Ack
// Ratio, which CCID3 does not use); a receiver that sees such packets runs a
// ccalgo.TFRCReceiver, acknowledges only with its reports (once per RTT, and
// at once on a new loss event: RFC 4342 §6) and puts X_recv and p in the
// TFRC section of those acknowledgements.

// maxTFRCRTT bounds the RTT estimate carried on the wire, µs, so the data
// packet's TFRC word fits the four bytes the Ack Ratio varint it replaces
// would take (maxDgramOverhead).
const maxTFRCRTT = 1<<29 - 1

// dgramTFRC is a datagram connection's TFRC state.
type dgramTFRC struct {
	tx        ccalgo.TFRCSender    // the sender's controller when it is rate-based
	rx        *ccalgo.TFRCReceiver // the receiver's state once the peer sends TFRC data
	rateBound bool                 // data waited on the rate since the last report (not data-limited)
	busy      bool                 // data sent since the no-feedback timer was last set
}

// hasData reports whether data waits to be sent.
func (c *DgramConn) hasData() bool { return c.sq.n > 0 || (c.src != nil && c.cfg.Rate == 0) }

// tfrcDeadline is the earliest instant the pacing schedule, the receiver's
// report or the no-feedback timer needs control.
func (c *DgramConn) tfrcDeadline() clock.Time {
	d := clock.Never
	if at := c.pace.at(); at > c.lastNow && c.hasData() {
		d = at
	}
	if c.tf.rx != nil {
		d = clock.Earliest(d, c.tf.rx.Deadline())
	}
	if c.tf.tx != nil {
		d = clock.Earliest(d, c.tf.tx.NoFeedbackDeadline())
	}
	return d
}

// tfrcTimers runs the receiver's report timer and the sender's no-feedback
// timer at now.
func (c *DgramConn) tfrcTimers(now clock.Time) {
	if c.tf.rx != nil && c.tf.rx.FeedbackDue(now) {
		c.ackDue, c.ackNow = true, true
	}
	if c.tf.tx != nil {
		if at := c.tf.tx.NoFeedbackDeadline(); at != clock.Never && !now.Before(at) {
			c.tf.tx.OnNoFeedback(now, !c.tf.busy)
			c.tf.busy = false
			c.emitMetrics(now)
		}
	}
}

// tfrcOnData runs the TFRC receiver for a data packet; it reports whether
// it took over the acknowledgement rule (the peer is a TFRC sender).
func (c *DgramConn) tfrcOnData(now clock.Time, ce bool, p *dgramPacket) bool {
	if p.flags&dflagTFRC == 0 {
		return false
	}
	if c.tf.rx == nil {
		c.tf.rx = ccalgo.NewTFRCReceiver()
	}
	if c.tf.rx.OnData(now, p.seq, len(p.data), ce, time.Duration(p.tfrcRTT)*time.Microsecond) {
		c.ackNow = true
	}
	c.ackDue = true
	return true
}

// tfrcOnFeedback passes a receiver report to the sender's controller.
func (c *DgramConn) tfrcOnFeedback(now clock.Time, p *dgramPacket) {
	if c.tf.tx == nil || p.flags&dflagTFRC == 0 || !p.tfrcFb {
		return
	}
	f := ccalgo.TFRCFeedback{Now: now, XRecv: float64(p.xRecv), DataLimited: !c.tf.rateBound}
	if p.invP > 0 {
		f.P = 1 / float64(p.invP)
	}
	if p.tsecr != 0 {
		r := time.Duration(c.tsNow(now)-p.tsecr)*time.Microsecond - time.Duration(p.ackDelay)*time.Microsecond
		if r > 0 && r < time.Hour {
			f.RTT = r
		}
	}
	c.tf.rateBound = false
	c.tf.busy = false
	c.tf.tx.OnFeedback(f)
	c.emitMetrics(now)
}

// tfrcDataSection replaces the RATIO section of the data packet being built
// with the TFRC section carrying the sender's RTT estimate.
func (c *DgramConn) tfrcDataSection() {
	if c.tf.tx == nil {
		return
	}
	c.out.flags = c.out.flags&^dflagRATIO | dflagTFRC
	c.out.tfrcRTT = min(uint64(c.tf.tx.SenderRTT()/time.Microsecond), maxTFRCRTT)
}

// tfrcReport adds the receiver's report to the packet being built when one
// is due.
func (c *DgramConn) tfrcReport(now clock.Time) {
	if c.tf.rx == nil || !c.tf.rx.FeedbackDue(now) {
		return
	}
	x, p := c.tf.rx.Feedback(now)
	c.out.flags |= dflagTFRC
	c.out.tfrcFb = true
	c.out.xRecv = uint64(min(x, 1<<61))
	c.out.invP = 0
	if p > 0 {
		c.out.invP = uint64(min(math.Ceil(1/p), 1<<61))
	}
}

// tfrcSent notes a data packet of bytes sent at now.
func (c *DgramConn) tfrcSent(now clock.Time, bytes int) {
	c.pace.sent(now, bytes)
	c.tf.busy = true
	if c.hasData() {
		c.tf.rateBound = true
	}
}
