package transport

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
