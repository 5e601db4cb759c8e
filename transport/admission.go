package transport

import (
	"errors"
	"net/netip"
	"time"

	"cclab/clock"
)

// Admission of new connections at a server endpoint (docs/security.md
// "Admission"): limits on connections and on half-open connections per
// source address, per source prefix and in all. With address validation on,
// a peer whose address a Retry token proved and whose half-open share is
// full falls back to stateless processing, as Linux's SYN cookies: a Retry
// with a cookie, and nothing kept; the Initial returning it is admitted
// without a half-open entry (Endpoint.room). A new peer that hits a limit
// otherwise evicts the oldest unconfirmed half-open connection of the
// scope, else the longest-idle established one (idle at least EvictIdle),
// else it is refused with an explicit CLOSE (CloseReceiverFull) instead of
// silence, as Linux answers a full accept queue with a RST under
// tcp_abort_on_overflow.

// Default admission limits (EndpointConfig).
const (
	// DefaultMaxConnsPerPrefix bounds the connections from one source
	// prefix (PrefixBits4, PrefixBits6).
	DefaultMaxConnsPerPrefix = 512
	// DefaultMaxHalfOpenPerSource bounds the half-open connections from
	// one source IP address: room for a burst of handshakes through one
	// relay, a quarter of the half-open table.
	DefaultMaxHalfOpenPerSource = 64
	// DefaultMaxHalfOpenPerPrefix bounds the half-open connections from
	// one source prefix: half of the half-open table.
	DefaultMaxHalfOpenPerPrefix = 128
	// DefaultEvictIdle is how long an established connection must have
	// heard nothing before a new validated peer may evict it when a limit
	// is reached.
	DefaultEvictIdle = 2 * time.Second
	// PrefixBits4 and PrefixBits6 are the source prefixes the per-prefix
	// limits count by: an IPv4 /24 and an IPv6 /56 (a typical end-site
	// allocation, RFC 6177 §2).
	PrefixBits4 = 24
	PrefixBits6 = 56
)

// CloseReceiverFull is the close_code of a CLOSE that refuses or evicts a
// connection because the server's admission limits are reached
// (docs/wire.md). The client ends with ErrReceiverFull.
const CloseReceiverFull = 1

// Errors of admission.
var (
	// ErrReceiverFull ends a client connection the server refused or
	// evicted for its connection limits (CloseReceiverFull).
	ErrReceiverFull = errors.New("transport: receiver full: the receiver refused the connection (its connection limits are reached; try again later, or ask its operator to raise them)")
	// ErrEvicted ends a server connection evicted to admit a new peer.
	ErrEvicted = errors.New("transport: evicted: the connection limits were reached and this connection was unconfirmed or the idlest")
)

// admCount counts a source's or a prefix's connections.
type admCount struct{ conns, half int }

// admScope says which connections a limit counts.
type admScope uint8

const (
	scopeAll admScope = iota
	scopeSource
	scopePrefix
)

// SourcePrefix returns the prefix a source address counts in for the
// per-prefix limits: its /24 (IPv4, IPv4-mapped IPv6 included) or /56.
func SourcePrefix(a netip.Addr) netip.Prefix {
	a = a.Unmap()
	bits := PrefixBits6
	if a.Is4() {
		bits = PrefixBits4
	}
	p, _ := a.Prefix(bits)
	return p
}

// account adds dConns connections and dHalf half-open ones of h's source.
func (e *Endpoint) account(h *connCommon, dConns, dHalf int) {
	e.halfOpen += dHalf
	bump(e.perSource, h.source, dConns, dHalf)
	bump(e.perPrefix, h.prefix, dConns, dHalf)
}

// bump adds to m[k]'s counts, deleting it when no connection is left.
func bump[K comparable](m map[K]admCount, k K, dConns, dHalf int) {
	c := m[k]
	c.conns += dConns
	c.half += dHalf
	if c.conns <= 0 {
		delete(m, k)
	} else {
		m[k] = c
	}
}

// uncount takes h out of the limits' counts, once: when it is removed, or
// at once when it is evicted (it lingers until its drain period ends).
func (e *Endpoint) uncount(h *connCommon) {
	if h.uncounted {
		return
	}
	h.uncounted = true
	e.live--
	if h.server {
		e.account(h, -1, -h.halfCount())
	}
}

// halfCount is 1 if server connection h counts as half-open: unconfirmed
// and not admitted statelessly.
func (h *connCommon) halfCount() int {
	if h.validated || h.stateless {
		return 0
	}
	return 1
}

// setStateless marks a server connection admitted from an Initial whose
// token is of kind k: with a cookie it is not counted half-open.
func (h *connCommon) setStateless(k tokenKind) {
	if k == tokenCookie {
		h.stateless = true
		h.ep.stats.StatelessAccepts++
	}
}

// overLimit returns the first limit a new connection from src would
// exceed (RejectNone: none), the scope it counts and whether only
// half-open connections count in it; stateless: the connection will not
// be half-open, only the connection limits apply.
func (e *Endpoint) overLimit(src netip.Addr, pfx netip.Prefix, stateless bool) (RejectReason, admScope, bool) {
	c := &e.cfg
	s, p := e.perSource[src], e.perPrefix[pfx]
	switch {
	case stateless:
	case e.halfOpen >= c.MaxHalfOpen:
		return RejectHalfOpen, scopeAll, true
	case s.half >= c.MaxHalfOpenPerSource:
		return RejectHalfOpen, scopeSource, true
	case p.half >= c.MaxHalfOpenPerPrefix:
		return RejectHalfOpen, scopePrefix, true
	}
	switch {
	case s.conns >= c.MaxConnsPerSource:
		return RejectPerSource, scopeSource, false
	case p.conns >= c.MaxConnsPerPrefix:
		return RejectPerPrefix, scopePrefix, false
	case e.live >= c.MaxConns:
		return RejectTooManyConns, scopeAll, false
	}
	return RejectNone, scopeAll, false
}

