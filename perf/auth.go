package perf

// Authenticated control: a pre-shared key (PSK) and an HMAC-SHA256
// challenge-response (RFC 2104, crypto/hmac) in the perf handshake, so that a
// receiver sends a reverse flow only to a client that holds a key
// (docs/security.md, "Authenticated control").
//
//  1. hello: the client opens a short connection whose Request carries Hello
//     (a 16-byte client nonce, hex) and Key (the key's name). The server
//     answers with one Report carrying Challenge (a fresh 16-byte server
//     nonce, hex, single use, bound to the client's IP address, valid for
//     challengeTTL) and Proof = HMAC(key, "cclab perf v2 server" 0x00 ||
//     client nonce || server nonce), so the client knows it talks to a holder
//     of the key too.
//  2. the reverse request: the client opens the data connection with Key and
//     Nonce (the server nonce) in its Request, and writes as the first line
//     of its stream {"mac":"<hex>"} with MAC = HMAC(key, "cclab perf v2
//     reverse" 0x00 || server nonce || the Request's exact bytes). The server
//     sends nothing on that connection until the MAC checks out and the nonce
//     is taken (a replayed request finds its nonce gone).
//
// The key authenticates the request; it does not encrypt or authenticate the
// data that follows.

import (
	"net/netip"
	"sync"
	"time"

	"cclab/internal/psk"
)

// Key-file limits (docs/security.md; the format is package psk's).
const (
	MinKeyBytes    = psk.MinKeyBytes    // shortest key, bytes (128 bits)
	MaxKeyBytes    = psk.MaxKeyBytes    // longest key, bytes (an HMAC-SHA256 block)
	MaxKeys        = psk.MaxKeys        // keys in one file
	MaxKeyName     = psk.MaxKeyName     // longest key name, characters
	nonceBytes     = psk.NonceBytes     // client and server nonces, bytes
	maxAuthLine    = 512                // longest auth line on the stream, bytes
	DefaultKeyName = psk.DefaultKeyName // the name of a key given without one
)

// Domain-separation labels of the two MACs.
const (
	labelServer  = "cclab perf v2 server\x00"
	labelReverse = "cclab perf v2 reverse\x00"
)

// Keys is a set of named pre-shared keys (a key file, psk.Keys).
type Keys = psk.Keys

// LoadKeyFile reads a key file: it must be a regular file that neither group
// nor others may read or write (mode 0600 or 0400), in the format ParseKeys
// reads.
func LoadKeyFile(path string) (*Keys, error) { return psk.LoadKeyFile(path) }

// ParseKeys reads the key-file format: one key per line, either "HEX" (the
// key named "default") or "NAME HEX"; NAME is 1..32 characters of
// [A-Za-z0-9._-], HEX is the key in hexadecimal, 16..64 bytes; blank lines
// and lines starting with # are ignored; at most 1024 keys, names unique.
func ParseKeys(b []byte) (*Keys, error) { return psk.ParseKeys(b) }

// The handshake's primitives are package psk's.
var (
	authMAC     = psk.MAC
	newNonce    = psk.NewNonce
	decodeNonce = psk.DecodeNonce
)

// authLine is the client's first line on an authenticated reverse
// connection.
type authLine struct {
	MAC string `json:"mac"`
}

// Challenge table bounds (docs/security.md).
const (
	challengeTTL  = 30 * time.Second // a server nonce is valid this long
	maxChallenges = 4096             // outstanding server nonces; the oldest goes first when full
)

// challenges holds the server nonces handed out and not yet used. Each is
// single use and bound to the client's IP address.
type challenges struct {
	mu    sync.Mutex
	m     map[[nonceBytes]byte]challenge
	order [][nonceBytes]byte // issue order, for eviction
}

type challenge struct {
	ip      netip.Addr
	expires time.Time
}

// issue returns a fresh nonce for a client at ip.
func (t *challenges) issue(ip netip.Addr, now time.Time) []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil {
		t.m = map[[nonceBytes]byte]challenge{}
	}
	// Drop used and expired entries from the front; evict the oldest when full.
	for len(t.order) > 0 {
		c, ok := t.m[t.order[0]]
		if ok && now.Before(c.expires) && len(t.m) < maxChallenges {
			break
		}
		delete(t.m, t.order[0])
		t.order = t.order[1:]
	}
	var n [nonceBytes]byte
	copy(n[:], newNonce())
	t.m[n] = challenge{ip: ip.Unmap(), expires: now.Add(challengeTTL)}
	t.order = append(t.order, n)
	return n[:]
}

// take consumes nonce if it was issued to ip and has not expired.
func (t *challenges) take(nonce []byte, ip netip.Addr, now time.Time) bool {
	var n [nonceBytes]byte
	if len(nonce) != nonceBytes {
		return false
	}
	copy(n[:], nonce)
	t.mu.Lock()
	defer t.mu.Unlock()
	c, ok := t.m[n]
	if !ok {
		return false
	}
	delete(t.m, n)
	return c.ip == ip.Unmap() && now.Before(c.expires)
}
