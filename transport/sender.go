package transport

// The sending half of a stream connection (Conn, its state in struct
// sender), as gVisor's snd.go: the application's writes and source, ACK
// processing in named steps (onAck; RFC 5681, RFC 6298 §5, RFC 7323, RFC
// 3168), the congestion responses and loss recovery, the retransmission
// timeout and the choice and encoding of data segments.

import (
	"math"
	"time"

	"cclab/ccalgo"
	"cclab/clock"
	"cclab/ecn"
	"cclab/event"
)

// Write queues stream bytes into the send buffer and returns how many were
// accepted (0 when the buffer is full, after CloseWrite, or with a Source).
func (c *Conn) Write(p []byte) int {
	c.appSends()
	if c.src != nil || c.finPending || c.err != nil {
		return 0
	}
	base := c.sndBase()
	used := int(c.writeEnd - base)
	n := min(len(p), c.cfg.SendBuffer-used)
	if n <= 0 {
		return 0
	}
	c.sbuf.ensure(base, used, used+n)
	c.sbuf.write(c.writeEnd, p[:n])
	c.writeEnd += uint64(n)
	return n
}

// appSends records that the application may have given the connection
// something to send (Write, SetSource, CloseWrite): the scheduler asks it
// at the next Transmit (sched.go), and in full (sendIdle).
func (c *Conn) appSends() {
	c.touch()
	c.sendIdle = false
}

// sndBase is the lowest stream offset the send buffer must still hold.
func (s *sender) sndBase() uint64 {
	if s.sb.count > 0 {
		return s.sb.Seg(0).Off
	}
	return s.sb.nxt
}

// SetSource makes src produce the stream instead of Write: length >= 0 sends
// FIN after length bytes, length < 0 is unlimited until CloseWrite. It must
// be called before any Write; later calls are ignored.
func (c *Conn) SetSource(src Source, length int64) {
	c.appSends()
	if c.src != nil || c.writeEnd > 0 || c.finPending || src == nil {
		return
	}
	c.src, c.srcLen = src, length
	if length >= 0 {
		c.finPending = true
		c.finOff = uint64(length)
	}
}

// CloseWrite closes our direction: FIN after the queued data (with an
// unlimited Source, after the bytes produced so far).
func (c *Conn) CloseWrite(now clock.Time) {
	c.appSends()
	if c.finPending {
		return
	}
	c.finPending = true
	if c.src != nil {
		c.finOff = c.sb.nxt
	} else {
		c.finOff = c.writeEnd
	}
}

// ackProgress is what onAck's steps learn about one ACK and hand on to
// the next (Endpoint.ack: Buffers.ack, shared by the connections of the
// endpoints that share their Buffers; valid during onAck).
type ackProgress struct {
	now       clock.Time
	p         *packet
	maxAck    uint64        // the highest acknowledgeable point (SND.NXT, the FIN counted)
	prevUna   uint64        // the cumulative point before the ACK
	cum       uint64        // the cumulative point after it (never below prevUna)
	advanced  bool          // the ACK moved the cumulative point
	prevRight uint64        // the peer's window edge before the ACK
	minRTT    time.Duration // the minimum RTT before this ACK's sample
	sample    time.Duration // this ACK's RTT sample, 0 if none
	acked     int           // bytes newly acknowledged cumulatively (not SACKed before)
	sacked    int           // bytes newly SACKed
	packets   int           // segments newly delivered
	dsackRetx bool          // a D-SACK reports a retransmission duplicated
	ai        AckInfo       // the ACK as the strategy is told (classifyAck)
}

// onAck processes an ACK section (RFC 5681, RFC 6298 §5, RFC 7323, RFC
// 3168) in named steps, in this order: validate, flow control, the
// timestamp's RTT sample, the scoreboard (SACK, D-SACK, cumulative
// advance), the ACK's classification (AckInfo), the controller, undo of
// spurious episodes, the recovery strategy (loss detection, recovery
// entry and exit), ECN, and the retransmission timer. Sending follows in
// the connection's Transmit.
func (c *Conn) onAck(now clock.Time, p *packet) RejectReason {
	c.sendIdle = false // the controller, the strategy, the scoreboard or the peer's window may change
	a := c.ep.ack
	if !c.validateAck(now, p, a) {
		return RejectNone
	}
	c.updatePeerWindow(a)
	c.sampleRTT(a)
	c.updateScoreboard(a)
	c.classifyAck(a)
	c.controllerOnAck(a)
	c.undoOnAckSteps(a)
	c.recoveryOnAck(a)
	c.respondECN(a)
	c.rearmRTO(a)
	a.p = nil
	return RejectNone
}

