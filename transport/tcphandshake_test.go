package transport

import (
	"math/rand/v2"
	"net/netip"
	"testing"

	"cclab/clock"
	"cclab/ecn"
)

// TestTCPHandshake: with Config.TCPHandshake the client's Initial is
// its encoded length (31 bytes without a request or token, docs/compat.md
// "Handshake timing"), not MaxDatagram; a server rejects it
// (initial_too_small, no reply) unless AcceptUnpaddedInitial is set, and
// then answers with its usual Accept; the client's first packet after it
// is a pure ACK (26 bytes, TCP's third handshake packet), then data. With
// the padded default the first packet after the Accept is data.
func TestTCPHandshake(t *testing.T) {
	const (
		maxDatagram = 1483 // the matched grid's datagram (1448-byte MSS)
		// unpadded: version, type, two CIDs, timestamp (22), max
		// datagram and receive window (varints: 2 + 4), flags, empty
		// request and token (1 + 1 + 1)
		unpadded = 31
		// the Accept (never padded): 26 bytes of header and timestamps,
		// the same two varints, flags (no reset token without a
		// ResetKey, as in the simulator)
		accept = 33
		// the pure ACK: header with a 1-byte packet number and the
		// timestamps (20), cumulative ACK, window (varint: 4), no blocks
		pureAck = 26
	)
	cases := []struct {
		name        string
		unpadded    bool
		acceptSmall bool
		wantInitial int  // bytes
		wantAccept  bool // the server answers (and the connection opens)
	}{
		{"padded", false, false, maxDatagram, true},
		{"padded to a permissive server", false, true, maxDatagram, true},
		{"unpadded to a strict server", true, false, unpadded, false},
		{"unpadded to the simulator's server", true, true, unpadded, true},
	}
	cli := netip.MustParseAddrPort("192.0.2.1:4000")
	srv := netip.MustParseAddrPort("192.0.2.2:5201")
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			now := clock.Start
			ce := NewEndpoint(EndpointConfig{Rand: rand.New(rand.NewPCG(1, 1))})
			se := NewEndpoint(EndpointConfig{Server: true, NoRetry: true, AcceptUnpaddedInitial: tc.acceptSmall, Rand: rand.New(rand.NewPCG(2, 2))})
			c, err := ce.Dial(now, srv, Config{MaxDatagram: maxDatagram, TCPHandshake: tc.unpadded})
			if err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 65536)
			n, _, _ := ce.Transmit(now, buf)
			if n != tc.wantInitial {
				t.Errorf("Initial: got %d bytes, want %d", n, tc.wantInitial)
			}
			se.Receive(now, cli, ecn.NotECT, buf[:n])
			want := uint64(1)
			if tc.wantAccept {
				want = 0
			}
			if got := se.Stats().Rejects[RejectInitialSize]; got != want {
				t.Errorf("initial_too_small rejects: got %d, want %d", got, want)
			}
			m, _, _ := se.Transmit(now, buf)
			if (m > 0) != tc.wantAccept {
				t.Fatalf("server's reply: got %d bytes, want a reply: %v", m, tc.wantAccept)
			}
			if !tc.wantAccept {
				return
			}
			if m != accept {
				t.Errorf("Accept: got %d bytes, want %d", m, accept)
			}
			c.SetSource(NewPatternSource(1), -1)
			ce.Receive(now, srv, ecn.NotECT, buf[:m])
			if !c.Established() {
				t.Errorf("client not established after the Accept")
			}
			wantFirst := []int{0} // data at once (0: a data packet, of any size)
			if tc.unpadded {
				wantFirst = []int{pureAck, 0} // the pure ACK, then data
			}
			for i, w := range wantFirst {
				k, _, _ := ce.Transmit(now, buf)
				var p packet
				if r := decodePacket(buf[:k], &p); r != RejectNone || p.typ != typeShort {
					t.Fatalf("packet %d after the Accept: %v, type %d", i, r, p.typ)
				}
				if w == 0 && !p.hasData() {
					t.Errorf("packet %d after the Accept: got %d bytes without data, want data", i, k)
				}
				if w > 0 && (k != w || p.hasData() || p.flags&flagACK == 0) {
					t.Errorf("packet %d after the Accept: got %d bytes (data %v, flags %#x), want a %d-byte pure ACK", i, k, p.hasData(), p.flags, w)
				}
			}
		})
	}
}
