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
	"bufio"
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"strings"
	"sync"
	"time"
)

// Key-file limits (docs/security.md).
const (
	MinKeyBytes    = 16      // shortest key, bytes (128 bits)
	MaxKeyBytes    = 64      // longest key, bytes (an HMAC-SHA256 block)
	MaxKeys        = 1024    // keys in one file
	MaxKeyName     = 32      // longest key name, characters
	maxKeyFile     = 1 << 20 // largest key file read, bytes
	nonceBytes     = 16      // client and server nonces, bytes
	maxAuthLine    = 512     // longest auth line on the stream, bytes
	DefaultKeyName = "default"
)

// Domain-separation labels of the two MACs.
const (
	labelServer  = "cclab perf v2 server\x00"
	labelReverse = "cclab perf v2 reverse\x00"
)

// Keys is a set of named pre-shared keys (a key file).
type Keys struct {
	byName map[string][]byte
	first  string // the name a client uses
}

// Len returns the number of keys.
func (k *Keys) Len() int { return len(k.byName) }

// First returns the name of the first key in the file (the one a client
// uses).
func (k *Keys) First() string { return k.first }

func (k *Keys) key(name string) ([]byte, bool) {
	if name == "" {
		name = DefaultKeyName
	}
	b, ok := k.byName[name]
	return b, ok
}

// LoadKeyFile reads a key file: it must be a regular file that neither group
// nor others may read or write (mode 0600 or 0400), in the format ParseKeys
// reads.
func LoadKeyFile(path string) (*Keys, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("-psk-file: %v", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("-psk-file: %v", err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("-psk-file %s: not a regular file", path)
	}
	if p := st.Mode().Perm(); p&0o077 != 0 {
		return nil, fmt.Errorf("-psk-file %s: permissions %04o let group or others access the key; run chmod 600 %s", path, p, path)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxKeyFile+1))
	if err != nil {
		return nil, fmt.Errorf("-psk-file: %v", err)
	}
	if len(b) > maxKeyFile {
		return nil, fmt.Errorf("-psk-file %s: longer than %d bytes", path, maxKeyFile)
	}
	k, err := ParseKeys(b)
	if err != nil {
		return nil, fmt.Errorf("-psk-file %s: %v", path, err)
	}
	return k, nil
}

// ParseKeys reads the key-file format: one key per line, either "HEX" (the
// key named "default") or "NAME HEX"; NAME is 1..32 characters of
// [A-Za-z0-9._-], HEX is the key in hexadecimal, 16..64 bytes; blank lines
// and lines starting with # are ignored; at most 1024 keys, names unique.
func ParseKeys(b []byte) (*Keys, error) {
	k := &Keys{byName: map[string][]byte{}}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 4096), maxKeyFile)
	line := 0
	for sc.Scan() {
		line++
		s := strings.TrimSpace(sc.Text())
		if s == "" || s[0] == '#' {
			continue
		}
		f := strings.Fields(s)
		name, hx := DefaultKeyName, f[0]
		switch len(f) {
		case 1:
		case 2:
			name, hx = f[0], f[1]
		default:
			return nil, fmt.Errorf("line %d: want \"HEX\" or \"NAME HEX\", got %d fields", line, len(f))
		}
		if !validKeyName(name) {
			return nil, fmt.Errorf("line %d: key name %q: want 1..%d characters of A-Z a-z 0-9 . _ -", line, name, MaxKeyName)
		}
		key, err := hex.DecodeString(hx)
		if err != nil {
			return nil, fmt.Errorf("line %d: key %q: not hexadecimal", line, name)
		}
		if len(key) < MinKeyBytes || len(key) > MaxKeyBytes {
			return nil, fmt.Errorf("line %d: key %q is %d bytes, want %d..%d (e.g. openssl rand -hex 32)", line, name, len(key), MinKeyBytes, MaxKeyBytes)
		}
		if _, dup := k.byName[name]; dup {
			return nil, fmt.Errorf("line %d: key name %q appears twice", line, name)
		}
		if len(k.byName) == MaxKeys {
			return nil, fmt.Errorf("line %d: more than %d keys", line, MaxKeys)
		}
		if k.first == "" {
			k.first = name
		}
		k.byName[name] = key
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(k.byName) == 0 {
		return nil, errors.New("no key (want a line \"HEX\" or \"NAME HEX\", e.g. from openssl rand -hex 32)")
	}
	return k, nil
}

func validKeyName(s string) bool {
	if len(s) == 0 || len(s) > MaxKeyName {
		return false
	}
	for _, r := range s {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-'
		if !ok {
			return false
		}
	}
	return true
}

// authMAC is HMAC-SHA256(key, label || parts...).
func authMAC(key []byte, label string, parts ...[]byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(label))
	for _, p := range parts {
		m.Write(p)
	}
	return m.Sum(nil)
}

// newNonce returns nonceBytes from crypto/rand.
func newNonce() []byte {
	b := make([]byte, nonceBytes)
	_, _ = rand.Read(b)
	return b
}

// decodeNonce decodes a hex nonce of exactly nonceBytes.
func decodeNonce(s string) ([]byte, bool) {
	b, err := hex.DecodeString(s)
	return b, err == nil && len(b) == nonceBytes
}

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
