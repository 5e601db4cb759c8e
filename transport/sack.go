package transport

import (
	"fmt"
	"sort"

	"cclab/clock"
	"cclab/internal/spec"
)

// SACK is the conservative SACK-based loss recovery of RFC 6675: the
// scoreboard's SACK marks drive loss detection (IsLost), the amount of data in
// the network (pipe, SetPipe) and the choice of what to send (NextSeg); a
// recovery episode starts on DupThresh duplicate ACKs or when the first
// unacknowledged segment IsLost, with RecoveryPoint = HighData and cwnd =
// ssthresh, and ends when the cumulative ACK reaches RecoveryPoint. Holes are
// retransmitted while cwnd - pipe >= 1 SMSS, several per round trip, so a
// burst of losses in one window is repaired in about one RTT.
//
// Option lostretx adds lost-retransmission detection (lostretx.go).
type SACK struct {
	sackLoss
}

// Name returns "sack".
func (r *SACK) Name() string { return "sack" }

// OnAck updates loss marks and enters or leaves recovery (RFC 6675 §5).
func (r *SACK) OnAck(x *Ctx, a *AckInfo) {
	if r.update(x, a) {
		r.enter(x)
	}
}

// Next applies RFC 6675 §5 step (C): while cwnd - pipe >= 1 SMSS (cwnd =
// ssthresh during recovery, step 4.2), send what NextSeg returns.
func (r *SACK) Next(x *Ctx) Action {
	if !r.inRec {
		return r.normal(x)
	}
	if act, ok := r.fastRetransmit(x); ok {
		return act
	}
	allow := x.CC.Ssthresh() - r.Pipe(x.SB)
	if allow < r.mss {
		return NoSend
	}
	return r.nextSeg(x, allow)
}

// sackLoss is the RFC 6675 machinery shared by the SACK-based strategies
// (sack, fack, ratehalving, prr): loss marking on the scoreboard, recovery
// entry and exit, NextSeg, the RTO rules of §5.1 and optional
// lost-retransmission detection. The embedding strategy decides how much may
// be sent in recovery.
type sackLoss struct {
	dupThresh  int            // DupThresh, segments (adapted to reordering with option adaptive)
	baseDup    int            // the configured DupThresh, segments
	mss        int            // SMSS, bytes
	fackRule   bool           // FACK loss rule: lost if more than DupThresh*SMSS below snd.fack (else RFC 6675 IsLost)
	lostRetx   bool           // lost-retransmission detection on
	adaptive   bool           // DupThresh adapts to the reordering seen (reorder.go)
	undo       bool           // spurious episodes are undone (undo.go)
	pipeFlight bool           // ssthresh from the pipe at entry (SACKConfig.Flight pipe)
	partialRxt bool           // a partial ACK forces a retransmission (SACKConfig.PartialRxt)
	echoCum    bool           // option echo=cum (echo.go)
	rtoRearm   bool           // option rtorearm (echo.go)
	exitGrow   bool           // the ACK that ends recovery also grows the window (ExitGrowConfig)
	rtoHold    bool           // option rtohold: a repeated timeout keeps ssthresh (rtoHolder)
	rtoMark    bool           // option rtomark: losses are marked during a timeout's recovery
	rxtPipe    bool           // option rxtpipe: SACKed retransmissions stay in pipe (Scoreboard.holdRetx)
	noLT       bool           // option nolt: before recovery SACKed data releases nothing beyond cwnd (SACKConfig.NoLT)
	ns3NextSeg bool           // option nextseg (SACKConfig.NS3NextSeg)
	ns3Entry   bool           // option ns3entry (SACKConfig.NS3Entry)
	impatient  bool           // option impatient: only an episode's first partial ACK restarts the timer
	partials   int            // impatient: partial ACKs in the current episode (the entering ACK's advance counts)
	entryAdv   bool           // impatient: the ACK that starts the episode moved snd.una
	newDue     bool           // nextseg: the forced send is NextSeg's rule 2 (one new segment) or the head (fastRetransmit)
	rack       *rackState     // RACK-TLP loss detection (rack.go): &rackSt, nil if off
	rackSt     rackState      // rack's storage (in the strategy: no allocation of its own; see init)
	entered    episodeStarter // the embedding strategy's set-up of a new episode, called at the end of enter; nil if none
	frto       frtoState      // F-RTO (frto.go), if frto.on
	// rtoRecovery: an RTO fired and the cumulative point has not yet
	// reached its RecoveryPoint.
	rtoRecovery bool

	inRec     bool
	recPoint  uint64 // RecoveryPoint (RFC 6675 §5 step 4.1): HighData at entry or at the last RTO
	recSet    bool   // recPoint is valid
	dupAcks   int    // DupAcks (RFC 6675 §5)
	highRxt   uint64 // HighRxt: end of the highest segment retransmitted in this episode (exclusive)
	rescueRxt uint64 // RescueRxt (NextSeg rule 4)
	rescueSet bool
	fastRetx  bool     // step 4.3: the fast retransmission of the first segment is due
	markedTo  uint64   // loss marks have been applied below this offset
	pendEnd   uint64   // end of the segment Next chose to retransmit
	pendRule4 bool     // ... chosen by NextSeg rule 4 (does not move HighRxt)
	pendOff   uint64   // offset of the segment Next chose to retransmit
	pendDbl   bool     // ... which was not marked lost (rule 3 or 4)
	dbl       []uint64 // offsets of outstanding rule 3/4 retransmissions of segments not deemed lost
	epochSeq  uint64   // scoreboard send counter when the episode began
	lrSeen    uint64   // HighSackedSendSeq at the last lost-retransmission check

	lostRetxFound uint64 // retransmissions detected lost (lostretx)
	rescues       uint64 // NextSeg rule 4 rescue retransmissions
}

