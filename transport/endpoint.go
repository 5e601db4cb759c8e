package transport

import (
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"net/netip"

	"cclab/clock"
	"cclab/ecn"
)

// Endpoint is one UDP socket's worth of connections: it demultiplexes
// received datagrams to connections by connection ID and multiplexes their
// outgoing datagrams. It owns no timers (see Deadline).
type Endpoint struct {
	// The fields every datagram in and out reads come first, in the
	// struct's first 64 bytes (its size class is 64-byte aligned): with
	// thousands of endpoints (a simulation's hosts) each datagram finds
	// its endpoint out of the cache, and one line is then one miss, not
	// one per field scattered over the struct (issue #29).
	last  *Conn   // the connection conn found last (in byCID), or nil
	pkt   *packet // scratch: the datagram being received (decodePacket); bufs' (Buffers.rx)
	txPkt *packet // scratch: the short packet being sent (packet.setShort); bufs' (Buffers.tx)
	rx    []byte  // the datagram being received, as it came (handshake tags cover its bytes)
	rxLen int     // length of the datagram being received, bytes
	// authUsed: a connection of the endpoint has had authentication state
	// (a PSK dialled with, or an authenticated Initial accepted), so a
	// received datagram may be sealed (authOf). Without it, Receive skips
	// that look-up on every datagram.
	authUsed bool
	// replyDue: a stateless reply may be queued (retryQ, tombQ, fullQ,
	// resets.q): set by whatever queues one, cleared by Transmit once all
	// four are empty, so that Transmit reads four queues only then.
	replyDue bool
	// dgUsed: a datagram-mode connection has been added (dg.sch), so
	// Transmit asks dgTransmit; without it there is none to ask.
	dgUsed bool
	// finished counts the stream connections that have finished or
	// failed (Conn.Done became true), modulo 2^32 (Finished).
	finished uint32

	sch       scheduler[*Conn] // stream connections, in creation order, with their timers (sched.go)
	byCID     map[uint64]*Conn // by local CID
	bufs      *Buffers         // connection buffers and scratch (EndpointConfig.Buffers, or the endpoint's own)
	ack       *ackProgress     // scratch: the ACK being processed (Conn.onAck); bufs' (Buffers.ack)
	stats     EndpointStats
	cfg       EndpointConfig
	rand      *rand.Rand
	byInitial map[uint64]*Conn // server: by the client's Initial destination CID
	acceptQ   fifo[*Conn]
	tombs     expiring[tombstone]       // finished conns by local CID: re-acknowledge a late FIN
	tombQ     []tombReply               // pending re-acknowledgements
	tombInit  expiring[struct{}]        // removed server conns by Initial DCID: late duplicate Initials are not new conns
	tokens    *tokenMinter              // server: Retry tokens (nil with NoRetry)
	retryQ    []retryReply              // pending Retry packets
	perSource map[netip.Addr]admCount   // server: live and half-open connections per source address (admission.go)
	perPrefix map[netip.Prefix]admCount // server: the same per source prefix (SourcePrefix)
	halfOpen  int                       // server: connections accepted but not yet confirmed by the client
	live      int                       // connections counted against MaxConns (evicted ones leave at once)
	fullQ     []fullReply               // pending explicit refusals (CloseReceiverFull)
	resets    resetState                // stateless resets (reset.go)
	oooUsed   uint64                    // out-of-order memory charged by all connections, bytes (Conn.recharge)
	acceptCfg Config                    // scratch: the config of a connection being accepted
	dg        dgramEndpoint             // datagram-mode connections (dgram_endpoint.go)
	specs     [maxConnSpecs]*connSpec   // parsed controller and recovery specs (connspec.go)
	specNext  int                       // the cache slot to fill next
}

