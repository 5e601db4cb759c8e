package transport

import (
	"bytes"
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"testing"
	"time"

	"cclab/ecn"
)

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestHKDFVectors checks derive's use of HKDF (Extract with the key as
// secret and the nonces as salt, then Expand) against RFC 5869 Appendix A
// test cases 1 and 3 (SHA-256).
func TestHKDFVectors(t *testing.T) {
	cases := []struct{ ikm, salt, info, prk, okm string }{
		{"0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b", "000102030405060708090a0b0c", "f0f1f2f3f4f5f6f7f8f9",
			"077709362c2e32df0ddc3f0dc47bba6390b6c73bb50f9c3122ec844ad7c2b3e5",
			"3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865"},
		{"0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b", "", "",
			"19ef24a32c717b167f33a91d6f648bdf96596776afdb6377ac434c1c293ccb04",
			"8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8"},
	}
	for i, c := range cases {
		prk, err := hkdf.Extract(sha256.New, unhex(t, c.ikm), unhex(t, c.salt))
		if err != nil {
			t.Fatal(err)
		}
		if got := hex.EncodeToString(prk); got != c.prk {
			t.Errorf("case %d: PRK %s, want %s", i, got, c.prk)
		}
		okm, err := hkdf.Expand(sha256.New, prk, string(unhex(t, c.info)), len(c.okm)/2)
		if err != nil {
			t.Fatal(err)
		}
		if got := hex.EncodeToString(okm); got != c.okm {
			t.Errorf("case %d: OKM %s, want %s", i, got, c.okm)
		}
	}
}

// TestSealerGCMVector checks sealer against the AES-128-GCM test case 4 of
// McGrew & Viega, "The Galois/Counter Mode of Operation" (the AEAD of RFC
// 5116 §5.1): with packet number 0 the nonce is the IV, the header the
// associated data; and that the nonce XORs the number space and the packet
// number into the IV.
func TestSealerGCMVector(t *testing.T) {
	var s sealer
	s.init(unhex(t, "feffe9928665731c6d6a8f9467308308"), unhex(t, "cafebabefacedbaddecaf888"), true)
	aad := unhex(t, "feedfacedeadbeeffeedfacedeadbeefabaddad2")
	pt := unhex(t, "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39")
	want := "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091" +
		"5bc94fbc3221a5db94fae95ae7121a47"
	b := make([]byte, len(aad)+len(pt)+TagLen)
	copy(b, aad)
	copy(b[len(aad):], pt)
	n := s.seal(b, len(aad), len(aad)+len(pt), pnSpaceShort, 0)
	if got := hex.EncodeToString(b[len(aad):n]); got != want {
		t.Fatalf("ciphertext||tag\n%s, want\n%s", got, want)
	}
	if m := s.open(b[:n], len(aad), pnSpaceShort, 0); m != len(aad)+len(pt) || !bytes.Equal(b[len(aad):m], pt) {
		t.Fatalf("open: %d bytes, plaintext %x", m, b[len(aad):max(m, len(aad))])
	}
	b[5] ^= 1 // the header is authenticated
	if s.open(b[:n], len(aad), pnSpaceShort, 0) >= 0 {
		t.Error("a changed header opened")
	}
	if got, want := hex.EncodeToString(s.setNonce(pnSpacePath, 0x0102)), "cafebabffacedbaddecaf98a"; got != want {
		t.Errorf("nonce of Path packet 0x102: %s, want %s", got, want)
	}
	// Authentication only (GMAC): test case 1 (zero key and IV, nothing
	// to encrypt or authenticate) gives the tag alone.
	var g sealer
	g.init(make([]byte, 16), make([]byte, 12), false)
	tag := make([]byte, TagLen)
	if n := g.seal(tag, 0, 0, pnSpaceShort, 0); n != TagLen || hex.EncodeToString(tag) != "58e2fccefa7e3061367f1d57a4e7455a" {
		t.Errorf("GMAC of nothing: %d bytes %x, want 58e2fccefa7e3061367f1d57a4e7455a", n, tag)
	}
	// Authenticated, not encrypted: the packet stays readable, every byte
	// is covered.
	g.init(unhex(t, "feffe9928665731c6d6a8f9467308308"), unhex(t, "cafebabefacedbaddecaf888"), false)
	p := append(append([]byte(nil), aad...), pt...)
	p = append(p, make([]byte, TagLen)...)
	n = g.seal(p, len(aad), len(aad)+len(pt), pnSpaceShort, 9)
	if !bytes.Equal(p[len(aad):len(aad)+len(pt)], pt) {
		t.Error("authentication-only sealing changed the payload")
	}
	p[len(aad)+3] ^= 1
	if g.open(p[:n], len(aad), pnSpaceShort, 9) >= 0 {
		t.Error("a changed payload opened")
	}
}

