package transport

import (
	"slices"
	"time"

	"cclab/clock"
	"cclab/internal/spec"
)

// RACK-TLP (RFC 8985): time-based loss detection with a reordering window,
// and tail loss probes. It is an option of the SACK-based strategies (`rack`:
// sack, fack, ratehalving and prr decide how much is sent, RACK what is
// lost), and the strategy `rack` is RACK-TLP with PRR as Linux runs it.
//
// RACK replaces the duplicate-ACK rules (IsLost, NextSeg rules 3 and 4): a
// segment is lost when a segment sent after it was delivered and it has been
// outstanding longer than RACK.rtt + RACK.reo_wnd; a loss marked so starts a
// recovery episode. TLP sends a probe (new data, else the last segment) when
// no ACK came for a PTO, so that a tail loss is detected by RACK instead of
// the RTO.

// RFC 8985 constants.
const (
	// RACKReoWndPersist is the number of loss recoveries a grown reordering
	// window persists without a further D-SACK (RFC 8985 §6.2, 16).
	RACKReoWndPersist = 16
	// TLPWCDelAckT is the worst-case delayed-ACK time added to the PTO when
	// one segment is in flight (RFC 8985 §7.2, WCDelAckT = 200 ms).
	TLPWCDelAckT = 200 * time.Millisecond
	// TLPNoSRTT is the PTO before any RTT sample (RFC 8985 §7.2, 1 s).
	TLPNoSRTT = time.Second
)

// rackState is RACK's and TLP's per-connection state (RFC 8985 §6.1, §7).
type rackState struct {
	tlpOn bool // tail loss probes on

	xmitSeq       uint64        // RACK.xmit_ts/RACK.end_seq, as a transmission order (Segment.SendSeq)
	xmitTS        clock.Time    // RACK.xmit_ts
	endSeq        uint64        // RACK.end_seq
	rtt           time.Duration // RACK.rtt
	reordSeen     bool          // RACK.reordering_seen
	reoWndMult    int           // RACK.reo_wnd_mult
	reoWndPersist int           // RACK.reo_wnd_persist
	dsackRound    uint64        // RACK.dsack_round (valid if dsackSet)
	dsackSet      bool
	timerAt       clock.Time // the RACK reordering timer
	rtoRec        bool       // in RTO recovery (until the cumulative point passes the RTO's HighData)

	ptoAt      clock.Time // the PTO timer
	tlpEnd     uint64     // TLP.end_seq (valid if tlpSet)
	tlpSet     bool
	tlpRetrans bool // TLP.is_retrans
	probeDue   bool // the PTO fired: the next send is a probe

	lost   uint64 // segments RACK marked lost
	probes uint64 // probes sent
	tlpFix uint64 // losses repaired by a probe (congestion response invoked)
}

func newRACKState(tlp bool) rackState {
	return rackState{tlpOn: tlp, reoWndMult: 1, timerAt: clock.Never, ptoAt: clock.Never}
}

// RACKStats is what RACK-TLP did, for tests and reports.
type RACKStats struct {
	Lost       uint64 // segments marked lost by the time rule
	Probes     uint64 // tail loss probes sent
	TLPRepairs uint64 // losses repaired by a probe
	ReoWndMult int    // RACK.reo_wnd_mult now
	Reordering bool   // RACK.reordering_seen
}

// RACKStats returns RACK's counters (zero if the option is off).
func (r *sackLoss) RACKStats() RACKStats {
	if r.rack == nil {
		return RACKStats{}
	}
	k := r.rack
	return RACKStats{Lost: k.lost, Probes: k.probes, TLPRepairs: k.tlpFix, ReoWndMult: k.reoWndMult, Reordering: k.reordSeen}
}

// ReoWnd returns RACK.reo_wnd as RACK_update_reo_wnd computes it (RFC 8985
// §6.2 step 4): 0 while no reordering was seen and the sender is in recovery
// or DupThresh segments are SACKed, else min(reo_wnd_mult * min_RTT / 4,
// SRTT).
func (k *rackState) ReoWnd(x *Ctx, inRecovery bool, dupThresh int) time.Duration {
	if !k.reordSeen {
		if inRecovery || k.rtoRec {
			return 0
		}
		if x.SB.SackedBytes() >= dupThresh*x.MSS {
			return 0
		}
	}
	return min(time.Duration(k.reoWndMult)*x.MinRTT()/4, x.SRTT())
}

