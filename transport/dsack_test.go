package transport

import (
	"math/rand/v2"
	"net/netip"
	"slices"
	"testing"
	"time"

	"cclab/clock"
	"cclab/ecn"
)

// dataTo feeds the fixture's conn a data packet [off, off+n) from its peer.
func (f *fixture) dataTo(off uint64, n int) {
	p := packet{typ: typeShort, dcid: f.c.localCID, flags: flagDATA, pn: f.pn, ts: 5, off: off, data: make([]byte, n)}
	f.pn++
	f.recv(&p, ecn.NotECT)
}

// lastAck drains and returns the last ACK section sent.
func (f *fixture) lastAck(t *testing.T) packet {
	t.Helper()
	var last packet
	found := false
	for _, p := range f.drain() {
		if p.flags&flagACK != 0 {
			last, found = p, true
		}
	}
	if !found {
		t.Fatalf("no ACK sent")
	}
	return last
}

// TestDSACKReceiver checks D-SACK generation (RFC 2883 §4): a duplicate
// below the cumulative point, or inside an out-of-order block, is reported
// in the next ACK as a D-SACK block, once; the SACK blocks are unchanged.
func TestDSACKReceiver(t *testing.T) {
	const n = 1000
	f := newFixture(t, Config{}, 1<<30, false)
	f.dataTo(0, n)
	f.dataTo(0, n)
	if a := f.lastAck(t); a.hasDSACK {
		t.Fatalf("D-SACK sent though the peer did not ask for it (hsDSACK)")
	}
	f.c.peerDSACK = true // as if its Accept had carried hsDSACK
	f.dataTo(0, n)
	f.dataTo(0, n) // duplicate below rcv.nxt
	a := f.lastAck(t)
	if !a.hasDSACK || a.dsack != (sackBlock{0, n}) {
		t.Fatalf("duplicate below the cumulative point: flags %#x dsack %v, want D-SACK [0,%d)", a.flags, a.dsack, n)
	}
	f.dataTo(3*n, n) // out of order
	a = f.lastAck(t)
	if a.hasDSACK {
		t.Fatalf("D-SACK %v reported again (RFC 2883: once)", a.dsack)
	}
	f.dataTo(3*n, n) // duplicate of out-of-order data
	a = f.lastAck(t)
	if !a.hasDSACK || a.dsack != (sackBlock{3 * n, 4 * n}) {
		t.Fatalf("duplicate out-of-order segment: dsack %v (flags %#x), want [%d,%d)", a.dsack, a.flags, 3*n, 4*n)
	}
	if a.nBlocks != 1 || a.blocks[0] != (sackBlock{3 * n, 4 * n}) {
		t.Errorf("SACK blocks %v, want the one block [%d,%d)", a.blocks[:a.nBlocks], 3*n, 4*n)
	}
	f.dataTo(n/2, n) // partly duplicate: [n/2, n) is old
	a = f.lastAck(t)
	if a.dsack != (sackBlock{n / 2, n}) {
		t.Errorf("partial duplicate: dsack %v, want [%d,%d)", a.dsack, n/2, n)
	}
}

// TestDSACKHandshake: a client whose strategy uses D-SACK (options undo,
// rack, adaptive; the strategy rack) asks for it in its Initial, others do
// not, so ACKs towards them are unchanged.
func TestDSACKHandshake(t *testing.T) {
	for _, tc := range []struct {
		rec  string
		want bool
	}{
		{"newreno", false}, {"sack", false}, {"prr:lostretx", false},
		{"sack:undo", true}, {"sack:adaptive", true}, {"fack:rack", true}, {"rack", true},
	} {
		f := &fixture{t: t, now: clock.Start, buf: make([]byte, 65536), peer: netip.MustParseAddrPort("192.0.2.1:5201")}
		f.ep = NewEndpoint(EndpointConfig{Rand: rand.New(rand.NewPCG(1, 1))})
		if _, err := f.ep.Dial(f.now, f.peer, Config{Recovery: tc.rec}); err != nil {
			t.Fatal(err)
		}
		n, _, _ := f.ep.Transmit(f.now, f.buf)
		var ini packet
		if r := decodePacket(f.buf[:n], &ini); r != RejectNone {
			t.Fatal(r)
		}
		if got := ini.hsFlags&hsDSACK != 0; got != tc.want {
			t.Errorf("%s: Initial asks for D-SACK: got %v, want %v", tc.rec, got, tc.want)
		}
	}
}

// TestDSACKWire: a D-SACK block survives encoding, and a malformed one (zero
// length, or more than MaxSACKBlocks blocks besides it) is rejected with a reason.
func TestDSACKWire(t *testing.T) {
	p := packet{typ: typeShort, dcid: 4, flags: flagACK, hasDSACK: true, pn: 3, ts: 1, tsecr: 2, cumAck: 5000, window: 1 << 20,
		nBlocks: 1, dsack: sackBlock{1000, 2200}}
	p.blocks[0] = sackBlock{6000, 7000}
	b := make([]byte, 256)
	var q packet
	if r := decodePacket(b[:encodePacket(b, &p)], &q); r != RejectNone || q.dsack != p.dsack || q.blocks[0] != p.blocks[0] {
		t.Fatalf("round trip: %v, dsack %v blocks %v", r, q.dsack, q.blocks[:q.nBlocks])
	}
	bad := p
	bad.dsack = sackBlock{1000, 1000}
	if r := decodePacket(b[:encodePacket(b, &bad)], &q); r != RejectSACK {
		t.Errorf("empty D-SACK block: got %v, want %v", r, RejectSACK)
	}
	five := p
	five.nBlocks = 5
	b2 := make([]byte, 256)
	n := encodePacket(b2, &p)
	nbAt := shortFixed + varintLen(p.pn) + varintLen(p.cumAck) + varintLen(p.window)
	if b2[nbAt] != 1|nBlocksDSACK {
		t.Fatalf("n_blocks byte %#x, want %#x", b2[nbAt], 1|nBlocksDSACK)
	}
	b2[nbAt] = byte(five.nBlocks) | nBlocksDSACK
	if r := decodePacket(b2[:n], &q); r != RejectSACK {
		t.Errorf("5 SACK blocks with D-SACK: got %v, want %v", r, RejectSACK)
	}
}

