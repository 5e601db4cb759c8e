package transport

import (
	"fmt"
	"net/netip"
	"time"

	"cclab/ccalgo"
	"cclab/clock"
)

// Datagram Packetization Layer Path MTU Discovery, DPLPMTUD (RFC 8899): a
// connection starts at BASE_PLPMTU, probes larger sizes with padded probe
// packets that the peer acknowledges (Path packets of type pathPMTUProbe
// and pathPMTUAck, path.go), raises its datagram size when a probe is
// confirmed, and falls back to BASE_PLPMTU when a black hole swallows its
// full-sized packets. Probes are not congestion-controlled data: they hold
// no stream bytes and are not counted in flight, and their loss is never a
// congestion signal (RFC 8899 §4.4). Sizes are PLPMTUs in RFC 8899's sense:
// UDP payloads, the whole datagram of this transport (§2).
//
// The state machine is RFC 8899 §5.2's, without the DISABLED state (the
// connection does not run it at all when the size is fixed):
//
//	BASE ──probe of BASE_PLPMTU acked──> SEARCHING ──search done──> SEARCH_COMPLETE
//	  │  <────────────── black hole detected ──────────────────────────┘  │
//	  └──MAX_PROBES lost──> ERROR ──probe of BASE_PLPMTU acked──> SEARCHING
//	SEARCH_COMPLETE ──PMTU_RAISE_TIMER──> SEARCHING
//
// The handshake's Initial, padded to BASE_PLPMTU, and its answer confirm
// the base size (RFC 9000 §14.1, RFC 8899 §5.1.4), so a connection starts
// in SEARCHING.

// RFC 8899 §5.1 constants.
const (
	// basePLPMTU is BASE_PLPMTU, bytes: the size expected to work on most
	// paths, confirmed by the handshake; QUIC's 1200-byte minimum
	// (RFC 9000 §14, RFC 8899 §5.1.2), cclab's DefaultMaxDatagram.
	basePLPMTU = DefaultMaxDatagram
	// PLPMTUDMaxProbes is MAX_PROBES (RFC 8899 §5.1.2): a probe size is
	// abandoned after this many consecutive unacknowledged probes, and a
	// black hole declared after this many consecutive retransmission
	// timeouts with full-sized packets outstanding.
	PLPMTUDMaxProbes = 3
	// PMTURaiseTimer is PMTU_RAISE_TIMER (RFC 8899 §5.1.1, after RFC 4821
	// §7.7): how long a completed search's size is kept before searching
	// for a larger one again.
	PMTURaiseTimer = 600 * time.Second
	// plpmtudGranularity ends a binary search: when the smallest size that
	// failed and the largest confirmed one are this close, bytes (RFC 8899
	// §5.3.2 leaves the search algorithm to the implementation).
	plpmtudGranularity = 32
)

// plpmtudSteps are the sizes a search tries before bisecting, bytes of UDP
// payload, for a peer reached over IPv4 ([0]) or IPv6 ([1]): the common path
// MTUs (Ethernet 1500 and jumbo 9000 bytes) less the IP and UDP headers of
// the peer's family (RFC 8899 §5.3.2: a search may use a table of likely
// sizes). The largest size allowed is tried after them. Only the family's
// own sizes: the other family's, 20 bytes apart, would cost a round trip
// each and find nothing the bisection would not.
var plpmtudSteps = [2][2]int{{1500 - 28, 9000 - 28}, {1500 - 48, 9000 - 48}}

// plpmtudPhase is a state of RFC 8899 §5.2.
type plpmtudPhase uint8

// RFC 8899 §5.2 states.
const (
	plpmtudBase     plpmtudPhase = iota // confirming BASE_PLPMTU after a black hole
	plpmtudSearch                       // probing larger sizes
	plpmtudComplete                     // SEARCH_COMPLETE: size kept until PMTU_RAISE_TIMER or a black hole
	plpmtudError                        // BASE_PLPMTU not confirmed: sending at it, probing it again per PROBE_TIMER
)

// String names the state as RFC 8899 §5.2 does.
func (p plpmtudPhase) String() string {
	return [...]string{"BASE", "SEARCHING", "SEARCH_COMPLETE", "ERROR"}[p]
}

