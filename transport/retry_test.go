package transport

import (
	"bytes"
	"math/rand/v2"
	"net/netip"
	"testing"
	"time"

	"cclab/clock"
	"cclab/ecn"
)

// initialBytes encodes a padded Initial (1200 bytes) with the given CIDs
// and token.
func initialBytes(dcid, scid uint64, token []byte) []byte {
	p := packet{typ: typeInitial, dcid: dcid, scid: scid, ts: 5, maxDatagram: 1200, recvWindow: 1 << 20, token: token}
	b := make([]byte, 1200)
	return b[:encodePacket(b, &p)]
}

// drainAll transmits until nothing is left and decodes what was sent.
func drainAll(t *testing.T, ep *Endpoint, now clock.Time) (out []packet, to []netip.AddrPort, sizes []int) {
	buf := make([]byte, 65536)
	for {
		n, a, _ := ep.Transmit(now, buf)
		if n == 0 {
			return
		}
		var p packet
		if r := decodePacket(buf[:n], &p); r != RejectNone {
			t.Fatalf("sent an undecodable datagram: %v", r)
		}
		p.token = append([]byte(nil), p.token...)
		out, to, sizes = append(out, p), append(to, a), append(sizes, n)
	}
}

// TestRetry: an Initial without a valid token creates nothing and is
// answered by one Retry, smaller than the Initial, to its source; the
// token works only for that address and those CIDs, within its lifetime,
// under the current or the previous key.
func TestRetry(t *testing.T) {
	now := clock.Start
	ep := NewEndpoint(EndpointConfig{Server: true, Rand: rand.New(rand.NewPCG(3, 3))})
	client := netip.MustParseAddrPort("198.51.100.7:40000")
	other := netip.MustParseAddrPort("203.0.113.5:40000")
	ini := initialBytes(0x99, 0x12, nil)
	ep.Receive(now, client, ecn.NotECT, ini)
	out, to, sizes := drainAll(t, ep, now)
	if len(out) != 1 || out[0].typ != typeRetry || to[0] != client || sizes[0] > len(ini) {
		t.Fatalf("reply to a tokenless Initial: %d datagrams; want one Retry to %v of <= %d bytes", len(out), client, len(ini))
	}
	if out[0].dcid != 0x12 || out[0].odcid != 0x99 {
		t.Errorf("Retry dcid %x odcid %x, want 12 and 99", out[0].dcid, out[0].odcid)
	}
	if len(ep.Conns()) != 0 || len(ep.byInitial) != 0 || len(ep.perSource) != 0 || ep.Accept() != nil {
		t.Fatalf("state kept for an unvalidated Initial: %d conns", len(ep.Conns()))
	}
	token := out[0].token
	cases := []struct {
		name       string
		from       netip.AddrPort
		dcid, scid uint64
		token      []byte
		after      time.Duration
		ok         bool
	}{
		{"other address", other, 0x99, 0x12, token, 0, false},
		{"other port", netip.AddrPortFrom(client.Addr(), 40001), 0x99, 0x12, token, 0, false},
		{"other scid", client, 0x99, 0x13, token, 0, false},
		{"other dcid", client, 0x98, 0x12, token, 0, false},
		{"forged MAC", client, 0x99, 0x12, append(append([]byte(nil), token[:tokenLen-1]...), token[tokenLen-1]^1), 0, false},
		{"short", client, 0x99, 0x12, token[:tokenLen-1], 0, false},
		{"expired", client, 0x99, 0x12, token, DefaultTokenLifetime + time.Millisecond, false},
		{"valid", client, 0x99, 0x12, token, DefaultTokenLifetime / 2, true},
	}
	for _, tc := range cases {
		ep := NewEndpoint(EndpointConfig{Server: true, Rand: rand.New(rand.NewPCG(3, 3))})
		ep.Receive(now, client, ecn.NotECT, ini) // the same key stream: the same token
		drainAll(t, ep, now)
		ep.Receive(now.Add(tc.after), tc.from, ecn.NotECT, initialBytes(tc.dcid, tc.scid, tc.token))
		got := ep.Accept() != nil
		if got != tc.ok {
			t.Errorf("%s: accepted %v, want %v (rejects %v)", tc.name, got, tc.ok, ep.Stats().Rejects)
		}
		out, to, _ := drainAll(t, ep, now.Add(tc.after))
		if !tc.ok && (len(out) != 1 || out[0].typ != typeRetry || to[0] != tc.from || ep.Stats().Rejects[RejectToken] != 1) {
			t.Errorf("%s: %d replies, rejects %v; want one fresh Retry and one bad_token", tc.name, len(out), ep.Stats().Rejects)
		}
	}
	// Key rotation: a token minted just before the key changes is valid
	// after it (previous key), one under a key two generations old is not.
	m := newTokenMinter(rand.NewChaCha8([32]byte{1}), time.Second, clock.Start)
	var b1, b2 [tokenLen]byte
	t1 := m.mint(clock.Start.Add(900*time.Millisecond), client, 1, 2, b1[:])
	if !m.valid(clock.Start.Add(1500*time.Millisecond), client, 1, 2, t1) {
		t.Errorf("token under the previous key refused")
	}
	t2 := m.mint(clock.Start.Add(1600*time.Millisecond), client, 1, 2, b2[:])
	if !m.valid(clock.Start.Add(1700*time.Millisecond), client, 1, 2, t2) {
		t.Errorf("fresh token refused")
	}
	m.rotate(clock.Start.Add(2600 * time.Millisecond))
	m.rotate(clock.Start.Add(3700 * time.Millisecond))
	if m.valid(clock.Start.Add(3700*time.Millisecond), client, 1, 2, t1) {
		t.Errorf("token accepted two keys later")
	}
}