// enterFastRecovery drives sack-family fixture f into recovery with segment
// 0 missing and 1..3 SACKed, and returns the fast retransmission's timestamp.
func enterFastRecovery(t *testing.T, f *fixture) uint32 {
	t.Helper()
	f.now = f.now.Add(10 * time.Millisecond)
	sackAck(f, 0, 1)
	sackAck(f, 0, 1, 2)
	sent := sackAck(f, 0, 1, 2, 3)
	if !f.c.rec.InRecovery() || len(sent) == 0 || sent[0] != 0 {
		t.Fatalf("no fast retransmit of segment 0 (sent %v, in recovery %v)", sent, f.c.rec.InRecovery())
	}
	for _, p := range f.sent {
		if p.flags&flagDATA != 0 && p.off == 0 {
			return p.ts
		}
	}
	t.Fatal("retransmission not found")
	return 0
}

// TestUndo checks the undo of a spurious fast retransmit (Linux
// tcp_try_undo_dsack / tcp_try_undo_recovery; RFC 2883 with RFC 3708, RFC
// 3522): when the receiver reports the retransmission as a duplicate, or the
// ACK of the hole echoes a timestamp older than the retransmission, the
// controller's window is restored and the episode ends; an ACK of the
// retransmission itself (a real loss) undoes nothing.
func TestUndo(t *testing.T) {
	for _, tc := range []struct {
		name     string
		rec      string
		dsack    bool // the ACK of the hole carries a D-SACK of segment 0
		oldEcho  bool // the ACK of the hole echoes the original's timestamp
		wantUndo bool
	}{
		{"dsack", "sack:undo", true, false, true},
		{"eifel", "sack:undo", false, true, true},
		{"real loss", "sack:undo", false, false, false},
		{"undo off", "sack", true, true, false},
		{"rack dsack", "rack", true, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := sackFixture(t, tc.rec, 10, 10)
			orig := f.sent[0].ts
			retxTS := enterFastRecovery(t, f)
			ssDuring := f.tcc().ssthresh
			echo := retxTS
			if tc.oldEcho {
				echo = orig
			}
			f.now = f.now.Add(time.Millisecond)
			p := packet{typ: typeShort, dcid: f.c.localCID, flags: flagACK, pn: f.pn, ts: 2, tsecr: echo, cumAck: uint64(4 * testMSS), window: 1 << 30}
			f.pn++
			if tc.dsack {
				p.hasDSACK = true
				p.dsack = seg(0)
			}
			f.recv(&p, ecn.NotECT)
			undone := f.c.stats.Undos > 0
			if undone != tc.wantUndo {
				t.Fatalf("undone: got %v, want %v (calls %v)", undone, tc.wantUndo, f.tcc().calls)
			}
			if !tc.wantUndo {
				return
			}
			if got, want := f.tcc().ssthresh, 1<<30; got != want || ssDuring == want {
				t.Errorf("ssthresh: %d during recovery, %d after undo, want %d restored", ssDuring, got, want)
			}
			if f.c.rec.InRecovery() {
				t.Errorf("still in recovery after undo")
			}
			if !slices.Contains(f.tcc().calls, "undo") {
				t.Errorf("controller's Undo not called: %v", f.tcc().calls)
			}
		})
	}
}

// TestAdaptiveDupThresh checks option adaptive (Linux tcp_reordering): a
// segment that arrives k segments below the highest SACKed one raises
// DupThresh to k, so the same reordering no longer triggers fast
// retransmit; the raised threshold is capped at MaxReordering.
func TestAdaptiveDupThresh(t *testing.T) {
	f := sackFixture(t, "sack:adaptive", 20, 20)
	l := sackOf(f)
	f.now = f.now.Add(10 * time.Millisecond)
	sackAck(f, 0, 5)
	f.ack(0, 0, seg(1), seg(5)) // 1 delivered after 5: degree ceil((6-1)) = 5
	if got, want := l.DupThresh(), 5; got != want {
		t.Fatalf("DupThresh after reordering of degree 5: got %d, want %d", got, want)
	}
	f.ack(0, 0, span(1, 2), span(3, 6)) // 4 segments SACKed above hole 0: RFC 6675 with 3 would enter
	if f.c.rec.InRecovery() {
		t.Fatalf("entered recovery with 4 SACKed segments and DupThresh %d", l.DupThresh())
	}
	if got, want := adaptDupThresh(3, 1000), MaxReordering; got != want {
		t.Errorf("cap: got %d, want %d", got, want)
	}
	if got, want := adaptDupThresh(10, 4), 10; got != want {
		t.Errorf("never lowered by a smaller degree: got %d, want %d", got, want)
	}
}