// validateAck starts ACK processing: nothing before the handshake built
// the controller. A SACK block beyond SND.NXT reports data we never sent (a
// forged or corrupt segment at the peer): that block is ignored, as TCP
// does, and the rest of the ACK used (rejecting it whole would stall the
// connection). It fills a's cumulative points; an ACK of new data stops the
// give-up clock.
func (c *Conn) validateAck(now clock.Time, p *packet, a *ackProgress) bool {
	if c.cc == nil {
		return false
	}
	*a = ackProgress{now: now, p: p, maxAck: c.maxAck()}
	for i := 0; i < p.nBlocks; i++ {
		if p.blocks[i].End > a.maxAck {
			c.stats.SACKBlocksIgnored++
			p.nBlocks--
			copy(p.blocks[i:], p.blocks[i+1:p.nBlocks+1])
			i--
		}
	}
	c.stats.AcksReceived++
	a.prevUna = c.sb.una
	a.cum = max(p.cumAck, a.prevUna)
	a.advanced = p.cumAck > a.prevUna
	if a.advanced {
		c.rtoSince = clock.Never // the peer answers: the give-up clock stops
		c.pmtu.progress()
	}
	return true
}

// updatePeerWindow applies flow control: the peer's right edge never moves
// left; once it admits data the zero-window probe timer stops.
func (c *Conn) updatePeerWindow(a *ackProgress) {
	p := a.p
	a.prevRight = c.peerRight
	if p.cumAck >= a.prevUna {
		if r := p.cumAck + p.window; r > c.peerRight {
			c.peerRight = r
		}
	}
	if c.peerRight > c.sb.nxt {
		c.persistAt, c.persistN = clock.Never, 0
	}
}

// sampleRTT takes one RTT sample per ACK that acknowledges new data, from
// the echoed timestamp (RFC 7323 §4; Karn's ambiguity does not arise). The
// minimum before it is kept for RACK (RACK_update compares with it).
func (c *Conn) sampleRTT(a *ackProgress) {
	a.minRTT = c.rtt.min
	if a.advanced && a.p.tsecr != 0 {
		a.sample = c.tsRTT(a.now, a.p.tsecr)
		c.rtt.sampleInFlight(a.sample, c.sb.nxt-a.prevUna, c.mss)
	}
}

// updateScoreboard applies the ACK to the scoreboard: SACK blocks (none
// for a SACK-blind strategy), an RTT sample from a newly SACKed segment
// when the cumulative point did not move, the D-SACK block, then the
// cumulative advance (Eifel detection of spurious retransmissions, the
// FIN's acknowledgement). Each newly delivered segment feeds the
// delivery-rate sampler and the reordering scan and emits PacketAcked.
func (c *Conn) updateScoreboard(a *ackProgress) {
	now, p, cum := a.now, a.p, a.cum
	c.scan.begin(now, p.tsecr, a.minRTT, c.mss, max(c.sb.highSck, a.prevUna), c.echoCum)
	var sackSent clock.Time // latest send time of a newly SACKed, never retransmitted segment
	nBlocks := p.nBlocks
	if c.sackBlind {
		nBlocks = 0 // Reno and NewReno do not use SACK (see SACKBlind)
		c.sackBlindDelivered(now, p, cum)
	}
	for i := 0; i < nBlocks; i++ {
		b := p.blocks[i]
		if b.End <= cum {
			continue
		}
		c.scan.fresh, c.scan.echoes = i == 0, !c.echoCum
		a.sacked += c.sb.sack(max(b.Start, cum), b.End, func(s *Segment) {
			c.delivered(a, s)
			if s.Retrans == 0 && s.SentAt > sackSent {
				sackSent = s.SentAt
			}
		})
	}
	if !a.advanced && sackSent != clock.Never {
		// An ACK that only SACKs new data: RFC 7323 §4.3 makes its TSecr
		// echo the last in-order segment (too old), so the sample is taken
		// from the send time of the newly SACKed segment that triggered it,
		// skipping retransmitted ones (Karn), as Linux does.
		a.sample = now.Sub(sackSent)
		c.rtt.sampleInFlight(a.sample, c.sb.nxt-a.prevUna, c.mss)
	}
	tsecr := p.tsecr
	a.dsackRetx = p.hasDSACK && c.onDSACK(p.dsack, a.maxAck)
	c.scan.fresh, c.scan.echoes = true, true
	a.acked = c.sb.advance(cum, func(s *Segment) {
		if !s.Sacked {
			c.delivered(a, s)
		}
		echoes := c.scan.echoes
		// Only the segment at the old cumulative point surely arrived just
		// now, and only its timestamp is echoed (RFC 7323 §4.3).
		c.scan.fresh, c.scan.echoes = false, !c.echoCum
		if s.Retrans > 0 {
			c.dsk.rememberRetx(s.Off)
			if echoes && echoPredates(tsecr, s.TS) {
				// Eifel (RFC 3522): the ACK echoes a timestamp older than the
				// retransmission, so the original got through.
				c.stats.SpuriousRetransmits++
				c.emit(event.Event{Time: now, Kind: event.SpuriousRetransmit, Seq: s.Off, Bytes: s.Len})
			}
		}
		if s.Fin {
			c.finAcked = true
		}
	})
	c.stats.BytesAcked = min(c.sb.una, c.finOff0())
}

