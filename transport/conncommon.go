package transport

import (
	"net/netip"
	"time"

	"cclab/clock"
	"cclab/event"
)

// connCommon is the identity, handshake and lifetime state that stream
// (Conn) and datagram-mode (DgramConn) connections share, with the
// accessors and the client (dial) and server (accept) handshake setup.
type connCommon struct {
	ep     *Endpoint
	server bool
	sink   event.Sink  // nil: events are dropped before they are built (emit)
	ev     event.Event // the event given to sink (emit; event.Sink takes a pointer)

	id          uint64 // client-chosen CID: the flow identity at both ends
	localCID    uint64
	peerCID     uint64
	initialDCID uint64
	peer        netip.AddrPort
	validated   bool                // server: the client confirmed the handshake (its first packet after the Accept); client: true
	source      netip.Addr          // server: the client's address when accepted (per-source limits)
	prefix      netip.Prefix        // server: source's prefix (per-prefix limits, SourcePrefix)
	uncounted   bool                // out of the admission counts (removed, or evicted: admission.go)
	stateless   bool                // server: admitted by the stateless fallback (a cookie): never counted half-open
	closeCode   uint64              // the close_code of the CLOSE an abort sends
	resetTok    [resetTokenLen]byte // client: the server's stateless-reset token (reset.go), if hasResetTok
	hasResetTok bool
	peerResets  bool // server: the client's Initial takes a stateless-reset token (hsReset)
	err         error
	done        bool
	removed     bool // taken out of the endpoint (after its drain period)
	drainAt     clock.Time
	base        clock.Time // timestamp origin
	lastNow     clock.Time
	lastRecv    clock.Time
	request     []byte

	maxDatagram int        // negotiated datagram size, bytes
	mss         int        // payload bytes per packet (largest application datagram in datagram mode)
	tagLen      int        // AEAD tag bytes added to each packet after the handshake (auth.go); 0 without authentication
	auth        *authState // keys, counters and replay windows of an authenticated connection (auth.go); nil: none
	ecnOn       bool

	path   pathState  // path validation (path.go)
	pmtu   plpmtud    // datagram size discovery (dplpmtud.go), if pmtuOn
	pmtuOn bool       // DPLPMTUD runs (Config.PLPMTUMax above the handshake's size)
	pmtuN  uint64     // size probes sent (the next probe's identifier)
	sched  schedState // place in the endpoint's scheduler (sched.go)

	// handshake
	token      []byte // client: the Retry token to send in the Initial
	retries    int    // client: Retry packets accepted
	initialDue bool
	hsAt       clock.Time
	sendAccept int
	acceptTS   uint32
	pingDue    bool
}

// emit records e as the connection's event (its Flow is the connection's
// identity, its Link -1). With no sink it returns before the call, so an
// event nobody takes costs a test (the live path without metrics).
func (h *connCommon) emit(e event.Event) {
	if h.sink != nil {
		h.ev = e
		h.ev.Flow, h.ev.Link = h.id, -1
		h.sink.Record(&h.ev)
	}
}

// event returns the connection's own event reset to kind k at now (Flow the
// connection's identity, Link -1, every other field zero) for the caller to
// fill and pass to h.sink, or nil with no sink: the packet paths' events
// (PacketSent, PacketAcked, Delivered, MetricsUpdated) are set in place,
// where emit builds its argument and copies it.
func (h *connCommon) event(now clock.Time, k event.Kind) *event.Event {
	if h.sink == nil {
		return nil
	}
	e := &h.ev
	*e = event.Event{}
	e.Time, e.Kind, e.Flow, e.Link = now, k, h.id, -1
	return e
}

// ID returns the connection's identity: the client-chosen connection ID,
// equal at both ends (event.Event.Flow).
func (h *connCommon) ID() uint64 { return h.id }

// InitialDCID returns the destination connection ID of the client's
// Initial (drawn at random by the client, equal at both ends): with ID it
// names the connection's handshake (Config.SealRequest binds a request to
// the two).
func (h *connCommon) InitialDCID() uint64 { return h.initialDCID }

// Peer returns the peer's current address (it changes on NAT rebinding).
func (h *connCommon) Peer() netip.AddrPort { return h.peer }

// Done reports whether the connection has finished: for a stream, both FINs
// exchanged and acknowledged; for datagrams, closed; or failed (Err() != nil).
func (h *connCommon) Done() bool { return h.done }

// Err returns why the connection failed, or nil.
func (h *connCommon) Err() error { return h.err }

// Request returns the opaque application request the client sent in its
// Initial.
func (h *connCommon) Request() []byte { return h.request }

// newConnCommon returns the state of a connection created at now; sink nil
// or event.Discard discards its events (none is built: see emit).
func newConnCommon(ep *Endpoint, sink event.Sink, now clock.Time) connCommon {
	if sink == event.Discard {
		sink = nil
	}
	return connCommon{ep: ep, sink: sink, base: now - clock.Time(time.Microsecond), lastNow: now, lastRecv: now, validated: true}
}

// dial sets up a client: a fresh local CID (also the flow identity), a
// random Initial destination CID, and the Initial due.
func (h *connCommon) dial(peer netip.AddrPort, request []byte) {
	h.localCID = h.ep.newCID()
	h.id = h.localCID
	h.initialDCID = h.ep.rand.Uint64()
	h.peer = peer
	h.request = append([]byte(nil), request...)
	h.initialDue = true
}

