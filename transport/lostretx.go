package transport

// Lost-retransmission detection (option lostretx of the SACK-based
// strategies): a retransmitted segment that is still un-SACKed is deemed lost
// again as soon as a segment transmitted after it (in send order,
// Segment.SendSeq) has been SACKed, and it becomes eligible for another
// retransmission at once instead of waiting for the retransmission timer.
// This is the idea of Linux's tcp_mark_lost_retrans (a retransmission is lost
// when data sent after it is SACKed) and of RACK (RFC 8985: a segment is lost
// when a segment sent later is delivered), without a reordering window.
//
// Without it, RFC 6675 never retransmits a segment twice in one episode, and a
// lost retransmission costs an RTO (RTOLostRetransmission).
//
// Two guards keep the detection from feeding on itself: only SACKs of
// never-retransmitted segments count as evidence (Scoreboard.
// HighSackedSendSeq: the SACK of a retransmitted segment may be for its
// original), and only a first retransmission can be detected lost (a segment
// is resent by the detection at most once; a further loss is left to the
// RTO). The second guard matters when the receiver's SACK reports skip
// blocks (more than MaxSACKBlocks holes, ACKs for a batch of datagrams): a
// retransmission that arrived but was never reported would otherwise be sent
// again every round trip.

// detectLostRetx marks lost every once-retransmitted, un-SACKed, not yet
// lost segment whose retransmission precedes the latest transmission of some
// SACKed segment. It runs only when new SACK information about later sends
// arrived.
func (r *sackLoss) detectLostRetx(x *Ctx) {
	sb := x.SB
	hs := sb.HighSackedSendSeq()
	if hs <= r.lrSeen {
		return
	}
	r.lrSeen = hs
	top := sb.HighSacked() // a segment sent after s and SACKed lies above s, so s is below the highest SACK
	for i := 0; i < sb.Count(); i++ {
		s := sb.Seg(i)
		if s.Off >= top {
			break
		}
		if s.Retrans != 1 || s.Sacked || s.Lost || s.SendSeq >= hs {
			continue
		}
		x.MarkLost(i, LossDupAck)
		r.lostRetxFound++
	}
}
