package transport

import (
	"fmt"
	"net/netip"
	"testing"
	"time"

	"cclab/ecn"
)

// fillHalfOpen opens k half-open connections at server endpoint ep from
// fresh addresses (192.0.2.x, each with a valid Retry token) and discards
// the Accepts.
func fillHalfOpen(t *testing.T, n *anet, k int) {
	ep := n.eps[1]
	for i := range k {
		from := netip.MustParseAddrPort(fmt.Sprintf("192.0.2.%d:9000", i+1))
		dcid, scid := uint64(0x100+i), uint64(0x200+i)
		var tok [tokenLen]byte
		ep.Receive(n.now, from, ecn.NotECT, initialBytes(dcid, scid, ep.tokens.mint(n.now, from, scid, dcid, tok[:])))
	}
	drainAll(t, ep, n.now)
	for ep.Accept() != nil { // the application never sees them
	}
	if got := ep.Stats().HalfOpen; got != k {
		t.Fatalf("half-open after the fill = %d, want %d", got, k)
	}
}

// TestStatelessFallback: with the half-open table full, a handshake
// (plain, authenticated, encrypted; stream and datagram mode) completes by
// the stateless fallback: a Retry with a cookie, then the connection from
// the Initial that returns it, never counted half-open; the transfer
// verifies and the table does not grow.
func TestStatelessFallback(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{"plain", Config{}},
		{"psk", Config{PSK: authKey, PSKName: "k1"}},
		{"psk-encrypt", Config{PSK: authKey, PSKName: "k1", Encrypt: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const full = 4
			srvCfg := EndpointConfig{MaxHalfOpen: full}
			if tc.cfg.PSK != nil {
				srvCfg.PSK, srvCfg.AllowUnauthenticated = keyring, true // the fill is unauthenticated
			}
			n := newAnet(t, pathModel{Delay: 10 * time.Millisecond, Rate: 20e6, QueueBytes: 60_000}, srvCfg)
			n.deliver = func(from int, to netip.AddrPort, _ []byte) bool { return from == 0 || to == n.addrs[0] }
			fillHalfOpen(t, n, full)
			peak := 0
			n.beforeTransmit = func(int) { peak = max(peak, n.eps[1].Stats().HalfOpen) }
			cli, srv := n.transfer(tc.cfg, 1<<20, 30*time.Second)
			if srv == nil || cli.Err() != nil || srv.Err() != nil || cli.Stats().SentDigest != srv.Stats().RecvDigest {
				t.Fatalf("transfer with a full half-open table: client done %v err %v, server %v", cli.Done(), cli.Err(), srvState(srv))
			}
			st := n.eps[1].Stats()
			if st.CookiesSent != 1 || st.StatelessAccepts != 1 || !srv.stateless {
				t.Errorf("cookies sent %d, stateless accepts %d (server conn stateless %v), want 1, 1, true", st.CookiesSent, st.StatelessAccepts, srv.stateless)
			}
			if peak != full {
				t.Errorf("half-open peaked at %d, want %d (the table must not grow)", peak, full)
			}
			if tc.cfg.PSK != nil && (!cli.Stats().Authenticated || !srv.Stats().Authenticated) {
				t.Errorf("authenticated: client %v, server %v", cli.Stats().Authenticated, srv.Stats().Authenticated)
			}
		})
	}
}

// TestStatelessFallbackDgram: the same for a datagram-mode connection.
func TestStatelessFallbackDgram(t *testing.T) {
	n := newAnet(t, pathModel{Delay: 5 * time.Millisecond, Rate: 20e6, QueueBytes: 60_000}, EndpointConfig{PSK: keyring, AllowUnauthenticated: true, MaxHalfOpen: 2})
	n.deliver = func(from int, to netip.AddrPort, _ []byte) bool { return from == 0 || to == n.addrs[0] }
	fillHalfOpen(t, n, 2)
	cli, srv, got := runAuthDgram(t, n, 200)
	st := n.eps[1].Stats()
	if got < 200 || !srv.stateless || st.StatelessAccepts != 1 || st.HalfOpen != 2 {
		t.Fatalf("received %d datagrams (client err %v), stateless accepts %d, half-open %d; want 200, 1, 2", got, cli.Err(), st.StatelessAccepts, st.HalfOpen)
	}
	if !srv.Stats().Authenticated || srv.Stats().AuthFailed != 0 {
		t.Errorf("server stats %+v, want authenticated, no failures", srv.Stats())
	}
}

