package transport

import "cclab/internal/spec"

// Reno is the classic fast retransmit / fast recovery of RFC 5681 §3.2:
// DupThresh duplicate ACKs trigger a retransmission of the first
// unacknowledged segment and cwnd = ssthresh + 3*SMSS; each further
// duplicate ACK inflates the window by one SMSS; the first ACK that
// acknowledges new data (full or partial) ends recovery ("deflating the
// window"). Further losses in the same window need another DupThresh
// duplicate ACKs (another reduction) or an RTO: that is Reno's known weakness
// with multiple losses that NewReno (RFC 6582) fixes.
type Reno struct {
	fastRecovery
}

// Name returns "reno".
func (r *Reno) Name() string { return "reno" }

// OnAck applies RFC 5681 §3.2 steps 1-6.
func (r *Reno) OnAck(x *Ctx, a *AckInfo) {
	switch {
	case !r.inRec:
		if r.countDupAck(a) {
			r.enter(x) // steps 2-3
		}
	case !a.Advanced():
		r.inflate(a) // step 4
	default:
		// Step 6: the next ACK that acknowledges new data ends recovery.
		r.exit(x)
	}
}

// OnRTO leaves recovery.
func (r *Reno) OnRTO(x *Ctx) { r.reset() }

// RenoConfig configures Reno recovery.
type RenoConfig struct {
	DupAckConfig
	// NoLT turns RFC 3042 Limited Transmit off: the first two duplicate
	// ACKs release no new data beyond cwnd. RFC 3042 (2001) post-dates the
	// TCPs of ns-2's 1990s releases (Agent/TCP/Reno sends nothing on them),
	// which the fair-queueing study's Table 3 follows. Off by default.
	NoLT bool `param:"nolt" help:"no RFC 3042 Limited Transmit on the first two duplicate ACKs (pre-2001 TCP, ns-2's Agent/TCP/Reno)"`
}

func init() {
	Recoveries.Register(spec.Entry[Recovery, RecoveryEnv]{
		Name:     "reno",
		Doc:      "classic Reno fast retransmit/fast recovery, RFC 5681 §3.2 (any new ACK exits)",
		Defaults: func() any { return &RenoConfig{DupAckConfig: DupAckConfig{DupThresh: DupThresh}} },
		Build: func(cfg any, env RecoveryEnv) (Recovery, error) {
			c := *cfg.(*RenoConfig)
			return recoveryEntry("reno", "", func(d DupAckConfig, env RecoveryEnv) Recovery {
				return &Reno{fastRecovery{dupThresh: d.DupThresh, mss: env.MSS, noLT: c.NoLT}}
			}).Build(&c.DupAckConfig, env)
		},
	})
}

// fastRecovery is the state and sending rule that Reno and NewReno share
// (RFC 5681 §3.2 steps 1-5, which RFC 6582 keeps): duplicate-ACK counting,
// fast retransmit of the first unacknowledged segment, and the window
// inflated by one SMSS per further duplicate ACK.
type fastRecovery struct {
	dupThresh int // duplicate ACKs that trigger fast retransmit, packets
	mss       int // SMSS, bytes
	inRec     bool
	dupAcks   int
	win       int  // the inflated window during recovery, bytes (RFC 6582 cwnd during fast recovery)
	retx      bool // a retransmission of the first unacknowledged segment is due
	departed  int  // bytes the episode's duplicate ACKs report as having left the network (Departed)
	noLT      bool // no RFC 3042 Limited Transmit (RenoConfig.NoLT)
	exitGrow  bool // the full ACK also grows the window (ExitGrowConfig)
}

// Departed returns, during recovery, the bytes the duplicate ACKs of the
// episode report as having left the network and that are not yet
// cumulatively acknowledged: DupThresh segments at entry and one per further
// duplicate ACK (RFC 5681 §3.2 steps 3-4, what the inflation counts),
// less what partial ACKs acknowledged beyond their first segment (Linux
// counts the same for a sender without SACK: tcp_add_reno_sack,
// tcp_remove_reno_sacks). 0 outside recovery.
func (r *fastRecovery) Departed() int {
	if !r.inRec {
		return 0
	}
	return r.departed
}