// delivered accounts segment s, newly delivered by the ACK (SACKed or
// cumulatively acknowledged, not SACKed before): the delivery-rate sampler,
// the reordering scan and a PacketAcked event.
func (c *Conn) delivered(a *ackProgress, s *Segment) {
	a.packets++
	c.rsamp.onDelivered(a.now, &s.rate, s.Len)
	c.scan.seg(s)
	if e := c.event(a.now, event.PacketAcked); e != nil {
		e.Seq, e.Bytes = s.Off, s.Len
		c.sink.Record(e)
	}
}

// classifyAck describes the ACK for the strategy (a.ai): what it
// acknowledged, its RTT sample, ECN-Echo, D-SACK, what it revealed about
// reordering, and whether it is a duplicate ACK (RFC 5681 §2: it reports
// out-of-order data: newly SACKed bytes, or for a SACK-blind strategy any
// SACK block, or else an unchanged window).
func (c *Conn) classifyAck(a *ackProgress) {
	p := a.p
	dsack := p.hasDSACK
	a.ai = AckInfo{Now: a.now, CumAck: a.cum, PrevUna: a.prevUna, AckedBytes: a.acked, SackedBytes: a.sacked,
		ECE: p.flags&flagECE != 0, RTT: a.sample, DSACK: dsack && p.dsack.End <= a.maxAck, DSACKRetx: a.dsackRetx}
	if a.ai.DSACK {
		a.ai.DSACKStart, a.ai.DSACKEnd = p.dsack.Start, p.dsack.End
	}
	c.scan.fill(&a.ai)
	a.ai.DupAck = !a.advanced && p.cumAck == a.prevUna && c.sb.count > 0 && !p.hasData() &&
		(a.sacked > 0 || (c.sackBlind && p.nBlocks > 0) || c.peerRight == a.prevRight)
	if a.ai.DupAck {
		c.stats.DupAcks++
	}
}

// controllerOnAck gives the controller the newly delivered data (with the
// strategy's "in recovery", the one record of it), and signals a
// delay-based window reduction the controller decided on.
func (c *Conn) controllerOnAck(a *ackProgress) {
	if a.acked+a.sacked <= 0 {
		return
	}
	now := a.now
	c.cc.OnAck(ccalgo.Ack{Now: now, Acked: a.acked + a.sacked, AckedPackets: a.packets, RTT: a.sample,
		SRTT: c.rtt.srtt, MinRTT: c.rtt.min, InFlight: c.governedPipe(), CumAck: a.cum, SndNxt: c.sb.nxt,
		CumAcked: int(min(a.cum-a.prevUna, math.MaxInt32)), Sacked: a.sacked, RTOPoint: c.rtoPoint,
		InRecovery: c.rec.InRecovery(), AppLimited: c.appLimited, Lost: c.lostNew, Rate: c.rsamp.sample(now, c.rtt.min)})
	c.lostNew = 0
	if c.rtoPoint != 0 && a.cum >= c.rtoPoint {
		c.rtoPoint = 0
	}
	if c.appMarker != nil && c.appMarker.MarkAppLimited() {
		c.rsamp.markAppLimited(c.sb.pipe) // BBR's ProbeRTT (draft §4.3.5)
	}
	if c.delayCC != nil {
		if n := c.delayCC.DelayReductions(); n != c.delayN { // a delay-based decision reduced the window
			c.delayN = n
			c.emit(event.Event{Time: now, Kind: event.CongestionSignal, Seq: c.sb.nxt, Reason: uint8(ccalgo.Delay),
				Cwnd: c.cc.Cwnd(), Ssthresh: c.cc.Ssthresh(), InFlight: c.sb.pipe})
		}
	}
}

