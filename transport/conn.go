package transport

import (
	"crypto/sha256"
	"errors"
	"hash"
	"hash/crc32"
	"math"
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

// drainRTOs is how many RTOs a finished connection lingers to re-acknowledge
// a retransmitted FIN (like TCP's TIME-WAIT, shortened).
const drainRTOs = 3

type connState uint8

const (
	stInitial connState = iota // client: Initial sent, awaiting Accept
	stOpen                     // established
)

// Conn is one reliable stream connection (both directions). Its application
// side is non-blocking; it is driven through its Endpoint.
type Conn struct {
	connCommon
	cfg   Config
	seedA uint64
	seedB uint64

	state     connState
	confirmed bool // client: the server has answered after the handshake

	// handshake (see also connCommon)
	confirmAt clock.Time
	confirmN  int

	// send side
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
	pace       pacing
	governs    bool        // the controller sets cwnd during recovery (ccalgo.RecoveryGovernor)
	rsamp      rateSampler // delivery-rate estimation (ratesample.go)
	rtt        rttEstimator
	rtoAt      clock.Time
	rtoSince   clock.Time // first RTO not followed by an ACK of new data (Never: none): the give-up clock
	persistAt  clock.Time
	persistN   int
	peerRight  uint64
	pn         uint64
	cwrDue     bool
	ecnRecover uint64
	ecnReacted bool
	inRecovery bool
	appLimited bool
	sackBlind  bool // the recovery strategy ignores SACK (Reno, NewReno): see SACKBlind
	abortDue   bool
	hashSent   hash.Hash
	ctx        Ctx
	ai         AckInfo
	scan       ackScan    // what an ACK newly delivered (reorder.go)
	dsk        dsackState // D-SACK use at the sender (dsack.go)
	undo       undoState  // the latest loss episode, for undo (undo.go)
	rtoW       rtoWatch   // timeouts not yet known spurious or not (rtocause.go)

	// receive side
	rbuf         byteRing
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
	eceOn        bool
	hashRecv     hash.Hash

	out   packet // scratch for encoding
	stats ConnStats
}

func newConn(ep *Endpoint, cfg Config, now clock.Time) *Conn {
	c := &Conn{connCommon: newConnCommon(ep, cfg.Sink, now), cfg: cfg}
	c.rtt = newRTTEstimator(cfg.MinRTO, cfg.InitialRTO, cfg.MaxRTO)
	c.hashSent, c.hashRecv = newDigest(cfg.Digest), newDigest(cfg.Digest)
	c.seedA, c.seedB = ep.rand.Uint64(), ep.rand.Uint64()
	c.stats.Start = now
	c.ctx.c = c
	c.ctx.SB = &c.sb
	return c
}

// establish builds the controller and strategy once the datagram size is known.
func (c *Conn) establish(now clock.Time) error {
	c.mss = c.maxDatagram - maxShortOverhead
	cc, err := ccalgo.New(c.cfg.CC, ccalgo.Env{MSS: c.mss, Rand: rand.New(rand.NewPCG(c.seedA, c.seedB))})
	if err != nil {
		return err
	}
	rec, err := NewRecovery(c.cfg.Recovery, RecoveryEnv{MSS: c.mss})
	if err != nil {
		return err
	}
	c.cc, c.rec = cc, rec
	c.delayCC, _ = cc.(ccalgo.DelayReactor)
	_, c.sackBlind = rec.(SACKBlind)
	c.pace.set(cc, c.mss)
	_, c.governs = cc.(ccalgo.RecoveryGovernor)
	c.recTimer, _ = rec.(RecoveryTimer)
	c.ctx.CC = cc
	c.ctx.MSS = c.mss
	c.state = stOpen
	c.stats.Established = now
	c.lastRight = c.rcvRead + uint64(c.cfg.RecvWindow)
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

// Write queues stream bytes into the send buffer and returns how many were
// accepted (0 when the buffer is full, after CloseWrite, or with a Source).
func (c *Conn) Write(p []byte) int {
	c.touch() // the scheduler asks it at the next Transmit (sched.go)
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

// sndBase is the lowest stream offset the send buffer must still hold.
func (c *Conn) sndBase() uint64 {
	if c.sb.count > 0 {
		return c.sb.Seg(0).Off
	}
	return c.sb.nxt
}

// SetSource makes src produce the stream instead of Write: length >= 0 sends
// FIN after length bytes, length < 0 is unlimited until CloseWrite. It must
// be called before any Write; later calls are ignored.
func (c *Conn) SetSource(src Source, length int64) {
	c.touch() // the scheduler asks it at the next Transmit (sched.go)
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
	c.touch() // the scheduler asks it at the next Transmit (sched.go)
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

// Abort ends the connection at once and tells the peer (CLOSE).
func (c *Conn) Abort(now clock.Time) {
	c.touch() // the scheduler asks it at the next Transmit (sched.go)
	if c.done {
		return
	}
	c.abortDue = c.state == stOpen
	c.fail(now, ErrAborted)
}

// Read copies in-order received bytes into p and returns how many.
func (c *Conn) Read(p []byte) int {
	c.touch() // the scheduler asks it at the next Transmit (sched.go)
	n := min(len(p), int(c.rcvNxt-c.rcvRead))
	if n <= 0 {
		return 0
	}
	c.rbuf.read(c.rcvRead, p[:n])
	c.rcvRead += uint64(n)
	c.stats.BytesRead += uint64(n)
	// Window update (RFC 1122 §4.2.3.3 SWS avoidance): announce a reopened
	// window when the advertised one had shrunk below half and grew by at
	// least a quarter of the buffer.
	right := c.rcvRead + uint64(c.cfg.RecvWindow)
	if c.state == stOpen && c.lastRight-c.rcvNxt < uint64(c.cfg.RecvWindow/2) && right-c.lastRight >= uint64(c.cfg.RecvWindow/4) {
		c.ackNow = true
		c.ackPending = true
	}
	return n
}

// Readable returns the bytes ready for Read.
func (c *Conn) Readable() int { return int(c.rcvNxt - c.rcvRead) }

// EOF reports whether the peer's FIN arrived and every byte was read.
func (c *Conn) EOF() bool { return c.peerFin && c.rcvRead == c.peerFinOff }

// tsNow returns the timestamp for now, µs since the origin.
func (c *Conn) tsNow(now clock.Time) uint32 {
	return uint32(now.Sub(c.base) / time.Microsecond)
}

// tsRTT returns the RTT implied by an echoed timestamp.
func (c *Conn) tsRTT(now clock.Time, echo uint32) time.Duration {
	return time.Duration(c.tsNow(now)-echo) * time.Microsecond
}

func (c *Conn) emit(e event.Event) {
	e.Flow = c.id
	e.Link = -1
	c.sink.Record(e)
}

func (c *Conn) emitMetrics(now clock.Time) {
	if c.cc == nil {
		return
	}
	c.emit(event.Event{Time: now, Kind: event.MetricsUpdated, Cwnd: c.cc.Cwnd(), Ssthresh: c.cc.Ssthresh(),
		InFlight: c.sb.pipe, SRTT: c.rtt.srtt, RTT: c.rtt.latest, MinRTT: c.rtt.min})
}

func (c *Conn) fail(now clock.Time, err error) {
	if c.done {
		return
	}
	c.err = err
	c.done = true
	c.drainAt = now
	c.stats.Finished = now
}

// checkDone finishes the connection once both directions are closed.
func (c *Conn) checkDone(now clock.Time) {
	if c.done || !c.finAcked || !c.peerFin || c.rcvNxt != c.peerFinOff {
		return
	}
	c.done = true
	c.stats.Finished = now
	c.drainAt = now.Add(drainRTOs * c.rtt.current())
}

// --- receiving -------------------------------------------------------------

// onAccept completes a client's handshake.
func (c *Conn) onAccept(now clock.Time, p *packet) RejectReason {
	if c.server || c.state != stInitial {
		return RejectUnexpected
	}
	c.peerCID = p.scid
	c.maxDatagram = min(c.cfg.MaxDatagram, int(p.maxDatagram))
	c.ecnOn = c.cfg.ECN && p.hsFlags&hsECN != 0
	c.peerDSACK = p.hsFlags&hsDSACK != 0
	c.peerRight = p.recvWindow
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
		c.fail(now, ErrPeerAborted)
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
func (c *Conn) maxAck() uint64 {
	if c.finSent {
		return c.finOff + 1
	}
	return c.sb.nxt
}

// onData handles the DATA section (RFC 5681 §4.2 ACK generation, RFC 7323
// §4.3 TS.Recent, RFC 3168 §6.1.3 CE echo).
func (c *Conn) onData(now clock.Time, ce ecn.Codepoint, p *packet) RejectReason {
	end := p.off + uint64(len(p.data))
	if p.flags&flagFIN != 0 {
		if (c.peerFin && c.peerFinOff != end) || end < c.rcvNxt {
			return RejectFinalSize
		}
		if end < c.rcvHigh {
			// Out-of-order data beyond the final size cannot be part of the
			// stream (a forged or corrupt segment): drop it, counted. (A
			// forged FIN gains nothing: one at rcvHigh would end the stream
			// there just as well.)
			c.trimOOO(end)
		}
	}
	if c.peerFin && end > c.peerFinOff {
		return RejectFinalSize
	}
	if c.ecnOn {
		switch ce {
		case ecn.CE:
			c.eceOn = true
			c.stats.CEReceived++
		case ecn.ECT0, ecn.ECT1:
			c.stats.ECTReceived++
		}
	}
	// RFC 7323 §4.3: TS.Recent <- SEG.TSval if SEG.SEQ <= Last.ACK.sent.
	if p.off <= c.lastAckSent && int32(p.ts-c.tsRecent) >= 0 {
		c.tsRecent = p.ts
	}
	c.ackPending = true
	newFin := false
	if p.flags&flagFIN != 0 && !c.peerFin {
		c.peerFin = true
		c.peerFinOff = end
		newFin = true
	}
	data := p.data
	off := p.off
	// Flow control: keep only what fits in the window we advertised.
	right := c.rcvRead + uint64(c.cfg.RecvWindow)
	if end > right {
		c.stats.DroppedBeyondWindow++
		c.ep.stats.Rejects[RejectWindow]++
		c.ackNow = true
		if off >= right {
			return RejectNone
		}
		data = data[:right-off]
		end = right
	}
	if len(data) > 0 {
		c.noteDuplicate(off, end)
	}
	if end <= c.rcvNxt {
		if len(data) > 0 {
			c.stats.DupSegments++
		}
		c.ackNow = true // duplicate: ACK at once (RFC 9293 §3.10.7.4)
	} else if off > c.rcvNxt {
		if lim := c.oooLimit(end); end > lim {
			// Over the endpoint's out-of-order budget: the farthest data
			// (this segment's part beyond the limit) is dropped, counted;
			// the sender retransmits it.
			drop := end - max(off, lim)
			c.stats.OOOBytesDropped += drop
			c.ep.stats.OOOBytesDropped += drop
			data = data[:len(data)-int(drop)]
			end -= drop
		}
		if len(data) > 0 {
			c.storeData(off, data)
			c.insertOOO(off, end)
		}
		c.ackNow = true // out of order: immediate duplicate ACK (RFC 5681 §4.2)
	} else {
		data = data[c.rcvNxt-off:]
		off = c.rcvNxt
		c.storeData(off, data)
		holes := len(c.ooo) > 0
		prev := c.rcvNxt
		c.rcvNxt = end
		for len(c.ooo) > 0 && c.ooo[0].Start <= c.rcvNxt {
			c.rcvNxt = max(c.rcvNxt, c.ooo[0].End)
			c.ooo = c.ooo[:copy(c.ooo, c.ooo[1:])]
		}
		if holes {
			c.ackNow = true // fills a gap: immediate ACK (RFC 5681 §4.2)
		}
		c.deliver(now, prev)
		if len(p.data) >= c.mss {
			c.fullSinceAck++
		}
		if c.fullSinceAck >= c.cfg.AckEvery {
			c.ackNow = true
		} else if c.ackAt == clock.Never {
			c.ackAt = now.Add(c.cfg.DelayedAck)
		}
	}
	if newFin || (c.peerFin && c.rcvNxt == c.peerFinOff) {
		c.ackNow = true // the FIN (now or once it becomes in order) is acknowledged at once
	}
	c.recharge()
	return RejectNone
}

// oooLimit returns the stream offset out-of-order data arriving with right
// edge end may reach. The endpoint's out-of-order memory (the receive-ring
// span beyond each connection's in-order point, rcvHigh - rcvNxt) is bounded
// by EndpointConfig.MaxOOOBytes: while the total stays within it any
// connection may use its whole window; beyond it a connection's span may
// grow only up to its share, MaxOOOBytes / live connections. Data nearer
// than rcvHigh never grows the span and is always kept (nothing already
// SACKed is ever dropped: no reneging). The total thus stays below twice
// MaxOOOBytes: what connections took while it was under the budget, plus at
// most a share each.
func (c *Conn) oooLimit(end uint64) uint64 {
	if end <= c.rcvHigh {
		return end
	}
	e := c.ep
	budget := uint64(e.cfg.MaxOOOBytes)
	if e.oooUsed-c.oooCharge+(end-c.rcvNxt) <= budget {
		return end
	}
	return max(c.rcvHigh, c.rcvNxt+budget/uint64(max(1, len(e.sch.conns))))
}

// recharge updates the connection's share of the endpoint's out-of-order
// memory after its in-order point or highest received byte moved.
func (c *Conn) recharge() {
	n := c.rcvHigh - c.rcvNxt
	c.ep.oooUsed += n - c.oooCharge
	c.oooCharge = n
}

// trimOOO forgets out-of-order data at and beyond off (> rcvNxt).
func (c *Conn) trimOOO(off uint64) {
	j := 0
	for _, b := range c.ooo {
		if b.Start >= off {
			c.stats.OOOBytesDropped += b.End - b.Start
			continue
		}
		if b.End > off {
			c.stats.OOOBytesDropped += b.End - off
			b.End = off
		}
		c.ooo[j] = b
		j++
	}
	c.ooo = c.ooo[:j]
	c.rcvHigh = off
	c.recharge()
}

// storeData copies data at off into the receive ring.
func (c *Conn) storeData(off uint64, data []byte) {
	end := off + uint64(len(data))
	if end > c.rcvHigh {
		keep := int(c.rcvHigh - c.rcvRead)
		c.rbuf.ensure(c.rcvRead, keep, int(end-c.rcvRead))
		c.rcvHigh = end
	}
	c.rbuf.write(off, data)
	c.stats.BytesReceived += uint64(len(data))
}

// deliver hashes and reports bytes that became in-order.
func (c *Conn) deliver(now clock.Time, prev uint64) {
	n := int(c.rcvNxt - prev)
	if n <= 0 {
		return
	}
	a, b := c.rbuf.slices(prev, n)
	if c.hashRecv != nil {
		c.hashRecv.Write(a)
		c.hashRecv.Write(b)
	}
	c.stats.BytesDelivered += uint64(n)
	c.emit(event.Event{Time: now, Kind: event.Delivered, Seq: c.rcvNxt, Bytes: n})
}

// insertOOO records the out-of-order range [s, e) and its recency for SACK.
func (c *Conn) insertOOO(s, e uint64) {
	i := 0
	for i < len(c.ooo) && c.ooo[i].End < s {
		i++
	}
	j := i
	for j < len(c.ooo) && c.ooo[j].Start <= e {
		s = min(s, c.ooo[j].Start)
		e = max(e, c.ooo[j].End)
		j++
	}
	if i == j {
		c.ooo = append(c.ooo, sackBlock{})
		copy(c.ooo[i+1:], c.ooo[i:])
	} else {
		c.ooo = append(c.ooo[:i+1], c.ooo[j:]...)
	}
	c.ooo[i] = sackBlock{s, e}
	// RFC 2018 §4: the first block reports the most recent arrival.
	var r [MaxSACKBlocks]uint64
	r[0] = s
	n := 1
	for k := 0; k < c.nRecent && n < MaxSACKBlocks; k++ {
		if c.recent[k] < s || c.recent[k] >= e {
			r[n] = c.recent[k]
			n++
		}
	}
	c.recent, c.nRecent = r, n
}

// buildAck fills the ACK section of p.
func (c *Conn) buildAck(p *packet) {
	p.flags |= flagACK
	p.cumAck = c.rcvNxt
	if c.peerFin && c.rcvNxt == c.peerFinOff {
		p.cumAck++ // the FIN occupies one unit of acknowledgement space
	}
	right := c.rcvRead + uint64(c.cfg.RecvWindow)
	p.window = right - c.rcvNxt
	if c.eceOn {
		p.flags |= flagECE
	}
	p.nBlocks = 0
	c.addDSACK(p)
	// Most recently reported blocks first (RFC 2018 §4), then the lowest others.
	for k := 0; k < c.nRecent; k++ {
		if b, ok := c.oooContaining(c.recent[k]); ok && !hasBlock(p, b) {
			p.blocks[p.nBlocks] = b
			p.nBlocks++
		}
	}
	for k := 0; k < len(c.ooo) && p.nBlocks < MaxSACKBlocks; k++ {
		if !hasBlock(p, c.ooo[k]) {
			p.blocks[p.nBlocks] = c.ooo[k]
			p.nBlocks++
		}
	}
}

func hasBlock(p *packet, b sackBlock) bool {
	for i := 0; i < p.nBlocks; i++ {
		if p.blocks[i] == b {
			return true
		}
	}
	return false
}

func (c *Conn) oooContaining(off uint64) (sackBlock, bool) {
	for _, b := range c.ooo {
		if b.Start <= off && off < b.End {
			return b, true
		}
	}
	return sackBlock{}, false
}

// ackSent records that an ACK section went out.
func (c *Conn) ackSent(p *packet) {
	c.ackPending, c.ackNow = false, false
	if p.hasDSACK {
		c.dsackDue = false
	}
	c.ackAt = clock.Never
	c.fullSinceAck = 0
	c.lastAckSent = c.rcvNxt
	c.lastRight = p.cumAck + p.window
	if c.peerFin && c.rcvNxt == c.peerFinOff {
		c.lastRight--
	}
	c.stats.AcksSent++
}

// onAck processes an ACK section (RFC 5681, RFC 6298 §5, RFC 7323, RFC 3168).
func (c *Conn) onAck(now clock.Time, p *packet) RejectReason {
	if c.cc == nil {
		return RejectNone
	}
	// A SACK block beyond SND.NXT reports data we never sent (a forged or
	// corrupt segment at the peer): ignore that block, as TCP does, and use
	// the rest of the ACK (rejecting it whole would stall the connection).
	maxAck := c.maxAck()
	for i := 0; i < p.nBlocks; i++ {
		if p.blocks[i].End > maxAck {
			c.stats.SACKBlocksIgnored++
			p.nBlocks--
			copy(p.blocks[i:], p.blocks[i+1:p.nBlocks+1])
			i--
		}
	}
	c.stats.AcksReceived++
	prevUna := c.sb.una
	cum := max(p.cumAck, prevUna)
	advanced := p.cumAck > prevUna
	if advanced {
		c.rtoSince = clock.Never // the peer answers: the give-up clock stops
	}
	// Flow control: the peer's right edge never moves left.
	prevRight := c.peerRight
	if p.cumAck >= prevUna {
		if r := p.cumAck + p.window; r > c.peerRight {
			c.peerRight = r
		}
	}
	if c.peerRight > c.sb.nxt {
		c.persistAt, c.persistN = clock.Never, 0
	}
	minRTT := c.rtt.min // before this ACK's sample (RACK_update compares with it)
	// One RTT sample per ACK that acknowledges new data, from the echoed
	// timestamp (RFC 7323 §4; Karn's ambiguity does not arise).
	var sample time.Duration
	if advanced && p.tsecr != 0 {
		sample = c.tsRTT(now, p.tsecr)
		c.rtt.sampleInFlight(sample, c.sb.nxt-prevUna, c.mss)
	}
	sacked := 0
	packets := 0
	c.scan.begin(now, p.tsecr, minRTT, c.mss, max(c.sb.highSck, prevUna))
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
		c.scan.fresh = i == 0
		sacked += c.sb.sack(max(b.Start, cum), b.End, func(s *Segment) {
			packets++
			c.rsamp.onDelivered(now, &s.rate, s.Len)
			if s.Retrans == 0 && s.SentAt > sackSent {
				sackSent = s.SentAt
			}
			c.scan.seg(s)
			c.emit(event.Event{Time: now, Kind: event.PacketAcked, Seq: s.Off, Bytes: s.Len})
		})
	}
	if !advanced && sackSent != clock.Never {
		// An ACK that only SACKs new data: RFC 7323 §4.3 makes its TSecr
		// echo the last in-order segment (too old), so the sample is taken
		// from the send time of the newly SACKed segment that triggered it,
		// skipping retransmitted ones (Karn), as Linux does.
		sample = now.Sub(sackSent)
		c.rtt.sampleInFlight(sample, c.sb.nxt-prevUna, c.mss)
	}
	tsecr := p.tsecr
	dsack := p.hasDSACK
	dsackRetx := dsack && c.onDSACK(p.dsack, maxAck)
	c.scan.fresh = true
	acked := c.sb.advance(cum, func(s *Segment) {
		if !s.Sacked {
			packets++
			c.rsamp.onDelivered(now, &s.rate, s.Len)
			c.emit(event.Event{Time: now, Kind: event.PacketAcked, Seq: s.Off, Bytes: s.Len})
			c.scan.seg(s)
		}
		c.scan.fresh = false // only the segment at the old cumulative point surely arrived just now
		if s.Retrans > 0 {
			c.dsk.rememberRetx(s.Off)
		}
		if s.Retrans > 0 && tsecr != 0 && int32(tsecr-s.TS) < 0 {
			// Eifel (RFC 3522): the ACK echoes a timestamp older than the
			// retransmission, so the original got through.
			c.stats.SpuriousRetransmits++
			c.emit(event.Event{Time: now, Kind: event.SpuriousRetransmit, Seq: s.Off, Bytes: s.Len})
		}
		if s.Fin {
			c.finAcked = true
		}
	})
	c.stats.BytesAcked = min(c.sb.una, c.finOff0())
	c.ai = AckInfo{Now: now, CumAck: cum, PrevUna: prevUna, AckedBytes: acked, SackedBytes: sacked,
		ECE: p.flags&flagECE != 0, RTT: sample, DSACK: dsack && p.dsack.End <= maxAck, DSACKRetx: dsackRetx}
	if c.ai.DSACK {
		c.ai.DSACKStart, c.ai.DSACKEnd = p.dsack.Start, p.dsack.End
	}
	c.scan.fill(&c.ai)
	// A duplicate ACK (RFC 5681 §2) reports out-of-order data: newly SACKed
	// bytes, or for a SACK-blind strategy any SACK block, or else an
	// unchanged window.
	c.ai.DupAck = !advanced && p.cumAck == prevUna && c.sb.count > 0 && !p.hasData() &&
		(sacked > 0 || (c.sackBlind && p.nBlocks > 0) || c.peerRight == prevRight)
	if c.ai.DupAck {
		c.stats.DupAcks++
	}
	if acked+sacked > 0 {
		c.cc.OnAck(ccalgo.Ack{Now: now, Acked: acked + sacked, AckedPackets: packets, RTT: sample,
			SRTT: c.rtt.srtt, MinRTT: c.rtt.min, InFlight: c.sb.pipe, CumAck: cum, SndNxt: c.sb.nxt,
			InRecovery: c.rec.InRecovery(), AppLimited: c.appLimited, Rate: c.rsamp.sample(now, c.rtt.min)})
		if c.delayCC != nil {
			if n := c.delayCC.DelayReductions(); n != c.delayN { // a delay-based decision reduced the window
				c.delayN = n
				c.emit(event.Event{Time: now, Kind: event.CongestionSignal, Seq: c.sb.nxt, Reason: uint8(ccalgo.Delay),
					Cwnd: c.cc.Cwnd(), Ssthresh: c.cc.Ssthresh(), InFlight: c.sb.pipe})
			}
		}
	}
	if advanced {
		c.rtoCheckSpurious(now, tsecr, p.dsack, c.ai.DSACK)
	}
	if dsackRetx {
		c.undoOnDSACK(now, p.dsack)
	}
	if advanced {
		c.undoOnAck(now, tsecr)
	}
	c.ctx.Now = now
	c.ctx.RestartRTO = advanced
	c.rec.OnAck(&c.ctx, &c.ai)
	// ECN (RFC 3168 §6.1.2): react to ECE at most once per window of data,
	// and not during loss recovery (the window was already reduced).
	if c.ai.ECE && c.ecnOn {
		c.stats.ECEReceived++
		if !c.rec.InRecovery() && (!c.ecnReacted || cum > c.ecnRecover) {
			c.ecnReacted = true
			c.ecnRecover = c.sb.nxt
			c.cwrDue = true
			c.stats.ECNReductions++
			c.cc.OnCongestion(ccalgo.Congestion{Now: now, Kind: ccalgo.ECN, InFlight: c.congestionFlight(), SndNxt: c.sb.nxt})
			c.emit(event.Event{Time: now, Kind: event.CongestionSignal, Seq: c.sb.nxt, Reason: uint8(ccalgo.ECN),
				Cwnd: c.cc.Cwnd(), Ssthresh: c.cc.Ssthresh(), InFlight: c.sb.pipe})
		}
	}
	// RFC 6298 §5.2-5.3.
	if c.sb.count == 0 {
		c.rtoAt = clock.Never
	} else if c.ctx.RestartRTO {
		c.rtoAt = now.Add(c.rtt.current())
	}
	if advanced || sacked > 0 {
		c.emitMetrics(now)
	}
	return RejectNone
}

// finOff0 returns the final size if known, else MaxUint64.
func (c *Conn) finOff0() uint64 {
	if c.finPending {
		return c.finOff
	}
	return math.MaxUint64
}

// congestionFlight is the FlightSize a congestion response takes (RFC 5681
// §3.1 equation (4), §3.2 step 2; RFC 6675 §5 step 4.2; RFC 9438 §4.6),
// bytes: the data sent and not cumulatively acknowledged, but at most cwnd.
// Beyond cwnd, FlightSize counts what loss recovery itself let out: NewReno's
// window inflation (one SMSS per duplicate ACK, i.e. per segment that has
// left the network, RFC 5681 §3.2 step 4) and, with SACK, data SACKed above
// holes that recovery has not yet repaired. Counted in, it sets ssthresh
// above the value the episode's own congestion response chose whenever an
// RTO ends an episode or a second episode follows at once, and every slow
// start overshoots the path again (issue #14: NewReno retransmitted 5,620
// of 31,135 packets with 49 RTOs; CUBIC over NewReno halved its
// utilization). cwnd is not inflated here (the strategies keep their own
// window), so the bound never exceeds what the controller allowed; below
// cwnd (application-limited) FlightSize is used, as the RFC 5681 note on
// equation (4) asks.
func (c *Conn) congestionFlight() int {
	return min(c.sb.FlightSize(), c.cc.Cwnd())
}

func (c *Conn) enterRecovery(now clock.Time) {
	c.undoBegin(false)
	c.inRecovery = true
	c.stats.Recoveries++
	c.ecnReacted = true
	c.ecnRecover = c.sb.nxt
	c.cc.OnCongestion(ccalgo.Congestion{Now: now, Kind: ccalgo.Loss, InFlight: c.congestionFlight(), SndNxt: c.sb.nxt})
	c.emit(event.Event{Time: now, Kind: event.RecoveryStart, Seq: c.sb.una, Cwnd: c.cc.Cwnd(), Ssthresh: c.cc.Ssthresh(), InFlight: c.sb.pipe})
}

func (c *Conn) exitRecovery(now clock.Time) {
	if !c.inRecovery {
		return
	}
	c.inRecovery = false
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
		c.emit(event.Event{Time: now, Kind: event.PacketLost, Seq: s.Off, Bytes: s.Len, Reason: uint8(reason)})
	}
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
	case err == ErrHandshakeTimeout:
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

func (c *Conn) ackDeadline() clock.Time {
	if c.ackPending {
		return c.ackAt
	}
	return clock.Never
}

// hasWork reports whether data or a FIN is waiting to be sent.
func (c *Conn) hasWork() bool {
	return c.avail() > 0 || c.sb.NextLost() >= 0 || (c.finPending && !c.finSent)
}

// onDeadline runs expired timers.
func (c *Conn) onDeadline(now clock.Time) {
	c.lastNow = now
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
}

// onRTO handles a retransmission-timer expiry (RFC 6298 §5.4-5.6, RFC 5681 §3.1).
func (c *Conn) onRTO(now clock.Time) {
	c.rtoAt = clock.Never
	if c.sb.count == 0 {
		return
	}
	cause := ClassifyRTO(&c.sb, c.rtoDupThresh())
	c.undoBegin(true)
	c.rtoFired(now, cause)
	flight := c.congestionFlight()
	deferred := false
	if f, ok := c.rec.(interface{ DefersRTOMarks() bool }); ok {
		deferred = f.DefersRTOMarks() // F-RTO (frto.go): the oldest segment only
	}
	for i := 0; i < c.sb.count && (!deferred || i == 0); i++ {
		c.markLost(now, i, LossRTO)
	}
	if c.inRecovery {
		c.inRecovery = false
		c.emit(event.Event{Time: now, Kind: event.RecoveryEnd, Seq: c.sb.una, Reason: 1})
	}
	c.cc.OnRTO(now, flight)
	c.ctx.Now = now
	c.rec.OnRTO(&c.ctx)
	c.rtt.backOff()
	c.rtoAt = now.Add(c.rtt.current())
	if c.rtoSince == clock.Never {
		c.rtoSince = now
	}
	c.stats.RTOs++
	c.stats.RTOCauses[cause]++
	c.pace.reset(now)
	c.emit(event.Event{Time: now, Kind: event.RTO, Seq: c.sb.una, Reason: uint8(cause)})
	c.emitMetrics(now)
}

// --- sending ---------------------------------------------------------------

// avail returns the bytes of new data ready to be sent.
func (c *Conn) avail() int {
	if c.src != nil {
		if c.finPending {
			return int(c.finOff - c.sb.nxt)
		}
		return math.MaxInt32
	}
	return int(c.writeEnd - c.sb.nxt)
}

// transmit writes the next datagram for this connection into buf.
func (c *Conn) transmit(now clock.Time, buf []byte) (int, ecn.Codepoint) {
	c.lastNow = now
	if c.abortDue {
		c.abortDue = false
		c.out = packet{typ: typeShort, dcid: c.peerCID, flags: flagCLOSE, pn: c.pn, ts: c.tsNow(now), tsecr: c.tsRecent}
		c.pn++
		return encodeShortHeader(buf, &c.out), ecn.NotECT
	}
	if c.err != nil {
		return 0, ecn.NotECT
	}
	if c.state == stInitial {
		if !c.initialDue || len(buf) < c.cfg.MaxDatagram {
			return 0, ecn.NotECT
		}
		c.initialDue = false
		c.out = packet{typ: typeInitial, dcid: c.initialDCID, scid: c.localCID, ts: c.tsNow(now),
			maxDatagram: uint64(c.cfg.MaxDatagram), recvWindow: uint64(c.cfg.RecvWindow), request: c.request, token: c.token}
		if c.cfg.ECN {
			c.out.hsFlags = hsECN
		}
		if wantsDSACK(c.cfg.Recovery) {
			c.out.hsFlags |= hsDSACK
		}
		c.hsAt = now.Add(c.rtt.current())
		return encodeInitial(buf, &c.out, c.cfg.MaxDatagram), ecn.NotECT
	}
	if c.sendAccept > 0 {
		c.sendAccept--
		c.acceptTS = c.tsNow(now)
		c.out = packet{typ: typeAccept, dcid: c.peerCID, scid: c.localCID, ts: c.acceptTS, tsecr: c.tsRecent,
			maxDatagram: uint64(c.cfg.MaxDatagram), recvWindow: uint64(c.cfg.RecvWindow)}
		if c.ecnOn {
			c.out.hsFlags = hsECN
		}
		if u, ok := c.rec.(DSACKUser); ok && u.UsesDSACK() {
			c.out.hsFlags |= hsDSACK
		}
		return encodeAccept(buf, &c.out), ecn.NotECT
	}
	if !c.validated || len(buf) < c.maxDatagram {
		return 0, ecn.NotECT // amplification limit: nothing but Accepts before validation
	}
	if !c.done {
		if n, cp := c.transmitData(now, buf); n > 0 {
			return n, cp
		}
	}
	if c.ackNow || c.pingDue {
		c.out = packet{typ: typeShort, dcid: c.peerCID, pn: c.pn, ts: c.tsNow(now), tsecr: c.tsRecent}
		c.pn++
		if c.pingDue {
			c.out.flags |= flagPING
			c.pingDue = false
		}
		if c.ackPending || c.ackNow || c.rcvNxt > 0 || c.peerFin {
			c.buildAck(&c.out)
		}
		n := encodeShortHeader(buf, &c.out)
		if c.out.flags&flagACK != 0 {
			c.ackSent(&c.out)
		}
		c.stats.PacketsSent++
		return n, ecn.NotECT
	}
	return 0, ecn.NotECT
}

// transmitData sends one retransmission, new segment or FIN if allowed.
func (c *Conn) transmitData(now clock.Time, buf []byte) (int, ecn.Codepoint) {
	if c.pace.blocked(now) {
		return 0, ecn.NotECT
	}
	c.ctx.Now = now
	act := c.rec.Next(&c.ctx)
	if c.governs && act.Retransmit < 0 && c.rec.InRecovery() {
		act = c.ctx.Normal() // the controller's cwnd governs (BBR)
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
	p := &c.out
	*p = packet{typ: typeShort, dcid: c.peerCID, pn: c.pn, ts: s.TS, tsecr: c.tsRecent, off: s.Off}
	c.pn++
	if s.Len > 0 {
		p.flags |= flagDATA
	}
	if s.Fin {
		p.flags |= flagFIN
	}
	if c.cwrDue && !retx {
		p.flags |= flagCWR
		c.cwrDue = false
	}
	if c.ackPending || c.eceOn || c.rcvNxt > 0 || c.peerFin {
		// As in TCP, every packet acknowledges once the peer has sent
		// anything (so a FIN also carries the ACK of the peer's FIN).
		p.flags |= flagACK
		c.buildAck(p)
		if shortHeaderLen(p)+s.Len > c.maxDatagram {
			p.flags &^= flagACK | flagECE
			p.hasDSACK = false
			p.nBlocks = 0
		}
	}
	n := encodeShortHeader(buf, p)
	c.rsamp.onSent(now, &s.rate, c.sb.pipe-s.Len)
	payload := buf[n : n+s.Len]
	if c.src != nil {
		c.src.Fill(int64(s.Off), payload)
	} else {
		c.sbuf.read(s.Off, payload)
	}
	if !retx && c.hashSent != nil {
		c.hashSent.Write(payload)
	}
	if p.flags&flagACK != 0 {
		c.ackSent(p)
	}
	c.pingDue = false
	c.stats.PacketsSent++
	var reason uint8
	if retx {
		reason = 1
	}
	c.emit(event.Event{Time: now, Kind: event.PacketSent, Seq: s.Off, Bytes: s.Len, Reason: reason,
		InFlight: c.sb.pipe})
	c.cc.OnSent(now, s.Len, c.sb.pipe)
	c.ctx.Now = now
	c.rec.OnSent(&c.ctx, retx, s.Len)
	if c.rtoAt == clock.Never {
		c.rtoAt = now.Add(c.rtt.current()) // RFC 6298 §5.1
	}
	c.pace.sent(now, n+s.Len)
	cp := ecn.NotECT
	if c.ecnOn && !retx {
		cp = ecn.ECT0 // RFC 3168 §6.1.5: retransmissions are sent Not-ECT
		c.stats.ECTSent++
	}
	return n + s.Len, cp
}