// InRecovery reports whether fast recovery is in progress.
func (r *fastRecovery) InRecovery() bool { return r.inRec }

// Window returns the inflated window in recovery, bytes (0 outside recovery).
func (r *fastRecovery) Window() int {
	if !r.inRec {
		return 0
	}
	return r.win
}

// countDupAck counts an ACK outside recovery (step 1) and reports whether it
// is the DupThresh-th duplicate ACK in a row.
func (r *fastRecovery) countDupAck(a *AckInfo) bool {
	if a.Advanced() {
		r.dupAcks = 0
		return false
	}
	if !a.DupAck {
		return false
	}
	r.dupAcks++
	return r.dupAcks == r.dupThresh
}

// enter starts recovery: ssthresh = max(FlightSize/2, 2*SMSS) in the
// controller (step 2), retransmit the lost segment and cwnd = ssthresh +
// 3*SMSS (step 3).
func (r *fastRecovery) enter(x *Ctx) { r.enterFlight(x, -1) }

// enterFlight is enter with the controller told flight bytes in flight
// (ssthresh from it), or, if flight < 0, FlightSize bounded by cwnd.
func (r *fastRecovery) enterFlight(x *Ctx, flight int) {
	r.inRec = true
	if flight < 0 {
		x.EnterRecovery()
	} else {
		x.EnterRecoveryFlight(flight)
	}
	r.retransmitFirst(x)
	r.win = x.CC.Ssthresh() + r.dupThresh*r.mss
	r.departed = r.dupThresh * r.mss
}

// retransmitFirst marks the first unacknowledged segment lost and due for
// retransmission.
func (r *fastRecovery) retransmitFirst(x *Ctx) {
	if x.SB.Count() > 0 {
		x.MarkLost(0, LossDupAck)
		r.retx = true
	}
}

// inflate applies step 4: one SMSS per additional duplicate ACK.
func (r *fastRecovery) inflate(a *AckInfo) {
	if a.DupAck {
		r.win += r.mss
		r.departed += r.mss
	}
}

// exit ends recovery; the controller sets cwnd.
func (r *fastRecovery) exit(x *Ctx) {
	r.reset()
	x.exitRecovery(r.exitGrow)
}

// reset leaves recovery without telling the controller (after an RTO).
func (r *fastRecovery) reset() {
	r.inRec = false
	r.retx = false
	r.dupAcks = 0
	r.departed = 0
}

// SACKBlind marks Reno and NewReno as senders that ignore SACK (RFC 5681,
// RFC 6582).
func (r *fastRecovery) SACKBlind() {}

// Next retransmits the first unacknowledged segment when due, then sends new
// data while FlightSize is below the inflated window (RFC 5681 step 5, RFC
// 6582 steps 4-5 "send a new segment if permitted by the new value of cwnd").
func (r *fastRecovery) Next(x *Ctx) Action {
	if !r.inRec {
		if r.dupAcks > 0 && x.SB.NextLost() < 0 {
			// RFC 3042 Limited Transmit (RFC 5681 §3.2 step 1): on the
			// first and second duplicate ACK, new data may go out while
			// FlightSize <= cwnd + 2*SMSS, one segment per duplicate ACK.
			lt := min(r.dupAcks, 2) * r.mss
			if r.noLT {
				lt = 0 // only what cwnd itself allows
			}
			if allow := x.CC.Cwnd() + lt - x.SB.Pipe(); allow > 0 {
				return Action{Retransmit: -1, NewData: allow}
			}
			return NoSend
		}
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
func (r *fastRecovery) OnSent(x *Ctx, retransmit bool, bytes int) {
	if retransmit {
		r.retx = false
	}
}
