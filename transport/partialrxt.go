package transport

// Partial-ACK retransmission (option partialrxt of the SACK-based
// strategies), as ns-3 3.37 does in SACK recovery: TcpSocketBase::ProcessAck,
// on an ACK that advances the cumulative point but not to the recovery point
// (a partial ACK), calls DoRetransmit unless the segment now first
// unacknowledged was already retransmitted (TcpTxBuffer::
// IsRetransmittedDataAcked). DoRetransmit sends, whatever cwnd allows, the
// first segment marked lost and not yet retransmitted (NextSeg rule 1), or,
// if there is none, the first unacknowledged segment itself. It is RFC 6582
// §3.2 step 5's partial-ACK retransmission carried into RFC 6675 recovery,
// where the RFC retransmits only what IsLost or NextSeg rules 3-4 choose,
// within the pipe. The segment counts in prr_out (ns-3's SendDataPacket
// calls UpdateBytesSent in recovery), as it does here through OnSent.

// partialRetransmit arms one forced retransmission for a partial ACK: the
// first segment marked lost, or the first unacknowledged segment, marked lost
// for it, when that one was never retransmitted.
func (r *sackLoss) partialRetransmit(x *Ctx) {
	sb := x.SB
	if sb.Count() == 0 || sb.Seg(0).Retrans > 0 || sb.Seg(0).Sacked {
		return
	}
	if r.ns3NextSeg {
		r.armDoRetransmit(x)
		return
	}
	if sb.NextLost() < 0 {
		x.MarkLost(0, LossDupAck)
	}
	r.fastRetx, r.newDue = true, false
}