// TestSpoofedInitialFlood: 5,000 Initials from 5,000 spoofed addresses (a
// full connection table and 5,000 log lines on a server without address
// validation) create nothing, draw at most 1x their bytes in Retries, and a
// real client then connects and transfers.
func TestSpoofedInitialFlood(t *testing.T) {
	h := newHarness(t, 21, pathModel{Delay: 5 * time.Millisecond}, pathModel{Delay: 5 * time.Millisecond}, Config{})
	srv := h.eps[1]
	for i := 0; i < 5000; i++ {
		from := netip.AddrPortFrom(netip.AddrFrom4([4]byte{100, byte(i >> 16), byte(i >> 8), byte(i)}), 1024)
		srv.Receive(h.now, from, ecn.NotECT, initialBytes(uint64(i)+1, uint64(i)+7, nil))
		drainAll(t, srv, h.now) // the Retries go to the spoofed addresses
	}
	st := srv.Stats()
	if len(srv.Conns()) != 0 || srv.Accept() != nil {
		t.Fatalf("flood created %d connections", len(srv.Conns()))
	}
	if st.BytesOut > st.BytesIn || st.RetriesSent != 5000 {
		t.Errorf("flood: %d bytes out for %d in, %d Retries; want <= 1x and 5000", st.BytesOut, st.BytesIn, st.RetriesSent)
	}
	t.Logf("reflection ratio %.3f (%d Retry bytes for %d Initial bytes)", float64(st.BytesOut)/float64(st.BytesIn), st.BytesOut, st.BytesIn)
	cli, s, ok := h.transfer(200_000, time.Minute)
	if !ok {
		t.Fatal("real client could not connect after the flood")
	}
	checkTransfer(t, cli, s, 200_000, 0)
}

// FuzzRetryToken: checking any token bytes never panics, and only the
// token or the cookie minted for that address, those CIDs and within its
// lifetime is accepted, as what it is (a forged one would need the HMAC
// key).
func FuzzRetryToken(f *testing.F) {
	f.Add(make([]byte, tokenLen), uint16(40000))
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 1}, uint16(1))
	f.Add(append([]byte{cookieKind}, make([]byte, tokenLen)...), uint16(40000))
	f.Fuzz(func(t *testing.T, tok []byte, port uint16) {
		m := newTokenMinter(rand.NewChaCha8([32]byte{7}), DefaultTokenLifetime, clock.Start)
		from := netip.AddrPortFrom(netip.MustParseAddr("198.51.100.7"), port)
		now := clock.Start.Add(time.Second)
		var b, c [cookieLen]byte
		good := m.mint(now, from, 1, 2, b[:])
		cookie := m.mintCookie(now, from, 1, 2, c[:])
		want := tokenNone
		switch {
		case bytes.Equal(tok, good):
			want = tokenRetry
		case bytes.Equal(tok, cookie):
			want = tokenCookie
		}
		if got := m.check(now, from, 1, 2, tok); got != want {
			t.Fatalf("token %x: kind %d, want %d (minted %x, cookie %x)", tok, got, want, good, cookie)
		}
	})
}

// TestClientRetryBound: a client follows MaxRetries Retries of its
// handshake, the longest legitimate sequence (token, cookie, and both again
// after a re-validation), each with its Initial sent again at once with
// that token; one more is ignored (counted unexpected) and draws nothing,
// as is a Retry for another Initial.
func TestClientRetryBound(t *testing.T) {
	now := clock.Start
	srv := netip.MustParseAddrPort("192.0.2.1:5201")
	ep := NewEndpoint(EndpointConfig{Rand: rand.New(rand.NewPCG(5, 5))})
	if _, err := ep.Dial(now, srv, Config{}); err != nil {
		t.Fatal(err)
	}
	out, _, _ := drainAll(t, ep, now)
	if len(out) != 1 || out[0].typ != typeInitial {
		t.Fatalf("dial sent %d datagrams, want one Initial", len(out))
	}
	ini := out[0]
	cookie := append([]byte{cookieKind}, bytes.Repeat([]byte{7}, tokenLen)...)
	token := bytes.Repeat([]byte{3}, tokenLen)
	retry := func(odcid uint64, tok []byte) []byte {
		b := make([]byte, 128)
		return b[:encodePacket(b, &packet{typ: typeRetry, dcid: ini.scid, odcid: odcid, token: tok})]
	}
	ep.Receive(now, srv, ecn.NotECT, retry(ini.dcid+1, token))
	if out, _, _ := drainAll(t, ep, now); len(out) != 0 {
		t.Errorf("a Retry for another Initial drew %d datagrams, want none", len(out))
	}
	for i := range MaxRetries + 1 {
		tok := append([]byte(nil), [][]byte{token, cookie}[i%2]...)
		tok[len(tok)-1] = byte(i) // a different token each time
		ep.Receive(now, srv, ecn.NotECT, retry(ini.dcid, tok))
		out, _, _ := drainAll(t, ep, now)
		got := len(out) == 1 && out[0].typ == typeInitial && bytes.Equal(out[0].token, tok)
		if want := i < MaxRetries; got != want {
			t.Errorf("Retry %d: Initial sent again with its token %v, want %v (%d datagrams)", i+1, got, want, len(out))
		}
	}
	if got, want := ep.Stats().Rejects[RejectUnexpected], uint64(2); got != want {
		t.Errorf("unexpected rejects = %d, want %d (the other Initial's Retry and the one over the bound)", got, want)
	}
}
