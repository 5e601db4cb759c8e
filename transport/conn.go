package transport

import (
	"crypto/sha256"
	"errors"
	"hash"
	"hash/crc32"
	"math/rand/v2"
	"net/netip"
	"time"

	"cclab/ccalgo"
	"cclab/clock"
	"cclab/ecn"
	"cclab/event"
)

// Errors a connection can end with (Conn.Err).
var (
	ErrHandshakeTimeout = errors.New("transport: no answer to the connection request (peer unreachable?)")
	ErrIdleTimeout      = errors.New("transport: idle timeout: nothing heard from the peer")
	ErrPeerAborted      = errors.New("transport: connection aborted by the peer")
	ErrAborted          = errors.New("transport: connection aborted")
	ErrGiveUp           = errors.New("transport: gave up: retransmissions unanswered for Config.GiveUp (peer gone or path down?)")
)

// ErrReleasedTwice is what Conn.Release panics with when the connection was
// released already (or a Release meant for an earlier connection built in
// the same memory reached it).
var ErrReleasedTwice = errors.New("transport: Conn.Release called twice (a stale Release of an earlier connection recycled into this one?)")

var crc32c = crc32.MakeTable(crc32.Castagnoli)

// newDigest returns the stream digest named by alg (nil for "none").
func newDigest(alg string) hash.Hash {
	switch alg {
	case "crc32c":
		return crc32.New(crc32c)
	case "none":
		return nil
	}
	return sha256.New()
}

// maxShortOverhead is the largest short-packet header without an ACK section
// (8-byte packet number and offset varints), bytes; MSS = MaxDatagram minus
// this, so a full segment always fits.
const maxShortOverhead = shortFixed + 8 + 8

// SegmentSize returns the MSS (stream payload bytes per packet) of a
// connection whose largest datagram is maxDatagram bytes.
func SegmentSize(maxDatagram int) int { return maxDatagram - maxShortOverhead }

// DatagramFor returns the largest datagram that gives an MSS of mss bytes
// (the inverse of SegmentSize).
func DatagramFor(mss int) int { return mss + maxShortOverhead }

// drainRTOs is how many RTOs a finished connection lingers to re-acknowledge
// a retransmitted FIN (like TCP's TIME-WAIT, shortened).
const drainRTOs = 3

type connState uint8

const (
	stInitial connState = iota // client: Initial sent, awaiting Accept
	stOpen                     // established
)

// Conn is one reliable stream connection (both directions). Its application
// side is non-blocking; it is driven through its Endpoint. It is made of
// two halves, as gVisor splits snd.go and rcv.go: the sender (sender.go:
// writes, ACK processing, congestion responses, recovery, RTO, data
// segments) and the receiver (receiver.go: reads, data, reassembly, our
// ACKs). This file holds what the halves share (the handshake, the packet
// number space, dispatch and timers); each half's state is its own struct,
// embedded so the connection reads as one.
type Conn struct {
	connCommon
	cfg   Config
	spec  *connSpec // cfg.CC and cfg.Recovery parsed (connspec.go)
	seedA uint64
	seedB uint64
	// The controller's random stream (ccalgo.Env.Rand), seeded with seedA,
	// seedB at establish; kept in the connection so that it costs no
	// allocations of its own.
	ccPCG  rand.PCG
	ccRand rand.Rand

	state     connState
	confirmed bool // client: the server has answered after the handshake

	// handshake (see also connCommon)
	confirmAt clock.Time
	confirmN  int

	pn       uint64 // next packet number (data and ACK-only packets alike)
	abortDue bool
	released bool              // the application is done with it (Release): recycled once removed
	spareRec Recovery          // a recycled Conn's former strategy, for establish to build in (RecoveryEnv.reuse)
	spareCC  ccalgo.Controller // a recycled Conn's former controller, for establish to build in (ccalgo.Env.Reuse)

	sender
	receiver

	stats ConnStats
}