// EndpointStats counts an endpoint's datagrams and rejects.
type EndpointStats struct {
	DatagramsIn  uint64 // datagrams received
	DatagramsOut uint64 // datagrams produced by Transmit
	BytesIn      uint64 // received datagram bytes
	BytesOut     uint64 // transmitted datagram bytes
	ConnsOpened  uint64 // connections dialed or accepted
	ConnsClosed  uint64 // connections removed after finishing
	RetriesSent  uint64 // Retry packets sent (Initials without a valid token: no state created)
	// CookiesSent counts the Retries of the stateless fallback (cookies,
	// RetriesSent includes them): a token-validated Initial met a full
	// half-open table (admission.go).
	CookiesSent uint64
	// StatelessAccepts counts connections admitted from an Initial that
	// returned a cookie: never counted as half-open.
	StatelessAccepts uint64
	Evicted          uint64 // server connections evicted to admit a new validated peer (admission.go)
	RefusedFull      uint64 // explicit refusals sent (CLOSE with CloseReceiverFull to a validated peer)
	RefusedAuth      uint64 // refusals for want of authentication sent (CLOSE with CloseAuthRequired)
	ResetsSent       uint64 // stateless resets sent (reset.go)
	ResetsRecv       uint64 // stateless resets that ended a connection of ours
	HalfOpen         int    // connections accepted but not yet confirmed by the client (now)
	OOOBytes         uint64 // out-of-order receive memory held by all connections (now), bytes
	// OOOBytesDropped counts received out-of-order bytes dropped because
	// the endpoint was over MaxOOOBytes and the connection over its share.
	OOOBytesDropped uint64
	// Rejects counts discarded datagrams per reason (index RejectReason).
	Rejects [NumRejectReasons]uint64
}

// Rejected returns the total number of rejected datagrams.
func (s EndpointStats) Rejected() uint64 {
	var n uint64
	for _, v := range s.Rejects {
		n += v
	}
	return n
}

// NewEndpoint returns an endpoint.
func NewEndpoint(cfg EndpointConfig) *Endpoint {
	d := cfg.Defaults
	d.fill(DefaultConfig())
	cfg.Defaults = d
	fillZero(&cfg.MaxConns, DefaultMaxConns)
	fillZero(&cfg.MaxHalfOpen, DefaultMaxHalfOpen)
	fillZero(&cfg.MaxConnsPerSource, DefaultMaxConnsPerSource)
	if cfg.NoRetry {
		// The simulator (no attacker): no limits per prefix or on
		// half-open connections per source beyond the totals, as before
		// they existed.
		fillZero(&cfg.MaxConnsPerPrefix, cfg.MaxConns)
		fillZero(&cfg.MaxHalfOpenPerSource, cfg.MaxHalfOpen)
		fillZero(&cfg.MaxHalfOpenPerPrefix, cfg.MaxHalfOpen)
	}
	fillZero(&cfg.MaxConnsPerPrefix, DefaultMaxConnsPerPrefix)
	fillZero(&cfg.MaxHalfOpenPerSource, DefaultMaxHalfOpenPerSource)
	fillZero(&cfg.MaxHalfOpenPerPrefix, DefaultMaxHalfOpenPerPrefix)
	fillZero(&cfg.EvictIdle, DefaultEvictIdle)
	fillZero(&cfg.TokenLifetime, DefaultTokenLifetime)
	fillZero(&cfg.MaxOOOBytes, DefaultMaxOOOBytes)
	r := cfg.Rand
	if r == nil {
		r = rand.New(rand.NewPCG(1, 2))
	}
	e := &Endpoint{cfg: cfg, rand: r, byCID: map[uint64]*Conn{}, byInitial: map[uint64]*Conn{},
		perSource: map[netip.Addr]admCount{}, perPrefix: map[netip.Prefix]admCount{}}
	e.resets.init(cfg.ResetKey)
	if cfg.Server && !cfg.NoRetry {
		e.tokens = newTokenMinter(e.entropy(), cfg.TokenLifetime, clock.Start)
	}
	e.bufs = cfg.Buffers
	if e.bufs == nil {
		e.bufs = NewBuffers()
	}
	e.pkt, e.txPkt, e.ack = &e.bufs.rx, &e.bufs.tx, &e.bufs.ack
	return e
}

// entropy returns the source of token keys and path-challenge data:
// EndpointConfig.Entropy, or a ChaCha8 stream seeded from Rand on first use
// (so that an endpoint that never needs it draws nothing from Rand).
func (e *Endpoint) entropy() io.Reader {
	if e.cfg.Entropy == nil {
		var seed [32]byte
		for i := 0; i < len(seed); i += 8 {
			binary.LittleEndian.PutUint64(seed[i:], e.rand.Uint64())
		}
		e.cfg.Entropy = rand.NewChaCha8(seed)
	}
	return e.cfg.Entropy
}