// plpmtud is one connection's DPLPMTUD state (sans-I/O: every call carries
// the time). The connection sends a probe of probeSize bytes when due,
// reports its acknowledgement (acked), runs the timers at their deadline
// (onTimer), and reports retransmission timeouts and acknowledgements of
// new data for black-hole detection (rto, progress).
type plpmtud struct {
	phase   plpmtudPhase
	base    int        // BASE_PLPMTU: the size the handshake confirmed, bytes
	size    int        // PLPMTU: the confirmed datagram size in use, bytes
	max     int        // MAX_PLPMTU: the largest size to probe, bytes
	lo, hi  int        // search bounds: lo confirmed, hi the smallest size known to fail (max+1: none), bytes
	steps   *[2]int    // the table of likely sizes for the peer's family (plpmtudSteps)
	failed  bool       // a likely size (table, MAX_PLPMTU) was just given up: probe just above lo next (next)
	probed  int        // PROBED_SIZE of the outstanding probe, bytes (0: none outstanding)
	count   int        // PROBE_COUNT: consecutive unacknowledged probes of probed
	id0, id uint64     // identifiers of the first and the latest probe of probed
	due     bool       // a probe of probeSize is to be sent
	probeAt clock.Time // PROBE_TIMER expiry (Never: not running)
	raiseAt clock.Time // PMTU_RAISE_TIMER expiry (Never: not running)
	rtos    int        // consecutive retransmission timeouts with full-sized packets outstanding

	probes, lost, blackHoles uint64 // probes sent, probes given up as lost, black holes detected
}

// start begins a search from base bytes (BASE_PLPMTU, confirmed by the
// handshake: basePLPMTU unless the connection's configuration is smaller)
// up to limit bytes for a peer reached over IPv4 (v4) or IPv6; limit <=
// base leaves the size at base for good.
func (d *plpmtud) start(base, limit int, v4 bool) {
	limit = max(base, limit)
	*d = plpmtud{phase: plpmtudSearch, base: base, size: base, max: limit, probeAt: clock.Never, raiseAt: clock.Never}
	d.steps = &plpmtudSteps[1]
	if v4 {
		d.steps = &plpmtudSteps[0]
	}
	d.lo, d.hi = d.size, limit+1
	d.next(0)
}

// next picks the next size to probe between lo and hi, or ends the search
// (SEARCH_COMPLETE, PMTU_RAISE_TIMER started at now). The order: the
// table's sizes, then MAX_PLPMTU, then bisection; but right after a table
// size or MAX_PLPMTU was given up, first the size one granularity above
// lo. A size is given up only after MAX_PROBES probe timeouts, so failures
// are what a search costs, and the common case after a failed table size
// is a path whose MTU is that of the size below (a 1500-byte Ethernet path
// fails 8972 with 1472 confirmed): the probe just above lo then ends the
// search at its first failure, where bisection failed eight times on the
// way down (RFC 8899 §5.3.2 leaves the search to the implementation). When
// it succeeds the bisection goes on from it, one round trip later.
func (d *plpmtud) next(now clock.Time) {
	d.probed, d.count, d.probeAt = 0, 0, clock.Never
	failed := d.failed
	d.failed = false
	if failed && d.hi-d.lo > plpmtudGranularity {
		d.probed, d.due = d.lo+plpmtudGranularity, true
		return
	}
	for _, s := range append(d.steps[:], d.max) {
		if s > d.lo && s < d.hi {
			d.probed, d.due = s, true
			return
		}
	}
	if d.hi-d.lo > plpmtudGranularity {
		d.probed, d.due = (d.lo+d.hi)/2, true
		return
	}
	d.phase, d.due = plpmtudComplete, false
	d.raiseAt = now.Add(PMTURaiseTimer)
}

// probeSize returns the size of the probe to send now, bytes (0: none due).
func (d *plpmtud) probeSize() int {
	if d.due {
		return d.probed
	}
	return 0
}

// sent records the probe just sent with identifier id; its PROBE_TIMER
// runs for timeout (RFC 8899 §5.1.1: derived from the RTT estimate when the
// PL has one and timely acknowledgements, as this transport does).
func (d *plpmtud) sent(now clock.Time, id uint64, timeout time.Duration) {
	if d.count == 0 {
		d.id0 = id
	}
	d.due = false
	d.id = id
	d.count++
	d.probes++
	d.probeAt = now.Add(timeout)
}

// acked handles the acknowledgement of probe id: any probe of the size
// being probed confirms it (a late answer to an earlier try included). It
// reports whether the datagram size (size) changed.
func (d *plpmtud) acked(now clock.Time, id uint64) bool {
	if d.probed == 0 || d.count == 0 || id < d.id0 || id > d.id {
		return false // no probe of this size sent, or an answer to an abandoned size
	}
	prev := d.size
	d.size, d.lo, d.rtos = d.probed, d.probed, 0
	if d.phase != plpmtudSearch {
		// BASE or ERROR confirmed BASE_PLPMTU: search again (§5.2).
		d.phase, d.hi = plpmtudSearch, d.max+1
	}
	d.next(now)
	return d.size != prev
}

