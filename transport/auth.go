package transport

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Authenticated connections (docs/wire.md "Authentication", docs/security.md
// "Authenticated data path"). With a pre-shared key (Config.PSK) the client
// sets hs_flags bit 4 and adds to its Initial the key's name, a fresh
// 16-byte nonce and an HMAC-SHA-256 tag over the Initial (RFC 2104); the
// server, holding the key, answers with an Accept carrying its own nonce and
// a tag over the Accept under a key derived from both nonces and the three
// connection IDs (HKDF-SHA-256, RFC 5869), and the stateless-reset token
// masked. Every later Short, Data and Path packet is AES-128-GCM (RFC 5116
// AEAD_AES_128_GCM) with the header as associated data and a nonce made of
// the packet number, so an on-path observer can neither inject, replay,
// close nor move the connection: such packets fail and are counted
// (ConnStats.AuthFailed, Replayed).

// Authentication constants (docs/wire.md).
const (
	// TagLen is the AEAD tag of every authenticated packet, bytes
	// (AEAD_AES_128_GCM, RFC 5116 §5.1).
	TagLen = 16
	// authNonceLen is the length of each hello nonce, bytes.
	authNonceLen = 16
	// hsTagLen is the length of the Initial's and the Accept's HMAC-SHA-256
	// tags, bytes (truncated to 128 bits, RFC 2104 §5).
	hsTagLen = 16
	// MaxKeyName bounds the key name an Initial carries, bytes.
	MaxKeyName = 32
	// replayWindow is the sliding window of packet numbers a receiver
	// remembers per direction and number space (as IPsec's anti-replay
	// window, RFC 4303 §3.4.3).
	replayWindow = 128
	// pnSpaceShort and pnSpacePath separate the nonces of the two packet
	// number spaces (Short or Data packets, Path packets).
	pnSpaceShort = 0
	pnSpacePath  = 1
	// labelInitial separates the Initial's tag from the key's other uses.
	labelInitial = "cclab v2 initial\x00"
)

// Errors of authentication.
var (
	// ErrAuthRequired ends a client the server refused for want of
	// authentication: it requires a pre-shared key and the client had none,
	// or a key it does not hold (CloseAuthRequired).
	ErrAuthRequired = errors.New("transport: the receiver requires an authenticated connection and refused this one (no pre-shared key, or one it does not hold)")
	// ErrAuthDowngrade ends a client with a pre-shared key whose Accept is
	// not authenticated: a server without the key's requirement, or an
	// attacker that stripped the authentication from the handshake.
	ErrAuthDowngrade = errors.New("transport: the receiver's answer is not authenticated though this connection has a pre-shared key (a receiver without the key, or a downgrade on the path)")
)

// CloseAuthRequired is the close_code of a refusal for want of
// authentication (docs/wire.md); the client ends with ErrAuthRequired.
const CloseAuthRequired = 2

// sealer is one direction's AEAD: a key and a 12-byte IV whose last 8
// bytes are XORed with the packet number and its fourth with the number
// space to make each packet's nonce (as RFC 9001 §5.3 builds QUIC's).
// Without enc it authenticates only: the whole packet is the associated
// data and the plaintext is empty (GMAC, NIST SP 800-38D §3), so the tag
// costs the GHASH pass alone; with enc the header is the associated data
// and the rest is encrypted.
type sealer struct {
	aead  cipher.AEAD
	enc   bool
	wide  bool // GMAC by mac (useGHASH512), not aead: the same tags, faster
	mac   gmac
	iv    [12]byte
	nonce [12]byte // scratch: a local would escape through the interface call
}

func (s *sealer) init(key, iv []byte, enc bool) {
	s.enc = enc
	b, err := aes.NewCipher(key)
	if err != nil {
		panic(err) // a 16-byte key never fails
	}
	s.aead, err = cipher.NewGCM(b)
	if err != nil {
		panic(err)
	}
	if s.wide = !enc && useGHASH512; s.wide {
		s.mac.init(b)
	}
	copy(s.iv[:], iv)
}

// setNonce makes the nonce of packet pn of space.
func (s *sealer) setNonce(space byte, pn uint64) []byte {
	s.nonce = s.iv
	s.nonce[3] ^= space
	for i := range 8 {
		s.nonce[4+i] ^= byte(pn >> (56 - 8*i))
	}
	return s.nonce[:]
}

// seal appends the tag of b[:n] (b must hold it): with enc, b[hdr:n] is
// encrypted in place and b[:hdr] is the associated data; without, all of
// b[:n] is. It returns the sealed length.
func (s *sealer) seal(b []byte, hdr, n int, space byte, pn uint64) int {
	switch {
	case s.wide:
		s.mac.tag((*[TagLen]byte)(b[n:n+TagLen]), s.setNonce(space, pn), b[:n])
	case !s.enc:
		s.aead.Seal(b[n:n], s.setNonce(space, pn), nil, b[:n])
	default:
		s.aead.Seal(b[hdr:hdr], s.setNonce(space, pn), b[hdr:n], b[:hdr])
	}
	return n + TagLen
}

// open checks the tag at the end of b (header b[:hdr]), decrypting in
// place with enc, and returns the plain packet's length, or -1.
func (s *sealer) open(b []byte, hdr int, space byte, pn uint64) int {
	n := len(b) - TagLen
	if n < hdr {
		return -1
	}
	if s.wide {
		if !s.mac.verify(b[n:], s.setNonce(space, pn), b[:n]) {
			return -1
		}
		return n
	}
	if !s.enc {
		if _, err := s.aead.Open(nil, s.setNonce(space, pn), b[n:], b[:n]); err != nil {
			return -1
		}
		return n
	}
	pt, err := s.aead.Open(b[hdr:hdr], s.setNonce(space, pn), b[hdr:], b[:hdr])
	if err != nil {
		return -1
	}
	return hdr + len(pt)
}

// replayWin is a receiver's sliding window of the highest replayWindow
// packet numbers of one space: bit i of bits is packet hi-i.
type replayWin struct {
	hi   uint64
	any  bool
	bits [replayWindow / 64]uint64
}

// fresh reports whether pn is neither too old for the window nor seen.
func (w *replayWin) fresh(pn uint64) bool {
	if !w.any || pn > w.hi {
		return true
	}
	d := w.hi - pn
	return d < replayWindow && w.bits[d/64]&(1<<(d%64)) == 0
}

// mark records pn (fresh, and authenticated).
func (w *replayWin) mark(pn uint64) {
	if !w.any {
		w.any, w.hi, w.bits[0] = true, pn, 1
		return
	}
	if pn > w.hi {
		shift := pn - w.hi
		w.hi = pn
		switch {
		case shift >= replayWindow:
			w.bits = [replayWindow / 64]uint64{}
		case shift >= 64:
			w.bits[1], w.bits[0] = w.bits[0]<<(shift-64), 0
		default:
			w.bits[1] = w.bits[1]<<shift | w.bits[0]>>(64-shift)
			w.bits[0] <<= shift
		}
	}
	d := w.hi - pn
	w.bits[d/64] |= 1 << (d % 64)
}

// authState is an authenticated connection's keys, counters and replay
// windows (connCommon.auth; nil without authentication).
type authState struct {
	psk         []byte
	keyName     []byte
	clientNonce [authNonceLen]byte
	serverNonce [authNonceLen]byte
	keyed       bool // the traffic keys are derived (server: at once; client: from the Accept)
	encrypt     bool // the packets are encrypted too, not only authenticated (hs_flags bit 5)

	tx, rx    sealer
	acceptKey [32]byte            // the Accept's HMAC key
	resetPad  [resetTokenLen]byte // masks the Accept's stateless-reset token
	win       replayWin           // Short or Data packets received
	pathWin   replayWin           // Path packets received
	pathPN    uint64              // next Path packet number sent
	tombPN    uint64              // next packet number of a removed connection's re-acknowledgements

	failed, replayed uint64 // packets dropped: authentication failed, replayed
}

// authLabels are the HKDF-Expand labels of the connection's keys.
const (
	labelC2SKey = "cclab v2 c2s key"
	labelC2SIV  = "cclab v2 c2s iv"
	labelS2CKey = "cclab v2 s2c key"
	labelS2CIV  = "cclab v2 s2c iv"
	labelAccept = "cclab v2 accept"
	labelReset  = "cclab v2 reset"
)

// derive makes the traffic keys from the PSK and both nonces (the HKDF
// salt) and the three connection IDs (in every label's info): client
// (the flow's identity), server, and the Initial's destination.
func (a *authState) derive(server bool, clientCID, serverCID, initialDCID uint64) {
	prk, err := hkdf.Extract(sha256.New, a.psk, append(a.clientNonce[:], a.serverNonce[:]...))
	if err != nil {
		panic(err)
	}
	var ids [24]byte
	binary.BigEndian.PutUint64(ids[0:], clientCID)
	binary.BigEndian.PutUint64(ids[8:], serverCID)
	binary.BigEndian.PutUint64(ids[16:], initialDCID)
	expand := func(label string, n int) []byte {
		k, err := hkdf.Expand(sha256.New, prk, label+string(ids[:]), n)
		if err != nil {
			panic(err)
		}
		return k
	}
	c2s, s2c := &a.tx, &a.rx
	if server {
		c2s, s2c = s2c, c2s
	}
	c2s.init(expand(labelC2SKey, 16), expand(labelC2SIV, 12), a.encrypt)
	s2c.init(expand(labelS2CKey, 16), expand(labelS2CIV, 12), a.encrypt)
	copy(a.acceptKey[:], expand(labelAccept, 32))
	copy(a.resetPad[:], expand(labelReset, resetTokenLen))
	a.keyed = true
}

// hsTag returns HMAC-SHA-256(key, label || b) truncated to hsTagLen.
func hsTag(key []byte, label string, b []byte) [hsTagLen]byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(label))
	m.Write(b)
	var t [hsTagLen]byte
	copy(t[:], m.Sum(nil))
	return t
}

// newClientAuth returns the state of a client dialling with key psk
// (named name; encrypt: ask for encryption too), its nonce drawn from rnd.
func newClientAuth(psk []byte, name string, encrypt bool, rnd io.Reader) *authState {
	a := &authState{psk: append([]byte(nil), psk...), keyName: []byte(name), encrypt: encrypt}
	if _, err := io.ReadFull(rnd, a.clientNonce[:]); err != nil {
		panic(err)
	}
	return a
}

// Stats fills the authentication counters.
func (a *authState) counts() (failed, replayed uint64) {
	if a == nil {
		return 0, 0
	}
	return a.failed, a.replayed
}

// MinPSK is the shortest pre-shared key, bytes (128 bits).
const MinPSK = 16

// checkPSK checks a connection's key and key name (Config.PSK, PSKName).
func checkPSK(psk []byte, name string) error {
	switch {
	case psk != nil && len(psk) < MinPSK:
		return fmt.Errorf("transport: PSK is %d bytes, want at least %d", len(psk), MinPSK)
	case len(name) > MaxKeyName:
		return fmt.Errorf("transport: PSKName is %d bytes, at most %d", len(name), MaxKeyName)
	}
	return nil
}