// SACKConfig is the parameter set of the SACK-based strategies.
type SACKConfig struct {
	DupThresh int  `param:"dupthresh" help:"duplicate ACKs / SACKed segments above a hole that declare it lost, packets (RFC 6675: 3)"`
	LostRetx  bool `param:"lostretx" help:"detect lost retransmissions: a retransmitted segment is lost again when a segment sent after it is SACKed"`
	Adaptive  bool `param:"adaptive" help:"dupthresh grows to the reordering degree measured (Linux tcp_reordering), at most 300 packets"`
	Undo      bool `param:"undo" help:"undo the window reduction of an episode found spurious (D-SACK, RFC 3708; timestamps, RFC 3522)"`
	RACK      bool `param:"rack" help:"RACK-TLP time-based loss detection (RFC 8985) instead of IsLost and NextSeg rules 3-4"`
	TLP       bool `param:"tlp" help:"with rack: tail loss probes (RFC 8985 §7); tlp=false disables them"`
	FRTO      bool `param:"frto" help:"F-RTO (RFC 5682 SACK-enhanced): after a timeout resend only the oldest segment until two ACKs tell whether it was spurious"`
	// Flight is the amount in flight the controller's loss response
	// (ssthresh) is computed from on entering recovery.
	Flight string `param:"flight" help:"what ssthresh is computed from on entering recovery and at a timeout: flightsize (RFC 6675 §5 step 4.2 and RFC 5681 §3.1, FlightSize bounded by cwnd; default) or pipe (RFC 6675 pipe: once the losses are marked on entering, before the timeout marks on a timeout; as ns-3's TcpSocketBase::EnterRecovery and ReTxTimeout)"`
	// PartialRxt makes every partial ACK in recovery whose new first
	// segment was never retransmitted send one retransmission at once,
	// outside the window (partialrxt.go).
	// Echo says which delivered segments the ACK's timestamp echo is
	// checked against (echo.go).
	// RTORearm restarts the retransmission timer whenever the first
	// unacknowledged segment is retransmitted (echo.go).
	RTORearm   bool   `param:"rtorearm" help:"restart the retransmission timer when the first unacknowledged segment is retransmitted (Linux's tcp_xmit_retransmit_queue; RFC 6298 §5.1 starts it only when it is not running)"`
	Echo       string `param:"echo" help:"which delivered retransmissions the ACK's timestamp echo judges (RACK_update, reordering, Eifel): all (default, RFC 8985 §6.2 as written) or cum (only the first segment of a cumulative advance, whose timestamp an RFC 7323 §4.3 receiver echoes; as Linux, whose RACK ignores the echo)"`
	PartialRxt bool   `param:"partialrxt" help:"a partial ACK whose first unacknowledged segment was never retransmitted retransmits at once, outside the window: the first segment marked lost, else that first segment (ns-3 3.37's TcpSocketBase::ProcessAck; not RFC 6675)"`
	// RTOHold keeps ssthresh at a timeout within an earlier timeout's
	// recovery whose first unacknowledged segment was retransmitted
	// (rtoHolder).
	RTOHold bool `param:"rtohold" help:"at a timeout while an earlier timeout's recovery is unfinished (cumulative ACK below its RecoveryPoint) and the first unacknowledged segment has been retransmitted, keep ssthresh (ns-3 3.37's TcpSocketBase::ReTxTimeout: CA_LOSS and IsHeadRetransmitted; RFC 5681 §3.1 holds it only while no new ACK arrived)"`
	// RTOMark keeps marking losses during a timeout's recovery (rtoMark).
	// RxtPipe keeps a SACKed retransmission in pipe until the cumulative
	// ACK covers it (Scoreboard.holdRetx).
	RxtPipe bool `param:"rxtpipe" help:"a segment retransmitted since the latest timeout stays in pipe when it is SACKed, until the cumulative ACK covers it or the next timeout (ns-3 3.37's TcpTxBuffer::BytesInFlight = sent - sacked - lost + retrans: Update sets m_sacked but keeps m_retrans, which only DiscardUpTo and SetSentListLost clear; RFC 6675 SetPipe counts no SACKed octet)"`
	// Impatient restarts the retransmission timer on the first partial
	// ACK of an episode only (impatient).
	Impatient bool `param:"impatient" help:"in a recovery episode only the first ACK that moves snd.una short of RecoveryPoint restarts the retransmission timer, the ACK that starts the episode included when it moves snd.una (ns-3 3.37's TcpSocketBase::ProcessAck: NewAck(ackNumber, m_isFirstPartialAck) in CA_RECOVERY, RFC 6582 §3.2 step 5's Impatient variant carried into SACK recovery; default: RFC 6298 §5.3, every ACK that acknowledges new data restarts it)"`
	RTOMark   bool `param:"rtomark" help:"during a timeout's recovery (cumulative ACK below its RecoveryPoint) the loss rule keeps marking segments lost, so that they are retransmitted at once (NextSeg rule 1) with no new episode (ns-3 3.37's TcpTxBuffer::Update runs UpdateLostCount on every SACK, also in CA_LOSS; RFC 6675 §5.1 marks nothing until HighACK passes RecoveryPoint and a new episode starts)"`
	// NoLT: outside recovery, new data goes out only while FlightSize
	// (snd.nxt - snd.una, SACKed data included) is below cwnd, so the
	// duplicate ACKs before the DupThresh-th release nothing (noLTAllowance).
	// NS3NextSeg makes the forced sends (the entry's step 4.3 send, and
	// with partialrxt a partial ACK's) ns-3's DoRetransmit: NextSeg's
	// choice, not the first unacknowledged segment (nextseg.go).
	NS3NextSeg bool `param:"nextseg" help:"the forced sends of recovery (step 4.3 at entry; with partialrxt, a partial ACK's) are ns-3 3.37's DoRetransmit: the first segment marked lost and not retransmitted, else one new segment, else the first unacknowledged segment (tcp-socket-base.cc:3970, tcp-tx-buffer.cc NextSeg rules 1-2); at entry a first segment already retransmitted and not detected lost again is not marked lost (:1663). Default: RFC 6675 step 4.3 resends the first unacknowledged segment, and partialrxt resends the first lost or else the first unacknowledged segment"`
	NoLT       bool `param:"nolt" help:"no sending beyond cwnd on the duplicate ACKs before recovery: SACKed data stays counted in flight until recovery starts (the SACK senders before RFC 3042, 2001, and RFC 6675; RFC 2581 §3.2 with RFC 2018). Off by default"`
	// NS3Entry starts an episode on ns-3's test (entryLost, countDupAck).
	NS3Entry bool `param:"ns3entry" help:"an episode starts on ns-3 3.37's test, TcpSocketBase::DupAck and ProcessAck: every ACK that SACKs new data counts as a duplicate ACK, also when it moves snd.una, and only an ACK that moves snd.una without new SACK information resets the count (tcp-socket-base.cc:1965, :2024-2027); the episode starts when the count reaches exactly DupThresh (:1777) or step (1.b) finds lost the segment one SMSS above HighACK, not the first (:1787, IsLost(m_highRxAckMark + m_segmentSize)). Default: RFC 6675 §5 with RFC 5681's duplicate ACKs (a cumulative advance resets the count) and IsLost(HighACK + 1)"`
	ExitGrowConfig
}

