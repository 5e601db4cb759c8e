package transport

import (
	"bytes"
	"reflect"
	"testing"
)

// dgramSeeds returns valid datagram-mode packets, the fuzz seeds.
func dgramSeeds() [][]byte {
	var out [][]byte
	enc := func(p *dgramPacket) {
		b := make([]byte, 2048)
		out = append(out, b[:encodeDgram(b, p)])
	}
	enc(&dgramPacket{dcid: 9, flags: dflagDATA | dflagRATIO | dflagACKACK, seq: 77, ts: 5, tsecr: 4, ackAck: 12, ackRatio: 2, data: []byte("datagram")})
	enc(&dgramPacket{dcid: 9, flags: dflagACK, seq: 1 << 33, ts: 5, tsecr: 4, ackNo: 100, ackDelay: 1234, vec: []byte{0 | 3, 3<<6 | 1, 1<<6 | 63}})
	enc(&dgramPacket{dcid: 9, flags: dflagPING, seq: 0})
	enc(&dgramPacket{dcid: 9, flags: dflagCLOSE | dflagACK, seq: 3, ackNo: 0, vec: []byte{0}})
	enc(&dgramPacket{dcid: 9, flags: dflagRESET, seq: 4})
	enc(&dgramPacket{dcid: 9, flags: dflagDATA, seq: 5})
	enc(&dgramPacket{dcid: 9, flags: dflagDATA | dflagTFRC, seq: 6, tfrcRTT: 20000, data: []byte("tfrc")})
	enc(&dgramPacket{dcid: 9, flags: dflagACK | dflagTFRC, seq: 7, ackNo: 6, vec: []byte{6}, tfrcFb: true, xRecv: 1250000, invP: 137})
	return out
}

func TestDecodeDgramRejects(t *testing.T) {
	good := dgramSeeds()[0]
	ack := dgramSeeds()[1]
	tfrc := dgramSeeds()[7]
	mut := func(b []byte, f func([]byte) []byte) []byte { return f(append([]byte(nil), b...)) }
	for _, tc := range []struct {
		name string
		b    []byte
		want RejectReason
	}{
		{"ok", good, RejectNone},
		{"short", good[:5], RejectTooShort},
		{"version", mut(good, func(b []byte) []byte { b[0] = 1; return b }), RejectVersion},
		{"type", mut(good, func(b []byte) []byte { b[1] = 3; return b }), RejectType},
		{"truncated header", good[:14], RejectTruncated},
		{"tfrc truncated", mut(tfrc, func(b []byte) []byte { return b[:len(b)-1] }), RejectTruncated},
		{"tfrc trailing", append(append([]byte(nil), tfrc...), 0), RejectTrailing},
		{"ack truncated", ack[:len(ack)-1], RejectTruncated},
		{"ack trailing", append(append([]byte(nil), ack...), 0), RejectTrailing},
		{"ack reserved state", mut(ack, func(b []byte) []byte { b[len(b)-1] = 2 << 6; return b }), RejectSACK},
		{"ack below zero", mut(ack, func(b []byte) []byte { b[len(b)-1] = 63; b[len(b)-2] = 63; return b }), RejectSACK},
		{"zero ratio", encodeOne(&dgramPacket{dcid: 1, flags: dflagRATIO, ackRatio: 0}), RejectParams},
		{"huge ratio", encodeOne(&dgramPacket{dcid: 1, flags: dflagRATIO, ackRatio: MaxAckRatio + 1}), RejectParams},
		{"empty vector", encodeOne(&dgramPacket{dcid: 1, flags: dflagACK, ackNo: 3}), RejectSACK},
	} {
		var p dgramPacket
		if got := decodeDgram(tc.b, &p); got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}

func encodeOne(p *dgramPacket) []byte {
	b := make([]byte, 4096)
	return b[:encodeDgram(b, p)]
}

// FuzzDecodeDgram: the decoder never panics, and what it accepts
// re-encodes to the same bytes' meaning.
func FuzzDecodeDgram(f *testing.F) {
	for _, b := range dgramSeeds() {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var p dgramPacket
		if decodeDgram(b, &p) != RejectNone {
			return
		}
		if n := dgramHeaderLen(&p) + len(p.data); n > len(b) {
			t.Fatalf("header length %d exceeds the datagram %d", n, len(b))
		}
		out := make([]byte, len(b)+64)
		n := encodeDgram(out, &p)
		var q dgramPacket
		if r := decodeDgram(out[:n], &q); r != RejectNone {
			t.Fatalf("re-encoded packet rejected: %v", r)
		}
		if !bytes.Equal(p.data, q.data) || !bytes.Equal(p.vec, q.vec) {
			t.Fatalf("payload or vector changed")
		}
		p.data, q.data, p.vec, q.vec = nil, nil, nil, nil
		if !reflect.DeepEqual(p, q) {
			t.Fatalf("got %+v, want %+v", q, p)
		}
	})
}

func BenchmarkAckVectorEncode(b *testing.B) {
	var v ackVecRecv
	for i := uint64(0); i < 400; i++ {
		if i%17 != 0 {
			v.received(i, i%50 == 0)
		}
	}
	buf := make([]byte, MaxAckVector)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		v.encode(buf)
	}
}