// makeRoom evicts connections until a new one from src (stateless: one
// that will not be half-open) fits every limit: true if it does; false (the
// reason counted) if a limit is reached with no connection to evict in its
// scope.
func (e *Endpoint) makeRoom(now clock.Time, src netip.Addr, stateless bool) bool {
	pfx := SourcePrefix(src)
	// Each eviction lowers every count it is in; a few suffice for the
	// limits to pass or for one to find no victim.
	for range 8 {
		r, scope, halfOnly := e.overLimit(src, pfx, stateless)
		if r == RejectNone {
			return true
		}
		if !e.evictOne(now, scope, halfOnly, src, pfx) {
			e.reject(r)
			return false
		}
	}
	e.reject(RejectTooManyConns)
	return false
}

// evictOne evicts, among the server connections of scope, the oldest
// half-open one, else (unless halfOnly) the established one idle longest if
// idle at least EvictIdle. It reports whether it evicted one.
func (e *Endpoint) evictOne(now clock.Time, scope admScope, halfOnly bool, src netip.Addr, pfx netip.Prefix) bool {
	var half, idle *connCommon
	idleBefore := now.Add(-e.cfg.EvictIdle)
	consider := func(h *connCommon) {
		switch {
		case !h.server || h.done || h.uncounted:
			return
		case scope == scopeSource && h.source != src, scope == scopePrefix && h.prefix != pfx:
			return
		case !h.validated && !(halfOnly && h.stateless):
			if half == nil || h.lastRecv.Before(half.lastRecv) {
				half = h
			}
		case !halfOnly && !h.lastRecv.After(idleBefore):
			if idle == nil || h.lastRecv.Before(idle.lastRecv) {
				idle = h
			}
		}
	}
	for _, c := range e.sch.conns {
		consider(&c.connCommon)
	}
	for _, c := range e.dg.sch.conns {
		consider(&c.connCommon)
	}
	v := half
	if v == nil {
		v = idle
	}
	if v == nil {
		return false
	}
	e.stats.Evicted++
	v.evict(now)
	return true
}

// evict ends a server connection to make room: its client is told
// CloseReceiverFull (a stream connection's CLOSE, a datagram-mode one's
// RESET), and it leaves the counts at once.
func (h *connCommon) evict(now clock.Time) {
	e := h.ep
	if c := e.byCID[h.localCID]; c != nil && &c.connCommon == h {
		c.closeCode = CloseReceiverFull
		c.Abort(now)
		c.err = ErrEvicted
		e.sch.touch(&c.sched)
	} else if d := e.dg.byCID[h.localCID]; d != nil {
		d.closeCode = CloseReceiverFull
		d.Abort(now)
		d.err = ErrEvicted
		e.dg.sch.touch(&d.sched)
	}
	e.uncount(h)
}

// refuse queues the explicit refusal of an Initial p (size bytes) from
// `from` (whose address its Retry token proved): a CLOSE with close_code
// code (CloseReceiverFull, CloseAuthRequired) to the client's CID, never
// larger than the Initial.
func (e *Endpoint) refuse(from netip.AddrPort, p *packet, size int, code uint64) {
	q := packet{typ: typeShort, dcid: p.scid, flags: flagCLOSE, closeCode: code}
	if len(e.fullQ) >= maxQueuedReplies || shortHeaderLen(&q) > size {
		return
	}
	e.fullQ = append(e.fullQ, fullReply{to: from, dcid: p.scid, code: code})
	e.replyDue = true
}

// fullReply is a queued refusal (refuse).
type fullReply struct {
	to   netip.AddrPort
	dcid uint64
	code uint64 // close_code
}

// transmitFull writes the last queued refusal into buf.
func (e *Endpoint) transmitFull(buf []byte) (int, netip.AddrPort) {
	r := e.fullQ[len(e.fullQ)-1]
	e.fullQ = e.fullQ[:len(e.fullQ)-1]
	p := packet{typ: typeShort, dcid: r.dcid, flags: flagCLOSE, closeCode: r.code}
	if r.code == CloseAuthRequired {
		e.stats.RefusedAuth++
	} else {
		e.stats.RefusedFull++
	}
	return encodeShortHeader(buf, &p), r.to
}

// onRefused handles a CLOSE for a client connection still in its
// handshake (c: its stream connection, or nil): only CloseReceiverFull or
// CloseAuthRequired from the address dialed ends it. It reports whether p
// was such a refusal.
func (e *Endpoint) onRefused(now clock.Time, from netip.AddrPort, c *Conn, p *packet) bool {
	if p.flags&flagCLOSE == 0 || p.closeCode != CloseReceiverFull && p.closeCode != CloseAuthRequired {
		return false
	}
	err := ErrReceiverFull
	if p.closeCode == CloseAuthRequired {
		err = ErrAuthRequired
	}
	if c != nil && !c.server && c.state == stInitial && !c.done && from == c.peer {
		c.fail(now, err)
		e.sch.touch(&c.sched)
		return true
	}
	if d := e.dg.byCID[p.dcid]; c == nil && d != nil && !d.server && !d.established && !d.done && from == d.peer {
		d.finish(now, err)
		e.dg.sch.touch(&d.sched)
		return true
	}
	return false
}