// noLTAllowance returns, with option nolt, what may be sent outside
// recovery while the scoreboard holds SACKed data and nothing is marked
// lost: cwnd - FlightSize (RFC 2581 §3.2, the sending rule of the SACK
// implementations before RFC 3042's Limited Transmit (2001) and RFC 6675's
// pipe, which count SACKed segments out of flight before recovery). ok is
// false when the rule does not apply (option off, no SACKed data, losses
// marked, or a timeout's recovery, whose retransmissions go by pipe).
func (r *sackLoss) noLTAllowance(x *Ctx) (allow int, ok bool) {
	if !r.noLT || r.inRec || r.rtoRecovery || x.SB.SackedBytes() == 0 || x.SB.NextLost() >= 0 {
		return 0, false
	}
	return x.CC.Cwnd() - x.SB.FlightSize(), true
}

// Values of SACKConfig.Flight.
const (
	FlightSize = "flightsize"
	FlightPipe = "pipe"
)

// InRecovery reports whether a loss-recovery episode is in progress.
func (r *sackLoss) InRecovery() bool { return r.inRec }

// RecoveryPoint returns RFC 6675 RecoveryPoint (exclusive end of HighData at
// the start of the latest episode or the latest RTO), bytes.
func (r *sackLoss) RecoveryPoint() uint64 { return r.recPoint }