// sender is the sending half's state: the stream to send, the scoreboard of
// what is outstanding, the congestion controller and the loss-recovery
// strategy, RTT estimation and the retransmission timer, flow control from
// the peer's window, ECN reactions and undo. "In loss recovery" has one
// owner, the strategy (rec.InRecovery()): the connection keeps no copy of
// its own (ccalgo controllers are told by OnCongestion / OnRecoveryExit /
// OnRTO and Ack.InRecovery).
type sender struct {
	src        Source
	srcLen     int64
	sbuf       byteRing
	writeEnd   uint64
	finPending bool
	finOff     uint64
	finSent    bool
	finAcked   bool
	sb         Scoreboard
	cc         ccalgo.Controller
	delayCC    ccalgo.DelayReactor // cc, if it reduces its window on delay
	delayN     uint64              // delayCC's reductions already signalled
	rec        Recovery
	recTimer   RecoveryTimer
	frto       frtoStrategy // rec, if it runs F-RTO (frto.go)
	pace       pacing
	governs    bool                  // the controller sets cwnd during recovery (ccalgo.RecoveryGovernor)
	departer   Departer              // rec, if governs and rec counts duplicate-ACK departures (governedPipe)
	lostNew    int                   // bytes marked lost by loss detection since the controller's last Ack (ccalgo.Ack.Lost)
	rtoPoint   uint64                // SND.NXT at the latest RTO until the cumulative ACK reaches it, 0 otherwise (ccalgo.Ack.RTOPoint)
	appMarker  ccalgo.AppLimitMarker // cc, if it marks rate samples application-limited
	rsamp      rateSampler           // delivery-rate estimation (ratesample.go)
	rtt        rttEstimator
	rtoAt      clock.Time
	rtoSince   clock.Time // first RTO not followed by an ACK of new data (Never: none): the give-up clock
	persistAt  clock.Time
	persistN   int
	peerRight  uint64
	cwrDue     bool
	ecnRecover uint64
	ecnReacted bool
	appLimited bool
	sackBlind  bool // the recovery strategy ignores SACK (Reno, NewReno): see SACKBlind
	hashSent   hash.Hash
	ctx        Ctx
	scan       ackScan    // what an ACK newly delivered (reorder.go)
	echoCum    bool       // the timestamp echo judges the first segment of a cumulative advance only (echo.go)
	rtoRearm   bool       // a retransmission of the first unacknowledged segment restarts the RTO timer (echo.go)
	dsk        dsackState // D-SACK use at the sender (dsack.go)
	undo       undoState  // the latest loss episode, for undo (undo.go)
	rtoW       rtoWatch   // timeouts not yet known spurious or not (rtocause.go)

	// sendIdle: transmitData last found nothing it could ever send — no
	// data, no FIN to send, no segment outstanding — and its steps (the
	// strategy's Next, the application-limited mark) are in effect. Until
	// the sending side's state changes (an ACK, a timer, the application's
	// Write, SetSource or CloseWrite through appSends: each clears it)
	// another call would find the same and change nothing, so Transmit
	// skips it: a receiver that has nothing to send costs no strategy call
	// per arriving segment.
	sendIdle bool

	split pieces // the rest of a segment retransmitted in pieces (dplpmtud.go)
}

// receiver is the receiving half's state: the receive ring and reassembly
// (the in-order point, out-of-order ranges, the peer's FIN), and what our
// ACKs carry (SACK and D-SACK blocks, the timestamp echo, the advertised
// window, ECN-Echo) and when they are due (delayed ACKs).
type receiver struct {
	rbuf         byteRing
	consumer     Consumer // takes in-order bytes in place of Read (SetConsumer); nil: they wait in rbuf
	rcvRead      uint64
	rcvNxt       uint64
	rcvHigh      uint64 // highest received payload end
	oooCharge    uint64 // rcvHigh - rcvNxt as charged to the endpoint's out-of-order budget, bytes
	ooo          []sackBlock
	dsack        sackBlock // duplicate range to report in the next ACK (RFC 2883), if dsackDue
	dsackDue     bool
	peerDSACK    bool // the peer asked for D-SACK blocks in its handshake (hsDSACK)
	recent       [MaxSACKBlocks]uint64
	nRecent      int
	peerFin      bool
	peerFinOff   uint64
	tsRecent     uint32
	lastAckSent  uint64
	lastRight    uint64 // right edge of the last advertised window
	ackPending   bool
	ackNow       bool
	ackAt        clock.Time
	fullSinceAck int
	// firstDataDue: no data has arrived yet and Config.AckFirst is set,
	// so the first data segment is acknowledged at once.
	firstDataDue bool
	eceOn        bool
	hashRecv     hash.Hash
}

