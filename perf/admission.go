package perf

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"net/netip"
	"strings"
)

// Admission of a test flow by a MAC over its handshake (cclab agent,
// docs/security.md "Agent data flows"). The server and the client share a
// key that never crosses the data path (an agent hands it out on its
// encrypted control connection); the client's Initial carries, in
// Request.MAC, HMAC-SHA-256(key, admissionLabel || connection ID ||
// Initial DCID || test ID) truncated to AdmissionMACBytes. The two IDs are
// the handshake's own (transport.Config.SealRequest), so a request read on
// the wire admits no connection but the one it came in, which the server
// admits once.

// AdmissionMACBytes is the MAC's length: HMAC-SHA-256 truncated to 128
// bits (RFC 2104 §5: at least half the hash output, and at least 80 bits).
const AdmissionMACBytes = 16

// admissionLabel separates the admission MAC's domain from the key's other
// uses.
const admissionLabel = "cclab perf admission v1\x00"

// AdmissionMAC is the MAC a flow's request carries: over its connection
// ID, its Initial's destination connection ID and its test ID.
func AdmissionMAC(key []byte, test string, connID, initialDCID uint64) []byte {
	m := hmac.New(sha256.New, key)
	var b [len(admissionLabel) + 16]byte
	copy(b[:], admissionLabel)
	binary.BigEndian.PutUint64(b[len(admissionLabel):], connID)
	binary.BigEndian.PutUint64(b[len(admissionLabel)+8:], initialDCID)
	m.Write(b[:])
	m.Write([]byte(test))
	return m.Sum(nil)[:AdmissionMACBytes]
}

// Admission is what a server knows of a test flow when ServerConfig.Admit
// decides on it: the handshake's two connection IDs, the peer's address,
// and the request's test ID and admission MAC.
type Admission struct {
	ConnID      uint64         // the connection's ID (the client's connection ID)
	InitialDCID uint64         // the destination connection ID of the client's Initial
	Peer        netip.AddrPort // the client's address
	Test        string         // Request.Test
	MAC         string         // Request.MAC: hex, "" without one
}

// Verify reports whether a's MAC is AdmissionMAC under key for its test ID
// and connection IDs (in constant time).
func (a Admission) Verify(key []byte) bool {
	mac, err := hex.DecodeString(a.MAC)
	return err == nil && len(mac) == AdmissionMACBytes && hmac.Equal(mac, AdmissionMAC(key, a.Test, a.ConnID, a.InitialDCID))
}

// validMAC reports whether s is "" or an admission MAC in lower-case hex.
func validMAC(s string) bool {
	return s == "" || len(s) == 2*AdmissionMACBytes && strings.Trim(s, "0123456789abcdef") == ""
}

// sealRequest returns the SealRequest of a client with an admission key:
// req with its MAC for the connection being dialled.
func sealRequest(req Request, key []byte) func(id, initialDCID uint64, _ []byte) []byte {
	return func(id, initialDCID uint64, _ []byte) []byte {
		req.MAC = hex.EncodeToString(AdmissionMAC(key, req.Test, id, initialDCID))
		return req.encode()
	}
}