// HighRxt returns RFC 6675 HighRxt (exclusive end of the highest segment
// retransmitted in the current episode), bytes.
func (r *sackLoss) HighRxt() uint64 { return r.highRxt }

// LostRetransmissions returns how many retransmissions were detected lost
// (option lostretx).
func (r *sackLoss) LostRetransmissions() uint64 { return r.lostRetxFound }

// Rescues returns how many NextSeg rule 4 rescue retransmissions were sent.
func (r *sackLoss) Rescues() uint64 { return r.rescues }

// DupThresh returns the duplicate-ACK threshold, segments.
func (r *sackLoss) DupThresh() int { return r.dupThresh }

// lostBelow returns k such that the loss rule declares lost every segment with
// index < k and none at or above k (both rules are monotone in the offset).
//
// RFC 6675 IsLost(SeqNum): DupThresh discontiguous SACKed segments above
// SeqNum, or more than (DupThresh - 1) * SMSS SACKed bytes above it.
// FACK: more than DupThresh * SMSS between the segment and snd.fack, the
// forward-most SACKed byte (Mathis & Mahdavi 1996).
func (r *sackLoss) lostBelow(sb *Scoreboard) int {
	hs := sb.HighSacked()
	if hs <= sb.Una() || sb.SackedBytes() == 0 {
		return 0
	}
	if r.fackRule {
		lim := uint64(r.dupThresh * r.mss)
		if hs <= lim {
			return 0
		}
		edge := hs - lim
		return sort.Search(sb.Count(), func(i int) bool { return sb.Seg(i).Off >= edge })
	}
	top := sb.Find(hs - 1)
	if top < 0 {
		return 0
	}
	n, bytes := 0, 0
	for j := top; j >= 0; j-- {
		s := sb.Seg(j)
		if !s.Sacked {
			continue
		}
		n++
		bytes += s.Len
		if n >= r.dupThresh || bytes > (r.dupThresh-1)*r.mss {
			return j
		}
	}
	return 0
}

// IsLost reports whether the loss rule declares the outstanding segment i
// lost (RFC 6675 IsLost, or the FACK rule). SACKed segments are never lost.
func (r *sackLoss) IsLost(sb *Scoreboard, i int) bool {
	return i >= 0 && i < sb.Count() && !sb.Seg(i).Sacked && i < r.lostBelow(sb)
}

// Pipe returns RFC 6675 pipe (SetPipe), bytes: the scoreboard's count of
// outstanding bytes neither SACKed nor marked lost, plus a second count for
// each segment retransmitted by NextSeg rule 3 or 4 while not deemed lost
// (SetPipe counts such an octet once as not lost and once as below HighRxt).
func (r *sackLoss) Pipe(sb *Scoreboard) int {
	p := sb.Pipe()
	k := 0
	for _, off := range r.dbl {
		i := sb.Find(off)
		if i < 0 || off < sb.Una() {
			continue
		}
		s := sb.Seg(i)
		if s.Sacked || s.Lost {
			continue
		}
		p += s.Len
		r.dbl[k] = off
		k++
	}
	r.dbl = r.dbl[:k]
	return p
}

