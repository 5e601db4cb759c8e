// Package psk holds cclab's pre-shared keys: the key-file format (a
// receiver's and an agent's -psk-file), the permission check of secret files,
// HMAC-SHA256 (RFC 2104, crypto/hmac) with domain-separation labels, and the
// nonces of the challenge-response handshakes built on them (perf's
// authenticated reverse requests, docs/security.md; the agent's control
// connections, docs/campaigns.md).
package psk

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
	"os"
	"strings"
)

// Key-file limits (docs/security.md).
const (
	MinKeyBytes    = 16      // shortest key, bytes (128 bits)
	MaxKeyBytes    = 64      // longest key, bytes (an HMAC-SHA256 block)
	MaxKeys        = 1024    // keys in one file
	MaxKeyName     = 32      // longest key name, characters
	MaxKeyFile     = 1 << 20 // largest key file read, bytes
	NonceBytes     = 16      // client and server nonces, bytes
	DefaultKeyName = "default"
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

// Key returns the key called name ("" is DefaultKeyName).
func (k *Keys) Key(name string) ([]byte, bool) {
	if name == "" {
		name = DefaultKeyName
	}
	b, ok := k.byName[name]
	return b, ok
}

// ReadSecretFile reads a file that holds a secret: it must be a regular file
// that neither group nor others may read or write (mode 0600 or 0400), of at
// most max bytes. Errors name flag (e.g. "-psk-file").
func ReadSecretFile(flag, path string, max int) ([]byte, error) {
	return ReadFileChecked(flag, path, max, 0o077, "let group or others access the key", "600")
}

// ReadFileChecked reads path, which must be a regular file of at most max
// bytes whose permission bits include none of forbid. Errors name flag; a
// permission error says what the bits allow (why) and the chmod mode that
// fixes it.
func ReadFileChecked(flag, path string, max int, forbid os.FileMode, why, mode string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", flag, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%s: %v", flag, err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s %s: not a regular file", flag, path)
	}
	if p := st.Mode().Perm(); p&forbid != 0 {
		return nil, fmt.Errorf("%s %s: permissions %04o %s; run chmod %s %s", flag, path, p, why, mode, path)
	}
	b, err := io.ReadAll(io.LimitReader(f, int64(max)+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %v", flag, err)
	}
	if len(b) > max {
		return nil, fmt.Errorf("%s %s: longer than %d bytes", flag, path, max)
	}
	return b, nil
}

// LoadKeyFile reads a key file (ReadSecretFile's checks, -psk-file) in the
// format ParseKeys reads.
func LoadKeyFile(path string) (*Keys, error) {
	b, err := ReadSecretFile("-psk-file", path, MaxKeyFile)
	if err != nil {
		return nil, err
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
	err := ScanLines(b, MaxKeyFile, func(line int, s string) error {
		f := strings.Fields(s)
		name, hx := DefaultKeyName, f[0]
		switch len(f) {
		case 1:
		case 2:
			name, hx = f[0], f[1]
		default:
			return fmt.Errorf("line %d: want \"HEX\" or \"NAME HEX\", got %d fields", line, len(f))
		}
		if !ValidName(name) {
			return fmt.Errorf("line %d: key name %q: want 1..%d characters of A-Z a-z 0-9 . _ -", line, name, MaxKeyName)
		}
		key, err := hex.DecodeString(hx)
		if err != nil {
			return fmt.Errorf("line %d: key %q: not hexadecimal", line, name)
		}
		if len(key) < MinKeyBytes || len(key) > MaxKeyBytes {
			return fmt.Errorf("line %d: key %q is %d bytes, want %d..%d (e.g. openssl rand -hex 32)", line, name, len(key), MinKeyBytes, MaxKeyBytes)
		}
		if _, dup := k.byName[name]; dup {
			return fmt.Errorf("line %d: key name %q appears twice", line, name)
		}
		if len(k.byName) == MaxKeys {
			return fmt.Errorf("line %d: more than %d keys", line, MaxKeys)
		}
		if k.first == "" {
			k.first = name
		}
		k.byName[name] = key
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(k.byName) == 0 {
		return nil, errors.New("no key (want a line \"HEX\" or \"NAME HEX\", e.g. from openssl rand -hex 32)")
	}
	return k, nil
}

// ScanLines calls fn with each line of a key file (b, lines of at most max
// bytes), numbered from 1 and trimmed of surrounding space, skipping blank
// lines and lines starting with #. It stops at fn's first error and returns
// it.
func ScanLines(b []byte, max int, fn func(line int, s string) error) error {
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 4096), max)
	line := 0
	for sc.Scan() {
		line++
		s := strings.TrimSpace(sc.Text())
		if s == "" || s[0] == '#' {
			continue
		}
		if err := fn(line, s); err != nil {
			return err
		}
	}
	return sc.Err()
}

// ValidName reports whether s is a valid key name: 1..MaxKeyName characters
// of A-Z a-z 0-9 . _ -.
func ValidName(s string) bool {
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

// MAC is HMAC-SHA256(key, label || parts...); label separates the domains
// of a protocol's MACs (it should end in a 0 byte).
func MAC(key []byte, label string, parts ...[]byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(label))
	for _, p := range parts {
		m.Write(p)
	}
	return m.Sum(nil)
}

// NewNonce returns NonceBytes from crypto/rand.
func NewNonce() []byte {
	b := make([]byte, NonceBytes)
	_, _ = rand.Read(b)
	return b
}

// DecodeNonce decodes a hex nonce of exactly NonceBytes.
func DecodeNonce(s string) ([]byte, bool) {
	b, err := hex.DecodeString(s)
	return b, err == nil && len(b) == NonceBytes
}

// Bounds of a key made or read by LoadOrCreateKey, bytes.
const (
	MinStaticKey = 16
	MaxStaticKey = 64
)

// LoadOrCreateKey reads a static key from path, one line of hexadecimal
// (MinStaticKey..MaxStaticKey bytes) with ReadSecretFile's checks; if path
// does not exist it first writes a fresh 32-byte key from crypto/rand there
// (mode 0600, never replacing a file). Errors name flag. The receiver's
// -reset-key-file: the same key after a restart keeps stateless resets
// recognisable.
func LoadOrCreateKey(flag, path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	switch {
	case err == nil:
		key := make([]byte, 32)
		_, _ = rand.Read(key)
		_, werr := fmt.Fprintln(f, hex.EncodeToString(key))
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			return nil, fmt.Errorf("%s %s: %v", flag, path, werr)
		}
	case !errors.Is(err, os.ErrExist):
		return nil, fmt.Errorf("%s: %v", flag, err)
	}
	b, err := ReadSecretFile(flag, path, 2*MaxStaticKey+2)
	if err != nil {
		return nil, err
	}
	key, err := hex.DecodeString(strings.TrimSpace(string(b)))
	if err != nil || len(key) < MinStaticKey || len(key) > MaxStaticKey {
		return nil, fmt.Errorf("%s %s: must hold one key of %d..%d bytes in hexadecimal", flag, path, MinStaticKey, MaxStaticKey)
	}
	return key, nil
}