// accept sets up a server from the client's Initial p received from `from`:
// the client's CID as identity, a fresh local CID, the smaller datagram size
// (maxDatagram is ours, bytes) and ECN if both sides want it.
func (h *connCommon) accept(from netip.AddrPort, p *packet, maxDatagram int, ecn bool) {
	h.server = true
	h.validated = false
	h.id = p.scid
	h.peerCID = p.scid
	h.localCID = h.ep.newCID()
	h.initialDCID = p.dcid
	h.peer = from
	h.source = from.Addr()
	h.request = append([]byte(nil), p.request...)
	h.maxDatagram = min(maxDatagram, int(p.maxDatagram))
	h.ecnOn = ecn && p.hsFlags&hsECN != 0
	h.peerResets = p.hsFlags&hsReset != 0
}

// payloadMax returns the room for payload in a packet whose header and
// sections take header bytes: the negotiated datagram size less the header
// and the AEAD tag (0 without authentication), bytes. Every size a
// connection computes for its packets (the MSS, the room for an ACK
// section, a datagram's payload) comes from it.
func (h *connCommon) payloadMax(header int) int { return h.maxDatagram - header - h.tagLen }

// timeout returns how long the connection may hear nothing and the error
// it then fails with: the handshake timeout until the Accept (a client
// waiting for it), the idle timeout after it, with ErrHandshakeTimeout for
// a server's half-open connection (accepted, not yet confirmed).
//
// A half-open connection is kept for the idle timeout, not the handshake
// timeout: its client believes itself connected after the Accept and
// retransmits its first packets with a backed-off RTO (1, 2, 4, 8, 16 s ...
// up to MaxRTO, below the idle timeout), so under heavy loss it may be
// silent for longer than the handshake timeout; dropping the entry then
// answered its next packet with a stateless reset, ending a connection
// that was merely unlucky. QUIC likewise lets the idle timeout, at least
// three PTOs, govern the handshake (RFC 9000 §10.1). A flood of half-open
// connections is bounded by the admission limits and the stateless
// fallback (admission.go), not by their lifetime.
func (h *connCommon) timeout(established bool, idle, handshake time.Duration) (time.Duration, error) {
	switch {
	case !established:
		return handshake, ErrHandshakeTimeout
	case !h.validated:
		return idle, ErrHandshakeTimeout
	}
	return idle, ErrIdleTimeout
}

// handshaking reports whether the handshake timeout applies (timeout):
// the connection is not established or not yet validated.
func (h *connCommon) handshaking(established bool) bool { return !established || !h.validated }

// timeoutErr returns ErrHandshakeTimeout or ErrIdleTimeout (see timeout)
// once nothing has been received for that long, else nil.
func (h *connCommon) timeoutErr(now clock.Time, established bool, idle, handshake time.Duration) error {
	timeout, err := h.timeout(established, idle, handshake)
	if !now.Before(h.lastRecv.Add(timeout)) {
		return err
	}
	return nil
}

// handshakeTimer applies RFC 6298 §5.5-5.6 to the Initial once its timer
// (hsAt) has expired: back off rtt's RTO and send the Initial again. It
// reports whether the timer expired (the caller counts the RTO).
func (h *connCommon) handshakeTimer(now clock.Time, rtt *rttEstimator) bool {
	if h.hsAt == clock.Never || now.Before(h.hsAt) {
		return false
	}
	rtt.backOff()
	h.initialDue = true
	h.hsAt = clock.Never
	return true
}

// initialAgain handles a retransmitted Initial from `from`: our Accept was
// lost. One Accept per Initial, each smaller than it, keeps the
// amplification factor < 1. The Accept goes to the address the connection
// was accepted from, or to a new one only if the Initial carries a valid
// Retry token for it (tokenOK; the token of a long-retransmitted Initial may
// have expired, the address it validated stays validated).
func (h *connCommon) initialAgain(from netip.AddrPort, tokenOK bool) {
	if !h.validated && h.sendAccept < 1 && (tokenOK || from == h.peer) {
		h.sendAccept++
		h.peer = from
	}
}

// MaxRetries bounds the Retry packets a client accepts per connection
// (docs/wire.md "Stateless address validation"). RFC 9000 §17.2.5.2 allows
// QUIC one; a cclab handshake may legitimately need two, the token Retry
// and, when the server's half-open table is full, the cookie Retry of the
// stateless fallback (admission.go), and both again after one
// re-validation during the handshake (the client's NAT rebound, or a token
// or cookie expired while the Initial was retransmitted: answered by a
// fresh token Retry). More suggest a loop or an on-path attacker making the
// client resend its padded Initial: they are ignored (counted unexpected)
// and the handshake timer decides.
const MaxRetries = 2 * 2

// onRetry takes the token of a Retry answering our Initial and sends the
// Initial again with it at once.
func (h *connCommon) onRetry(p *packet) RejectReason {
	if p.odcid != h.initialDCID || h.retries >= MaxRetries {
		return RejectUnexpected
	}
	h.retries++
	h.token = append(h.token[:0], p.token...)
	h.initialDue = true
	h.hsAt = clock.Never
	return RejectNone
}

// confirm records the client's first packet after the Accept: the
// handshake is complete and the connection leaves the half-open count.
func (h *connCommon) confirm() {
	if !h.validated {
		if h.server && !h.uncounted && !h.stateless {
			h.ep.account(h, 0, -1)
		}
		h.validated = true
	}
}