// markLosses marks lost every segment the loss rule declares lost that was
// not retransmitted (RFC 6675 Update and the IsLost part of SetPipe: pipe
// then excludes them). Retransmitted segments are left to lost-retransmission
// detection.
func (r *sackLoss) markLosses(x *Ctx) {
	sb := x.SB
	k := r.lostBelow(sb)
	if k == 0 {
		return
	}
	i := 0
	if r.markedTo > sb.Una() {
		i = sort.Search(sb.Count(), func(i int) bool { return sb.Seg(i).End() > r.markedTo })
	}
	for ; i < k; i++ {
		if s := sb.Seg(i); !s.Sacked && !s.Lost && s.Retrans == 0 {
			x.MarkLost(i, LossDupAck)
		}
	}
	if e := sb.Seg(k - 1).End(); e > r.markedTo {
		r.markedTo = e
	}
}

// update runs the per-ACK part of RFC 6675 §5 and reports whether a new
// recovery episode should start now (the caller then calls enter).
func (r *sackLoss) update(x *Ctx, a *AckInfo) bool {
	inLoss := r.rtoRecovery // ns-3's CA_LOSS when the ACK arrives
	if r.rtoRecovery && a.CumAck >= r.recPoint {
		r.rtoRecovery = false
	}
	if r.frtoOnAck(x, a) {
		return false
	}
	if r.adaptive && a.Reorder > 0 {
		r.dupThresh = adaptDupThresh(r.dupThresh, a.Reorder)
	}
	if r.lostRetx {
		r.detectLostRetx(x)
	}
	newLoss := false
	if k := r.rack; k != nil {
		if k.rtoRec && a.CumAck >= r.recPoint {
			k.rtoRec = false
			k.onRecoveryExit()
		}
		newLoss = k.onAck(x, a, r.inRec, r.dupThresh)
	}
	if r.inRec {
		if a.CumAck >= r.recPoint {
			// Exit when the cumulative ACK covers RecoveryPoint.
			r.inRec = false
			r.dupAcks = 0
			r.fastRetx = false
			x.exitRecovery(r.exitGrow)
			if r.rack != nil {
				r.rack.onRecoveryExit()
				r.rack.armPTO(x, false)
				return newLoss && x.SB.Count() > 0
			}
			return false
		}
		if r.rack == nil {
			r.markLosses(x)
		}
		if r.partialRxt && a.Advanced() {
			r.partialRetransmit(x)
		}
		if r.impatient && a.Advanced() {
			if r.partials > 0 {
				x.RestartRTO = false // RFC 6582's Impatient variant, as ns-3's CA_RECOVERY
			}
			r.partials++
		}
		return false
	}
	if r.rack != nil {
		if a.Advanced() {
			r.rack.armPTO(x, false)
		}
		// RFC 8985: a loss RACK marks starts recovery (after an RTO, not
		// before the cumulative point reaches RecoveryPoint, RFC 6675 §5.1).
		return newLoss && x.SB.Count() > 0 && !(r.recSet && a.CumAck < r.recPoint)
	}
	r.countDupAck(a, inLoss)
	if a.SackedBytes == 0 && (!a.DupAck || r.ns3Entry) {
		return false // ns-3 tests only an ACK that SACKs new data (tcp-socket-base.cc:1977)
	}
	// §5.1: after an RTO no new episode until HighACK >= RecoveryPoint.
	if r.recSet && a.CumAck < r.recPoint {
		if r.rtoMark && r.rtoRecovery {
			// ns-3's CA_LOSS: the scoreboard marks losses on every SACK
			// and NextSeg rule 1 resends them, with no new episode.
			r.markLosses(x)
		}
		return false
	}
	// Step (1.a) DupAcks >= DupThresh, or (1.b) IsLost(HighACK + 1).
	if x.SB.Count() == 0 || (!r.dupAcksReached() && !r.entryLost(x.SB)) {
		return false
	}
	r.entryAdv = a.Advanced()
	return true
}