// onAck runs RFC 8985 §6.2 steps 1-5 for one ACK and reports whether a
// segment was newly marked lost.
func (k *rackState) onAck(x *Ctx, a *AckInfo, inRecovery bool, dupThresh int) bool {
	// Step 1, RACK_update.
	if a.NewestSendSeq > 0 {
		k.rtt = a.NewestRTT
		if a.NewestSendSeq > k.xmitSeq {
			k.xmitSeq, k.xmitTS, k.endSeq = a.NewestSendSeq, a.NewestSent, a.NewestEnd
		}
	}
	// Step 2, RACK_detect_reordering.
	if a.Reorder > 0 {
		k.reordSeen = true
	}
	// Step 3, D-SACK rounds (RACK_update_reo_wnd, first part).
	if k.dsackSet && x.SB.Una() >= k.dsackRound {
		k.dsackSet = false
	}
	if !k.dsackSet && a.DSACK {
		k.dsackRound, k.dsackSet = x.SB.Nxt(), true
		k.reoWndMult++
		k.reoWndPersist = RACKReoWndPersist
	}
	// TLP ACK processing (§7.4) before loss detection.
	if k.tlpOn {
		k.tlpAck(x, a, inRecovery)
	}
	// Steps 4-5.
	return k.detectAndArm(x, inRecovery, dupThresh)
}

// onRecoveryExit applies the end of RACK_update_reo_wnd's D-SACK part:
// without a D-SACK for RACKReoWndPersist recoveries the window shrinks back.
func (k *rackState) onRecoveryExit() {
	k.reoWndPersist--
	if k.reoWndPersist <= 0 {
		k.reoWndMult = 1
	}
}

// detectAndArm is RACK_detect_loss_and_arm_timer (RFC 8985 §6.2 step 5).
func (k *rackState) detectAndArm(x *Ctx, inRecovery bool, dupThresh int) bool {
	timeout, marked := k.detectLoss(x, k.ReoWnd(x, inRecovery, dupThresh))
	if timeout > 0 {
		k.timerAt = x.Now.Add(timeout)
	} else {
		k.timerAt = clock.Never
	}
	return marked
}

// detectLoss is RACK_detect_loss: every segment not delivered and sent
// before RACK.xmit (RACK_sent_after, by transmission order) is lost once
// xmit_ts + RACK.rtt + reo_wnd has passed; it returns the longest remaining
// wait of the others and whether any was marked.
//
// As RFC 8985's implementation notes allow, it walks only the segments it
// may mark: those neither SACKed nor marked lost, in transmission order
// (the scoreboard's list), up to the first sent after RACK.xmit. The
// segments due are marked in stream order (the order of the PacketLost
// events): sorted if at most maxRACKDue, else by markLosses, a scan of
// the scoreboard.
func (k *rackState) detectLoss(x *Ctx, reoWnd time.Duration) (time.Duration, bool) {
	if k.xmitSeq == 0 {
		return 0, false
	}
	var timeout time.Duration
	var due [maxRACKDue]int // indexes of the segments due, in transmission order
	n := 0
	sb := x.SB
	for p := sb.tsHead; p != 0; {
		s := sb.at(p)
		if s.SendSeq >= k.xmitSeq {
			break // (the segment of RACK.xmit itself is delivered: not in the list)
		}
		remaining := s.SentAt.Add(k.rtt + reoWnd).Sub(x.Now)
		if remaining <= 0 {
			if n == len(due) {
				return k.markLosses(x, reoWnd)
			}
			due[n] = sb.index(p)
			n++
		} else {
			timeout = max(timeout, remaining)
		}
		p = s.tsNext
	}
	slices.Sort(due[:n])
	for _, i := range due[:n] {
		x.MarkLost(i, LossTime) // (marks change neither indexes nor the ring)
	}
	k.lost += uint64(n)
	return timeout, n > 0
}

// maxRACKDue is how many segments detectLoss marks lost from its walk of
// the list at most; more are marked by a scan.
const maxRACKDue = 16

// markLosses is detectLoss by a scan of the scoreboard in stream order,
// marking the segments due.
func (k *rackState) markLosses(x *Ctx, reoWnd time.Duration) (time.Duration, bool) {
	var timeout time.Duration
	marked := false
	a, b := x.SB.runs() // segments 0.. in order (MarkLost changes marks, not the ring)
	i := 0              // the index of segment s
scan:
	for _, run := range [2][]Segment{a, b} {
		for j := range run {
			s := &run[j]
			if s.SendSeq > k.xmitSeq {
				if s.Retrans == 0 {
					// Never-retransmitted segments are in send order, and a
					// retransmission above one is sent after it: nothing
					// further was sent before RACK.xmit.
					break scan
				}
				i++
				continue
			}
			if !s.Sacked && !s.Lost && s.SendSeq != k.xmitSeq {
				remaining := s.SentAt.Add(k.rtt + reoWnd).Sub(x.Now)
				if remaining <= 0 {
					x.MarkLost(i, LossTime)
					k.lost++
					marked = true
				} else {
					timeout = max(timeout, remaining)
				}
			}
			i++
		}
	}
	return timeout, marked
}

