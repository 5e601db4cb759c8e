package agent

// Mutual authentication of a control connection (docs/campaigns.md, "Keys"),
// inside its TLS 1.3 session (tls.go). The client speaks first; each side
// proves its key over the session's channel binding CB (RFC 9266
// tls-exporter) and both nonces, so a recorded handshake is worth nothing on
// a new connection (the agent's nonce is fresh, single use, and lives only
// in that connection's handshake), and a handshake relayed by a man in the
// middle between two TLS sessions does not verify (the two sessions'
// CBs differ).
//
//	client → hello     {method, key (psk: its name), nonce: Nc}
//	agent  → challenge {nonce: Na, proof: Pa, pubkey (ed25519: the agent's)}
//	client → auth      {proof: Pc, pubkey (ed25519: the client's)}
//	agent  → ok        {name: the client's name} | error {code: unauthorized}
//
// PSK (HMAC-SHA256, psk.MAC): Pa = HMAC(K, labelAgent || CB || Nc || Na),
// Pc = HMAC(K, labelClient || CB || Nc || Na).
// Ed25519 (RFC 8032, crypto/ed25519): Pa = Sign(agent key, labelAgent || CB ||
// Nc || Na || agent public key), Pc = Sign(client key, labelClient || CB || Nc
// || Na || agent public key || client public key); each side accepts the
// other's public key only if its authorized-keys file lists it.

import (
	"bytes"
	"crypto/ed25519"
	"crypto/hmac"
	"encoding/hex"
	"errors"
	"fmt"
	"net"

	"cclab/internal/psk"
)

// Transcript labels (domain separation of the two proofs and from perf's).
const (
	labelAgent  = "cclab agent v2 agent\x00"
	labelClient = "cclab agent v2 client\x00"
)

