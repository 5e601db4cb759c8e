package transport

import (
	"crypto/hmac"
	"encoding/binary"
	"io"
	"net/netip"

	"cclab/clock"
)

// The endpoint's side of authentication (auth.go): it signs the handshake
// packets and seals the packets its authenticated connections produce, and
// authenticates and opens what they receive before any decoder or
// connection sees it. The connections build their packets as without
// authentication, only smaller by the tag (connCommon.payloadMax).

// sealOut finishes a datagram h produced (n bytes in b): the Initial's and
// the Accept's auth sections, or the AEAD of a Short or Data packet. It
// returns the datagram's length.
func (h *connCommon) sealOut(b []byte, n int) int {
	a := h.auth
	if a == nil {
		return n
	}
	switch packetType(b[1]) {
	case typeInitial:
		a.signInitial(b)
	case typeAccept:
		return a.signAccept(b, n)
	case typeShort, typeDgram:
		if a.keyed {
			pn, hdr := varintAt(b, 2+cidLen+1)
			return a.tx.seal(b, hdr, n, pnSpaceShort, pn)
		}
	}
	return n
}

// sealPath seals the Path packet h wrote into b (n bytes: pathLen, or
// more for a padded size probe): its own packet number goes after the
// dcid, the path type, data and padding are authenticated (encrypted with
// Encrypt) whatever the length. It returns the sealed length, n plus
// pathSealOverhead's bytes, which b must hold.
func (h *connCommon) sealPath(b []byte, n int) int {
	a := h.auth
	if a == nil || !a.keyed || n == 0 {
		return n
	}
	pn := a.pathPN
	a.pathPN++
	l := varintLen(pn)
	copy(b[2+cidLen+l:], b[2+cidLen:n])
	putVarint(b[2+cidLen:], pn)
	return a.tx.seal(b, 2+cidLen+l, n+l, pnSpacePath, pn)
}

// pathSealOverhead is how many bytes sealing adds to h's next Path packet:
// its packet number and the tag (0 unauthenticated).
func (h *connCommon) pathSealOverhead() int {
	if a := h.auth; a != nil && a.keyed {
		return varintLen(a.pathPN) + TagLen
	}
	return 0
}

// pathSize is the length of h's Path packets on the wire, bytes (sealed:
// the packet number and the tag more).
func (h *connCommon) pathSize() int { return pathLen + h.pathSealOverhead() }

// signInitial adds the auth section to the client's Initial in b (padded
// with zeros): hs_flags bit 4, the key name, the nonce and the tag over
// everything before it.
func (a *authState) signInitial(b []byte) {
	_, off := varintAt(b, 2+2*cidLen+4)
	_, off = varintAt(b, off)
	b[off] |= hsAuth
	if a.encrypt {
		b[off] |= hsEncrypt
	}
	l, off := varintAt(b, off+1) // request
	l, off = varintAt(b, off+int(l))
	off += int(l) // token
	b[off] = byte(len(a.keyName))
	off++
	off += copy(b[off:], a.keyName)
	off += copy(b[off:], a.clientNonce[:])
	t := hsTag(a.psk, labelInitial, b[:off])
	copy(b[off:], t[:])
}

// signAccept adds the auth section to the server's Accept in b (n bytes):
// hs_flags bit 4, the reset token masked, the server's nonce and the tag.
// It returns the new length.
func (a *authState) signAccept(b []byte, n int) int {
	_, off := varintAt(b, 2+2*cidLen+8)
	_, off = varintAt(b, off)
	b[off] |= hsAuth
	if a.encrypt {
		b[off] |= hsEncrypt
	}
	if b[off]&hsReset != 0 {
		for i := range resetTokenLen {
			b[off+1+i] ^= a.resetPad[i]
		}
	}
	n += copy(b[n:], a.serverNonce[:])
	t := hsTag(a.acceptKey[:], "", b[:n])
	return n + copy(b[n:], t[:])
}

// authAccept checks the Accept p (raw bytes b) of h, a client in its
// handshake: with a key, it must be authenticated (else the error ends the
// connection: a downgrade) and its tag right (else it is dropped and
// counted: forged); the traffic keys are then derived and the reset token
// unmasked. Without a key, an authenticated Accept is unexpected.
func (h *connCommon) authAccept(p *packet, b []byte) (RejectReason, error) {
	a := h.auth
	switch {
	case a == nil && p.hsFlags&hsAuth != 0:
		return RejectUnexpected, nil
	case a == nil:
		return RejectNone, nil
	case p.hsFlags&hsAuth == 0:
		a.failed++
		return RejectAuth, ErrAuthDowngrade
	case p.hsFlags&hsEncrypt != 0 != a.encrypt:
		return RejectFlags, nil // not the echo of our Initial's bit 5
	}
	a.serverNonce = p.nonce
	a.derive(false, h.localCID, p.scid, h.initialDCID)
	if t := hsTag(a.acceptKey[:], "", b[:p.authEnd]); !hmac.Equal(t[:], p.hsTag[:]) {
		a.keyed = false
		a.failed++
		return RejectAuth, nil
	}
	for i := range resetTokenLen {
		p.resetTok[i] ^= a.resetPad[i]
	}
	h.tagLen = TagLen
	return RejectNone, nil
}