// countDupAck counts DupAcks outside recovery: RFC 5681 §2's duplicate
// ACKs, reset by a cumulative advance; with option ns3entry, as ns-3 3.37's
// ProcessAck, every ACK that SACKs new data (tcp-socket-base.cc:1965), reset
// only by an advance that SACKs nothing new (:2024-2027), and none in a
// timeout's recovery (inLoss: DupAck returns at once in CA_LOSS, :1713).
func (r *sackLoss) countDupAck(a *AckInfo, inLoss bool) {
	switch {
	case r.ns3Entry && inLoss:
	case r.ns3Entry && a.SackedBytes > 0:
		r.dupAcks++
	case a.Advanced():
		r.dupAcks = 0 // a cumulative acknowledgment resets DupAcks
	case a.DupAck && !r.ns3Entry:
		r.dupAcks++
	}
}

// dupAcksReached is step (1.a), DupAcks >= DupThresh; with option ns3entry
// DupAcks == DupThresh, as ns-3 3.37's DupAck (tcp-socket-base.cc:1777).
func (r *sackLoss) dupAcksReached() bool {
	if r.ns3Entry {
		return r.dupAcks == r.dupThresh
	}
	return r.dupAcks >= r.dupThresh
}

// entryLost is step (1.b)'s test: IsLost(HighACK + 1), the first
// outstanding segment; with option ns3entry the segment after it, as ns-3
// 3.37's DupAck tests IsLost(m_highRxAckMark + m_segmentSize)
// (tcp-socket-base.cc:1787). ns-3's TcpTxBuffer::IsLost walks from there to
// the first segment marked lost (true) or SACKed (false); the loss rule being
// monotone in the offset, that is IsLost of the second segment itself.
func (r *sackLoss) entryLost(sb *Scoreboard) bool {
	if !r.ns3Entry {
		return r.IsLost(sb, 0)
	}
	return sb.Count() > 1 && r.IsLost(sb, 1)
}

// enter starts an episode (RFC 6675 §5 step 4): RecoveryPoint = HighData,
// ssthresh from the controller, the first segment is marked lost and its
// fast retransmission is due whatever the window.
func (r *sackLoss) enter(x *Ctx) {
	r.inRec = true
	r.recPoint = x.SB.Nxt()
	r.recSet = true
	r.highRxt = x.SB.Una()
	r.rescueSet = false
	r.dbl = r.dbl[:0]
	r.epochSeq = x.SB.sends
	r.partials = 0
	if r.entryAdv {
		r.partials = 1 // ns-3: the entering ACK runs the partial-ACK branch too
	}
	r.entryAdv = false
	if r.pipeFlight {
		// ns-3 marks the losses first and passes the pipe that is left.
		r.markEntryLosses(x)
		x.EnterRecoveryFlight(r.Pipe(x.SB))
	} else {
		x.EnterRecovery()
		r.markEntryLosses(x)
	}
	if r.entered != nil {
		r.entered.startEpisode(x)
	}
}

// markEntryLosses marks the losses known at the start of an episode and
// arms the step 4.3 fast retransmission.
func (r *sackLoss) markEntryLosses(x *Ctx) {
	if r.rack != nil {
		// RACK marked the losses; the first of them is retransmitted at
		// once (step 4.3 with RACK's loss marks).
		r.fastRetx = x.SB.NextLost() >= 0
		r.rack.ptoAt = clock.Never
		return
	}
	r.markLosses(x)
	r.newDue = false
	if s := x.SB.Seg(0); !s.Sacked {
		if r.ns3NextSeg && s.Retrans > 0 && !s.Lost {
			// ns-3's EnterRecovery: the head's retransmission is in
			// flight; DoRetransmit sends NextSeg's rule 1 or 2.
			r.armDoRetransmit(x)
			return
		}
		x.MarkLost(0, LossDupAck)
		r.fastRetx = s.Lost
	}
}

// fastRetransmit returns the step 4.3 retransmission of the first segment if
// it is still due.
func (r *sackLoss) fastRetransmit(x *Ctx) (Action, bool) {
	if !r.fastRetx {
		return NoSend, false
	}
	if act, ok := r.doRetransmitNew(x); ok {
		return act, true
	}
	i := 0
	if r.rack != nil || r.partialRxt || r.ns3NextSeg {
		i = max(x.SB.NextLost(), 0)
	}
	if x.SB.Count() > 0 && x.SB.Seg(i).Lost {
		r.pendEnd, r.pendRule4, r.pendDbl = x.SB.Seg(i).End(), false, false
		return Action{Retransmit: i}, true
	}
	r.fastRetx = false
	return NoSend, false
}

