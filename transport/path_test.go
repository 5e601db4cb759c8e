package transport

import (
	"net/netip"
	"testing"
	"time"

	"cclab/ecn"
)

// TestSpoofedRebind: mid-transfer, with the server sending a bulk flow
// (reverse mode), an off-path attacker who knows the server's CID sends one
// 20-byte PING with packet number 2^62-1 from a victim's address. The peer
// does not move, no data reaches the victim, the victim gets no more bytes
// than the attacker sent, and the transfer completes. (Before path
// validation the whole flow went to the victim.)
func TestSpoofedRebind(t *testing.T) {
	h := newHarness(t, 31, pathModel{Delay: 10 * time.Millisecond}, pathModel{Delay: 10 * time.Millisecond, Rate: 20e6}, Config{})
	victim := netip.MustParseAddrPort("192.0.2.66:9")
	var toVictim, dataToVictim int
	h.deliver = func(from int, to netip.AddrPort, b []byte) bool {
		if to != victim {
			return true
		}
		toVictim += len(b)
		var p packet
		if decodePacket(b, &p) == RejectNone && p.hasData() {
			dataToVictim++
		}
		return false // the victim is not the client
	}
	cli, err := h.eps[0].Dial(h.now, h.addrs[1], Config{})
	if err != nil {
		t.Fatal(err)
	}
	const size = 2 << 20
	var srv *Conn
	spoofed := 0
	buf := make([]byte, 64<<10)
	h.app = func(h *harness) {
		if srv == nil {
			if srv = h.eps[1].Accept(); srv != nil {
				srv.SetSource(NewPatternSource(7), size)
			}
		}
		for cli.Read(buf) > 0 {
		}
		if cli.EOF() {
			cli.CloseWrite(h.now)
		}
		if srv != nil && spoofed == 0 && srv.Stats().BytesAcked > 200_000 {
			p := packet{typ: typeShort, dcid: srv.localCID, flags: flagPING, pn: MaxVarint, ts: 1}
			b := make([]byte, 64)
			n := encodePacket(b, &p)
			spoofed = n
			h.eps[1].Receive(h.now, victim, ecn.NotECT, b[:n])
		}
	}
	if !h.run(5*time.Minute, func() bool { return cli.Done() && srv != nil && srv.Done() }) {
		t.Fatalf("transfer did not finish: cli err %v", cli.Err())
	}
	if spoofed == 0 {
		t.Fatal("scenario not exercised")
	}
	if srv.Peer() != h.addrs[0] || srv.Stats().Rebinds != 0 {
		t.Errorf("peer %v after the spoofed packet (rebinds %d), want %v", srv.Peer(), srv.Stats().Rebinds, h.addrs[0])
	}
	if dataToVictim != 0 || toVictim > spoofed {
		t.Errorf("victim got %d bytes (%d data packets) for %d spoofed bytes; want no data and at most 1x", toVictim, dataToVictim, spoofed)
	}
	if cli.Stats().RecvDigest != srv.Stats().SentDigest || cli.Stats().BytesDelivered != size {
		t.Errorf("transfer corrupted or short: delivered %d", cli.Stats().BytesDelivered)
	}
}

// TestPathChallengeAmplification: a stream of small spoofed packets from a
// new address earns challenges worth at most the bytes received from it,
// at most one per RTO, and a response from any other address (or with other
// data) validates nothing.
func TestPathChallengeAmplification(t *testing.T) {
	f := newSrvFixture(t, Config{}, true)
	victim := netip.MustParseAddrPort("192.0.2.66:9")
	in, out := 0, 0
	buf := make([]byte, 2048)
	for i := 0; i < 50; i++ {
		p := packet{typ: typeShort, dcid: f.srvCID, flags: flagPING, pn: f.pn, ts: 1}
		f.pn++
		n := encodePacket(buf, &p)
		in += n
		f.ep.Receive(f.now, victim, ecn.NotECT, buf[:n])
		for {
			k, to, _ := f.ep.Transmit(f.now, f.buf)
			if k == 0 {
				break
			}
			if to == victim {
				out += k
			}
		}
		f.now = f.now.Add(10 * time.Millisecond)
	}
	ch := f.srv.Stats().PathChallenges
	if out > in || ch == 0 || ch > 3 {
		t.Errorf("%d bytes, %d challenges to the new address for %d bytes from it over 500 ms; want <= 1x, 1..3 (one per RTO)", out, ch, in)
	}
	// A response with the right data from the wrong address, or the wrong
	// data from the right address, moves nothing.
	data := f.srv.path.data
	for _, tc := range []struct {
		from netip.AddrPort
		data uint64
	}{{f.peer, data}, {victim, data + 1}} {
		p := packet{typ: typePath, dcid: f.srvCID, pathType: pathResponse, pathData: tc.data}
		n := encodePacket(buf, &p)
		f.ep.Receive(f.now, tc.from, ecn.NotECT, buf[:n])
		if f.srv.Peer() != f.peer {
			t.Errorf("response %x from %v moved the peer", tc.data, tc.from)
		}
	}
	// The right response from the probed address validates it.
	p := packet{typ: typePath, dcid: f.srvCID, pathType: pathResponse, pathData: data}
	n := encodePacket(buf, &p)
	f.ep.Receive(f.now, victim, ecn.NotECT, buf[:n])
	if f.srv.Peer() != victim || f.srv.Stats().Rebinds != 1 {
		t.Errorf("valid response: peer %v rebinds %d, want %v and 1", f.srv.Peer(), f.srv.Stats().Rebinds, victim)
	}
}