// Stats returns the endpoint's counters.
func (e *Endpoint) Stats() EndpointStats {
	s := e.stats
	s.HalfOpen = e.halfOpen
	s.OOOBytes = e.oooUsed
	return s
}

// Conns returns the endpoint's live connections (do not modify the slice).
func (e *Endpoint) Conns() []*Conn { return e.sch.conns }

// newCID draws a connection ID not in use (and not 0).
func (e *Endpoint) newCID() uint64 {
	for {
		id := e.rand.Uint64()
		if id != 0 && e.byCID[id] == nil && e.dg.byCID[id] == nil {
			return id
		}
	}
}

// connConfig completes cfg with the endpoint and package defaults.
func (e *Endpoint) connConfig(cfg Config) Config {
	cfg.fill(e.cfg.Defaults)
	if cfg.Sink == nil {
		cfg.Sink = e.cfg.Sink
	}
	return cfg
}

// Dial opens a connection to peer. The Initial goes out on the next
// Transmit; the connection is usable (Write, SetSource) at once.
func (e *Endpoint) Dial(now clock.Time, peer netip.AddrPort, cfg Config) (*Conn, error) {
	cfg = e.connConfig(cfg)
	if err := cfg.validateFields(); err != nil {
		return nil, err
	}
	sp, err := e.connSpec(&cfg)
	if err != nil {
		return nil, err
	}
	c := newConn(e, cfg, sp, now)
	c.dial(peer, cfg.Request)
	if cfg.PSK != nil {
		c.auth = newClientAuth(cfg.PSK, cfg.PSKName, cfg.Encrypt, e.entropy())
		e.authUsed = true
	}
	if cfg.SealRequest != nil {
		r := cfg.SealRequest(c.id, c.initialDCID, c.request)
		if len(r) > MaxRequest {
			return nil, fmt.Errorf("transport: SealRequest returned %d bytes, at most %d", len(r), MaxRequest)
		}
		c.request = append(c.request[:0], r...)
	}
	e.add(c)
	return c, nil
}

// conn returns the connection whose local CID is id, or nil: byCID, after
// a look at the one found last (a host's datagrams come in runs for one
// connection; the map's lookup per datagram was ~1.4 % of the scale
// benchmark's time). last is always in byCID (OnDeadline clears it with the
// removal), so it answers as the map does.
func (e *Endpoint) conn(id uint64) *Conn {
	if c := e.last; c != nil && c.localCID == id {
		return c
	}
	c := e.byCID[id]
	if c != nil {
		e.last = c
	}
	return c
}

func (e *Endpoint) add(c *Conn) {
	e.sch.add(c)
	e.byCID[c.localCID] = c
	if c.server {
		e.byInitial[c.initialDCID] = c
	}
	e.opened(&c.connCommon)
}

// opened counts a new connection (stream or datagram mode).
func (e *Endpoint) opened(h *connCommon) {
	e.stats.ConnsOpened++
	e.live++
	if h.server {
		h.prefix = SourcePrefix(h.source)
		e.account(h, 1, h.halfCount())
	}
}

// closed uncounts a removed connection and detaches it from its scheduler.
func (e *Endpoint) closed(h *connCommon) {
	e.stats.ConnsClosed++
	// Removed from its scheduler: a later call of the application's (Write,
	// Abort, ...) must not touch it there, where its position and heap
	// index now name another connection or none.
	h.sched.core = nil
	e.uncount(h)
	e.resets.forget(h)
}

// Admission of an Initial p from `from` that names no existing connection
// takes three steps: with address validation on (not NoRetry) it must
// carry a valid Retry token, or it is answered by one Retry and nothing is
// kept (addressValid); its authentication is checked (authInitial); then
// the admission limits apply (room, admission.go): room is made by
// eviction, or the validated peer is refused explicitly.

