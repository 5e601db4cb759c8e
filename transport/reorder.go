package transport

import (
	"time"

	"cclab/clock"
)

// MaxReordering bounds the adaptive duplicate threshold, packets: Linux's
// net.ipv4.tcp_max_reordering default (300).
const MaxReordering = 300

// ackScan looks at every segment an ACK newly delivers (cumulatively or by
// SACK) and derives what loss detection learns from it:
//
//   - reordering (RFC 8985 §6.2 step 2, Linux tcp_check_sack_reordering): a
//     segment never retransmitted, delivered below the highest sequence
//     delivered before (RACK.fack), arrived out of order (if it is known to
//     have arrived just now, see fresh); its degree is the
//     distance to RACK.fack in segments, ceil((fack - start) / SMSS). A
//     retransmitted segment whose ACK echoes a timestamp older than the
//     retransmission (RFC 3522) counts too: its original arrived late.
//   - the most recently sent segment delivered (RFC 8985 §6.2 step 1,
//     RACK_update): by transmission order (Segment.SendSeq, which orders
//     exactly as RACK_sent_after), skipping a retransmission whose delivery
//     may be the original's (the echo predates it, or its RTT is below
//     min_RTT).
//
// The echo tells which copy of a retransmitted segment arrived only for the
// segment it describes: an RFC 7323 §4.3 receiver echoes the first segment
// of a cumulative advance, and while a hole is open the last in-order
// segment before it. Option echo (echo.go) says whether the rules above
// take the echo for every delivered retransmission (echo=all, RFC 8985 as
// written) or only for the segment it describes (echo=cum, see echoes).
type ackScan struct {
	now    clock.Time
	tsecr  uint32
	minRTT time.Duration
	mss    int
	fack   uint64 // RACK.fack before this ACK: the highest end delivered (acknowledgement space)

	reorder int // reordering degree seen on this ACK, packets (0: none)
	// fresh says whether the segment being noted certainly arrived just
	// now: it is in the ACK's first SACK block (RFC 2018 §4: the block of
	// the most recent arrival), or it is the first segment of a cumulative
	// advance (it filled the hole). Segments of other blocks, or further
	// segments of the advance, may have arrived long ago and only been
	// reported late (at most MaxSACKBlocks blocks per ACK): no evidence.
	fresh bool
	// echoes says whether the ACK's timestamp echo is taken to judge the
	// segment being noted: always under echo=all; under echo=cum only for
	// the first segment of a cumulative advance (RFC 7323 §4.3), as the echo
	// says nothing about SACKed segments or further segments of the advance.
	echoes bool

	newestSeq  uint64        // SendSeq of the most recently sent segment delivered (0: none)
	newestSent clock.Time    // its send time
	newestEnd  uint64        // its end
	newestRTT  time.Duration // now - its send time
}

// begin starts the scan of one ACK.
func (a *ackScan) begin(now clock.Time, tsecr uint32, minRTT time.Duration, mss int, fack uint64, echoCum bool) {
	*a = ackScan{now: now, tsecr: tsecr, minRTT: minRTT, mss: mss, fack: fack, echoes: !echoCum}
}

// seg notes one newly delivered segment.
func (a *ackScan) seg(s *Segment) {
	echoOlder := a.echoes && s.Retrans > 0 && echoPredates(a.tsecr, s.TS)
	if a.fresh && s.End() < a.fack && (s.Retrans == 0 || echoOlder) {
		deg := int((a.fack - s.Off + uint64(a.mss) - 1) / uint64(max(a.mss, 1)))
		a.reorder = max(a.reorder, deg)

	}
	rtt := a.now.Sub(s.SentAt)
	if s.Retrans > 0 && (echoOlder || rtt < a.minRTT) {
		return // RACK_update: the delivery may be the original's
	}
	if s.SendSeq > a.newestSeq {
		a.newestSeq, a.newestSent, a.newestEnd, a.newestRTT = s.SendSeq, s.SentAt, s.End(), rtt
	}
}

// fill copies the results into the ACK description.
func (a *ackScan) fill(ai *AckInfo) {
	ai.Reorder = a.reorder
	ai.NewestSendSeq, ai.NewestSent, ai.NewestEnd, ai.NewestRTT = a.newestSeq, a.newestSent, a.newestEnd, a.newestRTT
}

// adaptDupThresh raises a duplicate threshold to the reordering degree seen
// (Linux tcp_reordering: tp->reordering = max(reordering, degree), at most
// tcp_max_reordering), and reports the new value.
func adaptDupThresh(dupThresh, degree int) int {
	if degree > dupThresh {
		return min(degree, MaxReordering)
	}
	return dupThresh
}
