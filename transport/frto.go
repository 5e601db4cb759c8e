package transport

// F-RTO (RFC 5682, the SACK-enhanced algorithm of §3): after a
// retransmission timeout only the first unacknowledged segment is
// retransmitted; the next two ACKs decide whether the timeout was spurious
// before everything else is resent (option frto of the SACK-based
// strategies).
//
//  1. RTO: retransmit the oldest segment only; recover = SND.NXT.
//  2. First ACK: if it acknowledges nothing new, or everything up to
//     recover, or no new data can be sent: conventional RTO recovery (every
//     segment sent before the timeout not SACKed is marked lost and resent).
//     Otherwise send up to two new segments (whatever cwnd) and go to 3.
//  3. Second ACK: if it acknowledges (cumulatively, or by SACK) data sent
//     before the timeout, the timeout was spurious: nothing else is resent,
//     the RTO counts as cause "spurious", and with option undo the window
//     is restored (RFC 4015 response, undo.go). Otherwise conventional
//     recovery.
//
// A timeout during F-RTO, or while the previous timeout's data is still
// being repaired, uses conventional recovery at once.

// frtoNewSegments is how many new segments step 2b sends (RFC 5682 §2.1: "up
// to two").
const frtoNewSegments = 2

// frtoState is F-RTO's state in a SACK-based strategy.
type frtoState struct {
	on        bool
	step      int    // 0: idle; 1: awaiting the first ACK after the RTO; 2: the second
	recover   uint64 // SND.NXT when the timeout fired (RFC 5682 "recover")
	rtoSeq    uint64 // the scoreboard's send counter at the timeout: SendSeq <= rtoSeq was sent before it
	newDue    int    // new segments step 2b may still send
	spurious  uint64 // timeouts F-RTO declared spurious
	fallbacks uint64 // timeouts that went to conventional recovery
}

// frtoStrategy is a strategy that runs F-RTO (RFC 5682): the connection
// asks it how to mark an RTO's losses and whether its verdict on the
// latest timeout is still pending (Conn.frto, set at establish).
type frtoStrategy interface {
	DefersRTOMarks() bool
	FRTOPending() bool
}

// DefersRTOMarks reports whether the connection should mark only the oldest
// segment lost on this timeout (F-RTO step 1) instead of all of them.
func (r *sackLoss) DefersRTOMarks() bool {
	f := &r.frto
	return f.on && f.step == 0 && !(r.recSet && r.rtoRecovery)
}

// FRTOPending reports whether F-RTO has not yet decided the latest timeout
// (the connection keeps it pending for the RTO classification).
func (r *sackLoss) FRTOPending() bool { return r.frto.step != 0 }

// FRTOStats returns the timeouts F-RTO declared spurious and those it left
// to conventional recovery.
func (r *sackLoss) FRTOStats() (spurious, conventional uint64) {
	return r.frto.spurious, r.frto.fallbacks
}

// frtoOnRTO starts F-RTO if the connection deferred the loss marks.
func (r *sackLoss) frtoOnRTO(x *Ctx, deferred bool) {
	f := &r.frto
	if !deferred {
		f.step = 0
		return
	}
	f.step, f.recover, f.rtoSeq, f.newDue = 1, x.SB.Nxt(), x.SB.sends, 0
}

// frtoOnAck runs steps 2 and 3 on an ACK; it reports whether it consumed the
// ACK (F-RTO in progress: no other loss rule applies to it).
func (r *sackLoss) frtoOnAck(x *Ctx, a *AckInfo) bool {
	f := &r.frto
	switch f.step {
	case 1:
		if !a.Advanced() || a.CumAck >= f.recover || x.NewDataAvailable() == 0 {
			r.frtoConventional(x)
			return true
		}
		f.step, f.newDue = 2, frtoNewSegments
		return true
	case 2:
		if a.Advanced() || (a.SackedBytes > 0 && a.NewestSendSeq > 0 && a.NewestSendSeq <= f.rtoSeq) {
			f.step, f.newDue = 0, 0
			f.spurious++
			x.RTOSpurious()
			x.UndoSpurious()
			return true
		}
		r.frtoConventional(x)
		return true
	}
	return false
}

// frtoConventional falls back to conventional RTO recovery: every segment
// sent before the timeout and not SACKed is marked lost (as the connection
// does at a timeout without F-RTO).
func (r *sackLoss) frtoConventional(x *Ctx) {
	f := &r.frto
	f.step, f.newDue = 0, 0
	f.fallbacks++
	sb := x.SB
	for i := 0; i < sb.Count(); i++ {
		if s := sb.Seg(i); !s.Sacked && !s.Lost && s.SendSeq <= f.rtoSeq {
			x.MarkLost(i, LossRTO)
		}
	}
}

// frtoNext is F-RTO's sending rule, whatever cwnd (the segments sent
// before the timeout still count in pipe): step 1 retransmits the oldest
// segment, step 2b sends up to two new segments.
func (r *sackLoss) frtoNext(x *Ctx) (Action, bool) {
	switch f := &r.frto; {
	case f.step == 1:
		if i := x.SB.NextLost(); i >= 0 {
			r.pendEnd, r.pendRule4, r.pendDbl = x.SB.Seg(i).End(), false, false
			return Action{Retransmit: i}, true
		}
	case f.step == 2 && f.newDue > 0 && x.NewDataAvailable() > 0:
		return Action{Retransmit: -1, NewData: x.MSS}, true
	}
	return NoSend, false
}

// RTOSpurious moves the timeouts not yet decided to RTO cause "spurious"
// (F-RTO declared the latest one spurious).
func (x *Ctx) RTOSpurious() { x.c.rtoAllSpurious(x.Now) }

// UndoSpurious undoes the current episode if the strategy has undo on
// (undo.go).
func (x *Ctx) UndoSpurious() { x.c.undoEpisode(x.Now) }