func newConn(ep *Endpoint, cfg Config, sp *connSpec, now clock.Time) *Conn {
	c := ep.bufs.conn() // zero: new, or a released one cleared (Conn.Release)
	c.connCommon = newConnCommon(ep, cfg.Sink, now)
	c.cfg, c.spec = cfg, sp
	c.rtt = newRTTEstimator(cfg.MinRTO, cfg.InitialRTO, cfg.MaxRTO)
	c.hashSent, c.hashRecv = newDigest(cfg.Digest), newDigest(cfg.Digest)
	c.seedA, c.seedB = ep.rand.Uint64(), ep.rand.Uint64()
	c.stats.Start = now
	c.ctx.c = c
	c.ctx.SB = &c.sb
	c.sbuf.pool, c.rbuf.pool, c.sb.pool = ep.bufs, ep.bufs, ep.bufs
	return c
}

// establish builds the controller and strategy once the datagram size is known.
func (c *Conn) establish(now clock.Time) error {
	c.mss = c.payloadMax(maxShortOverhead)
	c.ccPCG.Seed(c.seedA, c.seedB)
	c.ccRand = *rand.New(&c.ccPCG)
	cc, err := c.spec.ccP.Build(ccalgo.Env{MSS: c.mss, Rand: &c.ccRand, Reuse: c.spareCC})
	c.spareCC = nil
	if err != nil {
		return err
	}
	rec, err := c.spec.recP.Build(RecoveryEnv{MSS: c.mss, reuse: c.spareRec})
	c.spareRec = nil
	if err != nil {
		return err
	}
	c.cc, c.rec = cc, rec
	c.delayCC, _ = cc.(ccalgo.DelayReactor)
	_, c.sackBlind = rec.(SACKBlind)
	c.echoCum, c.rtoRearm = false, false
	if e, ok := rec.(echoRule); ok {
		c.echoCum, c.rtoRearm = e.echoAtCumulative(), e.rearmOnHeadRetransmit()
	}
	c.pace.set(cc, c.mss)
	_, c.governs = cc.(ccalgo.RecoveryGovernor)
	c.departer = nil
	c.appMarker, _ = cc.(ccalgo.AppLimitMarker)
	if d, ok := rec.(Departer); ok && c.governs {
		c.departer = d
	}
	c.recTimer, _ = rec.(RecoveryTimer)
	c.sb.holdRetx = false
	if h, ok := rec.(retxPipeHolder); ok {
		c.sb.holdRetx = h.holdsSackedRetx()
	}
	c.frto, _ = rec.(frtoStrategy)
	c.ctx.CC = cc
	c.ctx.MSS = c.mss
	c.state = stOpen
	c.stats.Established = now
	c.lastRight = c.rcvRight()
	c.firstDataDue = c.cfg.AckFirst
	c.pmtuStart()
	return nil
}

// Established reports whether the handshake has completed.
func (c *Conn) Established() bool { return c.state == stOpen }

// Config returns the connection's effective configuration.
func (c *Conn) Config() Config { return c.cfg }

// Controller returns the congestion controller (nil before the handshake).
func (c *Conn) Controller() ccalgo.Controller { return c.cc }

// Recovery returns the loss-recovery strategy (nil before the handshake).
func (c *Conn) Recovery() Recovery { return c.rec }

// MSS returns the maximum segment size, payload bytes per packet (0 before
// the handshake).
func (c *Conn) MSS() int { return c.mss }

