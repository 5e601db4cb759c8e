package transport

import (
	"fmt"

	"cclab/internal/spec"
)

// NewReno is the NewReno loss recovery of RFC 6582 (§3.2, "Impatient"
// timer variant): fast retransmit on DupThresh duplicate ACKs, cwnd inflation
// by one SMSS per further duplicate ACK, a partial ACK retransmits the next
// hole and deflates the window, and recovery ends only when the recovery
// point "recover" (the highest data sent when recovery began) is
// cumulatively acknowledged. It does not use SACK information.
type NewReno struct {
	dupThresh  int
	mss        int
	inRec      bool
	recover    uint64 // RFC 6582 "recover": SND.NXT when recovery began (exclusive), or after an RTO
	recoverSet bool
	dupAcks    int
	win        int  // the inflated window during recovery, bytes (RFC 6582 cwnd during fast recovery)
	retx       bool // a retransmission of the first unacknowledged segment is due
	partials   int  // partial ACKs in this episode
}

// Name returns "newreno".
func (r *NewReno) Name() string { return "newreno" }

// InRecovery reports whether fast recovery is in progress.
func (r *NewReno) InRecovery() bool { return r.inRec }

// Recover returns the recovery point (exclusive end of the data sent when
// the latest recovery began or the latest RTO fired), bytes.
func (r *NewReno) Recover() uint64 { return r.recover }

// Window returns the inflated window in recovery, bytes (0 outside recovery).
func (r *NewReno) Window() int {
	if !r.inRec {
		return 0
	}
	return r.win
}

// OnAck applies RFC 6582 §3.2 steps 1-5.
func (r *NewReno) OnAck(x *Ctx, a *AckInfo) {
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
		// Step 2: enter only if the ACK covers more than recover, so that
		// duplicate ACKs for data sent before an earlier recovery or RTO do
		// not cause a second reduction.
		if r.recoverSet && a.CumAck <= r.recover {
			return
		}
		r.inRec = true
		r.recover = x.SB.Nxt()
		r.recoverSet = true
		r.partials = 0
		x.EnterRecovery() // ssthresh = max(FlightSize/2, 2*SMSS) in the controller
		// Step 3: retransmit the lost segment, cwnd = ssthresh + 3*SMSS.
		if x.SB.Count() > 0 {
			x.MarkLost(0, LossDupAck)
			r.retx = true
		}
		r.win = x.CC.Ssthresh() + r.dupThresh*r.mss
		return
	}
	if !a.Advanced() {
		if a.DupAck {
			// Step 4: inflate by one SMSS per additional duplicate ACK.
			r.win += r.mss
		}
		return
	}
	if a.CumAck >= r.recover {
		// Step 3 of §3.2 "full acknowledgment": exit; the controller sets
		// cwnd (to ssthresh or min(ssthresh, max(FlightSize, SMSS)+SMSS)).
		r.inRec = false
		r.dupAcks = 0
		r.retx = false
		x.ExitRecovery()
		return
	}
	// Step 5, partial acknowledgment: retransmit the first unacknowledged
	// segment, deflate by the newly acknowledged amount, add back one SMSS
	// if at least one SMSS was acknowledged.
	acked := int(a.CumAck - a.PrevUna)
	r.win -= acked
	if acked >= r.mss {
		r.win += r.mss
	}
	r.win = max(r.win, r.mss)
	if x.SB.Count() > 0 {
		x.MarkLost(0, LossDupAck)
		r.retx = true
	}
	r.partials++
	if r.partials > 1 {
		// "Impatient" variant: only the first partial ACK resets the timer.
		x.RestartRTO = false
	}
}

// OnRTO leaves recovery and records recover = SND.NXT (RFC 6582 §3.2 step 2
// note: after a timeout, record the highest sequence number transmitted).
func (r *NewReno) OnRTO(x *Ctx) {
	r.inRec = false
	r.retx = false
	r.dupAcks = 0
	r.recover = x.SB.Nxt()
	r.recoverSet = true
}

// Next retransmits the first unacknowledged segment when due, then sends new
// data while FlightSize is below the inflated window (RFC 6582 step 4-5
// "send a new segment if permitted by the new value of cwnd").
func (r *NewReno) Next(x *Ctx) Action {
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
func (r *NewReno) OnSent(x *Ctx, retransmit bool, bytes int) {
	if retransmit {
		r.retx = false
	}
}

func init() {
	Recoveries.Register(recoveryEntry("newreno", "NewReno fast recovery, RFC 6582 (partial ACKs retransmit the next hole)",
		func(c DupAckConfig, env RecoveryEnv) Recovery { return &NewReno{dupThresh: c.DupThresh, mss: env.MSS} }))
}

// recoveryEntry builds a registry entry for a duplicate-ACK strategy.
func recoveryEntry(name, doc string, build func(DupAckConfig, RecoveryEnv) Recovery) spec.Entry[Recovery, RecoveryEnv] {
	return spec.Entry[Recovery, RecoveryEnv]{
		Name:     name,
		Doc:      doc,
		Defaults: func() any { return &DupAckConfig{DupThresh: DupThresh} },
		Build: func(cfg any, env RecoveryEnv) (Recovery, error) {
			c := *cfg.(*DupAckConfig)
			if c.DupThresh < 1 {
				return nil, fmt.Errorf("%s: parameter dupthresh=%d: must be >= 1 packets", name, c.DupThresh)
			}
			if env.MSS <= 0 {
				return nil, fmt.Errorf("%s: RecoveryEnv.MSS=%d: must be a positive segment size in bytes", name, env.MSS)
			}
			return build(c, env), nil
		},
	}
}
