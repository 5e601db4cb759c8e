package transport

import (
	"bytes"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"cclab/ecn"
)

// seedPackets returns valid datagrams of every type, the fuzz seeds.
func seedPackets() [][]byte {
	var out [][]byte
	enc := func(p *packet) {
		b := make([]byte, 2048)
		out = append(out, b[:encodePacket(b, p)])
	}
	enc(&packet{typ: typeInitial, dcid: 1, scid: 2, ts: 3, maxDatagram: 600, recvWindow: 1 << 20, hsFlags: hsECN, request: []byte("req")})
	enc(&packet{typ: typeAccept, dcid: 2, scid: 4, ts: 5, tsecr: 3, maxDatagram: 1200, recvWindow: 1 << 16})
	enc(&packet{typ: typeShort, dcid: 4, flags: flagDATA, pn: 7, ts: 9, tsecr: 5, off: 1000, data: []byte("payload")})
	enc(&packet{typ: typeShort, dcid: 4, flags: flagDATA | flagFIN | flagCWR, pn: 300, ts: 9, off: 1 << 40, data: []byte("x")})
	enc(&packet{typ: typeShort, dcid: 4, flags: flagFIN, pn: 8, ts: 9, off: 5000})
	p := packet{typ: typeShort, dcid: 4, flags: flagACK | flagECE, pn: 1 << 20, ts: 1, tsecr: 2, cumAck: 5000, window: 1 << 30, nBlocks: 3}
	p.blocks[0] = sackBlock{9000, 10000}
	p.blocks[1] = sackBlock{6000, 7000}
	p.blocks[2] = sackBlock{12000, 20000}
	enc(&p)
	enc(&packet{typ: typeShort, dcid: 4, flags: flagPING | flagCLOSE, pn: 1, closeCode: 42})
	enc(&packet{typ: typeInitial, dcid: 1, scid: 2, ts: 3, maxDatagram: 600, recvWindow: 1 << 20, request: []byte("req"), token: bytes.Repeat([]byte{7}, tokenLen)})
	enc(&packet{typ: typeRetry, dcid: 2, odcid: 1, token: bytes.Repeat([]byte{7}, tokenLen)})
	// The stateless fallback (admission.go): a Retry with a cookie, and the
	// Initial returning it.
	cookie := append([]byte{cookieKind}, bytes.Repeat([]byte{9}, tokenLen)...)
	enc(&packet{typ: typeRetry, dcid: 2, odcid: 1, token: cookie})
	enc(&packet{typ: typeInitial, dcid: 1, scid: 2, ts: 3, maxDatagram: 600, recvWindow: 1 << 20, request: []byte("req"), token: cookie})
	enc(&packet{typ: typePath, dcid: 4, pathType: pathChallenge, pathData: 0x0123456789abcdef})
	enc(&packet{typ: typePath, dcid: 4, pathType: pathResponse, pathData: 0x0123456789abcdef})
	d := packet{typ: typeShort, dcid: 4, flags: flagACK, hasDSACK: true, pn: 9, ts: 1, tsecr: 2, cumAck: 8000, window: 1 << 20, nBlocks: 1, dsack: sackBlock{1000, 2200}}
	d.blocks[0] = sackBlock{9000, 10000}
	enc(&d)
	enc(&packet{typ: typeInitial, dcid: 1, scid: 2, ts: 3, maxDatagram: 1200, recvWindow: 1 << 20, hsFlags: hsDSACK})
	// Stateless reset (reset.go): an Initial taking a token, an Accept
	// carrying one, a Reset, and a refusal (CloseReceiverFull).
	enc(&packet{typ: typeInitial, dcid: 1, scid: 2, ts: 3, maxDatagram: 600, recvWindow: 1 << 20, hsFlags: hsReset})
	enc(&packet{typ: typeAccept, dcid: 2, scid: 4, ts: 5, tsecr: 3, maxDatagram: 1200, recvWindow: 1 << 16, hsFlags: hsReset, resetTok: [resetTokenLen]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}})
	enc(&packet{typ: typeReset, resetTok: [resetTokenLen]byte{0, 0, 0, 0, 0, 0, 0, 2, 9, 9, 9, 9, 9, 9, 9, 9}})
	enc(&packet{typ: typeShort, dcid: 2, flags: flagCLOSE, closeCode: CloseReceiverFull})
	// Authentication (auth.go): an Initial and an Accept with their auth
	// sections, a refusal for want of it.
	enc(&packet{typ: typeInitial, dcid: 1, scid: 2, ts: 3, maxDatagram: 600, recvWindow: 1 << 20, hsFlags: hsReset | hsAuth, keyName: []byte("k1"),
		nonce: [authNonceLen]byte{1, 2, 3}, hsTag: [hsTagLen]byte{9, 8, 7}})
	enc(&packet{typ: typeAccept, dcid: 2, scid: 4, ts: 5, tsecr: 3, maxDatagram: 1200, recvWindow: 1 << 16, hsFlags: hsReset | hsAuth,
		nonce: [authNonceLen]byte{4, 5, 6}, hsTag: [hsTagLen]byte{6, 5, 4}})
	enc(&packet{typ: typeShort, dcid: 2, flags: flagCLOSE, closeCode: CloseAuthRequired})
	return out
}