// addressValid is admission's first step: a server, and a valid Retry token
// or cookie (else one Retry answers, and nothing is kept). It returns what
// the token proved (tokenRetry without address validation), or tokenNone.
func (e *Endpoint) addressValid(now clock.Time, from netip.AddrPort, p *packet, size int) tokenKind {
	if !e.cfg.Server {
		e.reject(RejectNotServer)
		return tokenNone
	}
	if e.tokens == nil {
		return tokenRetry
	}
	k := e.tokens.check(now, from, p.scid, p.dcid, p.token)
	if k == tokenNone {
		switch {
		case len(p.token) == cookieLen && p.token[0] == cookieKind:
			e.reject(RejectCookie) // forged, expired, or minted for another address or handshake
		case len(p.token) > 0:
			e.reject(RejectToken) // expired, forged, or minted for another address: a fresh Retry
		}
		e.retry(now, from, p, size, false)
	}
	return k
}

// room is admission's last step. With address validation on, a full
// half-open table (or the source's or prefix's share of it) turns a
// token-validated Initial into the stateless fallback: a Retry with a
// cookie, and nothing kept; the Initial that returns the cookie (kind
// tokenCookie) is admitted without counting as half-open. Otherwise room
// is made by eviction, or the validated peer is refused explicitly.
func (e *Endpoint) room(now clock.Time, from netip.AddrPort, p *packet, size int, kind tokenKind) bool {
	src := from.Addr()
	if kind == tokenRetry && e.tokens != nil {
		if r, _, halfOnly := e.overLimit(src, SourcePrefix(src), false); r != RejectNone && halfOnly {
			e.retry(now, from, p, size, true)
			return false
		}
	}
	if e.makeRoom(now, src, kind == tokenCookie) {
		return true
	}
	e.refuse(from, p, size, CloseReceiverFull)
	return false
}

// tokenOK reports whether a repeated Initial from `from` may be answered
// (and move a half-open connection to that address): always without
// address validation, else only with a valid token for `from`.
func (e *Endpoint) tokenOK(now clock.Time, from netip.AddrPort, p *packet) bool {
	return e.tokens == nil || e.tokens.valid(now, from, p.scid, p.dcid, p.token)
}

// retry queues one Retry answering Initial p (size bytes) from `from`: a
// fresh token (cookie: a cookie, the stateless fallback), never more bytes
// than the Initial.
func (e *Endpoint) retry(now clock.Time, from netip.AddrPort, p *packet, size int, cookie bool) {
	if len(e.retryQ) >= maxQueuedReplies {
		return
	}
	r := retryReply{to: from, dcid: p.scid, odcid: p.dcid}
	if cookie {
		r.n = len(e.tokens.mintCookie(now, from, p.scid, p.dcid, r.token[:]))
	} else {
		r.n = len(e.tokens.mint(now, from, p.scid, p.dcid, r.token[:]))
	}
	if retryLen(r.token[:r.n]) > size {
		return
	}
	e.retryQ = append(e.retryQ, r)
	e.replyDue = true
}

// retryReply is a queued Retry.
type retryReply struct {
	to          netip.AddrPort
	dcid, odcid uint64
	token       [cookieLen]byte
	n           int // the token's length, bytes
}

// onRetry hands a Retry to the client connection it names.
func (e *Endpoint) onRetry(p *packet) {
	var h *connCommon
	if c := e.byCID[p.dcid]; c != nil && c.state == stInitial {
		h = &c.connCommon
	} else if d := e.dg.byCID[p.dcid]; d != nil && !d.established {
		h = &d.connCommon
	}
	if h == nil || h.server {
		e.reject(RejectUnknownCID)
		return
	}
	h.touch()
	if r := h.onRetry(p); r != RejectNone {
		e.reject(r)
	}
}

// Finished returns how many of the endpoint's stream connections have
// finished or failed so far (Conn.Done became true), modulo 2^32: a
// driver that polls its connections' Done after each call into the
// endpoint need poll only when it changed.
func (e *Endpoint) Finished() uint32 { return e.finished }

// Accept returns the next newly accepted incoming connection, or nil.
func (e *Endpoint) Accept() *Conn {
	return e.acceptQ.pop()
}

func (e *Endpoint) reject(r RejectReason) { e.stats.Rejects[r]++ }

