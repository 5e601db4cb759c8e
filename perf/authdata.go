package perf

import (
	"errors"
	"fmt"

	"cclab/clock"
	"cclab/internal/qlog"
	"cclab/transport"
)

// Authenticated data path (docs/security.md "Authenticated data path",
// docs/wire.md "Authentication"): with -psk-file the sender dials with its
// first key and every packet of the flow is AES-128-GCM; the receiver
// looks up the key an Initial names in its key file and refuses
// unauthenticated flows unless AllowUnauthenticated.

// The AEADs of authenticated flows: authentication only (the default), or
// with encryption too (-psk-encrypt).
const (
	AuthCipher    = "AES-128-GMAC"
	EncryptCipher = "AES-128-GCM"
)

// AuthResult is one end's account of an authenticated flow: the packets
// its transport dropped because they failed authentication (forged or
// altered) or were replays.
type AuthResult struct {
	Cipher     string `json:"cipher"`
	AuthFailed uint64 `json:"auth_failed"`
	Replayed   uint64 `json:"replayed"`
}

// authResult returns the account of a flow (nil unless authenticated).
func authResult(authenticated, encrypted bool, failed, replayed uint64) *AuthResult {
	if !authenticated {
		return nil
	}
	c := AuthCipher
	if encrypted {
		c = EncryptCipher
	}
	return &AuthResult{Cipher: c, AuthFailed: failed, Replayed: replayed}
}

// streamAuth returns a stream flow's account.
func streamAuth(s transport.ConnStats) *AuthResult {
	return authResult(s.Authenticated, s.Encrypted, s.AuthFailed, s.Replayed)
}

// dgramAuth returns a datagram-mode flow's account.
func dgramAuth(s transport.DgramStats) *AuthResult {
	return authResult(s.Authenticated, s.Encrypted, s.AuthFailed, s.Replayed)
}

// pskFor sets a client's key (the key file's first) in its transport
// configuration; keys may be nil.
func pskFor(keys *Keys) (psk []byte, name string) {
	if keys == nil {
		return nil, ""
	}
	name = keys.First()
	psk, _ = keys.Key(name)
	return psk, name
}

// keyLookup is a receiver's transport.EndpointConfig.PSK over its key
// file.
func keyLookup(keys *Keys) func(name string) []byte {
	return func(name string) []byte {
		k, _ := keys.Key(name)
		return k
	}
}

// authHint adds to a transport's authentication errors what to do.
func authHint(err error) error {
	switch {
	case errors.Is(err, transport.ErrAuthRequired):
		return fmt.Errorf("%w: give the sender -psk-file with a key the receiver's -psk-file holds (or run the receiver with -allow-unauthenticated)", err)
	case errors.Is(err, transport.ErrAuthDowngrade):
		return fmt.Errorf("%w: the receiver has no -psk-file, or the path stripped the authentication", err)
	}
	return err
}

// qlogAuth writes an authenticated flow's account into its qlog as it
// closes (nothing for nil).
func qlogAuth(ql *qlog.Writer, now clock.Time, a *AuthResult) {
	if a != nil {
		ql.Authentication(now, a.Cipher, a.AuthFailed, a.Replayed)
	}
}
