package perf

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"testing"
	"time"

	"cclab/transport"
)

// TestStreamCheckDetectsCorruption: a pattern check finds one corrupted
// byte at any offset, and names that offset, whatever the reads' sizes:
// offsets at the stream's ends, the pattern's 64-byte block boundaries
// (where each block's words start over from its key), 1200-byte and
// 8952-byte segment boundaries and the 256 KiB read buffer's.
func TestStreamCheckDetectsCorruption(t *testing.T) {
	const seed, n = 0x1234567, 600_000
	want := make([]byte, n)
	transport.NewPatternSource(seed).Fill(0, want)
	offsets := []int64{0, 1, 7, 8, 63, 64, 65, 127, 128, 1199, 1200, 1201, 2399, 2400,
		8951, 8952, 8953, 256<<10 - 1, 256 << 10, 256<<10 + 1, n - 64, n - 2, n - 1}
	reads := []int{1, 64, 1200, 8952, 256 << 10, 100_003}
	for _, off := range offsets {
		for _, r := range reads {
			got := append([]byte(nil), want...)
			got[off] ^= 0x40
			c := newStreamCheck(VerifyPattern, seed)
			for p := got; len(p) > 0; {
				k := min(r, len(p))
				c.write(p[:k])
				p = p[k:]
			}
			m := c.mismatch()
			if m == nil || *m != off {
				t.Errorf("corrupt byte at %d, reads of %d: got mismatch %v, want %d", off, r, m, off)
			}
		}
	}
	c := newStreamCheck(VerifyPattern, seed)
	c.write(want[:12345])
	c.write(want[12345:])
	if m := c.mismatch(); m != nil || c.kind() != VerifyPattern || c.digest() != "" {
		t.Errorf("intact stream: got mismatch %v kind %q digest %q, want none, %q, \"\"", m, c.kind(), c.digest(), VerifyPattern)
	}
	// A stream shifted by one segment (a misplaced segment) or of another
	// seed is not the pattern either.
	for name, p := range map[string][]byte{"shifted": want[1200:], "other seed": func() []byte {
		b := make([]byte, 4096)
		transport.NewPatternSource(seed+1).Fill(0, b)
		return b
	}()} {
		c := newStreamCheck(VerifyPattern, seed)
		c.write(p)
		if c.mismatch() == nil {
			t.Errorf("%s: got no mismatch, want one", name)
		}
	}
}

// TestStreamCheckSHA256: the digest check hashes what it reads, and its
// digest of the pattern is patternDigest's.
func TestStreamCheckSHA256(t *testing.T) {
	const seed, n = 99, 300_001
	b := make([]byte, n)
	transport.NewPatternSource(seed).Fill(0, b)
	c := newStreamCheck(VerifySHA256, seed)
	c.write(b[:1000])
	c.write(b[1000:])
	sum := sha256.Sum256(b)
	if got, want := c.digest(), hex.EncodeToString(sum[:]); got != want || c.kind() != VerifySHA256 {
		t.Errorf("digest: got %s kind %q, want %s %q", got, c.kind(), want, VerifySHA256)
	}
	if got, want := patternDigest(seed, n), c.digest(); got != want {
		t.Errorf("patternDigest: got %s, want %s", got, want)
	}
}

