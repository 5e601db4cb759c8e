package transport

// ns-3's DoRetransmit (option nextseg of the SACK-based strategies). ns-3
// 3.37 forces one send outside the window at two points of SACK recovery:
// EnterRecovery (RFC 6675 §5 step 4.3) and, with partialrxt, a partial ACK
// whose first unacknowledged segment was never retransmitted. Both call
// TcpSocketBase::DoRetransmit (tcp-socket-base.cc:3960), which sends what
// TcpTxBuffer::NextSeg(isRecovery=false) returns (:3970): rule 1, the first
// segment marked lost and not yet retransmitted; else rule 2, one segment
// of new data; only when it returns nothing, the first unacknowledged
// segment. EnterRecovery marks that first segment lost only if it is not
// already (:1663; a retransmitted segment keeps its lost flag), and in SACK
// recovery a partial ACK marks nothing (:2043-2048 mark the head only
// without SACK). So a first segment never deemed lost, or one whose
// retransmission is in flight, is not resent there; RFC 6675 step 4.3
// resends the first unacknowledged segment, and option partialrxt alone
// resends it when nothing is marked lost.

// armDoRetransmit arms one forced send as DoRetransmit makes it: the first
// segment marked lost if there is one (NextSeg rule 1), else one new segment
// or, without new data, the first unacknowledged segment (doRetransmitNew).
func (r *sackLoss) armDoRetransmit(x *Ctx) {
	r.fastRetx = true
	r.newDue = x.SB.NextLost() < 0
}

// doRetransmitNew returns the forced send armDoRetransmit left for rule 2:
// one new segment, or, with no new data, the first unacknowledged segment
// marked lost for it (ok false: nothing due here, the caller resends the
// first segment marked lost).
func (r *sackLoss) doRetransmitNew(x *Ctx) (Action, bool) {
	if !r.newDue {
		return NoSend, false
	}
	r.newDue = false
	if x.NewDataAvailable() > 0 {
		r.fastRetx = false
		return Action{Retransmit: -1, NewData: r.mss}, true
	}
	x.MarkLost(0, LossDupAck)
	return NoSend, false
}