// TestWriteFuzzSeeds regenerates testdata/fuzz seed files when
// CCLAB_WRITE_SEEDS=1.
func TestWriteFuzzSeeds(t *testing.T) {
	if os.Getenv("CCLAB_WRITE_SEEDS") != "1" {
		t.Skip("set CCLAB_WRITE_SEEDS=1 to rewrite the seed corpus")
	}
	for _, name := range []string{"FuzzDecodePacket", "FuzzEndpointReceive", "FuzzAuthEndpoint"} {
		dir := filepath.Join("testdata", "fuzz", name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for i, b := range seedPackets() {
			data := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", b)
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("seed%d", i)), []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// FuzzDecodePacket: the decoder never panics, and what it accepts
// re-encodes to a datagram that decodes to the same packet.
func FuzzDecodePacket(f *testing.F) {
	for _, b := range seedPackets() {
		f.Add(b)
	}
	priors := priorDatagrams(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		var p, q packet
		r := decodePacket(b, &p)
		if r >= NumRejectReasons {
			t.Fatalf("reason %d out of range", r)
		}
		// The endpoint decodes every datagram into one reused packet, and
		// decodePacket then resets only a short packet's fields: nothing an
		// earlier datagram set (a handshake's token, a path challenge, ack
		// ranges; accepted or rejected midway) may show through.
		for i, prior := range priors {
			var reused packet
			decodePacket(prior, &reused)
			if got := decodePacket(b, &reused); got != r {
				t.Fatalf("into a packet reused after prior datagram %d (type %d, %d bytes): reason %v, want %v (as into a new one)", i, prior[1], len(prior), got, r)
			}
			if r != RejectNone {
				continue
			}
			clear(reused.blocks[reused.nBlocks:]) // (never read)
			if !reflect.DeepEqual(p, reused) {
				t.Fatalf("decoded into a packet reused after prior datagram %d (type %d, %d bytes):\n%+v\nwant (into a new one)\n%+v", i, prior[1], len(prior), reused, p)
			}
		}
		if r != RejectNone {
			return
		}
		out := make([]byte, max(len(b), 2048)+64)
		n := encodePacket(out, &p)
		if r := decodePacket(out[:n], &q); r != RejectNone {
			t.Fatalf("re-encoded packet rejected: %v", r)
		}
		if !bytes.Equal(p.data, q.data) || !bytes.Equal(p.request, q.request) {
			t.Fatalf("payload changed in round trip")
		}
		p.data, q.data, p.request, q.request = nil, nil, nil, nil
		p.authEnd, q.authEnd = 0, 0 // an offset: shorter once non-minimal varints are re-encoded minimal
		if !reflect.DeepEqual(p, q) {
			t.Fatalf("round trip changed the packet:\n%+v\n%+v", p, q)
		}
	})
}

// priorDatagrams returns the datagrams whose decoding may precede another's
// in the endpoint's reused packet (FuzzDecodePacket): one of every type
// (seedPackets: handshakes with a token and a request, path packets, ACKs
// with SACK and D-SACK blocks), and every prefix of a short packet with
// every field a short packet has set (every flag, four SACK blocks, a
// D-SACK block, a close code and data), the shorter ones rejected midway.
func priorDatagrams(tb testing.TB) [][]byte {
	tb.Helper()
	in := packet{typ: typeShort, dcid: 0xfeed, flags: flagsKnown, pn: 77, ts: 5, tsecr: 4, cumAck: 1000, window: 9000,
		nBlocks: MaxSACKBlocks, blocks: [MaxSACKBlocks]sackBlock{{1100, 1200}, {1300, 1400}, {1500, 1600}, {1700, 1800}},
		hasDSACK: true, dsack: sackBlock{10, 20}, closeCode: 3, off: 2000, data: []byte("xyz")}
	b := make([]byte, 256)
	b = b[:encodePacket(b, &in)]
	var p packet
	if r := decodePacket(b, &p); r != RejectNone || p.nBlocks != MaxSACKBlocks || !p.hasDSACK || p.closeCode != 3 {
		tb.Fatalf("full short packet: %v, %+v", r, p)
	}
	out := seedPackets()
	for n := len(b); n > 2+cidLen; n-- {
		out = append(out, b[:n])
	}
	return out
}

// FuzzEndpointReceive feeds arbitrary datagrams to a server endpoint with a
// live connection mid-transfer, addressed to that connection when the first
// byte of the input is odd. Nothing may panic and the connection's
// scoreboard must stay consistent.
func FuzzEndpointReceive(f *testing.F) {
	for _, b := range seedPackets() {
		f.Add(b)
		f.Add(append([]byte{1}, b...))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		h := newHarness(t, 1, pathModel{Delay: time.Millisecond}, pathModel{Delay: time.Millisecond}, Config{})
		cli, _ := h.eps[0].Dial(h.now, h.addrs[1], Config{})
		cli.SetSource(NewPatternSource(1), 1<<20)
		var srv *Conn
		h.app = func(h *harness) {
			if srv == nil {
				srv = h.eps[1].Accept()
			}
		}
		h.run(20*time.Millisecond, func() bool { return false })
		if srv == nil {
			t.Fatal("no connection")
		}
		srv.SetSource(NewPatternSource(2), 1<<20)
		d := append([]byte(nil), b...)
		if len(d) > 0 && d[0]&1 == 1 {
			d = d[1:]
			if len(d) >= 10 {
				// Address it to the live server conn (or the client).
				cid := srv.localCID
				if len(d) > 10 && d[10]&0x80 != 0 {
					cid = cli.localCID
				}
				for i := 0; i < 8; i++ {
					d[2+i] = byte(cid >> (56 - 8*i))
				}
			}
		}
		from := netip.MustParseAddrPort("192.0.2.99:1")
		h.eps[1].Receive(h.now, from, ecn.CE, d)
		h.eps[0].Receive(h.now, from, ecn.CE, d)
		h.run(50*time.Millisecond, func() bool { return false })
		for _, c := range []*Conn{cli, srv} {
			checkScoreboard(t, &c.sb)
		}
	})
}

// checkScoreboard verifies the incremental counters against a recount.
func checkScoreboard(t *testing.T, sb *Scoreboard) {
	pipe, sacked, lost := 0, 0, 0
	for i := 0; i < sb.Count(); i++ {
		s := sb.Seg(i)
		switch {
		case s.Sacked:
			sacked += s.Len
		case s.Lost:
			lost += s.Len
		default:
			pipe += s.Len
		}
		if i > 0 && sb.Seg(i-1).Off+uint64(sb.Seg(i-1).Len) != s.Off {
			t.Fatalf("segments not contiguous at %d", i)
		}
	}
	if pipe != sb.Pipe() || sacked != sb.SackedBytes() || lost != sb.LostBytes() {
		t.Fatalf("scoreboard counters pipe %d sacked %d lost %d, recount %d %d %d", sb.Pipe(), sb.SackedBytes(), sb.LostBytes(), pipe, sacked, lost)
	}
	if err := sb.checkLinks(); err != nil {
		t.Fatal(err)
	}
}

// checkLinks verifies the scoreboard's derived structures against its
// marks: the transmission-ordered list holds exactly the segments neither
// SACKed nor lost, in increasing SendSeq, with consistent links; every
// SACKed segment's skip covers SACKed segments only.
func (sb *Scoreboard) checkLinks() error {
	members := 0
	for i := 0; i < sb.count; i++ {
		s := sb.Seg(i)
		if !s.Sacked && !s.Lost {
			members++
		}
		if s.Sacked {
			if s.skip == 0 || i+int(s.skip) > sb.count {
				return fmt.Errorf("segment %d of %d: skip %d", i, sb.count, s.skip)
			}
			for j := i; j < i+int(s.skip); j++ {
				if !sb.Seg(j).Sacked {
					return fmt.Errorf("segment %d skips %d to %d over un-SACKed %d", i, s.skip, i+int(s.skip), j)
				}
			}
		}
	}
	n := 0
	var prev uint32
	var prevSeq uint64
	for p := sb.tsHead; p != 0; p = sb.at(p).tsNext {
		s := sb.at(p)
		i := (int(p) - 1 - sb.head) & (len(sb.segs) - 1)
		switch {
		case i >= sb.count:
			return fmt.Errorf("list holds ring position %d, not outstanding", p-1)
		case s.Sacked || s.Lost:
			return fmt.Errorf("list holds segment %d (sacked %v, lost %v)", i, s.Sacked, s.Lost)
		case s.tsPrev != prev:
			return fmt.Errorf("segment %d: prev link %d, want %d", i, s.tsPrev, prev)
		case n > 0 && s.SendSeq <= prevSeq:
			return fmt.Errorf("segment %d: SendSeq %d after %d", i, s.SendSeq, prevSeq)
		}
		prev, prevSeq = p, s.SendSeq
		n++
		if n > sb.count {
			return fmt.Errorf("list longer than the scoreboard (a cycle)")
		}
	}
	if prev != sb.tsTail {
		return fmt.Errorf("list tail %d, last member %d", sb.tsTail, prev)
	}
	if n != members {
		return fmt.Errorf("list holds %d segments, %d are neither SACKed nor lost", n, members)
	}
	return nil
}

// TestScoreboardConsistency checks the counters after impaired transfers.
func TestScoreboardConsistency(t *testing.T) {
	h := newHarness(t, 11, impairedPath(0.05), impairedPath(0.05), Config{})
	cli, err := h.eps[0].Dial(h.now, h.addrs[1], Config{})
	if err != nil {
		t.Fatal(err)
	}
	cli.SetSource(NewPatternSource(1), 300_000)
	steps := 0
	h.app = func(h *harness) {
		if s := h.eps[1].Accept(); s != nil {
			s.CloseWrite(h.now)
		}
		steps++
		checkScoreboard(t, &cli.sb)
	}
	if !h.run(time.Hour, func() bool { return cli.Done() }) {
		t.Fatal("did not finish")
	}
}
