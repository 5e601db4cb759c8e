package agent

// TLS 1.3 around the control connection (docs/security.md, "Agent control
// connections"). The agent's certificate is ephemeral and self-signed, and
// the client does not check it: the peers authenticate each other with the
// cclab handshake (handshake.go), whose proofs cover the TLS session's
// channel binding (RFC 9266 "tls-exporter": RFC 8446 §7.5's exporter with
// the label "EXPORTER-Channel-Binding", no context, 32 bytes). A man in the
// middle who terminates TLS towards both ends holds two sessions with two
// different exporter values, so a proof relayed from one to the other does
// not verify; once the handshake succeeded, each end knows that its TLS
// peer is the authenticated one, and TLS gives the rest of the connection
// confidentiality and integrity.

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"time"
)

// Channel binding (RFC 9266 §2).
const (
	channelBindingLabel = "EXPORTER-Channel-Binding"
	channelBindingBytes = 32
)

// alpn is the control protocol's TLS application protocol (RFC 7301); a
// peer offering another one is refused by the TLS handshake.
const alpn = "cclab-agent/2"

// ErrVersion is wrapped (with ErrUnauthorized) by Dial's error when the
// agent speaks an older control protocol: version 1, without TLS.
var ErrVersion = errors.New("control protocol version mismatch")

// serverTLS returns the agent's TLS configuration with a fresh self-signed
// Ed25519 certificate (the certificate authenticates nothing; see above).
func serverTLS() (*tls.Config, error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: "cclab agent (ephemeral; peers authenticate with the cclab handshake)"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(100 * 365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, pub, priv)
	if err != nil {
		return nil, err
	}
	return &tls.Config{
		MinVersion:             tls.VersionTLS13,
		Certificates:           []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: priv}},
		NextProtos:             []string{alpn},
		SessionTicketsDisabled: true, // no resumption: nothing kept per peer
	}, nil
}

// clientTLS is the client's TLS configuration: TLS 1.3, the agent's
// certificate not checked (the cclab handshake, bound to this session,
// authenticates the agent), no server name sent.
func clientTLS() *tls.Config {
	return &tls.Config{
		MinVersion:         tls.VersionTLS13,
		InsecureSkipVerify: true, // see the package comment above: channel binding authenticates the peer
		NextProtos:         []string{alpn},
	}
}

// channelBinding returns the session's tls-exporter channel binding.
func channelBinding(c *tls.Conn) ([]byte, error) {
	cs := c.ConnectionState()
	if cs.Version != tls.VersionTLS13 || cs.NegotiatedProtocol != alpn {
		return nil, fmt.Errorf("TLS version %#x, application protocol %q: want TLS 1.3 and %q", cs.Version, cs.NegotiatedProtocol, alpn)
	}
	return cs.ExportKeyingMaterial(channelBindingLabel, nil, channelBindingBytes)
}

// startTLS runs c's TLS handshake (fb: its raw connection) and returns the
// session's channel binding. When the handshake failed because the peer
// answered in plain text (a control frame where a TLS record was expected),
// plain is that frame's message, beside the TLS error.
func startTLS(ctx context.Context, c *tls.Conn, fb *firstBytes) (cb []byte, plain *plainMessage, err error) {
	if err := c.HandshakeContext(ctx); err != nil {
		if b, ok := fb.plainFrame(err); ok {
			var m plainMessage
			if json.Unmarshal(b, &m) == nil {
				if len(m.Error) > maxPlainError { // unauthenticated text: keep our errors and logs small
					m.Error = m.Error[:maxPlainError] + "..."
				}
				plain = &m
			}
		}
		return nil, plain, err
	}
	fb.handshakeDone()
	cb, err = channelBinding(c)
	return cb, nil, err
}

// firstBytes is the raw connection under TLS: it keeps what the TLS
// handshake read (at most 4+MaxRequest bytes), so that a peer that
// answered in plain text (control protocol v1, or an agent's refusal
// before TLS) can be understood, until done is called.
type firstBytes struct {
	net.Conn
	buf  []byte // the first bytes read, at most 4+MaxRequest
	done bool
}

func (f *firstBytes) Read(b []byte) (int, error) {
	n, err := f.Conn.Read(b)
	if !f.done {
		if room := 4 + MaxRequest - len(f.buf); room > 0 {
			f.buf = append(f.buf, b[:min(n, room)]...)
		}
	}
	return n, err
}

// handshakeDone stops recording.
func (f *firstBytes) handshakeDone() { f.done, f.buf = true, nil }

// plainFrame reports whether err is a TLS handshake that failed because the
// peer sent a plain-text control frame (a 4-byte length of at most
// MaxRequest, then a JSON object) and returns the frame's body, read to its
// end from the raw connection.
func (f *firstBytes) plainFrame(err error) ([]byte, bool) {
	var rh tls.RecordHeaderError
	if !errors.As(err, &rh) {
		return nil, false
	}
	n := int(binary.BigEndian.Uint32(rh.RecordHeader[:4]))
	if n == 0 || n > MaxRequest || rh.RecordHeader[4] != '{' || len(f.buf) < 5 {
		return nil, false
	}
	// (Had more than 4+MaxRequest bytes been read, buf would hold the
	// whole frame already.)
	if rest := 4 + n - len(f.buf); rest > 0 {
		b := make([]byte, rest)
		if _, err := io.ReadFull(f.Conn, b); err != nil {
			return nil, false
		}
		f.buf = append(f.buf, b...)
	}
	f.done = true
	return f.buf[4 : 4+n], true
}

// maxPlainError is how much of a plain-text peer's error text, which no
// one authenticated, goes into Dial's error (bytes); callers quote it (%q)
// so that it cannot forge log lines.
const maxPlainError = 256

// plainMessage is the version and error fields of a plain-text control
// message: what a v1 peer reads and sends, and an agent's refusal before
// TLS.
type plainMessage struct {
	V     int    `json:"v"`
	Type  string `json:"type"`
	Error string `json:"error,omitempty"`
	Code  string `json:"code,omitempty"`
}

// refuseV1 answers a client of control protocol version 1 in its own
// format: an unauthorized error saying what this agent speaks.
func refuseV1(raw net.Conn) {
	b, _ := json.Marshal(plainMessage{V: 1, Type: tError, Code: codeUnauthorized, Error: errV1Client})
	out := binary.BigEndian.AppendUint32(nil, uint32(len(b)))
	_, _ = raw.Write(append(out, b...))
}

// errV1Client is what an agent tells a version 1 client.
const errV1Client = "this agent speaks control protocol v2 (TLS 1.3 with channel binding); upgrade cclab on the scheduler's host"