// nextSeg is RFC 6675 NextSeg() given allow bytes of window: (1) the first
// segment marked lost (IsLost, above HighRxt, below the highest SACK; or a
// retransmission detected lost); (2) new data; (3) the first unSACKed segment
// above HighRxt below the highest SACK; (4) one rescue retransmission of the
// highest unSACKed segment per episode.
func (r *sackLoss) nextSeg(x *Ctx, allow int) Action {
	sb := x.SB
	if i := sb.NextLost(); i >= 0 {
		if sb.Seg(i).Len > allow {
			return NoSend
		}
		r.pendEnd, r.pendRule4, r.pendDbl = sb.Seg(i).End(), false, false
		return Action{Retransmit: i}
	}
	if x.NewDataAvailable() > 0 {
		return Action{Retransmit: -1, NewData: allow}
	}
	if r.rack != nil {
		return NoSend // RACK: only segments it marked lost are retransmitted (rules 3 and 4 would defeat the reordering window)
	}
	hs := sb.HighSacked()
	start := sort.Search(sb.Count(), func(i int) bool { return sb.Seg(i).Off >= r.highRxt })
	for i := start; i < sb.Count(); i++ {
		s := sb.Seg(i)
		if s.Off >= hs {
			break
		}
		if !s.Sacked && !s.Lost {
			if s.Len > allow {
				return NoSend
			}
			r.pendEnd, r.pendRule4, r.pendDbl, r.pendOff = s.End(), false, true, s.Off
			return Action{Retransmit: i}
		}
	}
	if !r.rescueSet || sb.Una() > r.rescueRxt {
		for i := sb.Count() - 1; i >= 0; i-- {
			s := sb.Seg(i)
			if s.Sacked {
				continue
			}
			if s.Len > allow {
				return NoSend
			}
			r.rescueRxt, r.rescueSet = r.recPoint, true
			r.pendEnd, r.pendRule4, r.pendDbl, r.pendOff = s.End(), true, !s.Lost, s.Off
			return Action{Retransmit: i}
		}
	}
	return NoSend
}

// OnSent records HighRxt (RFC 6675 §5 step C.2; not for rule 4).
func (r *sackLoss) OnSent(x *Ctx, retransmit bool, bytes int) {
	if !retransmit && r.frto.newDue > 0 {
		r.frto.newDue--
	}
	if r.rack != nil {
		r.rack.onSent(x, retransmit, r.inRec)
	}
	if !retransmit {
		return
	}
	r.fastRetx = false
	if r.pendDbl {
		r.dbl = append(r.dbl, r.pendOff)
		r.pendDbl = false
	}
	if r.pendRule4 {
		r.rescues++
		r.pendRule4 = false
		return
	}
	if r.inRec && r.pendEnd > r.highRxt {
		r.highRxt = r.pendEnd
	}
}

// rtoFlight returns, with flight=pipe, the pipe the controller's
// timeout response (ssthresh) is computed from, as ns-3 3.37's
// TcpSocketBase::ReTxTimeout passes BytesInFlight() taken before it marks
// the outstanding segments lost (RFC 5681 §3.1 eq. (4): FlightSize).
func (r *sackLoss) rtoFlight(x *Ctx) (int, bool) {
	if !r.pipeFlight {
		return 0, false
	}
	return r.Pipe(x.SB), true
}

// holdsSsthresh reports, with option rtohold, whether the timeout comes
// while an earlier timeout's recovery is unfinished (the cumulative ACK is
// below the RecoveryPoint that timeout set: ns-3's CA_LOSS) and the first
// unacknowledged segment has been retransmitted (TcpTxBuffer::
// IsHeadRetransmitted): ns-3 3.37's TcpSocketBase::ReTxTimeout then keeps
// ssthresh.
func (r *sackLoss) holdsSsthresh(x *Ctx) bool {
	return r.rtoHold && r.rtoRecovery && r.recSet && x.SB.Count() > 0 && x.SB.Seg(0).Retrans > 0
}

// OnRTO applies RFC 6675 §5.1: RecoveryPoint = HighData, the episode ends,
// and no new one starts until the cumulative ACK reaches RecoveryPoint. SACK
// marks are kept (the connection marked only un-SACKed segments lost).
func (r *sackLoss) OnRTO(x *Ctx) {
	if r.adaptive && !r.inRec && x.SB.SackedBytes() >= r.baseDup*r.mss {
		// Linux tcp_enter_loss: a timeout outside recovery with DupThresh
		// segments SACKed means the reordering degree was over-estimated.
		r.dupThresh = min(r.dupThresh, r.baseDup)
	}
	r.inRec = false
	r.fastRetx = false
	r.dupAcks = 0
	r.frtoOnRTO(x, r.DefersRTOMarks()) // the connection asked the same before marking
	r.recPoint = x.SB.Nxt()
	r.recSet = true
	r.rtoRecovery = true
	r.markedTo = 0
	if r.rack != nil {
		r.rack.onRTO()
	}
}

