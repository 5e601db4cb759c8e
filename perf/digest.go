package perf

import (
	"crypto/sha256"
	"encoding/hex"
	"hash"

	"cclab/transport"
)

// Verification. By default (Request.Verify VerifyPattern) the receiving side
// compares every byte it reads with the pattern stream at that offset
// (transport.PatternSource.Equal, a pass over the bytes at memory speed)
// and neither side hashes; the receiver reports the offset of the first
// byte that differs, if any. The comparison catches any corrupted, missing,
// duplicated or misplaced byte (PatternSource's doc). It needs both ends to
// generate the same pattern: VerifyPattern names this cclab's pattern
// definition, and a cclab whose PatternSource produced other bytes must use
// another name, which an older receiver ignores (it hashes, as below).
//
// With VerifySHA256 (the cclab agent, whose receiving agent reports the
// digest over its authenticated control connection to cross-check the data
// path), and with a receiver that does not know Request.Verify, perf
// computes SHA-256 verification digests, outside the transport (its
// connections run with transport.Config.Digest "none"):
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
// In digest mode only the side that generates the stream ever generates its
// reference (forward: the client; reverse: the server, whose digest the
// client compares with what it read), so the two ends need not agree on the
// pattern's definition.

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

// Verification kinds: Request.Verify, Report.Verify, End.Verification and
// FlowSummary.Verify.
const (
	// VerifyPattern: the receiver compares the stream with the pattern
	// (this cclab's transport.PatternSource definition); no digests.
	VerifyPattern = "pattern"
	// VerifySHA256: both sides compute SHA-256 digests, compared.
	VerifySHA256 = "sha256"
)

// streamCheck verifies a received stream as it is read: by comparison
// with the pattern (pat non-nil) or by SHA-256 (h).
type streamCheck struct {
	pat *transport.PatternSource
	h   hash.Hash
	off int64 // stream bytes checked
	bad int64 // offset of the first byte that differs from the pattern; -1 none
}

// newStreamCheck returns a check of the pattern stream with this seed for
// verify VerifyPattern, else a SHA-256 digest.
func newStreamCheck(verify string, seed uint64) *streamCheck {
	if verify == VerifyPattern {
		return &streamCheck{pat: transport.NewPatternSource(seed), bad: -1}
	}
	return &streamCheck{h: sha256.New(), bad: -1}
}

// write checks the next len(b) stream bytes.
func (c *streamCheck) write(b []byte) {
	if c.pat == nil {
		c.h.Write(b)
	} else if c.bad < 0 && !c.pat.Equal(c.off, b) {
		c.bad = c.off + int64(firstDiff(c.pat, c.off, b))
	}
	c.off += int64(len(b))
}

// kind returns the check's verification kind.
func (c *streamCheck) kind() string {
	if c.pat != nil {
		return VerifyPattern
	}
	return VerifySHA256
}

// digest returns the hex SHA-256 of the stream read, "" for a pattern check.
func (c *streamCheck) digest() string {
	if c.h == nil {
		return ""
	}
	return hex.EncodeToString(c.h.Sum(nil))
}

// mismatch returns the offset of the first byte that differed from the
// pattern, nil if none (or a digest check).
func (c *streamCheck) mismatch() *int64 {
	if c.bad < 0 {
		return nil
	}
	v := c.bad
	return &v
}

// firstDiff returns the index of the first byte of b that differs from the
// pattern at off (len(b) if none): the slow path, run once per stream.
func firstDiff(src *transport.PatternSource, off int64, b []byte) int {
	want := make([]byte, len(b))
	src.Fill(off, want)
	for i := range b {
		if b[i] != want[i] {
			return i
		}
	}
	return len(b)
}
