package transport

// Reno is the classic fast retransmit / fast recovery of RFC 5681 §3.2:
// DupThresh duplicate ACKs trigger a retransmission of the first
// unacknowledged segment and cwnd = ssthresh + 3*SMSS; each further
// duplicate ACK inflates the window by one SMSS; the first ACK that
// acknowledges new data (full or partial) ends recovery ("deflating the
// window"). Further losses in the same window need another DupThresh
// duplicate ACKs (another reduction) or an RTO: that is Reno's known weakness
// with multiple losses that NewReno (RFC 6582) fixes.
type Reno struct {
	dupThresh int
	mss       int
	inRec     bool
	dupAcks   int
	win       int  // the inflated window during recovery, bytes
	retx      bool // the fast retransmission is due
}

// Name returns "reno".
func (r *Reno) Name() string { return "reno" }

// InRecovery reports whether fast recovery is in progress.
func (r *Reno) InRecovery() bool { return r.inRec }

// Window returns the inflated window in recovery, bytes (0 outside recovery).
func (r *Reno) Window() int {
	if !r.inRec {
		return 0
	}
	return r.win
}

// OnAck applies RFC 5681 §3.2 steps 1-6.
func (r *Reno) OnAck(x *Ctx, a *AckInfo) {
	if !r.inRec {
		if a.Advanced() {
			r.dupAcks = 0
			return
		}
		if !a.DupAck {
			return
		}
		r.dupAcks++
		if r.dupAcks != r.dupThresh {
			return
		}
		// Steps 2-3: ssthresh (controller), retransmit, cwnd = ssthresh + 3*SMSS.
		r.inRec = true
		x.EnterRecovery()
		if x.SB.Count() > 0 {
			x.MarkLost(0, LossDupAck)
			r.retx = true
		}
		r.win = x.CC.Ssthresh() + r.dupThresh*r.mss
		return
	}
	if !a.Advanced() {
		if a.DupAck {
			r.win += r.mss // step 4
		}
		return
	}
	// Step 6: the next ACK that acknowledges new data ends recovery.
	r.inRec = false
	r.dupAcks = 0
	r.retx = false
	x.ExitRecovery()
}

// OnRTO leaves recovery.
func (r *Reno) OnRTO(x *Ctx) {
	r.inRec = false
	r.retx = false
	r.dupAcks = 0
}

// Next retransmits once on entry, then sends new data while FlightSize is
// below the inflated window (step 5).
func (r *Reno) Next(x *Ctx) Action {
	if !r.inRec {
		return x.Normal()
	}
	if r.retx && x.SB.Count() > 0 && x.SB.Seg(0).Lost {
		return Action{Retransmit: 0}
	}
	allow := r.win - x.SB.FlightSize()
	if allow <= 0 {
		return NoSend
	}
	return Action{Retransmit: -1, NewData: allow}
}

// OnSent clears the pending retransmission.
func (r *Reno) OnSent(x *Ctx, retransmit bool, bytes int) {
	if retransmit {
		r.retx = false
	}
}

func init() {
	Recoveries.Register(recoveryEntry("reno", "classic Reno fast retransmit/fast recovery, RFC 5681 §3.2 (any new ACK exits)",
		func(c DupAckConfig, env RecoveryEnv) Recovery { return &Reno{dupThresh: c.DupThresh, mss: env.MSS} }))
}