// Release tells the endpoint that the application is done with c: it calls
// none of c's methods again and keeps nothing they returned that refers
// into c (its Controller and Recovery are reused too). c goes on until it
// has finished (or fails) and its drain period has passed, as any
// connection does; once the endpoint has then removed it, its memory is
// reused for a later connection of an endpoint sharing its Buffers
// (EndpointConfig.Buffers), and what its buffers still hold is dropped.
// Releasing is optional (a connection never released is left to the
// garbage collector); a driver that opens many short connections, as the
// simulator does, releases each once it has read its results.
//
// Release is called at most once per connection: a second call panics
// (ErrReleasedTwice), also while the connection's cleared memory waits
// for reuse. A Release that comes after that memory went to a later
// connection would release that one while its application still uses it;
// such a stale call cannot be told from the new owner's, so it is caught
// when the new owner releases its connection in turn (a second Release of
// the same connection, panic) rather than silently recycling a connection
// in use.
func (c *Conn) Release() {
	if c.released {
		panic(ErrReleasedTwice)
	}
	c.released = true
	if c.removed {
		c.ep.bufs.putConn(c)
	}
}

// Abort ends the connection at once and tells the peer (CLOSE).
func (c *Conn) Abort(now clock.Time) {
	c.touch() // the scheduler asks it at the next Transmit (sched.go)
	if c.done {
		return
	}
	c.abortDue = c.state == stOpen
	c.fail(now, ErrAborted)
}

// tsNow returns the timestamp for now, µs since the origin.
func (c *Conn) tsNow(now clock.Time) uint32 {
	return uint32(now.Sub(c.base) / time.Microsecond)
}

// tsRTT returns the RTT implied by an echoed timestamp.
func (c *Conn) tsRTT(now clock.Time, echo uint32) time.Duration {
	return time.Duration(c.tsNow(now)-echo) * time.Microsecond
}

func (c *Conn) emitMetrics(now clock.Time) {
	if c.cc == nil || c.sink == nil {
		return
	}
	e := c.event(now, event.MetricsUpdated)
	e.Cwnd, e.Ssthresh, e.InFlight = c.cc.Cwnd(), c.cc.Ssthresh(), c.sb.pipe
	e.SRTT, e.RTT, e.MinRTT = c.rtt.srtt, c.rtt.latest, c.rtt.min
	c.sink.Record(e)
}

func (c *Conn) fail(now clock.Time, err error) {
	if c.done {
		return
	}
	c.err = err
	c.setDone()
	c.drainAt = now
	c.stats.Finished = now
	c.releaseBuffers()
}

// setDone marks the connection done, counted in its endpoint's Finished:
// the one place a stream connection becomes done.
func (c *Conn) setDone() {
	c.done = true
	c.ep.finished++
}

// releaseBuffers returns the connection's empty buffers to the pools
// (bufpool.go) once it has finished: the scoreboard when no segment is
// outstanding, the send ring when it holds no unacknowledged byte, the
// receive ring when every received byte was read. A buffer still holding
// bytes stays (the application may read them later; Read calls this again).
func (c *Conn) releaseBuffers() {
	if !c.done {
		return
	}
	if c.sb.count == 0 {
		c.sb.release()
	}
	if c.writeEnd == c.sndBase() {
		c.sbuf.release()
	}
	if c.rcvRead == c.rcvHigh {
		c.rbuf.release()
	}
}

// checkDone finishes the connection once both directions are closed.
func (c *Conn) checkDone(now clock.Time) {
	if c.done || !c.finAcked || !c.peerFin || c.rcvNxt != c.peerFinOff {
		return
	}
	c.setDone()
	c.stats.Finished = now
	c.drainAt = now.Add(drainRTOs * c.rtt.current())
	c.releaseBuffers()
}

// --- receiving: dispatch (the receiving half is receiver.go, ACKs sender.go) --