// armPTO is TLP_calc_PTO and the arming rule of RFC 8985 §7.2: after new data
// is sent or an ACK advances the cumulative point, unless in recovery (fast
// or RTO), with SACKed data outstanding, or with a probe outstanding.
func (k *rackState) armPTO(x *Ctx, inRecovery bool) {
	sb := x.SB
	if !k.tlpOn || inRecovery || k.rtoRec || k.tlpSet || sb.Count() == 0 || sb.SackedBytes() > 0 {
		k.ptoAt = clock.Never
		return
	}
	pto := TLPNoSRTT
	if srtt := x.SRTT(); srtt > 0 {
		pto = 2 * srtt
		if sb.FlightSize() <= x.MSS {
			pto += TLPWCDelAckT
		}
	}
	at := x.Now.Add(pto)
	if rto := x.RTOExpiry(); rto != clock.Never && rto.Before(at) {
		at = rto
	}
	k.ptoAt = at
}

// onPTO runs when the PTO fires (TLP_send_probe, §7.3): the next send is a
// probe, and the RTO is rearmed.
func (k *rackState) onPTO(x *Ctx, inRecovery bool) {
	k.ptoAt = clock.Never
	if inRecovery || k.tlpSet || x.SB.Count() == 0 {
		return
	}
	k.probeDue = true
	x.RearmRTO()
}

// probe returns the probe to send (§7.3): a new segment if one may be sent,
// else a retransmission of the highest segment not SACKed.
func (k *rackState) probe(x *Ctx) (Action, uint64) {
	if x.NewDataAvailable() > 0 {
		return Action{Retransmit: -1, NewData: x.MSS}, 0
	}
	for i := x.SB.Count() - 1; i >= 0; i-- {
		if s := x.SB.Seg(i); !s.Sacked {
			return Action{Retransmit: i}, s.End()
		}
	}
	k.probeDue = false
	return NoSend, 0
}

// onSent records a probe (TLP.end_seq = SND.NXT) or arms the PTO after new
// data.
func (k *rackState) onSent(x *Ctx, retransmit bool, inRecovery bool) {
	if k.probeDue {
		k.probeDue = false
		k.tlpSet, k.tlpEnd, k.tlpRetrans = true, x.SB.Nxt(), retransmit
		k.probes++
		k.ptoAt = clock.Never
		x.RearmRTO()
		return
	}
	if !retransmit {
		k.armPTO(x, inRecovery)
	}
}

// tlpAck is TLP_process_ack (RFC 8985 §7.4.2): a probe's episode ends when
// the ACK covers it; if it repaired a loss (the ACK goes beyond TLP.end_seq
// after a retransmitted probe) the congestion controller reacts as to a fast
// recovery (EnterRecovery then ExitRecovery). A probe sent before a recovery
// episode began may be acknowledged during it (inRecovery): the episode has
// already reduced the window for that loss, so no second, nested episode
// starts (episodes strictly alternate: TestRecoveryOwner).
func (k *rackState) tlpAck(x *Ctx, a *AckInfo, inRecovery bool) {
	if !k.tlpSet || a.CumAck < k.tlpEnd {
		return
	}
	switch {
	case !k.tlpRetrans:
		k.tlpSet = false // a probe of new data was delivered
	case a.DSACK && a.DSACKStart < k.tlpEnd && k.tlpEnd <= a.DSACKEnd:
		k.tlpSet = false // the probe was a redundant copy
	case a.CumAck > k.tlpEnd:
		k.tlpSet = false // the probe repaired the single loss
		k.tlpFix++
		if !inRecovery {
			x.EnterRecovery()
			x.ExitRecovery()
		}
	case a.DupAck && a.SackedBytes == 0 && !a.DSACK:
		k.tlpSet = false // original and probe both delivered
	}
}

// onRTO clears the timers and the probe state.
func (k *rackState) onRTO() {
	k.timerAt, k.ptoAt = clock.Never, clock.Never
	k.tlpSet, k.probeDue = false, false
	k.rtoRec = true
}

// deadline returns the earlier of the reordering timer and the PTO.
func (k *rackState) deadline() clock.Time { return clock.Earliest(k.timerAt, k.ptoAt) }

// Deadline implements RecoveryTimer: RACK's reordering timer and TLP's PTO.
func (r *sackLoss) Deadline() clock.Time {
	if r.rack == nil {
		return clock.Never
	}
	return r.rack.deadline()
}