// deadline returns when onTimer is next due.
func (d *plpmtud) deadline() clock.Time { return clock.Earliest(d.probeAt, d.raiseAt) }

// onTimer runs the expired timers: PROBE_TIMER sends the probe again, or
// after MAX_PROBES gives its size up (RFC 8899 §5.2: in SEARCHING the size
// becomes the search's upper bound; in BASE the base size is not confirmed
// and the state is ERROR, where BASE_PLPMTU is probed again per
// PROBE_TIMER); PMTU_RAISE_TIMER restarts the search above the size in use.
func (d *plpmtud) onTimer(now clock.Time) {
	if d.raiseAt != clock.Never && !now.Before(d.raiseAt) {
		d.raiseAt = clock.Never
		d.phase, d.lo, d.hi = plpmtudSearch, d.size, d.max+1
		d.next(now)
	}
	if d.probeAt == clock.Never || now.Before(d.probeAt) {
		return
	}
	d.probeAt = clock.Never
	if d.count < PLPMTUDMaxProbes {
		d.due = true
		return
	}
	d.lost++
	switch d.phase {
	case plpmtudSearch:
		// A likely size failed (the table's, MAX_PLPMTU): probe just above
		// lo next (next).
		d.hi, d.failed = d.probed, d.probed == d.max || d.probed == d.steps[0] || d.probed == d.steps[1]
		d.next(now)
	case plpmtudBase, plpmtudError:
		d.phase, d.count, d.due = plpmtudError, 0, true
	}
}

// progress records an acknowledgement of new data: full-sized packets get
// through (the black-hole count restarts).
func (d *plpmtud) progress() { d.rtos = 0 }

// rto records a retransmission timeout. After MAX_PROBES consecutive ones
// with packets larger than BASE_PLPMTU in use, the path is taken to have
// become a black hole for them (RFC 8899 §4.3, §5.2): the size falls back
// to BASE_PLPMTU, which is then confirmed by a probe (BASE). It reports
// whether the size changed.
func (d *plpmtud) rto(now clock.Time) bool {
	if d.size <= d.base {
		return false
	}
	d.rtos++
	if d.rtos < PLPMTUDMaxProbes {
		return false
	}
	d.blackHoles++
	d.rtos = 0
	d.phase, d.size, d.lo, d.hi = plpmtudBase, d.base, d.base, d.max+1
	d.probed, d.count, d.due, d.probeAt, d.raiseAt = d.base, 0, true, clock.Never, clock.Never
	return true
}

// onPMTUPath handles a size probe or its acknowledgement from `from` at
// now. Only the peer's count. A probe is acknowledged with a packet smaller
// than itself, sent to the peer (no amplification, no reflection), even
// before the peer's address is validated: the client sends its first
// probe as soon as its handshake completes, and it may overtake the packet
// that confirms the client at the server; ignored, it would cost a probe
// timeout (an RTO, 200 ms at least) on every path. An acknowledgement
// counts only from the validated peer.
func (h *connCommon) onPMTUPath(now clock.Time, from netip.AddrPort, p *packet) RejectReason {
	if from != h.peer {
		return RejectUnexpected
	}
	if p.pathType == pathPMTUProbe {
		h.path.pmtuAck, h.path.pmtuID = true, p.pathData
		return RejectNone
	}
	if !h.pmtuOn || !h.validated {
		return RejectUnexpected
	}
	h.pmtu.acked(now, p.pathData)
	return RejectNone
}

// pmtuProbe writes the due size probe into buf and returns its length (0:
// none due, or buf too small); its PROBE_TIMER runs for timeout.
func (h *connCommon) pmtuProbe(now clock.Time, buf []byte, timeout time.Duration) int {
	n := h.pmtu.probeSize()
	if n == 0 || n > len(buf) || h.peerCID == 0 {
		return 0
	}
	h.pmtuN++
	m := n - h.pathSealOverhead() // an authenticated probe is sealed to n bytes
	encodePath(buf, h.peerCID, pathPMTUProbe, h.pmtuN)
	clear(buf[pathLen:m]) // padding (RFC 8899 §4.1), authenticated with the rest
	h.pmtu.sent(now, h.pmtuN, timeout)
	return h.sealPath(buf, m)
}

// CheckPLPMTUMax checks a largest size to probe (Config.PLPMTUMax) for a
// connection whose handshake size is maxDatagram bytes: 0 (no discovery)
// or maxDatagram..MaxUDPPayload.
func CheckPLPMTUMax(n, maxDatagram int) error {
	if n != 0 && (n < maxDatagram || n > MaxUDPPayload) {
		return fmt.Errorf("must be 0 (no size discovery) or %d..%d bytes (MaxDatagram..the largest UDP payload)", maxDatagram, MaxUDPPayload)
	}
	return nil
}