// onAccept completes a client's handshake.
func (c *Conn) onAccept(now clock.Time, p *packet) RejectReason {
	if c.server || c.state != stInitial {
		return RejectUnexpected
	}
	if r, err := c.authAccept(p, c.ep.rx); r != RejectNone {
		if err != nil {
			c.fail(now, err)
		}
		return r
	}
	c.peerCID = p.scid
	c.maxDatagram = min(c.cfg.MaxDatagram, int(p.maxDatagram))
	c.ecnOn = c.cfg.ECN && p.hsFlags&hsECN != 0
	c.peerDSACK = p.hsFlags&hsDSACK != 0
	c.peerRight = p.recvWindow
	c.takeReset(p)
	if p.tsecr != 0 {
		c.rtt.sample(c.tsRTT(now, p.tsecr))
	}
	c.tsRecent = p.ts
	if err := c.establish(now); err != nil {
		c.fail(now, err)
		return RejectConfig
	}
	c.lastRecv = now
	c.hsAt = clock.Never
	c.pingDue = true
	c.confirmAt = now.Add(c.rtt.current())
	c.emitMetrics(now)
	return RejectNone
}

// onShort handles a short packet for this connection.
func (c *Conn) onShort(now clock.Time, from netip.AddrPort, ce ecn.Codepoint, p *packet) RejectReason {
	if c.state != stOpen {
		return RejectUnexpected
	}
	if c.err != nil {
		return RejectOldPacket
	}
	if p.flags&flagACK != 0 && p.cumAck > c.maxAck() {
		// RFC 9293 §3.10.7.4: an ACK of something not yet sent is dropped
		// (before it can change anything, the idle timer included).
		return RejectAckUnsent
	}
	c.lastNow = now
	c.stats.PacketsReceived++
	if !c.validated {
		// Only a client that received our Accept knows our CID: the
		// handshake is confirmed (the amplification limit is lifted).
		c.confirm()
		if p.tsecr == c.acceptTS && p.tsecr != 0 {
			c.rtt.sample(c.tsRTT(now, p.tsecr))
		}
	}
	c.confirmed = true
	c.confirmAt = clock.Never
	if p.flags&flagCLOSE != 0 {
		if p.closeCode == CloseReceiverFull && !c.server {
			c.fail(now, ErrReceiverFull) // evicted (admission.go)
		} else {
			c.fail(now, ErrPeerAborted)
		}
		return RejectNone
	}
	if p.flags&flagACK != 0 {
		if r := c.onAck(now, p); r != RejectNone {
			return r
		}
	}
	if p.flags&flagCWR != 0 {
		c.eceOn = false // RFC 3168 §6.1.3: stop ECE once CWR arrives
	}
	if p.hasData() {
		if r := c.onData(now, ce, p); r != RejectNone {
			return r
		}
	}
	if p.flags&flagPING != 0 {
		c.ackNow = true
		c.ackPending = true
	}
	// Only a packet that passed every check counts as hearing from the
	// peer (a forged or corrupt one must not keep a dead connection alive),
	// and only such a packet from a new address starts validating it
	// (path.go: the peer moves once the address answers a challenge).
	c.lastRecv = now
	c.fromNewPath(now, from, c.ep.rxLen, c.rtt.current())
	c.checkDone(now)
	return RejectNone
}

// maxAck is the highest cumulative ACK the peer may send: SND.NXT, plus one
// for a FIN sent.
func (s *sender) maxAck() uint64 {
	if s.finSent {
		return s.finOff + 1
	}
	return s.sb.nxt
}

// --- timers ----------------------------------------------------------------

// deadline returns the earliest instant the connection needs control.
func (c *Conn) deadline() clock.Time {
	if c.done {
		if c.err != nil && !c.abortDue {
			return c.drainAt
		}
		return clock.Earliest(c.drainAt, c.ackDeadline())
	}
	d := clock.Earliest(c.hsAt, c.rtoAt)
	d = clock.Earliest(d, c.ackDeadline())
	d = clock.Earliest(d, c.persistAt)
	d = clock.Earliest(d, c.confirmAt)
	if c.recTimer != nil {
		d = clock.Earliest(d, c.recTimer.Deadline())
	}
	if c.pmtuOn {
		d = clock.Earliest(d, c.pmtu.deadline())
	}
	if at := c.pace.at(); at > c.lastNow && c.hasWork() {
		d = clock.Earliest(d, at)
	}
	at, _ := c.silenceLimit()
	return clock.Earliest(d, at)
}

