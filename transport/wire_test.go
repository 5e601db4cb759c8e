package transport

import (
	"bytes"
	"testing"
)

// benchPackets are the short packets of a bulk transfer: a data segment
// with a piggybacked ACK, and an ACK with two SACK blocks.
func benchPackets() [][]byte {
	data := packet{typ: typeShort, dcid: 0x1234_5678_9abc_def0, flags: flagACK | flagDATA, pn: 1_000_000, ts: 123456789,
		tsecr: 123450000, cumAck: 5_000_000_000, window: 4 << 20, off: 9_000_000_000, data: make([]byte, 1165)}
	ack := packet{typ: typeShort, dcid: 0x1234_5678_9abc_def0, flags: flagACK, pn: 700_000, ts: 123456789, tsecr: 123450000,
		cumAck: 9_000_000_000, window: 4 << 20, nBlocks: 2,
		blocks: [MaxSACKBlocks]sackBlock{{9_000_002_330, 9_000_011_650}, {9_000_013_980, 9_000_015_145}}}
	var out [][]byte
	for _, p := range []packet{data, ack} {
		b := make([]byte, 2048)
		out = append(out, b[:encodePacket(b, &p)])
	}
	return out
}

// BenchmarkDecodePacket decodes a data segment and an ACK (one op: both).
func BenchmarkDecodePacket(b *testing.B) {
	pkts := benchPackets()
	var p packet
	for i := 0; i < b.N; i++ {
		for _, d := range pkts {
			if r := decodePacket(d, &p); r != RejectNone {
				b.Fatal(r)
			}
		}
	}
}

// TestVarint checks getVarint and varintAt against RFC 9000 §16 (the two
// high bits of the first byte give the length 1, 2, 4 or 8; the rest,
// big-endian, is the value) for values at each length's edges, at every
// offset in a buffer, whole and truncated, and the RFC's examples.
func TestVarint(t *testing.T) {
	for _, tc := range []struct {
		b    []byte
		want uint64
	}{ // RFC 9000 Appendix A.1
		{[]byte{0xc2, 0x19, 0x7c, 0x5e, 0xff, 0x14, 0xe8, 0x8c}, 151288809941952652},
		{[]byte{0x9d, 0x7f, 0x3e, 0x7d}, 494878333},
		{[]byte{0x7b, 0xbd}, 15293},
		{[]byte{0x25}, 37},
		{[]byte{0x40, 0x25}, 37},
	} {
		if got, n := getVarint(tc.b); got != tc.want || n != len(tc.b) {
			t.Errorf("getVarint(% x) = %d, %d; want %d, %d", tc.b, got, n, tc.want, len(tc.b))
		}
		if len(tc.b) != varintLen(tc.want) {
			continue // (a non-minimal encoding: decoders accept it, putVarint never writes it)
		}
		got := make([]byte, 8)
		if n := putVarint(got, tc.want); !bytes.Equal(got[:n], tc.b) {
			t.Errorf("putVarint(%d) = % x; want % x", tc.want, got[:n], tc.b)
		}
	}
	for _, v := range []uint64{0, 1, 63, 64, 16383, 16384, 1<<30 - 1, 1 << 30, MaxVarint} {
		for pad := 0; pad < 10; pad++ {
			b := make([]byte, 3+varintLen(v)+pad)
			n := putVarint(b[3:], v)
			for cut := 3; cut <= len(b); cut++ { // the buffer ends at cut
				got, next := varintAt(b[:cut], 3)
				want, wantNext := v, 3+n
				if cut < 3+n {
					want, wantNext = 0, -1 // truncated
				}
				if got != want || next != wantNext {
					t.Fatalf("varintAt(%d, len %d) = %d, %d; want %d, %d", v, cut, got, next, want, wantNext)
				}
			}
		}
	}
	if _, next := varintAt(make([]byte, 16), -1); next != -1 {
		t.Errorf("varintAt at offset -1: next %d, want -1 (a truncation stays one)", next)
	}
}

// FuzzVarintAt: varintAt (one 8-byte load when 8 bytes are left, else
// getVarint) decodes at any offset, also within 8 bytes of the end of b and
// outside b, what RFC 9000 §16 defines (varintRef), or reports a
// truncation; it never reads past b (b's capacity is cut to its length).
func FuzzVarintAt(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte, off int) {
		b = b[:len(b):len(b)]
		got, next := varintAt(b, off)
		want, wantNext := uint64(0), -1
		if off >= 0 && off <= len(b) {
			if v, n := varintRef(b[off:]); n > 0 {
				want, wantNext = v, off+n
			}
		}
		if got != want || next != wantNext {
			t.Fatalf("varintAt(% x, %d) = %d, %d; want %d, %d", b, off, got, next, want, wantNext)
		}
	})
}

// varintRef decodes a varint as RFC 9000 §16 (Appendix A.1) writes it,
// byte by byte; n == 0: b is too short.
func varintRef(b []byte) (v uint64, n int) {
	if len(b) == 0 {
		return 0, 0
	}
	n = 1 << (b[0] >> 6)
	if len(b) < n {
		return 0, 0
	}
	v = uint64(b[0] & 0x3f)
	for _, c := range b[1:n] {
		v = v<<8 | uint64(c)
	}
	return v, n
}