// UsesDSACK reports whether an option that uses D-SACK is on (undo, rack,
// adaptive): the connection then asks the peer for D-SACK blocks.
func (r *sackLoss) UsesDSACK() bool { return r.undo || r.rack != nil || r.adaptive }

// UndoEnabled reports whether option undo is on (UndoStrategy).
func (r *sackLoss) UndoEnabled() bool { return r.undo }

// OnUndo leaves a recovery episode found spurious (UndoStrategy): no
// RecoveryPoint holds back a new episode, DupAcks restart from zero.
func (r *sackLoss) OnUndo(x *Ctx) {
	r.inRec = false
	r.fastRetx = false
	r.dupAcks = 0
	r.recSet = false
	r.markedTo = 0
	if r.rack != nil {
		r.rack.rtoRec = false
		r.rack.armPTO(x, false)
	}
}

// init validates the shared parameters and sets up r where it is stored
// for good, inside its strategy on the heap (built in place: no copies of
// the strategy, and RACK's state is found through a pointer into r, so the
// strategy must not be copied afterwards); entered (nil for none) is the
// embedding strategy's episode set-up.
func (r *sackLoss) init(name string, c SACKConfig, env RecoveryEnv, entered episodeStarter) (err error) {
	if err := checkDupThresh(name, c.DupThresh); err != nil {
		return err
	}
	if env.MSS <= 0 {
		return fmt.Errorf("%s: RecoveryEnv.MSS=%d: must be a positive segment size in bytes", name, env.MSS)
	}
	r.dupThresh, r.baseDup, r.mss = c.DupThresh, c.DupThresh, env.MSS
	r.lostRetx, r.adaptive, r.undo, r.partialRxt, r.exitGrow = c.LostRetx, c.Adaptive, c.Undo, c.PartialRxt, c.ExitGrow
	r.rtoHold, r.rtoMark, r.rxtPipe, r.noLT, r.ns3NextSeg = c.RTOHold, c.RTOMark, c.RxtPipe, c.NoLT, c.NS3NextSeg
	r.impatient, r.ns3Entry = c.Impatient, c.NS3Entry
	r.frto.on = c.FRTO
	r.rtoRearm = c.RTORearm
	if r.echoCum, err = parseEcho(name, c.Echo); err != nil {
		return err
	}
	switch c.Flight {
	case "", FlightSize:
	case FlightPipe:
		r.pipeFlight = true
	default:
		return fmt.Errorf("%s: parameter flight=%q: must be %s or %s", name, c.Flight, FlightSize, FlightPipe)
	}
	if c.RACK {
		r.rackSt = newRACKState(c.TLP)
		r.rack = &r.rackSt
	}
	r.entered = entered
	return nil
}

// holdsSackedRetx reports whether option rxtpipe is on: the connection then
// keeps SACKed retransmissions in the scoreboard's pipe (Scoreboard.holdRetx).
func (r *sackLoss) holdsSackedRetx() bool { return r.rxtPipe }

// retxPipeHolder is a strategy that may ask for ns-3's pipe accounting of
// SACKed retransmissions (option rxtpipe).
type retxPipeHolder interface {
	holdsSackedRetx() bool
}

// episodeStarter is a strategy that sets up its own state when a recovery
// episode starts (PRR, RateHalving): sackLoss.enter calls it last.
type episodeStarter interface {
	startEpisode(x *Ctx)
}

func init() {
	Recoveries.Register(spec.Entry[Recovery, RecoveryEnv]{
		Name:     "sack",
		Doc:      "conservative SACK-based loss recovery, RFC 6675 (IsLost, pipe, NextSeg); option lostretx",
		Defaults: func() any { return &SACKConfig{DupThresh: DupThresh, TLP: true} },
		Build: func(cfg any, env RecoveryEnv) (Recovery, error) {
			r := newStrategy[SACK](env)
			if err := r.init("sack", *cfg.(*SACKConfig), env, nil); err != nil {
				return nil, err
			}
			return r, nil
		},
	})
}
