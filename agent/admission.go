package agent

import (
	"encoding/hex"

	"cclab/internal/psk"
)

// Data-flow admission (docs/security.md, "Agent data flows"). The receiving
// agent draws a fresh admission key K (tokenBytes from crypto/rand) for each
// announced transfer and hands it to the scheduler, which hands it to the
// sending agent, both over TLS. On the data path only two values derived
// from K appear: the transfer's flow ID, HMAC-SHA-256(K, labelFlowID)
// truncated to 128 bits (perf's test ID, by which the receiving agent finds
// the transfer without keeping any state for the sender), and the admission
// MAC of the flow's own handshake (perf.AdmissionMAC over its connection
// ID, its Initial's destination connection ID and the flow ID). Neither
// reveals K, and the MAC admits no handshake but the one it was made for.

// labelFlowID separates the flow ID's derivation from the key's MACs.
const labelFlowID = "cclab agent v2 flow id\x00"

// flowIDBytes is the flow ID's length: 128 bits (perf's test ID holds at
// most 16 bytes).
const flowIDBytes = 16

// flowID returns the public flow ID of admission key key, hex.
func flowID(key []byte) string {
	return hex.EncodeToString(psk.MAC(key, labelFlowID)[:flowIDBytes])
}
