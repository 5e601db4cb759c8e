package transport

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"

	"cclab/clock"
)

// Stateless reset (RFC 9000 §10.3): a server with a reset key
// (EndpointConfig.ResetKey) hands each client, in its Accept, the token
// HMAC-SHA-256(key, resetLabel ‖ server CID)[:16] of the connection; when a
// packet arrives for a CID it has no state for (the connection ended by an
// abort, a forged CLOSE, or a restart of the server with the same key) it
// answers with a Reset packet carrying that CID's token, and the client
// whose token it is ends at once with ErrStatelessReset. The token cannot
// be computed without the key (HMAC is a PRF) and is never sent for a CID
// in use; an on-path observer sees it in the Accept (no packet protection:
// docs/security.md). A Reset is 18 bytes, never larger than the datagram
// that triggered it, and resets are rate-limited (resetRate, resetBurst).

// Stateless-reset wire constants.
const (
	resetTokenLen = 16                // bytes of a token (RFC 9000 §10.3: 128 bits)
	resetLen      = 2 + resetTokenLen // version, type, token: a Reset, bytes
	// resetRate and resetBurst bound the resets an endpoint sends: a token
	// bucket of resetBurst refilled at resetRate per second (RFC 9000
	// §10.3.3 asks for a limit; one reset ends a connection, so a peer
	// needs few).
	resetRate  = 100
	resetBurst = 100
	// MinResetKey is the shortest EndpointConfig.ResetKey, bytes.
	MinResetKey = 16
)

// resetLabel separates the reset tokens' HMAC input from other uses of a key.
const resetLabel = "cclab stateless reset v1\x00"

// ErrStatelessReset ends a client connection on a valid stateless reset.
var ErrStatelessReset = errors.New("transport: stateless reset: the receiver has no state for this connection (it ended it, or restarted)")

// resetState is an endpoint's stateless-reset state.
type resetState struct {
	key    []byte                 // server: the token key (nil: no tokens, no resets)
	tokens float64                // token bucket (resetRate)
	at     clock.Time             // when tokens was last refilled
	q      []resetReply           // queued resets
	byTok  map[uint64]*connCommon // client: connections by the first 8 bytes of their token
}

// resetReply is a queued Reset.
type resetReply struct {
	to  netip.AddrPort
	tok [resetTokenLen]byte
}

// init sets the reset key. A key shorter than MinResetKey is a programming
// error (the flags read keys through internal/psk, which enforces the
// length): a token under a short HMAC key could be guessed, so init panics
// rather than issue one.
func (r *resetState) init(key []byte) {
	if key != nil && len(key) < MinResetKey {
		panic(fmt.Sprintf("transport: EndpointConfig.ResetKey is %d bytes, want at least MinResetKey (%d)", len(key), MinResetKey))
	}
	if len(key) > 0 {
		r.key = append([]byte(nil), key...)
		r.tokens = resetBurst
	}
}

// token returns the token of server CID cid.
func (r *resetState) token(cid uint64) (t [resetTokenLen]byte) {
	m := hmac.New(sha256.New, r.key)
	m.Write([]byte(resetLabel))
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], cid)
	m.Write(b[:])
	copy(t[:], m.Sum(nil))
	return t
}

// acceptReset sets hsReset and the token of server connection h in its
// Accept p, if the endpoint has a key and the client's Initial asked.
func (h *connCommon) acceptReset(p *packet) {
	if h.ep.resets.key != nil && h.peerResets {
		p.hsFlags |= hsReset
		p.resetTok = h.ep.resets.token(h.localCID)
	}
}

// takeReset records the token in a client's Accept p.
func (h *connCommon) takeReset(p *packet) {
	if p.hsFlags&hsReset == 0 || h.server {
		return
	}
	r := &h.ep.resets
	if r.byTok == nil {
		r.byTok = map[uint64]*connCommon{}
	}
	h.resetTok, h.hasResetTok = p.resetTok, true
	r.byTok[binary.BigEndian.Uint64(p.resetTok[:])] = h
}

// forget drops a removed connection's token.
func (r *resetState) forget(h *connCommon) {
	if h.hasResetTok {
		k := binary.BigEndian.Uint64(h.resetTok[:])
		if r.byTok[k] == h {
			delete(r.byTok, k)
		}
	}
}

// statelessReset queues a Reset for a packet of size bytes from `from` to
// server CID cid, which names no connection: only with a key, within the
// rate limit, and if the Reset is no larger than the packet.
func (e *Endpoint) statelessReset(now clock.Time, from netip.AddrPort, cid uint64, size int) {
	r := &e.resets
	if r.key == nil || !e.cfg.Server || size < resetLen || len(r.q) >= maxQueuedReplies {
		return
	}
	if now.After(r.at) {
		r.tokens = min(resetBurst, r.tokens+resetRate*now.Sub(r.at).Seconds())
		r.at = now
	}
	if r.tokens < 1 {
		return
	}
	r.tokens--
	r.q = append(r.q, resetReply{to: from, tok: r.token(cid)})
	e.replyDue = true
}

// transmitReset writes the last queued Reset into buf.
func (e *Endpoint) transmitReset(buf []byte) (int, netip.AddrPort) {
	q := &e.resets.q
	r := (*q)[len(*q)-1]
	*q = (*q)[:len(*q)-1]
	e.stats.ResetsSent++
	return encodeReset(buf, &r.tok), r.to
}

// encodeReset writes a Reset carrying tok into b and returns its length.
func encodeReset(b []byte, tok *[resetTokenLen]byte) int {
	b[0] = WireVersion
	b[1] = byte(typeReset)
	return 2 + copy(b[2:], tok[:])
}

// onReset ends the client connection whose token a Reset p carries
// (constant-time comparison); a Reset matching none is counted.
func (e *Endpoint) onReset(now clock.Time, p *packet) {
	h := e.resets.byTok[binary.BigEndian.Uint64(p.resetTok[:])]
	if h == nil || h.done || subtle.ConstantTimeCompare(h.resetTok[:], p.resetTok[:]) != 1 {
		e.reject(RejectReset)
		return
	}
	e.stats.ResetsRecv++
	if c := e.byCID[h.localCID]; c != nil && &c.connCommon == h {
		c.fail(now, ErrStatelessReset)
		e.sch.touch(&c.sched)
	} else if d := e.dg.byCID[h.localCID]; d != nil && &d.connCommon == h {
		// A datagram connection that has sent its CLOSE ends cleanly:
		// the peer holds no state for it, most likely because it took
		// the CLOSE, answered with a RESET that was lost and drained
		// before our retransmitted CLOSE came (RFC 9000 §10.3: a
		// closing endpoint takes a stateless reset as the end).
		err := ErrStatelessReset
		if d.closeWanted && d.closeSent > 0 {
			err = nil
		}
		d.finish(now, err)
		e.dg.sch.touch(&d.sched)
	}
}