// undoOnAckSteps checks the ACK for a spurious timeout (rtocause.go) and
// a spurious loss episode to undo: by D-SACK (RFC 3708), then by the
// timestamp echo (Eifel, RFC 3522) of an ACK of new data (undo.go).
func (c *Conn) undoOnAckSteps(a *ackProgress) {
	p := a.p
	if a.advanced {
		c.rtoCheckSpurious(a.now, p.tsecr, p.dsack, a.ai.DSACK)
	}
	if a.dsackRetx {
		c.undoOnDSACK(a.now, p.dsack)
	}
	if a.advanced {
		c.undoOnAck(a.now, p.tsecr)
	}
}

// recoveryOnAck hands the ACK to the loss-recovery strategy: it detects
// losses, enters and leaves recovery (Ctx.EnterRecovery, ExitRecovery) and
// may hold back the RTO restart (Ctx.RestartRTO).
func (c *Conn) recoveryOnAck(a *ackProgress) {
	c.ctx.Now = a.now
	c.ctx.RestartRTO = a.advanced
	c.ctx.growOnExit = false
	c.rec.OnAck(&c.ctx, &a.ai)
	if c.ctx.growOnExit {
		c.growOnExit(a)
	}
}

// growOnExit gives the controller the cumulative advance of the ACK that
// ended recovery again, now outside recovery, without an RTT or rate
// sample (Ctx.ExitRecoveryGrow): ns-3's IncreaseWindow after cwnd =
// ssthresh, with the segments the ACK acknowledged.
func (c *Conn) growOnExit(a *ackProgress) {
	adv := int(min(a.cum-a.prevUna, math.MaxInt32))
	if adv <= 0 {
		return
	}
	c.cc.OnAck(ccalgo.Ack{Now: a.now, Acked: adv, AckedPackets: max(1, adv/max(c.ctx.MSS, 1)),
		SRTT: c.rtt.srtt, MinRTT: c.rtt.min, InFlight: c.sb.pipe, CumAck: a.cum, SndNxt: c.sb.nxt, CumAcked: adv,
		AppLimited: c.appLimited})
}

// respondECN reacts to ECN-Echo (RFC 3168 §6.1.2) at most once per window
// of data, and not during loss recovery (the window was already reduced).
func (c *Conn) respondECN(a *ackProgress) {
	if !a.ai.ECE || !c.ecnOn {
		return
	}
	now := a.now
	c.stats.ECEReceived++
	if !c.rec.InRecovery() && (!c.ecnReacted || a.cum > c.ecnRecover) {
		c.ecnReacted = true
		c.ecnRecover = c.sb.nxt
		c.cwrDue = true
		c.stats.ECNReductions++
		c.cc.OnCongestion(ccalgo.Congestion{Now: now, Kind: ccalgo.ECN, InFlight: c.congestionFlight(), SndNxt: c.sb.nxt})
		c.emit(event.Event{Time: now, Kind: event.CongestionSignal, Seq: c.sb.nxt, Reason: uint8(ccalgo.ECN),
			Cwnd: c.cc.Cwnd(), Ssthresh: c.cc.Ssthresh(), InFlight: c.sb.pipe})
	}
}

// rearmRTO stops the retransmission timer when nothing is outstanding and
// restarts it on an ACK of new data unless the strategy held it (RFC 6298
// §5.2-5.3), then emits the connection's metrics if the ACK delivered
// data.
func (c *Conn) rearmRTO(a *ackProgress) {
	if c.sb.count == 0 {
		c.rtoAt = clock.Never
	} else if c.ctx.RestartRTO {
		c.rtoAt = a.now.Add(c.rtt.current())
	}
	if a.advanced || a.sacked > 0 {
		c.emitMetrics(a.now)
	}
}