// TestReplayWindow: fresh packets pass once; repeats and packets older
// than the window do not; the window slides by 1, by more than 64 and by
// more than its size.
func TestReplayWindow(t *testing.T) {
	var w replayWin
	steps := []struct {
		pn    uint64
		fresh bool
	}{
		{5, true}, {5, false}, {3, true}, {3, false}, {6, true}, {4, true}, {5, false},
		{100, true}, {7, true}, {6, false}, {2, true}, {100, false}, {99, true}, {36, true}, {37, true},
		{300, true}, {172, false}, {173, true}, {100, false}, {299, true}, {299, false}, {301, true}, {173, false}, {174, true},
	}
	for i, s := range steps {
		if got := w.fresh(s.pn); got != s.fresh {
			t.Fatalf("step %d: fresh(%d) = %v, want %v", i, s.pn, got, s.fresh)
		}
		if s.fresh {
			w.mark(s.pn)
		}
	}
}

// anet runs two endpoints (0 the client, 1 the server) over a simNet
// without checking what they send (sealed packets do not decode).
type anet struct {
	simNet
	app func(n *anet)
}

var authKey = []byte("0123456789abcdef0123456789abcdef")

func newAnet(t testing.TB, path pathModel, srv EndpointConfig) *anet {
	n := &anet{simNet: newSimNet(t, 7, path, path)}
	n.simNet.send = func(from int, b []byte, cp ecn.Codepoint) { n.carry(from, n.addrs[from], b, cp) }
	n.eps[0] = NewEndpoint(EndpointConfig{Rand: rand.New(rand.NewPCG(7, 3))})
	srv.Server, srv.Rand = true, rand.New(rand.NewPCG(7, 4))
	n.eps[1] = NewEndpoint(srv)
	return n
}

// keyring is a server's PSK lookup holding authKey as "k1".
func keyring(name string) []byte {
	if name == "k1" {
		return authKey
	}
	return nil
}

func (n *anet) run(limit time.Duration, done func() bool) bool {
	end := n.now.Add(limit)
	for {
		if n.app != nil {
			n.app(n)
		}
		n.flush()
		if done() {
			return true
		}
		if !n.advance(end) {
			return false
		}
	}
}

// serve accepts the server's connection into *srv once it exists, reads
// everything it holds into buf and, at EOF, closes its write side; it
// reports whether the connection exists.
func (n *anet) serve(srv **Conn, buf []byte) bool {
	if *srv == nil {
		*srv = n.eps[1].Accept()
	}
	if *srv == nil {
		return false
	}
	for (*srv).Read(buf) > 0 {
	}
	if (*srv).EOF() {
		(*srv).CloseWrite(n.now)
	}
	return true
}

// transfer sends size bytes from a client dialled with cfg to the server,
// which reads and closes; it returns both ends once done (or at limit).
func (n *anet) transfer(cfg Config, size int64, limit time.Duration) (cli, srv *Conn) {
	cli, err := n.eps[0].Dial(n.now, n.addrs[1], cfg)
	if err != nil {
		n.t.Fatal(err)
	}
	cli.SetSource(NewPatternSource(42), size)
	buf := make([]byte, 64<<10)
	n.app = func(n *anet) { n.serve(&srv, buf) }
	n.run(limit, func() bool { return cli.Done() && (srv == nil || srv.Done()) })
	return cli, srv
}

// TestAuthTransfer: an authenticated transfer over a lossy path completes
// verified, with the MSS 16 bytes smaller and nothing failing
// authentication; with Encrypt no stream byte is readable on the wire.
func TestAuthTransfer(t *testing.T) {
	for _, encrypt := range []bool{false, true} {
		t.Run(fmt.Sprintf("encrypt=%v", encrypt), func(t *testing.T) { testAuthTransfer(t, encrypt) })
	}
}