// silenceLimit returns when the connection gives up on its peer and the
// error it then fails with (the give-up rule, Config.GiveUp): during the
// handshake after HandshakeTimeout of silence; while retransmitting (data
// outstanding) GiveUp after the first unanswered RTO, however long ago the
// last packet arrived (the idle timer does not apply: a lossy path with a
// backed-off RTO may be silent for minutes); while waiting for the rest of
// the peer's stream after max(IdleTimeout, GiveUp) of silence; otherwise
// after IdleTimeout of silence.
func (c *Conn) silenceLimit() (clock.Time, error) {
	timeout, err := c.timeout(c.state == stOpen, c.cfg.IdleTimeout, c.cfg.HandshakeTimeout)
	switch {
	case c.handshaking(c.state == stOpen): // (err is ErrHandshakeTimeout; no interface comparison on the packet path)
	case c.sb.count > 0:
		if c.rtoSince == clock.Never {
			return clock.Never, nil // the RTO timer runs; it starts the give-up clock
		}
		return c.rtoSince.Add(c.cfg.GiveUp), ErrGiveUp
	case !c.peerFin || c.rcvNxt < c.peerFinOff:
		timeout = max(timeout, c.cfg.GiveUp)
	}
	return c.lastRecv.Add(timeout), err
}

func (r *receiver) ackDeadline() clock.Time {
	if r.ackPending {
		return r.ackAt
	}
	return clock.Never
}

// onDeadline runs expired timers.
func (c *Conn) onDeadline(now clock.Time) {
	c.lastNow = now
	c.sendIdle = false // a timer may change what the sending side may send
	if c.done {
		if c.ackPending && c.ackAt != clock.Never && !now.Before(c.ackAt) {
			c.ackNow = true
		}
		return
	}
	if at, err := c.silenceLimit(); at != clock.Never && !now.Before(at) {
		c.fail(now, err)
		return
	}
	if c.handshakeTimer(now, &c.rtt) {
		c.stats.RTOs++
		c.stats.RTOCauses[RTOHandshake]++
		c.emit(event.Event{Time: now, Kind: event.RTO, Reason: uint8(RTOHandshake)})
	}
	if c.ackPending && c.ackAt != clock.Never && !now.Before(c.ackAt) {
		c.ackNow = true
	}
	if c.confirmAt != clock.Never && !now.Before(c.confirmAt) {
		// The server has not answered since the Accept: our validating
		// packet may be lost. Probe again (with backoff).
		if c.sb.count == 0 {
			c.pingDue = true // (data in flight is covered by the RTO)
		}
		c.confirmN++
		c.confirmAt = now.Add(min(c.rtt.current()<<min(c.confirmN, 16), c.cfg.MaxRTO))
	}
	if c.persistAt != clock.Never && !now.Before(c.persistAt) {
		c.pingDue = true // zero-window probe
		c.persistN++
		c.persistAt = now.Add(min(c.rtt.current()<<min(c.persistN, 16), c.cfg.MaxRTO))
	}
	if c.recTimer != nil {
		if d := c.recTimer.Deadline(); d != clock.Never && !now.Before(d) {
			c.ctx.Now = now
			c.recTimer.OnTimer(&c.ctx)
		}
	}
	if c.rtoAt != clock.Never && !now.Before(c.rtoAt) {
		c.onRTO(now)
	}
	if c.pmtuOn {
		c.pmtu.onTimer(now)
	}
}

// --- sending: the datagram for the driver (data segments: sender.go) -------

// initialSize is the length the client's Initial is padded to, bytes:
// MaxDatagram, or 0 (not padded) with Config.TCPHandshake.
func (c *Conn) initialSize() int {
	if c.cfg.TCPHandshake {
		return 0
	}
	return c.cfg.MaxDatagram
}

