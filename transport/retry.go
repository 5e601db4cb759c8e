package transport

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"hash"
	"io"
	"net/netip"
	"time"

	"cclab/clock"
)

// Stateless address validation, as QUIC's Retry (RFC 9000 §8.1.2): a server
// endpoint answers an Initial that carries no valid token with one Retry
// packet (about 40 bytes, never larger than the Initial, which is padded to
// at least MinDatagram) and creates no state. The token is a keyed MAC
// (HMAC-SHA-256, RFC 2104, truncated to 128 bits) over the client's address
// and port, the minting time and the Initial's two connection IDs; the client
// repeats its Initial with the token, proving it receives at its address.
// The key is random per endpoint (EndpointConfig.Entropy) and replaced every
// TokenLifetime; tokens under the previous key stay valid, so a token is
// accepted for at least TokenLifetime and at most twice that, and never
// after TokenLifetime from its minting time.

// DefaultTokenLifetime bounds the age of a Retry token (QUIC leaves it to the
// server, RFC 9000 §8.1.3; a Retry token is used one round trip after it is
// minted).
const DefaultTokenLifetime = 10 * time.Second

// Token layout: minting time (8 bytes, clock.Time ns) and the truncated MAC.
// A cookie (the stateless fallback, docs/security.md "Admission") is the
// kind byte cookieKind, then a token whose MAC also covers cookieLabel.
const (
	tokenTimeLen = 8
	tokenMACLen  = 16 // HMAC-SHA-256 truncated to 128 bits (RFC 2104 §5: at least half the hash output)
	tokenLen     = tokenTimeLen + tokenMACLen
	tokenKeyLen  = 32 // HMAC-SHA-256 key, bytes (RFC 2104 §3: at least the output length)
	cookieLen    = 1 + tokenLen
	cookieKind   = 0xc0 // a cookie's first byte
	cookieLabel  = "cclab v2 cookie"
)

// tokenKind says what an Initial's token proved (tokenMinter.check).
type tokenKind uint8

const (
	tokenNone   tokenKind = iota // no valid token: answered by a Retry
	tokenRetry                   // a Retry token: the address
	tokenCookie                  // a cookie: the address, and that the client got a stateless answer to this very handshake
)

// tokenMinter mints and checks Retry tokens.
type tokenMinter struct {
	entropy  io.Reader
	lifetime time.Duration
	cur      hash.Hash // HMAC under the current key
	prev     hash.Hash // HMAC under the previous key (nil before the first rotation)
	born     clock.Time
	msg      [tokenTimeLen + 16 + 2 + 2*cidLen]byte
	sum      [sha256.Size]byte
}

func newTokenMinter(entropy io.Reader, lifetime time.Duration, now clock.Time) *tokenMinter {
	m := &tokenMinter{entropy: entropy, lifetime: lifetime}
	m.cur = m.newKey()
	m.born = now
	return m
}

// newKey draws a fresh HMAC key.
func (m *tokenMinter) newKey() hash.Hash {
	var k [tokenKeyLen]byte
	if _, err := io.ReadFull(m.entropy, k[:]); err != nil {
		panic("transport: EndpointConfig.Entropy failed: " + err.Error())
	}
	return hmac.New(sha256.New, k[:])
}

// rotate replaces the key once it is a lifetime old, keeping the previous.
func (m *tokenMinter) rotate(now clock.Time) {
	if now.Sub(m.born) < m.lifetime {
		return
	}
	m.prev, m.cur = m.cur, m.newKey()
	m.born = now
}

// mac computes the token MAC (a cookie's: with cookieLabel first) under
// key h into m.sum.
func (m *tokenMinter) mac(h hash.Hash, cookie bool, at clock.Time, from netip.AddrPort, scid, dcid uint64) []byte {
	b := m.msg[:]
	binary.BigEndian.PutUint64(b, uint64(at))
	a := from.Addr().As16()
	copy(b[8:], a[:])
	binary.BigEndian.PutUint16(b[24:], from.Port())
	binary.BigEndian.PutUint64(b[26:], scid)
	binary.BigEndian.PutUint64(b[34:], dcid)
	h.Reset()
	if cookie {
		h.Write([]byte(cookieLabel))
	}
	h.Write(b)
	return h.Sum(m.sum[:0])[:tokenMACLen]
}

// mint writes a token for an Initial (scid, dcid) from `from` into dst
// (len >= tokenLen) and returns it.
func (m *tokenMinter) mint(now clock.Time, from netip.AddrPort, scid, dcid uint64, dst []byte) []byte {
	m.rotate(now)
	binary.BigEndian.PutUint64(dst, uint64(now))
	copy(dst[tokenTimeLen:], m.mac(m.cur, false, now, from, scid, dcid))
	return dst[:tokenLen]
}

// mintCookie writes a cookie for an Initial (scid, dcid) from `from` into
// dst (len >= cookieLen) and returns it.
func (m *tokenMinter) mintCookie(now clock.Time, from netip.AddrPort, scid, dcid uint64, dst []byte) []byte {
	m.rotate(now)
	dst[0] = cookieKind
	binary.BigEndian.PutUint64(dst[1:], uint64(now))
	copy(dst[1+tokenTimeLen:], m.mac(m.cur, true, now, from, scid, dcid))
	return dst[:cookieLen]
}

// valid reports whether tok was minted by this endpoint, under the current
// or the previous key, at most lifetime ago, for this address and these
// connection IDs.
func (m *tokenMinter) valid(now clock.Time, from netip.AddrPort, scid, dcid uint64, tok []byte) bool {
	return m.check(now, from, scid, dcid, tok) != tokenNone
}

// check returns the kind of tok if it is a token or a cookie minted by this
// endpoint, under the current or the previous key, at most lifetime ago,
// for this address and these connection IDs; else tokenNone.
func (m *tokenMinter) check(now clock.Time, from netip.AddrPort, scid, dcid uint64, tok []byte) tokenKind {
	kind := tokenRetry
	switch {
	case len(tok) == cookieLen && tok[0] == cookieKind:
		kind, tok = tokenCookie, tok[1:]
	case len(tok) != tokenLen:
		return tokenNone
	}
	m.rotate(now)
	at := clock.Time(binary.BigEndian.Uint64(tok))
	if at > now || now.Sub(at) > m.lifetime {
		return tokenNone
	}
	for _, h := range [2]hash.Hash{m.cur, m.prev} {
		if h != nil && hmac.Equal(m.mac(h, kind == tokenCookie, at, from, scid, dcid), tok[tokenTimeLen:]) {
			return kind
		}
	}
	return tokenNone
}
