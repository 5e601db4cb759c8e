package transport

import "sort"

// draftRH is the state of Rate-Halving's option draft: the adjustment
// interval of draft-mathis-tcp-ratehalving-00 (M. Mathis, J. Semke, J.
// Mahdavi, August 1999), which starts on the first sign of a loss rather
// than at DupThresh:
//
//   - §4.4: an ACK whose SACK blocks show a new hole starts the interval
//     (RH_EXACT): prior_rhcwnd = rhcwnd (here min(cwnd, FlightSize), as at
//     an episode's start without the option);
//   - §4.6: per ACK, rhcwnd -= 1/2 of the distance snd.fack advances + 1/2
//     of the size of the new holes it passes (so a hole costs its whole
//     size, received data half of its size: §5.6);
//   - §4.3: in any state, data of length len is sent if awnd + len <=
//     rhcwnd, awnd = snd.nxt - snd.fack + retran_data (the draft writes
//     "<"; with "<" a window of n segments would hold n-1, which §5.3's
//     equivalence with Reno's snd.una + cwnd rules out);
//   - §6.2.1: only the retransmission waits for DupThresh (thresholded
//     retransmission): the RFC 6675 episode (sackLoss) starts there, with
//     the controller's ssthresh, and the interval goes on inside it;
//   - §4.8: if the SACK blocks vanish (a cumulative ACK leaves none) before
//     any retransmission was sent, the hole was reordering: rhcwnd =
//     prior_rhcwnd (the controller's cwnd, which the interval never
//     changed, governs again);
//   - §4.15: a timeout ends the interval.
//
// Bounds: before the episode rhcwnd stays at or above max(prior_rhcwnd/4,
// 1 SMSS) (§4.14's prior_rhcwnd/4, and the loss window: a sender can always
// send one segment; Linux 2.4's tcp_cwnd_down kept snd_cwnd above
// snd_ssthresh/2, the same quarter); within it, at or above ssthresh (as
// without the option: cclab's controller sets cwnd = ssthresh when the
// episode ends, so a lower rhcwnd would end in a burst); and at most pipe +
// maxburst segments (bound 2, as without the option: RFC 6675 pipe, in which
// a hole not yet deemed lost still counts, as in Linux 2.4's
// tcp_packets_in_flight; awnd, which leaves such holes out, would collapse
// the window under burst loss and starve lost-retransmission detection of
// the new segments it needs). The interval ends with the episode (the
// cumulative ACK reaches RFC 6675's RecoveryPoint); the draft's own end one
// round trip after its start (§4.10) and its final rhcwnd = (prior_rhcwnd -
// losses)/2 (§4.13, §4.14) are not modelled. Duplicate ACKs without SACK
// (RH_EST, §4.5) do not occur: the strategy is SACK-based.
type draftRH struct {
	draft  bool   // option draft on
	adj    bool   // an adjustment interval is in progress
	adjRtx bool   // a retransmission was sent since it began (§4.8)
	prior  int    // prior_rhcwnd, bytes
	fack   uint64 // snd.fack after the previous ACK
}

// draftFloor returns the lower bound of rhcwnd in the adjustment interval
// before the RFC 6675 episode starts: max(prior_rhcwnd/4, 1 SMSS), bytes.
func (r *RateHalving) draftFloor() int { return max(r.prior/4, r.mss) }

// draftOnAck is OnAck with option draft, in the order of the draft's §6.1.1:
// exit checks, entry, then the window adjustment for this ACK.
func (r *RateHalving) draftOnAck(x *Ctx, a *AckInfo) {
	sb := x.SB
	old, nf := r.fack, Fack(sb)
	r.fack = nf
	if r.adj && !r.inRec && !r.adjRtx && a.Advanced() && sb.SackedBytes() == 0 {
		r.adj = false // §4.8: reordering, rhcwnd = prior_rhcwnd
	}
	afterRTO := r.recSet && a.CumAck < r.recPoint // RFC 6675 §5.1: no new episode yet
	if !r.adj && !r.inRec && !afterRTO && a.SackedBytes > 0 && sb.SackedBytes() > 0 && nf > old {
		r.adj, r.adjRtx = true, false // §4.4
		r.prior = min(x.CC.Cwnd(), sb.FlightSize())
		r.win, r.carry = r.prior, 0
	}
	wasRec := r.inRec
	if r.update(x, a) {
		r.enter(x) // startEpisode keeps the interval's rhcwnd
	}
	if wasRec && !r.inRec {
		r.adj = false // the episode, and with it the interval, ended
		return
	}
	if !r.adj {
		return
	}
	d := r.carry
	if nf > old {
		d += int(nf-old) + holeBytes(sb, old, nf)
	}
	r.win -= d / 2
	r.carry = d % 2
	r.bound(x)
}

// holeBytes returns the payload bytes of the outstanding segments that
// start in [from, to) and are not SACKed: the holes snd.fack passed.
func holeBytes(sb *Scoreboard, from, to uint64) int {
	n := 0
	for i := sort.Search(sb.Count(), func(i int) bool { return sb.Seg(i).Off >= from }); i < sb.Count(); i++ {
		s := sb.Seg(i)
		if s.Off >= to {
			break
		}
		if !s.Sacked {
			n += s.Len
		}
	}
	return n
}

// draftNext is Next with option draft during the adjustment interval: the
// episode's fast retransmission first, then, while awnd + 1 SMSS <= rhcwnd,
// NextSeg in the episode, new data before it (§4.3).
func (r *RateHalving) draftNext(x *Ctx) Action {
	if r.inRec {
		if act, ok := r.fastRetransmit(x); ok {
			return act
		}
	}
	allow := r.win - r.Awnd(x.SB)
	if allow < r.mss {
		return NoSend
	}
	if r.inRec {
		return r.nextSeg(x, allow)
	}
	if i := x.SB.NextLost(); i >= 0 {
		return Action{Retransmit: i}
	}
	return Action{Retransmit: -1, NewData: allow}
}

// OnSent notes a retransmission in the adjustment interval (option draft)
// and records HighRxt (sackLoss.OnSent).
func (r *RateHalving) OnSent(x *Ctx, retransmit bool, bytes int) {
	if retransmit && r.adj {
		r.adjRtx = true
	}
	r.sackLoss.OnSent(x, retransmit, bytes)
}

// OnRTO ends the adjustment interval (§4.15) and applies RFC 6675 §5.1
// (sackLoss.OnRTO).
func (r *RateHalving) OnRTO(x *Ctx) {
	r.adj = false
	r.sackLoss.OnRTO(x)
}

// OnUndo ends the adjustment interval with the episode found spurious
// (sackLoss.OnUndo).
func (r *RateHalving) OnUndo(x *Ctx) {
	r.adj = false
	r.sackLoss.OnUndo(x)
}