// authInitial decides on the authentication of an Initial p (raw bytes
// b) from `from` whose address is validated: key is the connection's key
// chosen by Configure (nil: the endpoint's PSK lookup by the key name). An
// unauthenticated Initial passes unless a key is required (a Configure key,
// or an endpoint PSK without AllowUnauthenticated); one with a key the
// server does not hold, or a wrong tag, is refused; a server with no keys
// at all serves it unauthenticated (its client then ends). A refused peer is told
// CloseAuthRequired. It returns the new connection's state (nil: not
// authenticated) and whether to go on.
func (e *Endpoint) authInitial(from netip.AddrPort, p *packet, b []byte, key []byte) (*authState, bool) {
	if p.hsFlags&hsAuth == 0 {
		if key != nil || (e.cfg.PSK != nil && !e.cfg.AllowUnauthenticated) {
			e.reject(RejectAuthRequired)
			e.refuse(from, p, len(b), CloseAuthRequired)
			return nil, false
		}
		return nil, true
	}
	if key == nil && e.cfg.PSK == nil {
		return nil, true // no keys here: served unauthenticated (the client ends with ErrAuthDowngrade)
	}
	if key == nil {
		key = e.cfg.PSK(string(p.keyName))
	}
	if t := hsTag(key, labelInitial, b[:p.authEnd]); key == nil || !hmac.Equal(t[:], p.hsTag[:]) {
		e.reject(RejectAuth)
		e.refuse(from, p, len(b), CloseAuthRequired)
		return nil, false
	}
	e.authUsed = true
	return &authState{psk: append([]byte(nil), key...), clientNonce: p.nonce, encrypt: p.hsFlags&hsEncrypt != 0}, true
}

// keyServer gives h, a server connection just accepted from Initial p, the
// authentication state a (nil: none): a fresh nonce and the traffic keys.
func (h *connCommon) keyServer(a *authState, p *packet) {
	if a == nil {
		return
	}
	if _, err := io.ReadFull(h.ep.entropy(), a.serverNonce[:]); err != nil {
		panic("transport: EndpointConfig.Entropy failed: " + err.Error())
	}
	a.derive(true, p.scid, h.localCID, p.dcid)
	h.auth, h.tagLen = a, TagLen
}

// authOf returns the keyed authentication state of the connection (or
// finished connection) a Short or Path datagram b names, or nil.
func (e *Endpoint) authOf(now clock.Time, b []byte) *authState {
	id := binary.BigEndian.Uint64(b[2:])
	var a *authState
	if c := e.conn(id); c != nil {
		a = c.auth
	} else if d := e.dg.byCID[id]; d != nil && packetType(b[1]) == typePath {
		a = d.auth
	} else if t, ok := e.tombs.get(id, now); ok && packetType(b[1]) == typeShort {
		a = t.auth
	}
	if a == nil || !a.keyed {
		return nil
	}
	return a
}

// open authenticates and decrypts datagram b (a Short, Data or Path
// packet) of a connection keyed with a, and returns the plain packet as
// the decoders read it, or nil (counted: forged, replayed or truncated).
func (e *Endpoint) open(a *authState, b []byte) []byte {
	space, win, off := byte(pnSpaceShort), &a.win, 2+cidLen+1
	if packetType(b[1]) == typePath {
		space, win, off = pnSpacePath, &a.pathWin, 2+cidLen
	}
	pn, hdr := varintAt(b, off)
	switch {
	case hdr < 0:
		e.reject(RejectTruncated)
		return nil
	case !win.fresh(pn):
		a.replayed++
		e.reject(RejectReplay)
		return nil
	}
	n := a.rx.open(b, hdr, space, pn)
	if n < 0 {
		a.failed++
		e.reject(RejectAuth)
		return nil
	}
	win.mark(pn)
	if space == pnSpacePath {
		// The decoder reads the plain layout, header, type, data (and a
		// size probe's padding): the header moves up to the plaintext, in
		// place, over the packet number.
		l := hdr - (2 + cidLen)
		copy(b[l:], b[:2+cidLen])
		return b[l:n]
	}
	return b[:n]
}