// transmit writes the next datagram for this connection into buf.
func (c *Conn) transmit(now clock.Time, buf []byte) (int, ecn.Codepoint) {
	c.lastNow = now
	if c.abortDue {
		c.abortDue = false
		p := &packet{typ: typeShort, dcid: c.peerCID, flags: flagCLOSE, pn: c.pn, ts: c.tsNow(now), tsecr: c.tsRecent, closeCode: c.closeCode}
		c.pn++
		return encodeShortHeader(buf, p), ecn.NotECT
	}
	if c.err != nil {
		return 0, ecn.NotECT
	}
	if c.state == stInitial {
		if !c.initialDue || len(buf) < c.cfg.MaxDatagram {
			return 0, ecn.NotECT
		}
		c.initialDue = false
		p := &packet{typ: typeInitial, dcid: c.initialDCID, scid: c.localCID, ts: c.tsNow(now),
			maxDatagram: uint64(c.cfg.MaxDatagram), recvWindow: uint64(c.cfg.RecvWindow), request: c.request, token: c.token}
		if c.cfg.ECN {
			p.hsFlags = hsECN
		}
		if c.spec.dsack {
			p.hsFlags |= hsDSACK
		}
		p.hsFlags |= hsReset // we end on a stateless reset (reset.go)
		c.hsAt = now.Add(c.rtt.current())
		return encodeInitial(buf, p, c.initialSize()), ecn.NotECT
	}
	if c.sendAccept > 0 {
		c.sendAccept--
		c.acceptTS = c.tsNow(now)
		p := &packet{typ: typeAccept, dcid: c.peerCID, scid: c.localCID, ts: c.acceptTS, tsecr: c.tsRecent,
			maxDatagram: uint64(c.cfg.MaxDatagram), recvWindow: uint64(c.cfg.RecvWindow)}
		if c.ecnOn {
			p.hsFlags = hsECN
		}
		if u, ok := c.rec.(DSACKUser); ok && u.UsesDSACK() {
			p.hsFlags |= hsDSACK
		}
		c.acceptReset(p)
		return encodeAccept(buf, p), ecn.NotECT
	}
	if !c.validated || len(buf) < c.maxDatagram {
		return 0, ecn.NotECT // amplification limit: nothing but Accepts before validation
	}
	if c.pmtuOn && !c.done {
		if c.pmtu.size != c.maxDatagram {
			c.pmtuApply()
		}
		if n := c.pmtuProbe(now, buf, c.rtt.current()); n > 0 {
			return n, ecn.NotECT
		}
	}
	if c.split.off < c.split.end && !c.done {
		return c.sendPiece(now, buf), ecn.NotECT
	}
	if c.pingDue && c.cfg.TCPHandshake {
		// TCP's third handshake packet (Config.TCPHandshake): the
		// client's pure ACK of the Accept, before any data; it confirms
		// the handshake as the ping would, and elicits no reply.
		c.pingDue = false
		return c.sendControl(now, buf, false, true), ecn.NotECT
	}
	if !c.done && !c.sendIdle {
		if n, cp := c.transmitData(now, buf); n > 0 {
			return n, cp
		}
	}
	if c.ackNow || c.pingDue {
		ping := c.pingDue
		c.pingDue = false
		return c.sendControl(now, buf, ping, c.ackPending || c.ackNow || c.rcvNxt > 0 || c.peerFin), ecn.NotECT
	}
	return 0, ecn.NotECT
}

// sendControl writes a short-header packet without data into buf and
// returns its length: a PING if ping, carrying the acknowledgement of what
// was received if ack.
func (c *Conn) sendControl(now clock.Time, buf []byte, ping, ack bool) int {
	p := c.ep.txPkt
	p.setShort(c.peerCID, c.pn, c.tsNow(now), c.tsRecent)
	c.pn++
	if ping {
		p.flags |= flagPING
	}
	if ack {
		c.buildAck(p)
	}
	n := encodeShortHeader(buf, p)
	if ack {
		c.ackSent(p)
	}
	c.stats.PacketsSent++
	return n
}