func testAuthTransfer(t *testing.T, encrypt bool) {
	path := pathModel{Delay: 10 * time.Millisecond, Rate: 20e6, QueueBytes: 60_000, Loss: 0.01}
	n := newAnet(t, path, EndpointConfig{PSK: keyring})
	pattern := make([]byte, 64)
	NewPatternSource(42).Fill(100_000, pattern)
	readable := 0
	n.deliver = func(from int, _ netip.AddrPort, b []byte) bool {
		if bytes.Contains(b, pattern[:16]) {
			readable++
		}
		return true
	}
	cli, srv := n.transfer(Config{PSK: authKey, PSKName: "k1", Encrypt: encrypt}, 1<<20, time.Minute)
	if encrypt == (readable > 0) {
		t.Errorf("encrypt %v: %d datagrams with readable stream bytes", encrypt, readable)
	}
	if srv == nil || !cli.Done() || !srv.Done() || cli.Err() != nil || srv.Err() != nil {
		t.Fatalf("transfer: client err %v, server %v", cli.Err(), srv)
	}
	cs, ss := cli.Stats(), srv.Stats()
	if cs.SentDigest != ss.RecvDigest {
		t.Error("digests differ")
	}
	if !cs.Authenticated || !ss.Authenticated {
		t.Errorf("authenticated: client %v server %v, want both", cs.Authenticated, ss.Authenticated)
	}
	if got, want := cs.MSS, SegmentSize(DefaultMaxDatagram)-TagLen; got != want {
		t.Errorf("MSS %d, want %d", got, want)
	}
	if cs.AuthFailed+ss.AuthFailed+cs.Replayed+ss.Replayed != 0 {
		t.Errorf("auth failures %d/%d, replays %d/%d on an honest path", cs.AuthFailed, ss.AuthFailed, cs.Replayed, ss.Replayed)
	}
}

// TestAuthInjectReplay: during an authenticated transfer, a replayed
// datagram, a forged one (a fresh packet number, a changed byte) and an
// unauthenticated CLOSE are dropped and counted; the transfer completes.
func TestAuthInjectReplay(t *testing.T) {
	n := newAnet(t, pathModel{Delay: 5 * time.Millisecond, Rate: 20e6, QueueBytes: 60_000}, EndpointConfig{PSK: keyring})
	var captured [][]byte
	n.deliver = func(from int, _ netip.AddrPort, b []byte) bool {
		if from == 0 && b[1] == byte(typeShort) && len(captured) < 50 {
			captured = append(captured, append([]byte(nil), b...))
		}
		return true
	}
	cli, err := n.eps[0].Dial(n.now, n.addrs[1], Config{PSK: authKey, PSKName: "k1"})
	if err != nil {
		t.Fatal(err)
	}
	cli.SetSource(NewPatternSource(42), 2<<20)
	var srv *Conn
	buf := make([]byte, 64<<10)
	injected := false
	n.app = func(n *anet) {
		if !n.serve(&srv, buf) {
			return
		}
		if !injected && len(captured) == 50 {
			injected = true
			for _, b := range captured[10:20] {
				n.eps[1].Receive(n.now, n.addrs[0], ecn.NotECT, b) // replays
			}
			forged := append([]byte(nil), captured[30]...)
			forged[11] = 0x7f // a fresh one-byte packet number (127)
			forged[len(forged)-1] ^= 1
			n.eps[1].Receive(n.now, n.addrs[0], ecn.NotECT, forged)
			p := packet{typ: typeShort, dcid: cli.localCID, flags: flagCLOSE, pn: 500}
			c := make([]byte, 64)
			n.eps[0].Receive(n.now, n.addrs[1], ecn.NotECT, c[:encodePacket(c, &p)])
		}
	}
	if !n.run(time.Minute, func() bool { return cli.Done() && srv != nil && srv.Done() }) || cli.Err() != nil || srv.Err() != nil {
		t.Fatalf("transfer did not complete: client %v", cli.Err())
	}
	cs, ss := cli.Stats(), srv.Stats()
	if got, want := ss.Replayed, uint64(10); got != want {
		t.Errorf("server Replayed = %d, want %d", got, want)
	}
	if got, want := ss.AuthFailed, uint64(1); got != want {
		t.Errorf("server AuthFailed = %d, want %d", got, want)
	}
	if got, want := cs.AuthFailed, uint64(1); got != want {
		t.Errorf("client AuthFailed = %d (the forged CLOSE), want %d", got, want)
	}
	if es := n.eps[1].Stats(); es.Rejects[RejectReplay] != 10 || es.Rejects[RejectAuth] != 1 {
		t.Errorf("server rejects replayed %d auth_failed %d, want 10 and 1", es.Rejects[RejectReplay], es.Rejects[RejectAuth])
	}
	if cs.SentDigest != ss.RecvDigest {
		t.Error("digests differ")
	}
}

