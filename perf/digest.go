package perf

import (
	"crypto/sha256"
	"encoding/hex"

	"cclab/transport"
)

// Verification digests. perf computes the SHA-256 digests that verify a
// transfer itself, outside the transport (its connections run with
// transport.Config.Digest "none"):
//
//   - the receiving side hashes every byte its application reads, in the
//     reading goroutine, so the hashing runs beside the socket driver's
//     goroutines instead of inside the driver's lock on its receive path;
//   - the sending side computes the reference digest of the stream it was
//     asked to send, SHA-256 of the pattern's first sentBytes bytes
//     (transport.NewPatternSource), after the transfer.
//
// The digests are equal iff the delivered stream is byte for byte the
// pattern stream the sender sent, which is what the transport's own
// SentDigest/RecvDigest pair checks, with an independent reference.
//
// Only the side that generates the stream ever generates its reference
// (forward: the client; reverse: the server, whose digest the client
// compares with what it read), so the two ends need not agree on the
// pattern's definition: a cclab whose PatternSource produces other bytes
// still verifies transfers with an older or newer one, and Request carries
// no pattern version.

// digestChunk is the pattern buffer patternDigest hashes at a time, bytes.
const digestChunk = 256 << 10

// patternDigest returns the hex SHA-256 of the first n bytes of the pattern
// stream with this seed.
func patternDigest(seed uint64, n int64) string {
	src := transport.NewPatternSource(seed)
	h := sha256.New()
	buf := make([]byte, min(n, digestChunk))
	for off := int64(0); off < n; {
		k := min(int64(len(buf)), n-off)
		src.Fill(off, buf[:k])
		h.Write(buf[:k])
		off += k
	}
	return hex.EncodeToString(h.Sum(nil))
}