// TestVerifyKind: the pattern comparison is the default in both
// directions, recorded in the result and the receiver's summary, with no
// digests computed; -verify sha256 still computes and compares them.
func TestVerifyKind(t *testing.T) {
	srv, flows := startServer(t, ServerConfig{AllowReverse: true})
	for i, tc := range []struct {
		verify  string
		reverse bool
		want    string
	}{{"", false, VerifyPattern}, {"", true, VerifyPattern}, {VerifySHA256, false, VerifySHA256}, {VerifySHA256, true, VerifySHA256}} {
		res, err := Run(context.Background(), ClientConfig{Addr: srv.Addr().String(), Bytes: 1 << 20,
			Verify: tc.verify, Reverse: tc.reverse})
		if err != nil {
			t.Fatalf("verify %q reverse %v: %v", tc.verify, tc.reverse, err)
		}
		e := res.End
		digests := e.SenderDigest != "" && e.SenderDigest == e.ReceiverDigest
		if !e.Verified || e.Verification != tc.want || e.Mismatch != nil || digests != (tc.want == VerifySHA256) {
			t.Errorf("verify %q reverse %v: got verified %v verification %q mismatch %v digests %q/%q, want true %q none and digests only with sha256",
				tc.verify, tc.reverse, e.Verified, e.Verification, e.Mismatch, e.SenderDigest, e.ReceiverDigest, tc.want)
		}
		f := waitFlows(t, srv, flows, i+1)[i]
		wantVerify := ""
		if tc.want == VerifyPattern {
			wantVerify = VerifyPattern
		}
		if f.Verify != wantVerify || (f.Digest == "") != (tc.want == VerifyPattern) || f.Mismatch != nil {
			t.Errorf("verify %q reverse %v: receiver summary verify %q digest %q mismatch %v, want %q",
				tc.verify, tc.reverse, f.Verify, f.Digest, f.Mismatch, wantVerify)
		}
	}
	if err := (&ClientConfig{Addr: "x:1", Verify: "md5"}).Validate(); err == nil {
		t.Errorf("-verify md5: got no error, want one naming the allowed values")
	}
}

// TestForwardPatternMismatchReported: a forward stream that is not the
// pattern (one corrupted byte, written by the application so that the
// transport delivers it intact) is reported by the receiver with that
// offset, and the client's verification fails.
func TestForwardPatternMismatchReported(t *testing.T) {
	srv, flows := startServer(t, ServerConfig{})
	const seed, n, bad = 77, 100_000, 54_321
	cfg := ClientConfig{Addr: srv.Addr().String(), Seed: seed}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	peer, ep, _, err := dialEndpoint(cfg.Addr, nil, cfg.Driver)
	if err != nil {
		t.Fatal(err)
	}
	defer ep.Close()
	cfg.tc = cfg.newTransportConfig(ep.PathMaxPayload())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := ep.Dial(ctx, peer, cfg.transportConfig(Request{V: Version, Seed: seed, Verify: VerifyPattern}, nil))
	if err != nil {
		t.Fatal(err)
	}
	data := make([]byte, n)
	transport.NewPatternSource(seed).Fill(0, data)
	data[bad] ^= 1
	if _, err := c.Write(data); err != nil {
		t.Fatal(err)
	}
	c.CloseWrite()
	msg, err := readAll(c, maxMessage)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := parseReport(msg)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Verify != VerifyPattern || rep.Mismatch == nil || *rep.Mismatch != bad || rep.Bytes != n {
		t.Errorf("report: got verify %q mismatch %v bytes %d, want %q %d %d", rep.Verify, rep.Mismatch, rep.Bytes, VerifyPattern, bad, n)
	}
	f := waitFlows(t, srv, flows, 1)[0]
	if f.Mismatch == nil || *f.Mismatch != bad {
		t.Errorf("receiver summary: got mismatch %v, want %d", f.Mismatch, bad)
	}
}

// TestVerifyOlderReceiver: against a receiver that ignores Request.Verify
// (older than it) and answers with digests, a pattern-verifying client
// still verifies, by the digests, in both directions.
func TestVerifyOlderReceiver(t *testing.T) {
	srv, _ := startServer(t, ServerConfig{AllowReverse: true, legacyVerify: true})
	for _, reverse := range []bool{false, true} {
		res, err := Run(context.Background(), ClientConfig{Addr: srv.Addr().String(), Bytes: 1 << 20, Reverse: reverse})
		if err != nil {
			t.Fatalf("reverse %v: %v", reverse, err)
		}
		e := res.End
		if !e.Verified || e.Verification != VerifySHA256 || e.SenderDigest == "" || e.SenderDigest != e.ReceiverDigest {
			t.Errorf("reverse %v: got verified %v verification %q digests %q/%q, want true %q and equal digests",
				reverse, e.Verified, e.Verification, e.SenderDigest, e.ReceiverDigest, VerifySHA256)
		}
	}
}