// TestAuthHandshakeRefusals: what a client ends with when the two ends'
// keys disagree or an attacker strips the authentication on the path.
func TestAuthHandshakeRefusals(t *testing.T) {
	strip := func(typ packetType, truncate int) func(int, netip.AddrPort, []byte) bool {
		return func(_ int, _ netip.AddrPort, b []byte) bool {
			if packetType(b[1]) != typ {
				return true
			}
			var p packet
			if decodePacket(b, &p) == RejectNone {
				_, off := varintAt(b, 22+4*boolInt(typ == typeAccept))
				_, off = varintAt(b, off)
				b[off] &^= hsAuth
			}
			return true
		}
	}
	cases := []struct {
		name     string
		cli      Config
		srv      EndpointConfig
		deliver  func(int, netip.AddrPort, []byte) bool
		want     error
		truncate bool
	}{
		{"no key, key required", Config{}, EndpointConfig{PSK: keyring}, nil, ErrAuthRequired, false},
		{"wrong key", Config{PSK: []byte("another key of 16+ bytes"), PSKName: "k1"}, EndpointConfig{PSK: keyring}, nil, ErrAuthRequired, false},
		{"unknown key name", Config{PSK: authKey, PSKName: "k2"}, EndpointConfig{PSK: keyring}, nil, ErrAuthRequired, false},
		{"Initial stripped, key required", Config{PSK: authKey, PSKName: "k1"}, EndpointConfig{PSK: keyring}, strip(typeInitial, 0), ErrAuthRequired, false},
		{"Initial stripped, unauthenticated allowed", Config{PSK: authKey, PSKName: "k1"}, EndpointConfig{PSK: keyring, AllowUnauthenticated: true}, strip(typeInitial, 0), ErrAuthDowngrade, false},
		{"server without keys", Config{PSK: authKey, PSKName: "k1"}, EndpointConfig{}, nil, ErrAuthDowngrade, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := newAnet(t, pathModel{Delay: 5 * time.Millisecond}, c.srv)
			n.deliver = c.deliver
			cli, _ := n.transfer(c.cli, 10_000, 20*time.Second)
			if !errors.Is(cli.Err(), c.want) {
				t.Errorf("client err %v, want %v", cli.Err(), c.want)
			}
		})
	}
	// Unauthenticated clients are served beside authenticated ones when
	// allowed.
	n := newAnet(t, pathModel{Delay: 5 * time.Millisecond}, EndpointConfig{PSK: keyring, AllowUnauthenticated: true})
	if cli, srv := n.transfer(Config{}, 10_000, 20*time.Second); cli.Err() != nil || srv == nil || srv.Stats().Authenticated {
		t.Errorf("unauthenticated client with AllowUnauthenticated: err %v", cli.Err())
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestAuthPathHijack: an on-path attacker that withholds a client's
// packets and forwards them from its own address gets only sealed path
// challenges it cannot answer: the connection does not move to it, and a
// challenge's data is not on the wire in clear.
func TestAuthPathHijack(t *testing.T) {
	n := newAnet(t, pathModel{Delay: 5 * time.Millisecond, Rate: 20e6, QueueBytes: 60_000}, EndpointConfig{PSK: keyring})
	evil := netip.MustParseAddrPort("198.51.100.7:666")
	hijack, stolen := false, 0
	n.deliver = func(from int, to netip.AddrPort, b []byte) bool {
		if to == evil {
			stolen++
			return false
		}
		if hijack && from == 0 && b[1] == byte(typeShort) {
			n.eps[1].Receive(n.now, evil, ecn.NotECT, append([]byte(nil), b...))
			return false
		}
		return true
	}
	cli, err := n.eps[0].Dial(n.now, n.addrs[1], Config{PSK: authKey, PSKName: "k1"})
	if err != nil {
		t.Fatal(err)
	}
	cli.SetSource(NewPatternSource(42), 1<<20)
	var srv *Conn
	buf := make([]byte, 64<<10)
	n.app = func(n *anet) {
		if n.serve(&srv, buf) {
			hijack = srv.Stats().BytesReceived > 100_000 && srv.Stats().BytesReceived < 300_000
		}
	}
	n.run(time.Minute, func() bool { return srv != nil && srv.Stats().BytesReceived >= 300_000 })
	if srv == nil || srv.Peer() != n.addrs[0] {
		t.Fatalf("server conn moved to %v", srv.Peer())
	}
	if stolen == 0 || srv.Stats().PathChallenges == 0 {
		t.Errorf("stolen datagrams %d, challenges %d: the attack did not run", stolen, srv.Stats().PathChallenges)
	}
}

// TestAuthDgram: an authenticated datagram-mode flow delivers, with the
// largest payload 16 bytes smaller.
func TestAuthDgram(t *testing.T) {
	n := newAnet(t, pathModel{Delay: 5 * time.Millisecond, Rate: 20e6, QueueBytes: 60_000}, EndpointConfig{PSK: keyring})
	cli, srv, got := runAuthDgram(t, n, 500)
	if got < 500 {
		t.Fatalf("received %d datagrams, want 500 (client err %v)", got, cli.Err())
	}
	if want := DefaultMaxDatagram - maxDgramOverhead - TagLen; cli.MaxPayload() != want {
		t.Errorf("MaxPayload %d, want %d", cli.MaxPayload(), want)
	}
	if !cli.Stats().Authenticated || !srv.Stats().Authenticated || srv.Stats().AuthFailed != 0 {
		t.Errorf("stats: client %+v", cli.Stats())
	}
	// A replayed datagram is dropped and counted.
	var data []byte
	n.deliver = func(from int, _ netip.AddrPort, b []byte) bool {
		if from == 0 && data == nil && b[1] == byte(typeDgram) {
			data = append([]byte(nil), b...)
		}
		return true
	}
	n.run(100*time.Millisecond, func() bool { return data != nil })
	n.run(100*time.Millisecond, func() bool { return false })
	n.eps[1].Receive(n.now, n.addrs[0], ecn.NotECT, data)
	if got := srv.Stats().Replayed; got != 1 {
		t.Errorf("Replayed = %d, want 1", got)
	}
}

// runAuthDgram dials an authenticated datagram-mode connection over n
// and runs until the server has received want datagrams (or 2 s).
func runAuthDgram(t *testing.T, n *anet, want int) (cli, srv *DgramConn, got int) {
	cli, err := n.eps[0].DialDgram(n.now, n.addrs[1], DgramConfig{PSK: authKey, PSKName: "k1"})
	if err != nil {
		t.Fatal(err)
	}
	cli.SetSource(n.now, &seqSource{size: 2000})
	buf := make([]byte, 65536)
	n.app = func(n *anet) {
		if srv == nil {
			srv = n.eps[1].AcceptDgram()
		}
		for srv != nil {
			if _, ok := srv.Recv(buf); !ok {
				break
			}
			got++
		}
	}
	n.run(2*time.Second, func() bool { return got >= want })
	return cli, srv, got
}

// FuzzAuthEndpoint feeds arbitrary datagrams, addressed to an
// authenticated connection mid-transfer (its server end, or its client end
// when byte 10 has its high bit set), to both endpoints: nothing may
// panic, no such datagram may pass authentication, and the transfer must
// still complete verified.
func FuzzAuthEndpoint(f *testing.F) {
	for _, b := range seedPackets() {
		f.Add(b)
	}
	// The sealed Path layout (pn after the dcid, the tag last) of a size
	// probe padded to 1500 bytes and of a probe acknowledgement.
	for _, sz := range []int{1500, pathLen + 1 + TagLen} {
		b := make([]byte, sz)
		typ := byte(pathPMTUProbe)
		if sz < 1500 {
			typ = pathPMTUAck
		}
		encodePath(b, 0, typ, 1)
		copy(b[2+cidLen+1:], b[2+cidLen:pathLen])
		b[2+cidLen] = 5
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		n := newAnet(t, pathModel{Delay: time.Millisecond, Rate: 50e6, QueueBytes: 60_000}, EndpointConfig{PSK: keyring})
		cli, err := n.eps[0].Dial(n.now, n.addrs[1], Config{PSK: authKey, PSKName: "k1"})
		if err != nil {
			t.Fatal(err)
		}
		cli.SetSource(NewPatternSource(1), 200_000)
		var srv *Conn
		buf := make([]byte, 64<<10)
		fed := false
		n.app = func(n *anet) {
			if !n.serve(&srv, buf) {
				return
			}
			if !fed && srv.Stats().BytesReceived > 50_000 {
				fed = true
				d := append([]byte(nil), b...)
				if len(d) >= 2+cidLen {
					cid := srv.localCID
					if len(d) > 10 && d[10]&0x80 != 0 {
						cid = cli.localCID
					}
					for i := range 8 {
						d[2+i] = byte(cid >> (56 - 8*i))
					}
				}
				for _, from := range []netip.AddrPort{n.addrs[0], n.addrs[1], netip.MustParseAddrPort("192.0.2.99:1")} {
					n.eps[1].Receive(n.now, from, ecn.NotECT, append([]byte(nil), d...))
					n.eps[0].Receive(n.now, from, ecn.NotECT, append([]byte(nil), d...))
				}
			}
		}
		if !n.run(time.Minute, func() bool { return cli.Done() && srv != nil && srv.Done() }) || cli.Err() != nil || srv.Err() != nil {
			t.Fatalf("transfer did not complete: client %v", cli.Err())
		}
		if cli.Stats().SentDigest != srv.Stats().RecvDigest {
			t.Fatal("digests differ")
		}
	})
}