// TestStatelessCookieRefused: a forged, expired, or elsewhere replayed
// cookie creates nothing and is counted bad_cookie (and answered by a
// fresh Retry); the genuine one admits the connection once, and its replay
// from the same address creates no second one.
func TestStatelessCookieRefused(t *testing.T) {
	n := newAnet(t, pathModel{}, EndpointConfig{MaxHalfOpen: 1})
	ep := n.eps[1]
	fillHalfOpen(t, n, 1)
	client := netip.MustParseAddrPort("198.51.100.7:40000")
	other := netip.MustParseAddrPort("198.51.100.8:40000")
	var tok [tokenLen]byte
	ep.Receive(n.now, client, ecn.NotECT, initialBytes(0x99, 0x12, ep.tokens.mint(n.now, client, 0x12, 0x99, tok[:])))
	out, to, _ := drainAll(t, ep, n.now)
	if len(out) != 1 || out[0].typ != typeRetry || to[0] != client || len(out[0].token) != cookieLen || out[0].token[0] != cookieKind {
		t.Fatalf("answer to a token Initial with the half-open table full: %+v; want one Retry with a cookie", out)
	}
	if len(ep.Conns()) != 1 || ep.Stats().HalfOpen != 1 {
		t.Fatalf("state kept for the stateless answer: %d conns, %d half-open", len(ep.Conns()), ep.Stats().HalfOpen)
	}
	cookie := out[0].token
	forged := append([]byte(nil), cookie...)
	forged[len(forged)-1] ^= 1
	for i, c := range []struct {
		what string
		from netip.AddrPort
		tok  []byte
		late time.Duration
	}{
		{"forged", client, forged, 0},
		{"replayed from another address", other, cookie, 0},
		{"expired", client, cookie, DefaultTokenLifetime + time.Millisecond},
	} {
		ep.Receive(n.now.Add(c.late), c.from, ecn.NotECT, initialBytes(0x99, 0x12, c.tok))
		out, _, _ := drainAll(t, ep, n.now.Add(c.late))
		if len(ep.Conns()) != 1 {
			t.Fatalf("%s cookie admitted a connection", c.what)
		}
		if got, want := ep.Stats().Rejects[RejectCookie], uint64(i+1); got != want {
			t.Errorf("%s cookie: bad_cookie = %d, want %d", c.what, got, want)
		}
		if len(out) != 1 || out[0].typ != typeRetry || len(out[0].token) != tokenLen {
			t.Errorf("%s cookie answered by %+v, want one Retry with a fresh token", c.what, out)
		}
	}
	ini := initialBytes(0x99, 0x12, cookie)
	ep.Receive(n.now, client, ecn.NotECT, ini)
	if out, _, _ := drainAll(t, ep, n.now); len(ep.Conns()) != 2 || len(out) != 1 || out[0].typ != typeAccept {
		t.Fatalf("genuine cookie: %d conns, answers %+v; want a second conn and its Accept", len(ep.Conns()), out)
	}
	st := ep.Stats()
	if st.StatelessAccepts != 1 || st.HalfOpen != 1 {
		t.Errorf("stateless accepts %d, half-open %d; want 1, 1", st.StatelessAccepts, st.HalfOpen)
	}
	ep.Receive(n.now, client, ecn.NotECT, ini)
	drainAll(t, ep, n.now)
	if len(ep.Conns()) != 2 || ep.Stats().StatelessAccepts != 1 {
		t.Errorf("replayed cookie Initial: %d conns, %d stateless accepts; want no second connection", len(ep.Conns()), ep.Stats().StatelessAccepts)
	}
}

// srvState describes a server connection for a failure message.
func srvState(c *Conn) string {
	if c == nil {
		return "never accepted"
	}
	return fmt.Sprintf("done %v err %v, %d bytes received", c.Done(), c.Err(), c.Stats().BytesReceived)
}