// Receive hands in one datagram received from `from` with ECN field ce. It
// never panics; malformed or unexpected datagrams are counted in
// Stats().Rejects and dropped.
func (e *Endpoint) Receive(now clock.Time, from netip.AddrPort, ce ecn.Codepoint, b []byte) {
	e.stats.DatagramsIn++
	e.stats.BytesIn += uint64(len(b))
	e.rxLen, e.rx = len(b), b
	if len(b) > 1 && packetType(b[1]) == typeDgram {
		e.dgReceive(now, from, ce, b)
		return
	}
	if e.authUsed && len(b) >= 2+cidLen+1 && (packetType(b[1]) == typeShort || packetType(b[1]) == typePath) {
		if a := e.authOf(now, b); a != nil {
			if b = e.open(a, b); b == nil {
				return
			}
		}
	}
	p := e.pkt
	if r := decodePacket(b, p); r != RejectNone && (r != RejectInitialSize || !e.cfg.AcceptUnpaddedInitial) {
		e.reject(r) // (an Initial too small for its declared size is complete: decodePacket checks its size last)
		return
	}
	switch p.typ {
	case typePath:
		var h *connCommon
		if c := e.conn(p.dcid); c != nil && c.state == stOpen && !c.done {
			h = &c.connCommon
		} else if d := e.dg.byCID[p.dcid]; d != nil && d.established && !d.done {
			h = &d.connCommon
		}
		if h == nil {
			e.reject(RejectUnknownCID)
			return
		}
		h.touch()
		if r := h.onPath(now, from, p, e.rxLen); r != RejectNone { // (its size on the wire: sealed, if so)
			e.reject(r)
		}
	case typeInitial:
		if p.hsFlags&hsDgram != 0 {
			e.dgInitial(now, from, p, len(b))
			return
		}
		e.onInitial(now, from, p, len(b))
	case typeRetry:
		e.onRetry(p)
	case typeReset:
		e.onReset(now, p)
	case typeAccept:
		c := e.conn(p.dcid)
		if c == nil {
			if e.dgAccept(now, p) {
				return
			}
			e.reject(RejectUnknownCID)
			return
		}
		c.touch()
		if r := c.onAccept(now, p); r != RejectNone {
			e.reject(r)
		}
	default:
		c := e.conn(p.dcid)
		if c == nil {
			if t, ok := e.tombs.get(p.dcid, now); ok {
				e.reject(RejectOldPacket)
				// Re-acknowledge only to the connection's validated address
				// and with no more bytes than the packet (no reflection).
				if p.flags&(flagDATA|flagFIN|flagPING) != 0 && from == t.peer && t.ackLen() <= len(b) && len(e.tombQ) < maxQueuedReplies {
					e.tombQ = append(e.tombQ, tombReply{to: from, t: t})
					e.replyDue = true
				}
				return
			}
			if e.onRefused(now, from, nil, p) {
				return
			}
			e.reject(RejectUnknownCID)
			e.statelessReset(now, from, p.dcid, len(b))
			return
		}
		if c.state == stInitial && e.onRefused(now, from, c, p) {
			return
		}
		e.sch.touch(&c.sched)
		if r := c.onShort(now, from, ce, p); r != RejectNone {
			e.reject(r)
		}
	}
}