// finOff0 returns the final size if known, else MaxUint64.
func (s *sender) finOff0() uint64 {
	if s.finPending {
		return s.finOff
	}
	return math.MaxUint64
}

// congestionFlight is the FlightSize a congestion response takes (RFC 5681
// §3.1 eq. (4), §3.2 step 2; RFC 6675 §5 step 4.2; RFC 9438 §4.6), bytes:
// data sent and not cumulatively acknowledged, at most cwnd. The bound
// leaves out what recovery itself let out (NewReno's inflation, data SACKed
// above holes), which would set ssthresh above the episode's own response
// after an RTO or a second episode (docs/controllers.md).
func (s *sender) congestionFlight() int {
	return min(s.sb.FlightSize(), s.cc.Cwnd())
}

// enterRecovery starts a loss-recovery episode for the strategy
// (Ctx.EnterRecovery): an undo snapshot, the controller's response to the
// loss, a RecoveryStart event. The strategy, which owns the episode, is
// not yet in recovery when it calls this.
func (c *Conn) enterRecovery(now clock.Time, flight int) {
	c.undoBegin(false, false)
	c.stats.Recoveries++
	c.ecnReacted = true
	c.ecnRecover = c.sb.nxt
	c.cc.OnCongestion(ccalgo.Congestion{Now: now, Kind: ccalgo.Loss, InFlight: flight, SndNxt: c.sb.nxt})
	c.emit(event.Event{Time: now, Kind: event.RecoveryStart, Seq: c.sb.una, Cwnd: c.cc.Cwnd(), Ssthresh: c.cc.Ssthresh(), InFlight: c.sb.pipe})
}

// exitRecovery ends the strategy's episode (Ctx.ExitRecovery): the
// controller sets cwnd and a RecoveryEnd event is emitted. Strategies call
// it only to end an episode they began (TestRecoveryOwner).
func (c *Conn) exitRecovery(now clock.Time) {
	c.cc.OnRecoveryExit(now, c.sb.pipe)
	c.emit(event.Event{Time: now, Kind: event.RecoveryEnd, Seq: c.sb.una, Cwnd: c.cc.Cwnd(), Ssthresh: c.cc.Ssthresh(), InFlight: c.sb.pipe})
}

func (c *Conn) markLost(now clock.Time, i int, reason LossReason) {
	if i < 0 || i >= c.sb.count {
		return
	}
	if c.sb.markLost(i) {
		s := c.sb.Seg(i)
		c.stats.Lost++
		c.lostNew += s.Len
		c.emit(event.Event{Time: now, Kind: event.PacketLost, Seq: s.Off, Bytes: s.Len, Reason: uint8(reason)})
	}
}

// hasWork reports whether data or a FIN is waiting to be sent.
func (s *sender) hasWork() bool {
	return s.avail() > 0 || s.sb.NextLost() >= 0 || (s.finPending && !s.finSent)
}

// onRTO handles a retransmission-timer expiry (RFC 6298 §5.4-5.6, RFC 5681 §3.1).
func (c *Conn) onRTO(now clock.Time) {
	c.rtoAt = clock.Never
	if c.sb.count == 0 {
		return
	}
	cause := ClassifyRTO(&c.sb, c.rtoDupThresh())
	inRecovery := c.rec.InRecovery()
	c.undoBegin(true, inRecovery)
	c.rtoFired(now, cause)
	flight := c.congestionFlight()
	c.ctx.Now = now
	if rf, ok := c.rec.(rtoFlighter); ok {
		if f, ok := rf.rtoFlight(&c.ctx); ok {
			flight = f
		}
	}
	var holder ccalgo.SsthreshHolder
	if rh, ok := c.rec.(rtoHolder); ok && rh.holdsSsthresh(&c.ctx) {
		holder, _ = c.cc.(ccalgo.SsthreshHolder)
	}
	if c.sb.holdRetx {
		c.sb.releaseHeld() // after the flight: ns-3 takes BytesInFlight before SetSentListLost
	}
	deferred := c.frto != nil && c.frto.DefersRTOMarks() // F-RTO (frto.go): the oldest segment only
	for i := 0; i < c.sb.count && (!deferred || i == 0); i++ {
		c.markLost(now, i, LossRTO)
	}
	c.lostNew = 0   // the timeout's marks are not losses an ACK revealed
	if inRecovery { // the episode ends with the timeout (the strategy leaves it in OnRTO)
		c.emit(event.Event{Time: now, Kind: event.RecoveryEnd, Seq: c.sb.una, Reason: event.RecoveryEndRTO})
	}
	c.rtoPoint = max(c.sb.nxt, 1) // ns-3's m_recover = HighTxMark (ccalgo.Ack.RTOPoint)
	if holder != nil {
		holder.OnRTOHold(now)
	} else {
		c.cc.OnRTO(now, flight)
	}
	c.ctx.Now = now
	c.rec.OnRTO(&c.ctx)
	c.rtt.backOff()
	c.rtoAt = now.Add(c.rtt.current())
	if c.rtoSince == clock.Never {
		c.rtoSince = now
	}
	c.stats.RTOs++
	c.stats.RTOCauses[cause]++
	if c.pmtuOn {
		c.pmtu.rto(now) // black-hole detection (dplpmtud.go)
	}
	c.pace.reset(now)
	c.emit(event.Event{Time: now, Kind: event.RTO, Seq: c.sb.una, Reason: uint8(cause)})
	c.emitMetrics(now)
}