// mssSetter is a recovery strategy whose segment size can change during
// the connection (the embedded fastRecovery and sackLoss).
type mssSetter interface{ setMSS(mss int) }

func (r *fastRecovery) setMSS(mss int) { r.mss = mss }
func (r *sackLoss) setMSS(mss int)     { r.mss = mss }

// pmtuStart starts discovery on an established stream connection when it
// is configured and both the controller and the strategy can change their
// segment size (ccalgo.SegmentSizer, mssSetter); else the size stays. An
// authenticated connection (auth.go) discovers too: its probes are sealed
// to the size they probe (pmtuProbe), padding included, and only a sealed
// PMTU_ACK, which opened, confirms one.
func (c *Conn) pmtuStart() {
	_, ccOK := c.cc.(ccalgo.SegmentSizer)
	_, recOK := c.rec.(mssSetter)
	if c.cfg.PLPMTUMax > c.maxDatagram && ccOK && recOK {
		c.pmtuOn = true
		c.pmtu.start(c.maxDatagram, c.cfg.PLPMTUMax, c.peer.Addr().Unmap().Is4())
	}
}

// pmtuApply makes the size discovery confirmed (or fell back to) the
// connection's datagram size: the MSS of new segments, the controller's
// and the strategy's SMSS, pacing. The congestion window in bytes stays
// (RFC 8899 §4.4: an update of the PLPMTU MUST NOT increase it). A
// controller that cannot take the size ends discovery at the size in use.
func (c *Conn) pmtuApply() {
	old := c.maxDatagram
	c.maxDatagram = c.pmtu.size
	mss := c.payloadMax(maxShortOverhead)
	if !c.cc.(ccalgo.SegmentSizer).SetMSS(mss) {
		c.maxDatagram, c.pmtuOn = old, false
		return
	}
	c.mss = mss
	c.rec.(mssSetter).setMSS(mss)
	c.ctx.MSS = mss
	c.pace.set(c.cc, mss)
}

// PLPMTUStats is a connection's datagram size discovery (DPLPMTUD).
type PLPMTUStats struct {
	Size       int    // datagram size in use, bytes (the PLPMTU)
	State      string // RFC 8899 §5.2 state ("" without discovery)
	Probes     uint64 // size probes sent
	ProbesLost uint64 // sizes given up after MAX_PROBES unacknowledged probes
	BlackHoles uint64 // black holes detected (fell back to BASE_PLPMTU)
}

// pmtuStats returns the discovery counters.
func (h *connCommon) pmtuStats() PLPMTUStats {
	s := PLPMTUStats{Size: h.maxDatagram}
	if h.pmtuOn {
		s.State, s.Probes, s.ProbesLost, s.BlackHoles = h.pmtu.phase.String(), h.pmtu.probes, h.pmtu.lost, h.pmtu.blackHoles
	}
	return s
}

// pieces is the rest of a segment being retransmitted in pieces: a
// segment sent before the datagram size fell (a black hole) no longer fits
// a datagram, and segment boundaries never change (Segment), so its
// retransmission goes out as consecutive pieces of at most the MSS, the
// whole counted once (cwnd, recovery, events) with its first piece.
type pieces struct {
	off, end uint64 // stream bytes still to send
	ts       uint32 // the retransmission's timestamp
	fin      bool   // the segment carries the FIN (set on the last piece)
}

// splitRetx records segment s's retransmission as pieces and returns the
// first piece's length, bytes.
func (c *Conn) splitRetx(s *Segment) int {
	c.split = pieces{off: s.Off + uint64(c.mss), end: s.Off + uint64(s.Len), ts: s.TS, fin: s.Fin}
	return c.mss
}

// sendPiece writes the next piece of a segment retransmitted in pieces.
func (c *Conn) sendPiece(now clock.Time, buf []byte) int {
	sp := &c.split
	plen := int(min(sp.end-sp.off, uint64(c.mss)))
	p := c.ep.txPkt
	p.setShort(c.peerCID, c.pn, sp.ts, c.tsRecent)
	c.pn++
	p.off = sp.off
	p.flags |= flagDATA
	sp.off += uint64(plen)
	if sp.off == sp.end && sp.fin {
		p.flags |= flagFIN
	}
	n := encodeShortHeader(buf, p)
	c.fill(p.off, buf[n:n+plen])
	c.pace.sent(now, n+plen)
	c.stats.PacketsSent++
	return n + plen
}