// onInitial accepts a connection or answers a retransmitted Initial (size:
// the datagram's length, bytes).
func (e *Endpoint) onInitial(now clock.Time, from netip.AddrPort, p *packet, size int) {
	if c := e.byInitial[p.dcid]; c != nil {
		if c.id != p.scid || c.state != stOpen {
			e.reject(RejectUnexpected)
			return
		}
		c.touch()
		c.initialAgain(from, e.tokenOK(now, from, p))
		return
	}
	if _, ok := e.tombInit.get(p.dcid, now); ok {
		e.reject(RejectOldPacket) // a delayed or duplicated Initial of a finished conn
		return
	}
	kind := e.addressValid(now, from, p, size)
	if kind == tokenNone {
		return
	}
	cfg := &e.acceptCfg // not a local: Configure would make it escape, one allocation per connection
	*cfg = e.connConfig(Config{})
	if e.cfg.Configure != nil {
		e.cfg.Configure(p.request, cfg)
		*cfg = e.connConfig(*cfg)
	}
	if err := cfg.validateFields(); err != nil {
		e.reject(RejectConfig)
		return
	}
	sp, err := e.connSpec(cfg)
	if err != nil {
		e.reject(RejectConfig)
		return
	}
	a, ok := e.authInitial(from, p, e.rx, cfg.PSK)
	if !ok || !e.room(now, from, p, size, kind) {
		return
	}
	c := newConn(e, *cfg, sp, now)
	c.accept(from, p, cfg.MaxDatagram, cfg.ECN)
	c.setStateless(kind)
	c.keyServer(a, p)
	c.peerDSACK = p.hsFlags&hsDSACK != 0
	c.peerRight = p.recvWindow
	c.tsRecent = p.ts
	if err := c.establish(now); err != nil {
		e.reject(RejectConfig)
		return
	}
	c.sendAccept = 1
	e.add(c)
	e.acceptQ.push(c)
}

// Unreachable ends every connection (stream or datagram mode) whose peer is
// peer (any peer if peer is the zero AddrPort) with err, at once: a driver
// calls it when the network reports the peer unreachable (ICMP port
// unreachable on a connected socket). It returns how many it ended.
func (e *Endpoint) Unreachable(now clock.Time, peer netip.AddrPort, err error) int {
	n := 0
	for _, c := range e.sch.conns {
		if !c.done && (!peer.IsValid() || c.peer == peer) {
			c.fail(now, err)
			e.sch.touch(&c.sched)
			n++
		}
	}
	for _, c := range e.dg.sch.conns {
		if !c.done && (!peer.IsValid() || c.peer == peer) {
			c.finish(now, err)
			e.dg.sch.touch(&c.sched)
			n++
		}
	}
	return n
}

// Transmit writes the next datagram to send into buf and returns its length,
// destination and ECN codepoint; n == 0 means nothing is to be sent now.
// buf must hold the largest MaxDatagram in use. Connections take turns.
func (e *Endpoint) Transmit(now clock.Time, buf []byte) (n int, to netip.AddrPort, cp ecn.Codepoint) {
	if e.replyDue {
		if len(e.retryQ) > 0 || len(e.tombQ) > 0 || len(e.fullQ) > 0 || len(e.resets.q) > 0 {
			return e.transmitReply(buf)
		}
		e.replyDue = false
	}
	s := &e.sch
	s.markDue(now)
	for i := s.next(s.rr); i >= 0; i = s.next(i + 1) {
		c := s.conns[i]
		s.touch(&c.sched) // its deadline may change; it stays ready if it sends
		if n, to = c.pathTransmit(buf); n > 0 {
			n = c.sealPath(buf, n)
			s.rr = i + 1
			e.stats.DatagramsOut++
			e.stats.BytesOut += uint64(n)
			return n, to, ecn.NotECT
		}
		if n, cp = c.transmit(now, buf); n > 0 {
			n = c.sealOut(buf, n)
			s.rr = i + 1
			e.stats.DatagramsOut++
			e.stats.BytesOut += uint64(n)
			return n, c.peer, cp
		}
		s.idle(&c.sched)
	}
	if !e.dgUsed || len(e.dg.sch.conns) == 0 {
		return 0, netip.AddrPort{}, ecn.NotECT // (no datagram-mode connection: no call)
	}
	if n, to, cp = e.dgTransmit(now, buf); n > 0 {
		e.stats.DatagramsOut++
		e.stats.BytesOut += uint64(n)
		return n, to, cp
	}
	return 0, netip.AddrPort{}, ecn.NotECT
}

