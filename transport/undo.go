package transport

import (
	"cclab/ccalgo"
	"cclab/clock"
	"cclab/event"
)

// Undo of spurious loss episodes, as Linux undoes a congestion-window
// reduction (tcp_try_undo_recovery, tcp_try_undo_partial, tcp_try_undo_dsack,
// tcp_try_undo_loss). An episode (a fast recovery, or a retransmission
// timeout with its repair) starts with a snapshot of cwnd and ssthresh and
// the cumulative point (undo_marker), and counts its retransmissions
// (undo_retrans). It is undone, the controller's window restored
// (ccalgo.Undoer) and the episode ended, when
//
//   - D-SACK: every retransmission of the episode was reported duplicated by
//     the receiver (RFC 2883, RFC 3708 §3), so none was needed; or
//   - Eifel (RFC 3522, response as RFC 4015): an ACK that advances the
//     cumulative point echoes a timestamp older than the episode's first
//     retransmission (the original got through, it was only late) and no
//     retransmission of the episode is still outstanding.
//
// Segments still marked lost and not yet retransmitted are unmarked (after
// an RTO the sender resumes new data where it was, RFC 4015 "SND.NXT =
// SND.MAX"). Undo is on when the strategy asks for it (UndoStrategy). An
// episode stays undoable after it ended (a D-SACK of its last retransmission
// arrives after the cumulative ACK that ended it) until the next one begins.

// UndoStrategy is implemented by strategies that can have a spurious episode
// undone. UndoEnabled says whether undo is switched on (option undo);
// OnUndo makes the strategy leave recovery (the connection has restored the
// controller's window; the strategy must not call ExitRecovery).
type UndoStrategy interface {
	UndoEnabled() bool
	OnUndo(x *Ctx)
}

// undoState is one episode's undo information.
type undoState struct {
	active        bool
	rto           bool   // the episode began with a retransmission timeout
	marker        uint64 // SND.UNA when the episode began (Linux undo_marker)
	high          uint64 // SND.NXT when it began (Linux high_seq)
	retrans       int    // retransmissions not yet shown unnecessary by D-SACK (undo_retrans)
	retransSent   bool   // at least one retransmission was sent
	firstTS       uint32 // timestamp of the episode's first retransmission (retrans_stamp)
	priorCwnd     int    // cwnd before the episode, bytes
	priorSsthresh int    // ssthresh before the episode, bytes
}

// undoBegin snapshots the window at the start of an episode, before the
// controller reacts; inRecovery says whether the strategy was in recovery.
// An RTO during an episode continues it (the snapshot from before the
// first reduction is kept).
func (c *Conn) undoBegin(rto, inRecovery bool) {
	if c.undo.active && (inRecovery || (c.undo.rto && c.sb.una < c.undo.high)) {
		c.undo.rto = c.undo.rto || rto
		return
	}
	// Linux tcp_current_ssthresh: in congestion avoidance the window
	// itself is a lower bound on the threshold worth restoring.
	prior := max(c.cc.Ssthresh(), c.cc.Cwnd()*3/4)
	c.undo = undoState{active: true, rto: rto, marker: c.sb.una, high: c.sb.nxt, priorCwnd: c.cc.Cwnd(), priorSsthresh: prior}
}

// undoRetransmitted counts a retransmission of the episode.
func (c *Conn) undoRetransmitted(ts uint32) {
	if !c.undo.active {
		return
	}
	if !c.undo.retransSent {
		c.undo.firstTS = ts
		c.undo.retransSent = true
	}
	c.undo.retrans++
}

// undoOnDSACK applies a D-SACK of a retransmission above the marker.
func (c *Conn) undoOnDSACK(now clock.Time, b sackBlock) {
	u := &c.undo
	if !u.active || !u.retransSent || b.End <= u.marker || u.retrans <= 0 {
		return
	}
	u.retrans -= max(1, int((b.End-b.Start)/uint64(max(c.mss, 1))))
	if u.retrans <= 0 {
		c.undoEpisode(now)
	}
}

// echoPredates reports whether timestamp echo tsecr (0: none) is older than
// our timestamp ts: the Eifel test (RFC 3522 §2), the ACK was caused by a
// transmission sent before the one stamped ts.
func echoPredates(tsecr, ts uint32) bool { return tsecr != 0 && int32(tsecr-ts) < 0 }

// undoOnAck applies the Eifel rule to an ACK that advanced the cumulative
// point with echo tsecr.
func (c *Conn) undoOnAck(now clock.Time, tsecr uint32) {
	u := &c.undo
	if !u.active || !u.retransSent || !echoPredates(tsecr, u.firstTS) {
		return
	}
	for i := 0; i < c.sb.count; i++ {
		if s := c.sb.Seg(i); s.Retrans > 0 && !s.Sacked && !s.Lost {
			return // a retransmission is still outstanding (Linux retrans_out)
		}
	}
	c.undoEpisode(now)
}

// undoEpisode reverts the episode: the controller's window, the strategy's
// recovery state and the loss marks.
func (c *Conn) undoEpisode(now clock.Time) {
	us, ok := c.rec.(UndoStrategy)
	if !ok || !us.UndoEnabled() {
		return
	}
	u := c.undo
	c.undo.active = false
	if cu, ok := c.cc.(ccalgo.Undoer); ok {
		cu.Undo(now, u.priorCwnd, u.priorSsthresh)
	}
	c.sb.unmarkLost()
	c.ctx.Now = now
	inRecovery := c.rec.InRecovery()
	us.OnUndo(&c.ctx) // the strategy leaves its episode
	c.stats.Undos++
	if inRecovery {
		c.emit(event.Event{Time: now, Kind: event.RecoveryEnd, Seq: c.sb.una, Reason: RecoveryEndUndo, Cwnd: c.cc.Cwnd(),
			Ssthresh: c.cc.Ssthresh(), InFlight: c.sb.pipe})
	}
	c.emitMetrics(now)
}

// RecoveryEndUndo is the Reason of a RecoveryEnd event that ends an episode
// found spurious and undone (event.RecoveryEndUndo).
const RecoveryEndUndo = event.RecoveryEndUndo

// unmarkLost clears every loss mark (an undone episode). The segments
// rejoin the transmission-ordered list in SendSeq order; each search goes
// on from the previous one while their SendSeqs increase (never
// retransmitted segments, in stream order), so the whole costs about one
// walk of the list.
func (sb *Scoreboard) unmarkLost() {
	var prev uint32 // the segment last put back: the search for the next starts after it
	for i := 0; i < sb.count; i++ {
		p := sb.pos(i)
		s := sb.at(p)
		if !s.Lost {
			continue
		}
		s.Lost = false
		sb.lost -= s.Len
		sb.pipe += s.Len
		if prev != 0 && sb.at(prev).SendSeq > s.SendSeq {
			prev = 0
		}
		sb.tsInsert(p, prev)
		prev = p
	}
}