// transcript is label || the parts, the bytes an Ed25519 proof signs.
func transcript(label string, parts ...[]byte) []byte {
	b := []byte(label)
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

// errPeerRefused is wrapped by handshake errors the peer reported.
var errPeerRefused = errors.New("refused by the peer")

// handshakeMessage reads one handshake message of the given type; an error
// message from the peer becomes an error wrapping ErrUnauthorized when its
// code says so.
func handshakeMessage(conn net.Conn, typ string) (*message, error) {
	b, err := readFrame(conn, MaxRequest)
	if err != nil {
		return nil, err
	}
	m, err := decodeMessage(b)
	if err != nil {
		return nil, err
	}
	if m.Type == tError {
		if m.Code == codeUnauthorized {
			return nil, fmt.Errorf("%w: %w: %s", ErrUnauthorized, errPeerRefused, m.Error)
		}
		return nil, fmt.Errorf("%w: %s", errPeerRefused, m.Error)
	}
	if m.Type != typ || m.ID != 0 {
		return nil, fmt.Errorf("%w: got %q, want %q", errBadMessage, m.Type, typ)
	}
	return m, nil
}

// clientHandshake authenticates both ends from the client's side and
// returns the agent's name; cb is the TLS session's channel binding. When
// the agent fails to prove its key, the agent is told so (it counts the
// failed handshake as an unauthorized peer).
func clientHandshake(conn net.Conn, c *Credentials, cb []byte) (string, error) {
	name, err := clientProve(conn, c, cb)
	if err != nil && errors.Is(err, ErrUnauthorized) && !errors.Is(err, errPeerRefused) {
		_ = writeFrame(conn, &message{Type: tError, Code: codeUnauthorized, Error: "the client does not accept this agent: " + err.Error()})
	}
	return name, err
}

// clientProve is clientHandshake's exchange.
func clientProve(conn net.Conn, c *Credentials, cb []byte) (string, error) {
	cn := psk.NewNonce()
	hello := &message{Type: tHello, Nonce: hex.EncodeToString(cn)}
	var key []byte
	useEd := c.identity != nil && len(c.authorized) > 0
	if useEd {
		hello.Method = methodEd25519
	} else {
		hello.Method, hello.Key = methodPSK, c.keys.First()
		key, _ = c.keys.Key(hello.Key)
	}
	if err := writeFrame(conn, hello); err != nil {
		return "", err
	}
	ch, err := handshakeMessage(conn, tChallenge)
	if err != nil {
		return "", err
	}
	an, ok := psk.DecodeNonce(ch.Nonce)
	proof, perr := hex.DecodeString(ch.Proof)
	if !ok || perr != nil {
		return "", fmt.Errorf("%w: malformed challenge", errBadMessage)
	}
	auth := &message{Type: tAuth}
	var name string
	if useEd {
		apub, err := hex.DecodeString(ch.PubKey)
		if err != nil || len(apub) != ed25519.PublicKeySize {
			return "", fmt.Errorf("%w: malformed agent public key", errBadMessage)
		}
		var known bool
		if name, known = c.peer(apub); !known {
			return "", fmt.Errorf("%w: the agent's key %s is not in this side's -authorized-keys", ErrUnauthorized, Fingerprint(apub))
		}
		if !ed25519.Verify(apub, transcript(labelAgent, cb, cn, an, apub), proof) {
			return "", fmt.Errorf("%w: the agent's signature does not verify (not the agent %q holds the key of)", ErrUnauthorized, name)
		}
		cpub := c.PublicKey()
		auth.PubKey = hex.EncodeToString(cpub)
		auth.Proof = hex.EncodeToString(ed25519.Sign(c.identity, transcript(labelClient, cb, cn, an, apub, cpub)))
	} else {
		if !hmac.Equal(proof, psk.MAC(key, labelAgent, cb, cn, an)) {
			return "", fmt.Errorf("%w: the agent does not hold key %q (wrong -psk-file, or not the agent you meant)", ErrUnauthorized, hello.Key)
		}
		name = hello.Key
		auth.Proof = hex.EncodeToString(psk.MAC(key, labelClient, cb, cn, an))
	}
	if err := writeFrame(conn, auth); err != nil {
		return "", err
	}
	if _, err := handshakeMessage(conn, tOK); err != nil {
		return "", err
	}
	return name, nil
}

// errUnauthorizedPeer is the agent's reason for refusing a client.
type errUnauthorizedPeer struct{ msg string }

func (e errUnauthorizedPeer) Error() string { return e.msg }

// serverHandshake authenticates both ends from the agent's side and returns
// the client's name (cb: the TLS session's channel binding); an
// errUnauthorizedPeer error means the client did not prove a key this agent
// accepts.
func serverHandshake(conn net.Conn, c *Credentials, cb []byte) (string, error) {
	hello, err := handshakeMessage(conn, tHello)
	if err != nil {
		return "", err
	}
	cn, ok := psk.DecodeNonce(hello.Nonce)
	if !ok {
		return "", fmt.Errorf("%w: hello nonce must be %d bytes in hex", errBadMessage, psk.NonceBytes)
	}
	an := psk.NewNonce()
	ch := &message{Type: tChallenge, Nonce: hex.EncodeToString(an)}
	var key, apub []byte
	switch hello.Method {
	case methodPSK:
		var ok bool
		if c.keys != nil {
			key, ok = c.keys.Key(hello.Key)
		}
		if !ok {
			return "", errUnauthorizedPeer{fmt.Sprintf("unknown key %q (not in this agent's -psk-file)", hello.Key)}
		}
		ch.Proof = hex.EncodeToString(psk.MAC(key, labelAgent, cb, cn, an))
	case methodEd25519:
		if c.identity == nil {
			return "", errUnauthorizedPeer{"this agent has no Ed25519 identity (-identity, -authorized-keys)"}
		}
		apub = c.PublicKey()
		ch.PubKey = hex.EncodeToString(apub)
		ch.Proof = hex.EncodeToString(ed25519.Sign(c.identity, transcript(labelAgent, cb, cn, an, apub)))
	default:
		return "", fmt.Errorf("%w: method %q, want %s or %s", errBadMessage, hello.Method, methodPSK, methodEd25519)
	}
	if err := writeFrame(conn, ch); err != nil {
		return "", err
	}
	auth, err := handshakeMessage(conn, tAuth)
	if err != nil {
		return "", err
	}
	proof, err := hex.DecodeString(auth.Proof)
	if err != nil {
		return "", errUnauthorizedPeer{"malformed proof"}
	}
	if hello.Method == methodPSK {
		if !hmac.Equal(proof, psk.MAC(key, labelClient, cb, cn, an)) {
			return "", errUnauthorizedPeer{fmt.Sprintf("wrong key %q", hello.Key)}
		}
		return hello.Key, nil
	}
	cpub, err := hex.DecodeString(auth.PubKey)
	if err != nil || len(cpub) != ed25519.PublicKeySize {
		return "", errUnauthorizedPeer{"malformed public key"}
	}
	name, known := c.peer(cpub)
	if !known {
		return "", errUnauthorizedPeer{fmt.Sprintf("unknown key %s (not in this agent's -authorized-keys)", Fingerprint(cpub))}
	}
	if bytes.Equal(cpub, apub) {
		return "", errUnauthorizedPeer{"the client presented this agent's own key"}
	}
	if !ed25519.Verify(cpub, transcript(labelClient, cb, cn, an, apub, cpub), proof) {
		return "", errUnauthorizedPeer{fmt.Sprintf("the signature of %q does not verify", name)}
	}
	return name, nil
}

// isUnauthorized reports whether err is a refusal of the peer's
// credentials, by this side or (a client refusing the agent) by the peer.
func isUnauthorized(err error) bool {
	var u errUnauthorizedPeer
	return errors.As(err, &u) || errors.Is(err, ErrUnauthorized)
}