// governedPipe is the data in flight for a controller that governs
// recovery, bytes: pipe, less what a SACK-blind strategy's duplicate ACKs
// report as having left the network (Departer), which its pipe still
// counts.
func (s *sender) governedPipe() int {
	if s.departer == nil {
		return s.sb.pipe
	}
	return max(0, s.sb.pipe-s.departer.Departed())
}

// governedNext is Ctx.Normal within the governing controller's cwnd less
// governedPipe.
func (c *Conn) governedNext() Action {
	if c.departer == nil {
		return c.ctx.Normal()
	}
	allow := c.cc.Cwnd() - c.governedPipe()
	if allow <= 0 {
		return NoSend
	}
	if i := c.sb.NextLost(); i >= 0 {
		return Action{Retransmit: i}
	}
	return Action{Retransmit: -1, NewData: allow}
}

// avail returns the bytes of new data ready to be sent.
func (s *sender) avail() int {
	if s.src != nil {
		if s.finPending {
			return int(s.finOff - s.sb.nxt)
		}
		return math.MaxInt32
	}
	return int(s.writeEnd - s.sb.nxt)
}

// transmitData sends one retransmission, new segment or FIN if allowed.
func (c *Conn) transmitData(now clock.Time, buf []byte) (int, ecn.Codepoint) {
	if c.pace.blocked(now) {
		return 0, ecn.NotECT
	}
	c.ctx.Now = now
	act := c.rec.Next(&c.ctx)
	if c.governs && act.Retransmit < 0 && c.rec.InRecovery() {
		act = c.governedNext() // the controller's cwnd governs (BBR)
	}
	if act.Retransmit >= 0 && act.Retransmit < c.sb.count {
		return c.sendSegment(now, buf, act.Retransmit)
	}
	avail := c.avail()
	room := 0
	right := c.peerRight
	if c.cfg.MaxWindow > 0 { // the sender's own cap (ns-2's window_): at most MaxWindow bytes beyond snd.una
		right = min(right, c.sb.una+uint64(c.cfg.MaxWindow))
	}
	if right > c.sb.nxt {
		room = int(min(right-c.sb.nxt, math.MaxInt32))
	}
	segLen := min(c.mss, avail)
	if segLen > 0 {
		limit := min(act.NewData, room)
		if segLen > limit {
			if limit > 0 && c.sb.pipe == 0 {
				segLen = limit
			} else {
				// Held back by the peer's receive window while cwnd had
				// room: the flow is not cwnd-limited, so the controller
				// must not grow cwnd (RFC 7661 §4, RFC 5681 §3.1 "cwnd
				// is not fully utilized"). Held back by cwnd: it is.
				c.appLimited = room < segLen && act.NewData >= segLen
				if room < segLen && c.sb.count == 0 && c.persistAt == clock.Never {
					c.persistAt = now.Add(c.rtt.current()) // zero-window probe timer
				}
				return 0, ecn.NotECT
			}
		}
		c.appLimited = false
		return c.sendNew(now, buf, segLen)
	}
	if act.NewData > 0 && !c.finPending {
		c.appLimited = true
		c.rsamp.markAppLimited(c.sb.pipe)
	}
	if c.finPending && !c.finSent && c.sb.nxt == c.finOff {
		return c.sendNew(now, buf, 0)
	}
	// Nothing can be sent whatever Next answers (no data, no FIN to send,
	// no segment to retransmit): until something clears it, Transmit skips
	// this function (sendIdle).
	c.sendIdle = c.sb.count == 0 && !c.finPending
	return 0, ecn.NotECT
}

