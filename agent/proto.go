package agent

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"cclab/perf"
)

// Version is the control protocol's version, carried in every message.
// Version 2 runs inside TLS 1.3 with the handshake bound to the session
// (tls.go); version 1 was plain text.
const Version = 2

// Message size bounds, bytes (the 4-byte length prefix not counted).
const (
	// MaxRequest bounds a message an agent reads: handshake messages and
	// requests are small.
	MaxRequest = 64 << 10
	// MaxReply bounds a message a client reads: a transfer's result with
	// its qlog (base64) of at most MaxQlog bytes.
	MaxReply = 2*MaxQlog + 1<<20
)

// Message types.
const (
	tHello     = "hello"     // client: method, key name, client nonce
	tChallenge = "challenge" // agent: server nonce, its proof (and public key)
	tAuth      = "auth"      // client: its proof (and public key)
	tOK        = "ok"        // agent: authenticated
	tError     = "error"     // either: a refusal or a failed request (Error, Code)
	tPing      = "ping"      // client: keepalive; answered with pong
	tPong      = "pong"
	tTime      = "time"      // client: T1; agent answers with T1, T2, T3
	tReceive   = "receive"   // client: Spec; agent answers ready
	tReady     = "ready"     // agent: Token, DataPort
	tCollect   = "collect"   // client: Token; agent answers result when the flow ended
	tSend      = "send"      // client: Spec, Token, Addr; agent answers result
	tResult    = "result"    // agent: Sender or Receiver, Qlog
	tCancel    = "cancel"    // client: cancel the request ID
	tStats     = "stats"     // client: ask for the agent's counters; agent answers stats
	tStatsRep  = "stats_rep" // agent: Stats
)

var messageTypes = map[string]bool{tHello: true, tChallenge: true, tAuth: true, tOK: true, tError: true, tPing: true,
	tPong: true, tTime: true, tReceive: true, tReady: true, tCollect: true, tSend: true, tResult: true, tCancel: true,
	tStats: true, tStatsRep: true}

// Authentication methods.
const (
	methodPSK     = "psk"
	methodEd25519 = "ed25519"
)

// Error codes of an error message.
const (
	codeUnauthorized = "unauthorized"
	codeRefused      = "refused" // a cap, a bad spec, busy
	codeFailed       = "failed"  // the transfer failed
	codeBad          = "bad"     // a malformed or unexpected message
)

// message is one control message, JSON after a 4-byte big-endian length.
// Fields are used by the types noted.
type message struct {
	V     int    `json:"v"`
	Type  string `json:"type"`
	ID    uint64 `json:"id,omitempty"`    // request ID, echoed in the answer (0: the handshake)
	Error string `json:"error,omitempty"` // error
	Code  string `json:"code,omitempty"`  // error

	Method string `json:"method,omitempty"` // hello
	Key    string `json:"key,omitempty"`    // hello (psk): the key's name
	Nonce  string `json:"nonce,omitempty"`  // hello, challenge: hex, psk.NonceBytes
	Proof  string `json:"proof,omitempty"`  // challenge, auth: HMAC or Ed25519 signature, hex
	PubKey string `json:"pubkey,omitempty"` // challenge, auth (ed25519): the sender's public key, hex
	Name   string `json:"name,omitempty"`   // ok: the client's name at the agent

	T1 int64 `json:"t1,omitempty"` // time: client's send time, Unix ns
	T2 int64 `json:"t2,omitempty"` // time: agent's receive time, Unix ns
	T3 int64 `json:"t3,omitempty"` // time: agent's send time, Unix ns

	Spec     *TransferSpec   `json:"spec,omitempty"`      // receive, send
	Token    string          `json:"token,omitempty"`     // ready, collect, send: the transfer's admission key (hex; transfer.go)
	DataPort int             `json:"data_port,omitempty"` // ready
	Addr     string          `json:"addr,omitempty"`      // send: the receiver's data address
	Sender   *perf.Result    `json:"sender,omitempty"`    // result
	Receiver json.RawMessage `json:"receiver,omitempty"`  // result
	Qlog     []byte          `json:"qlog,omitempty"`      // result
	Stats    *Stats          `json:"stats,omitempty"`     // stats_rep
}

// Field bounds checked by decodeMessage.
const (
	maxErrorText = 4096
	maxField     = 256 // strings other than Error
	tokenBytes   = 32  // admission key, bytes (HMAC-SHA-256's output length, RFC 2104 §3)
)

// errBadMessage is wrapped by decodeMessage's errors.
var errBadMessage = errors.New("bad control message")

// decodeMessage parses one control message and checks its version, type and
// field sizes.
func decodeMessage(b []byte) (*message, error) {
	var m message
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%w: %v", errBadMessage, err)
	}
	if m.V != Version {
		return nil, fmt.Errorf("%w: protocol version %d, this side speaks %d", errBadMessage, m.V, Version)
	}
	if !messageTypes[m.Type] {
		return nil, fmt.Errorf("%w: unknown type %q", errBadMessage, m.Type)
	}
	if len(m.Error) > maxErrorText {
		return nil, fmt.Errorf("%w: error text longer than %d bytes", errBadMessage, maxErrorText)
	}
	for _, f := range []string{m.Code, m.Method, m.Key, m.Nonce, m.Proof, m.PubKey, m.Name, m.Token, m.Addr} {
		if len(f) > maxField {
			return nil, fmt.Errorf("%w: a field longer than %d bytes", errBadMessage, maxField)
		}
	}
	if m.Token != "" && !validToken(m.Token) {
		return nil, fmt.Errorf("%w: token (admission key) must be %d bytes in lower-case hex", errBadMessage, tokenBytes)
	}
	if m.DataPort < 0 || m.DataPort > 65535 {
		return nil, fmt.Errorf("%w: data_port %d out of range", errBadMessage, m.DataPort)
	}
	if m.Spec != nil {
		if err := m.Spec.check(); err != nil {
			return nil, fmt.Errorf("%w: %v", errBadMessage, err)
		}
	}
	return &m, nil
}

// validToken reports whether s is an admission key: tokenBytes in
// lower-case hex.
func validToken(s string) bool {
	return len(s) == 2*tokenBytes && strings.Trim(s, "0123456789abcdef") == ""
}

// readFrame reads one length-prefixed message of at most max bytes.
func readFrame(r io.Reader, max int) ([]byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	return readBody(r, hdr, max)
}

// readBody reads the message whose length prefix is hdr.
func readBody(r io.Reader, hdr [4]byte, max int) ([]byte, error) {
	n := binary.BigEndian.Uint32(hdr[:])
	if n == 0 || n > uint32(max) {
		return nil, fmt.Errorf("%w: length %d, want 1..%d bytes", errBadMessage, n, max)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, err
	}
	return b, nil
}

// writeFrame writes m with its length prefix in one Write.
func writeFrame(w io.Writer, m *message) error {
	m.V = Version
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	out := make([]byte, 4, 4+len(b))
	binary.BigEndian.PutUint32(out, uint32(len(b)))
	_, err = w.Write(append(out, b...))
	return err
}