// transmitReply writes a queued stateless reply: an explicit refusal, a
// stateless reset, a Retry, else a re-acknowledgement of a late FIN
// (Transmit sends these first).
func (e *Endpoint) transmitReply(buf []byte) (n int, to netip.AddrPort, _ ecn.Codepoint) {
	switch {
	case len(e.fullQ) > 0:
		n, to = e.transmitFull(buf)
	case len(e.resets.q) > 0:
		n, to = e.transmitReset(buf)
	case len(e.retryQ) > 0:
		r := &e.retryQ[len(e.retryQ)-1]
		p := packet{typ: typeRetry, dcid: r.dcid, odcid: r.odcid, token: r.token[:r.n]}
		n, to = encodeRetry(buf, &p), r.to
		e.retryQ = e.retryQ[:len(e.retryQ)-1]
		e.stats.RetriesSent++
		if r.n == cookieLen {
			e.stats.CookiesSent++
		}
	default:
		r := e.tombQ[len(e.tombQ)-1]
		e.tombQ = e.tombQ[:len(e.tombQ)-1]
		p := r.t.ack()
		if a := r.t.auth; a != nil {
			p.pn = a.tombPN
			a.tombPN++
		}
		n, to = encodeShortHeader(buf, &p), r.to
		if a := r.t.auth; a != nil {
			n = a.tx.seal(buf, shortFixed-8+varintLen(p.pn), n, pnSpaceShort, p.pn)
		}
	}
	e.stats.DatagramsOut++
	e.stats.BytesOut += uint64(n)
	return n, to, ecn.NotECT
}

// Deadline returns the earliest instant a connection needs OnDeadline
// (retransmission, delayed-ACK, persist, pacing, idle or drain timers), or
// clock.Never.
func (e *Endpoint) Deadline() clock.Time {
	d := e.sch.earliest()
	if len(e.dg.sch.conns) > 0 {
		d = clock.Earliest(d, e.dg.sch.earliest())
	}
	return d
}

// OnDeadline runs every expired timer and removes finished connections
// whose drain period has passed.
func (e *Endpoint) OnDeadline(now clock.Time) {
	e.dgOnDeadline(now)
	removed := false
	for _, c := range e.sch.dueNow(now) {
		c.onDeadline(now)
		e.sch.touch(&c.sched)
		if c.done && !c.abortDue && !now.Before(c.drainAt) {
			c.removed = true
			removed = true
			delete(e.byCID, c.localCID)
			if e.last == c {
				e.last = nil
			}
			if c.err == nil {
				if c.auth != nil {
					c.auth.tombPN = c.pn
				}
				e.tombs.put(c.localCID, tombstone{peerCID: c.peerCID, peer: c.peer, cum: c.peerFinOff + 1, auth: c.auth}, now.Add(c.cfg.IdleTimeout))
			}
			if c.server {
				delete(e.byInitial, c.initialDCID)
				e.tombInit.put(c.initialDCID, struct{}{}, now.Add(c.cfg.IdleTimeout))
			}
			e.oooUsed -= c.oooCharge
			e.closed(&c.connCommon)
		}
	}
	if removed {
		e.sch.compact(func(c *Conn) bool { return c.removed })
		for _, c := range e.sch.due { // the endpoint holds no pointer to a removed conn now
			if c.removed && c.released {
				e.bufs.putConn(c)
			}
		}
	}
	e.tombs.sweep(now)
	e.tombInit.sweep(now)
}

// maxQueuedReplies bounds the queued stateless replies (Retries,
// re-acknowledgements of late FINs) of each kind.
const maxQueuedReplies = 64

// tombstone remembers a finished connection for IdleTimeout after its removal
// (a cheap TIME-WAIT): a FIN retransmitted because our last ACK was lost is
// acknowledged again, so the peer can finish too.
type tombstone struct {
	peerCID uint64
	peer    netip.AddrPort // the connection's last validated peer address
	cum     uint64         // cumulative ACK covering the peer's FIN
	auth    *authState     // an authenticated connection's keys (its re-acknowledgements are sealed), or nil
}

// ack returns the re-acknowledgement.
func (t tombstone) ack() packet {
	return packet{typ: typeShort, dcid: t.peerCID, flags: flagACK, cumAck: t.cum}
}

// ackLen returns the re-acknowledgement's length, bytes.
func (t tombstone) ackLen() int {
	p := t.ack()
	if t.auth != nil {
		p.pn = t.auth.tombPN
		return shortHeaderLen(&p) + TagLen
	}
	return shortHeaderLen(&p)
}

type tombReply struct {
	to netip.AddrPort
	t  tombstone
}