// sendNew sends a new segment of n payload bytes (n == 0: a bare FIN).
func (c *Conn) sendNew(now clock.Time, buf []byte, n int) (int, ecn.Codepoint) {
	seg := Segment{Off: c.sb.nxt, Len: n, SentAt: now, TS: c.tsNow(now)}
	if c.finPending && seg.Off+uint64(n) == c.finOff {
		seg.Fin = true
		c.finSent = true
	}
	c.sb.push(seg)
	i := c.sb.count - 1
	c.stats.BytesSent += uint64(n)
	return c.encodeData(now, buf, i, false)
}

// sendSegment retransmits segment i.
func (c *Conn) sendSegment(now clock.Time, buf []byte, i int) (int, ecn.Codepoint) {
	c.sb.retransmitted(i, now, c.tsNow(now))
	s := c.sb.Seg(i)
	c.undoRetransmitted(s.TS)
	c.stats.Retransmits++
	c.stats.BytesRetransmitted += uint64(s.Len)
	c.emit(event.Event{Time: now, Kind: event.Retransmit, Seq: s.Off, Bytes: s.Len})
	return c.encodeData(now, buf, i, true)
}

// encodeData writes segment i into buf with an ACK piggybacked when it fits.
func (c *Conn) encodeData(now clock.Time, buf []byte, i int, retx bool) (int, ecn.Codepoint) {
	s := c.sb.Seg(i)
	plen := s.Len
	if retx && plen > c.mss {
		plen = c.splitRetx(s) // sent before the size fell (dplpmtud.go)
	}
	p := c.ep.txPkt
	p.setShort(c.peerCID, c.pn, s.TS, c.tsRecent)
	p.off = s.Off
	c.pn++
	if s.Len > 0 {
		p.flags |= flagDATA
	}
	if s.Fin && plen == s.Len {
		p.flags |= flagFIN
	}
	if c.cwrDue && !retx {
		p.flags |= flagCWR
		c.cwrDue = false
	}
	if c.ackPending || c.eceOn || c.rcvNxt > 0 || c.peerFin {
		// As in TCP, every packet acknowledges once the peer has sent
		// anything (so a FIN also carries the ACK of the peer's FIN).
		c.buildAck(p)
		if plen > c.payloadMax(shortHeaderLen(p)) {
			p.flags &^= flagACK | flagECE
			p.hasDSACK = false
			p.nBlocks = 0
		}
	}
	n := encodeShortHeader(buf, p)
	c.rsamp.onSent(now, &s.rate, c.sb.pipe-s.Len)
	payload := buf[n : n+plen]
	c.fill(s.Off, payload)
	if !retx && c.hashSent != nil {
		c.hashSent.Write(payload)
	}
	if p.flags&flagACK != 0 {
		c.ackSent(p)
	}
	c.pingDue = false
	c.stats.PacketsSent++
	reason := event.SentNew
	if retx {
		reason = event.SentRetransmission
	}
	if e := c.event(now, event.PacketSent); e != nil {
		e.Seq, e.Bytes, e.Reason, e.InFlight = s.Off, s.Len, reason, c.sb.pipe
		c.sink.Record(e)
	}
	c.cc.OnSent(now, s.Len, c.sb.pipe)
	c.ctx.Now = now
	c.rec.OnSent(&c.ctx, retx, s.Len)
	if c.rtoAt == clock.Never || (retx && c.rtoRearm && s.Off == c.sb.una) {
		c.rtoAt = now.Add(c.rtt.current()) // RFC 6298 §5.1; option rtorearm (echo.go)
	}
	c.pace.sent(now, n+plen)
	cp := ecn.NotECT
	if c.ecnOn && !retx {
		cp = ecn.ECT0 // RFC 3168 §6.1.5: retransmissions are sent Not-ECT
		c.stats.ECTSent++
	}
	return n + plen, cp
}

// fill writes the stream bytes from offset off into payload.
func (c *Conn) fill(off uint64, payload []byte) {
	if c.src != nil {
		c.src.Fill(int64(off), payload)
	} else {
		c.sbuf.read(off, payload)
	}
}
