package transport

import (
	"cclab/clock"
	"cclab/event"
)

// RTOOther is the RTO cause "other": none of the three loss patterns
// explains the timeout, e.g. a single segment was missing with enough
// segments SACKed above it (the ACKs were lost or delayed, or the timeout was
// spurious). It is RTOUnknown's value, named "unknown" in traces.
const RTOOther = RTOUnknown

// ClassifyRTO classifies a retransmission timeout from the scoreboard as it
// is when the timer expires (before the connection marks everything lost),
// for a duplicate-ACK threshold of dupThresh segments:
//
//   - RTOLostRetransmission: the oldest outstanding segment had already been
//     retransmitted, so its retransmission was lost (or is still delayed);
//   - RTOTooFewDupAcks: fewer than dupThresh segments were sent after the
//     oldest one, so even a single loss could not produce dupThresh
//     duplicate ACKs (small window, tail loss);
//   - RTOBurstLoss: the window was large enough, but two or more of its
//     segments are missing (un-SACKed): several losses in one window left too
//     few duplicate ACKs, or recovery could not repair them all in time;
//   - RTOOther: otherwise (one segment missing although enough were SACKed
//     above it).
func ClassifyRTO(sb *Scoreboard, dupThresh int) RTOCause {
	n := sb.Count()
	if n == 0 {
		return RTOOther
	}
	if sb.Seg(0).Retrans > 0 {
		return RTOLostRetransmission
	}
	if n-1 < dupThresh {
		return RTOTooFewDupAcks
	}
	missing := 0
	for i := 0; i < n && missing < 2; i++ {
		if !sb.Seg(i).Sacked {
			missing++
		}
	}
	if missing >= 2 {
		return RTOBurstLoss
	}
	return RTOOther
}

// rtoDupThresh returns the duplicate-ACK threshold of the connection's
// strategy (DupThresh unless the strategy reports its own).
func (c *Conn) rtoDupThresh() int {
	switch r := c.rec.(type) {
	case *NewReno:
		return r.dupThresh
	case *Reno:
		return r.dupThresh
	case interface{ DupThresh() int }:
		return r.DupThresh()
	}
	return DupThresh
}

// maxPendingRTOs bounds the timeouts of one series (one outage with
// backoff) remembered for spurious-timeout detection.
const maxPendingRTOs = 16

// pendingRTO is a timeout whose spuriousness is not known yet.
type pendingRTO struct {
	ts    uint32     // our timestamp at the expiry, µs (every retransmission it caused carries a later one)
	off   uint64     // the segment retransmitted first (the oldest outstanding)
	cause RTOCause   // the cause it was counted under
	at    clock.Time // when it fired
}

// rtoWatch holds the timeouts since the cumulative point last advanced.
type rtoWatch struct {
	pend *[maxPendingRTOs]pendingRTO // allocated at the first timeout (most connections have none)
	n    int
}

// rtoFired remembers a timeout for spurious-timeout detection.
func (c *Conn) rtoFired(now clock.Time, cause RTOCause) {
	w := &c.rtoW
	if w.pend == nil {
		w.pend = new([maxPendingRTOs]pendingRTO)
	}
	if w.n == maxPendingRTOs {
		copy(w.pend[:], w.pend[1:])
		w.n--
	}
	w.pend[w.n] = pendingRTO{ts: c.tsNow(now), off: c.sb.una, cause: cause, at: now}
	w.n++
}

// rtoCheckSpurious decides the pending timeouts on an ACK that advanced the
// cumulative point, with echo tsecr and D-SACK block ds (valid if dsack):
//
//   - Eifel (RFC 3522 §3): the ACK echoes a timestamp older than the
//     timeout, so a transmission sent before it arrived (only late): the
//     timeout was spurious;
//   - RFC 3708 / RFC 5682 §1: the receiver reports the timeout's
//     retransmission of the oldest segment as a duplicate (D-SACK): the
//     original had arrived and only its ACKs were lost or late.
//
// A spurious timeout moves from its cause to RTOSpurious (ConnStats.
// RTOCauses, event SpuriousRTO). Either way the pending list is cleared.
func (c *Conn) rtoCheckSpurious(now clock.Time, tsecr uint32, ds sackBlock, dsack bool) {
	w := &c.rtoW
	if w.n == 0 {
		return // no timeout pending (the common ACK)
	}
	if c.frto != nil && c.frto.FRTOPending() {
		return // F-RTO decides on its second ACK (frto.go)
	}
	for i := 0; i < w.n; i++ {
		p := w.pend[i]
		eifel := echoPredates(tsecr, p.ts)
		dup := dsack && ds.Start <= p.off && p.off < ds.End
		if !eifel && !dup {
			continue
		}
		c.rtoMoveSpurious(now, p)
	}
	w.n = 0
}

// rtoMoveSpurious counts pending timeout p as spurious instead of its cause.
func (c *Conn) rtoMoveSpurious(now clock.Time, p pendingRTO) {
	c.stats.RTOCauses[p.cause]--
	c.stats.RTOCauses[RTOSpurious]++
	c.emit(event.Event{Time: now, Kind: event.SpuriousRTO, Seq: p.off, Reason: uint8(p.cause)})
}

// rtoAllSpurious moves every pending timeout to cause spurious (F-RTO's
// verdict, frto.go).
func (c *Conn) rtoAllSpurious(now clock.Time) {
	w := &c.rtoW
	for i := 0; i < w.n; i++ {
		c.rtoMoveSpurious(now, w.pend[i])
	}
	w.n = 0
}