// OnTimer implements RecoveryTimer: the reordering timer runs RACK's loss
// detection again (and may start an episode); the PTO makes the next send a
// probe.
func (r *sackLoss) OnTimer(x *Ctx) {
	k := r.rack
	if k == nil {
		return
	}
	if !x.Now.Before(k.timerAt) {
		if k.detectAndArm(x, r.inRec, r.dupThresh) && !r.inRec && !k.rtoRec && x.SB.Count() > 0 {
			r.enter(x)
		}
	}
	if !x.Now.Before(k.ptoAt) {
		k.onPTO(x, r.inRec)
	}
}

// normal is the send rule outside recovery: a due tail loss probe first
// (sent whatever cwnd), else with option nolt noLTAllowance where it
// applies, else Ctx.Normal.
func (r *sackLoss) normal(x *Ctx) Action {
	if r.frto.step != 0 { // (frtoNext sends only during F-RTO's steps: no call on every Transmit)
		if act, ok := r.frtoNext(x); ok {
			return act
		}
	}
	if r.rack != nil && r.rack.probeDue {
		act, end := r.rack.probe(x)
		if act.Retransmit >= 0 {
			r.pendEnd, r.pendRule4, r.pendDbl = end, false, false
		}
		if act.Retransmit >= 0 || act.NewData > 0 {
			return act
		}
	}
	if allow, ok := r.noLTAllowance(x); ok {
		if allow <= 0 {
			return NoSend
		}
		return Action{Retransmit: -1, NewData: allow}
	}
	return x.Normal()
}

// MinRTT returns the connection's minimum RTT sample (0 before any).
func (x *Ctx) MinRTT() time.Duration { return x.c.rtt.min }

// SRTT returns the connection's smoothed RTT (0 before any sample).
func (x *Ctx) SRTT() time.Duration { return x.c.rtt.srtt }

// RTOExpiry returns when the retransmission timer will expire: the armed
// instant, or now + RTO if it is not armed (it is armed when data is sent).
func (x *Ctx) RTOExpiry() clock.Time {
	if x.c.rtoAt != clock.Never {
		return x.c.rtoAt
	}
	return x.Now.Add(x.c.rtt.current())
}

// RearmRTO restarts the retransmission timer from now (RFC 8985 §7.3: after
// a probe is scheduled).
func (x *Ctx) RearmRTO() { x.c.rtoAt = x.Now.Add(x.c.rtt.current()) }

// RACKConfig is the parameter set of the strategy rack: RACK-TLP loss
// detection with PRR (RFC 6937) deciding how much is sent in recovery, and
// undo of spurious episodes, as Linux runs it.
type RACKConfig struct {
	DupThresh int    `param:"dupthresh" help:"SACKed segments that switch the reordering window off while no reordering was seen (RFC 8985 §6.2 DupThresh: 3)"`
	TLP       bool   `param:"tlp" help:"tail loss probes (RFC 8985 §7); tlp=false disables them"`
	Undo      bool   `param:"undo" help:"undo the window reduction of episodes found spurious (D-SACK, Eifel); undo=false disables it"`
	Bound     string `param:"bound" help:"PRR reduction bound once pipe <= ssthresh: ssrb (default) or crb"`
	RTORearm  bool   `param:"rtorearm" help:"restart the retransmission timer when the first unacknowledged segment is retransmitted (Linux; RFC 6298 §5.1 starts it only when not running)"`
	Echo      string `param:"echo" help:"which delivered retransmissions the ACK's timestamp echo judges: all (default, RFC 8985 §6.2 as written) or cum (the first segment of a cumulative advance only, as an RFC 7323 receiver's echo describes; Linux's RACK ignores the echo)"`
}

// RACK is RACK-TLP loss detection (RFC 8985) with PRR (RFC 6937).
type RACK struct {
	PRR
}

// Name returns "rack".
func (r *RACK) Name() string { return "rack" }

func init() {
	Recoveries.Register(spec.Entry[Recovery, RecoveryEnv]{
		Name:     "rack",
		Doc:      "RACK-TLP time-based loss detection, RFC 8985, with PRR (RFC 6937) and undo (D-SACK, Eifel); options tlp, undo, bound, echo, rtorearm",
		Defaults: func() any { return &RACKConfig{DupThresh: DupThresh, TLP: true, Undo: true, Bound: "ssrb"} },
		Build: func(cfg any, env RecoveryEnv) (Recovery, error) {
			c := *cfg.(*RACKConfig)
			r := newStrategy[RACK](env)
			if err := r.PRR.init("rack", PRRConfig{SACKConfig: SACKConfig{DupThresh: c.DupThresh, RACK: true, TLP: c.TLP, Undo: c.Undo, Echo: c.Echo, RTORearm: c.RTORearm}, Bound: c.Bound}, env, &r.PRR); err != nil {
				return nil, err
			}
			return r, nil
		},
	})
}
