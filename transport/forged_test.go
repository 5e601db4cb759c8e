package transport

import (
	"testing"
	"time"

	"cclab/ecn"
)

// TestForgedSegment: one forged DATA segment (an attacker who knows the
// server's CID) lands beyond what the client has sent. The receiver SACKs it;
// the sender must ignore that block (counted) rather than reject every later
// ACK, and the transfer must complete with a matching digest. The forged
// bytes lie beyond the stream's final size, inside the receive window
// (bytes inside the stream would be delivered in place of the real ones: no
// transport without authentication prevents that, the digest detects it);
// the FIN drops them.
func TestForgedSegment(t *testing.T) {
	h := newHarness(t, 11, pathModel{Delay: 10 * time.Millisecond, Rate: 10e6}, pathModel{Delay: 10 * time.Millisecond}, Config{})
	const size = 2 << 20
	cli, err := h.eps[0].Dial(h.now, h.addrs[1], Config{})
	if err != nil {
		t.Fatal(err)
	}
	cli.SetSource(NewPatternSource(42), size)
	forged := false
	inner := func(h *harness) {
		if forged || !cli.Established() || h.now < cli.stats.Established.Add(100*time.Millisecond) || len(h.eps[1].Conns()) == 0 {
			return
		}
		forged = true
		srv := h.eps[1].Conns()[0]
		off := uint64(size + 100*cli.mss)
		p := packet{typ: typeShort, dcid: srv.localCID, flags: flagDATA, pn: 1 << 40, ts: 1, off: off, data: make([]byte, cli.mss)}
		b := make([]byte, 2048)
		n := encodePacket(b, &p)
		h.eps[1].Receive(h.now, h.addrs[0], ecn.NotECT, b[:n])
	}
	buf := make([]byte, 64<<10)
	var srv *Conn
	h.app = func(h *harness) {
		inner(h)
		if srv == nil {
			srv = h.eps[1].Accept()
		}
		if srv != nil {
			for srv.Read(buf) > 0 {
			}
			if srv.EOF() {
				srv.CloseWrite(h.now)
			}
		}
	}
	ok := h.run(10*time.Minute, func() bool { return cli.Done() && srv != nil && srv.Done() })
	if !forged {
		t.Fatal("scenario not exercised: no forged segment sent")
	}
	if !ok {
		t.Fatalf("transfer with one forged segment did not finish by %v: client err %v, rejects %v", h.now, cli.Err(), h.eps[0].Stats().Rejects)
	}
	checkTransfer(t, cli, srv, size, 0)
	if got := cli.Stats().SACKBlocksIgnored; got == 0 {
		t.Errorf("SACKBlocksIgnored = %d, want > 0 (blocks beyond snd.nxt)", got)
	}
	if got, want := srv.Stats().OOOBytesDropped, uint64(cli.mss); got != want {
		t.Errorf("OOOBytesDropped = %d, want %d (the forged segment, beyond the FIN)", got, want)
	}
}

// TestSACKBeyondSndNxt: an ACK whose one SACK block lies beyond snd.nxt is
// processed without that block (counted), not rejected whole; an ACK
// rejected for a cumulative ACK of unsent data does not reset the idle
// timer.
func TestSACKBeyondSndNxt(t *testing.T) {
	f := newFixture(t, Config{CC: "testcc:cwnd=10", Recovery: "sack"}, 1<<30, false)
	f.c.SetSource(NewPatternSource(1), -1)
	f.drain()
	f.now = f.now.Add(50 * time.Millisecond)
	nxt := f.c.sb.nxt
	p := packet{typ: typeShort, dcid: f.c.localCID, flags: flagACK, pn: f.pn, ts: 2, tsecr: f.sent[0].ts,
		cumAck: seg(1).Start, window: 1 << 30, nBlocks: 2}
	p.blocks[0] = sackBlock{Start: nxt + 1000, End: nxt + 2000}
	p.blocks[1] = sackBlock{Start: seg(2).Start, End: seg(3).Start}
	f.pn++
	f.recv(&p, ecn.NotECT)
	if r := f.ep.Stats().Rejects[RejectAckUnsent]; r != 0 {
		t.Errorf("ACK with one bad block rejected whole (%d ack_of_unsent)", r)
	}
	if got, want := f.c.sb.una, seg(1).Start; got != want {
		t.Errorf("snd.una = %d, want %d", got, want)
	}
	if got := f.c.Stats().SACKBlocksIgnored; got != 1 {
		t.Errorf("SACKBlocksIgnored = %d, want 1", got)
	}
	if f.c.sb.sacked == 0 {
		t.Errorf("the valid SACK block was not used")
	}
	// A cumulative ACK beyond snd.nxt is rejected and does not count as
	// hearing from the peer.
	last := f.c.lastRecv
	f.now = f.now.Add(time.Second)
	bad := packet{typ: typeShort, dcid: f.c.localCID, flags: flagACK, pn: f.pn, ts: 3, cumAck: nxt + 5000, window: 1 << 20}
	f.pn++
	f.recv(&bad, ecn.NotECT)
	if f.ep.Stats().Rejects[RejectAckUnsent] != 1 {
		t.Errorf("cum ACK of unsent data: rejects %v, want one ack_of_unsent", f.ep.Stats().Rejects)
	}
	if f.c.lastRecv != last {
		t.Errorf("a rejected ACK reset the idle timer (lastRecv %v -> %v)", last, f.c.lastRecv)
	}
}