// TestTombstoneReplies: after a connection is removed, a late FIN naming
// its CID is re-acknowledged only when it comes from the connection's
// validated address, never larger than it; from a spoofed source it gets
// nothing (before, any source got an ACK 1.3x its size).
func TestTombstoneReplies(t *testing.T) {
	h := newHarness(t, 41, pathModel{Delay: 5 * time.Millisecond}, pathModel{Delay: 5 * time.Millisecond}, Config{})
	cli, srv, ok := h.transfer(20_000, time.Minute)
	if !ok {
		t.Fatal("transfer did not finish")
	}
	h.run(10*time.Second, func() bool { return len(h.eps[0].Conns()) == 0 })
	if len(h.eps[0].Conns()) != 0 {
		t.Fatal("client conn not removed")
	}
	buf := make([]byte, 2048)
	// As the server sends it: a FIN with the ACK of the client's FIN.
	fin := packet{typ: typeShort, dcid: cli.localCID, flags: flagFIN | flagACK, pn: 1000, ts: 1, off: srv.finOff, cumAck: 20_001, window: 1 << 20}
	n := encodePacket(buf, &fin)
	for _, tc := range []struct {
		from netip.AddrPort
		want int
	}{{netip.MustParseAddrPort("192.0.2.66:9"), 0}, {h.addrs[1], 1}} {
		h.eps[0].Receive(h.now, tc.from, ecn.NotECT, buf[:n])
		got := 0
		for {
			k, to, _ := h.eps[0].Transmit(h.now, h.buf)
			if k == 0 {
				break
			}
			got++
			if to != tc.from || k > n {
				t.Errorf("re-ACK of %d bytes to %v for a %d-byte FIN from %v", k, to, n, tc.from)
			}
		}
		if got != tc.want {
			t.Errorf("late FIN from %v: %d replies, want %d", tc.from, got, tc.want)
		}
	}
}

// TestDgramResetValidated: a datagram-mode connection that has ended
// answers a repeated CLOSE (its RESET was lost) only when the CLOSE comes
// from its validated peer, with a RESET no larger than the CLOSE; a spoofed
// CLOSE naming it gets nothing.
func TestDgramResetValidated(t *testing.T) {
	n := newDnet(t, 12, pathModel{Delay: 5 * time.Millisecond}, pathModel{Delay: 5 * time.Millisecond}, DgramConfig{})
	cli, srv := n.dial(DgramConfig{}, nil, true)
	cli.Close(n.now)
	if !n.run(5*time.Second, func() bool { return cli.Done() && (*srv).Done() }) {
		t.Fatal("close did not finish")
	}
	s := *srv
	if s.removed {
		t.Fatal("server conn already removed")
	}
	closePkt := encodeOne(&dgramPacket{dcid: s.localCID, flags: dflagCLOSE, seq: 1000, ts: 1})
	for _, tc := range []struct {
		from netip.AddrPort
		want int
	}{{netip.MustParseAddrPort("192.0.2.66:9"), 0}, {n.addrs[0], 1}} {
		n.eps[1].Receive(n.now, tc.from, ecn.NotECT, closePkt)
		got := 0
		for {
			k, to, _ := n.eps[1].Transmit(n.now, n.buf)
			if k == 0 {
				break
			}
			got++
			if to != n.addrs[0] || k > len(closePkt) {
				t.Errorf("RESET of %d bytes to %v for a %d-byte CLOSE from %v", k, to, len(closePkt), tc.from)
			}
		}
		if got != tc.want {
			t.Errorf("CLOSE from %v to an ended conn: %d replies, want %d", tc.from, got, tc.want)
		}
	}
}
