package perf

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"net/netip"
	"strings"
	"testing"
	"time"

	"cclab/transport"
	"cclab/transport/udp"
)

const (
	hexKeyA = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
	hexKeyB = "ff0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
)

func mustKeys(t *testing.T, s string) *Keys {
	t.Helper()
	k, err := ParseKeys([]byte(s))
	if err != nil {
		t.Fatalf("ParseKeys(%q): %v", s, err)
	}
	return k
}

// TestReverseAuth runs reverse flows against a receiver with a key: only a
// client that holds it is served, and each side says why it refused: the
// transport (the authenticated data path, authdata.go) for a client
// without the key, the challenge (auth.go) for an unauthenticated client
// of a receiver that allows those.
func TestReverseAuth(t *testing.T) {
	keyed, _ := startServer(t, ServerConfig{AllowReverse: true, Keys: mustKeys(t, "eth "+hexKeyA)})
	lax, _ := startServer(t, ServerConfig{AllowReverse: true, Keys: mustKeys(t, "eth "+hexKeyA), AllowUnauthenticated: true})
	open, _ := startServer(t, ServerConfig{AllowReverse: true})
	refusedAuth := func(s *Server) uint64 { return s.EndpointStats().RefusedAuth }
	for _, tc := range []struct {
		name    string
		srv     *Server
		keys    string // client's key file; "" none
		wantErr string // "" for a verified transfer
		counter func(*Server) uint64
	}{
		{"right key", keyed, "eth " + hexKeyA, "", func(s *Server) uint64 { return s.Stats().Reverse }},
		{"no key", keyed, "", "requires an authenticated connection", refusedAuth},
		{"unknown key name", keyed, "mit " + hexKeyA, "requires an authenticated connection", refusedAuth},
		{"wrong key", keyed, "eth " + hexKeyB, "-psk-file", refusedAuth},
		{"no key, unauthenticated allowed", lax, "", "requires a pre-shared key", func(s *Server) uint64 { return s.Stats().AuthFailed }},
		{"key, receiver without", open, "eth " + hexKeyA, "not authenticated", nil},
		{"loopback without keys", open, "", "", func(s *Server) uint64 { return s.Stats().Reverse }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := ClientConfig{Addr: tc.srv.Addr().String(), Bytes: 1 << 20, Reverse: true}
			if tc.keys != "" {
				cfg.Keys = mustKeys(t, tc.keys)
			}
			counter := tc.counter
			if counter == nil { // nothing to count: the client ends at the unauthenticated Accept
				counter = func(*Server) uint64 { return 0 }
			}
			before := counter(tc.srv)
			res, err := Run(context.Background(), cfg)
			if tc.wantErr == "" {
				if err != nil || !res.End.Verified || res.End.Bytes != 1<<20 {
					t.Fatalf("Run: got %v (result %+v), want a verified 1 MiB transfer", err, res)
				}
			} else if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Run: got error %v, want one containing %q", err, tc.wantErr)
			}
			if tc.counter == nil {
				return
			}
			// The server's counter moves once the refused flow is finished.
			deadline := time.Now().Add(10 * time.Second)
			for counter(tc.srv) == before && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if got, want := counter(tc.srv), before+1; got != want {
				t.Errorf("server counter: got %d, want %d", got, want)
			}
		})
	}
}

// authDial opens a connection with request and writes line on it, then
// closes its direction and returns what the server sends.
func authDial(t *testing.T, ep *udp.Endpoint, srv *Server, request, line []byte) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	psk, name := pskFor(srv.cfg.Keys)
	c, err := ep.Dial(ctx, srv.Addr(), transport.Config{Request: request, PSK: psk, PSKName: name})
	if err != nil {
		t.Fatal(err)
	}
	if line != nil {
		c.Write(line)
	}
	b, _ := readAll(c, 1<<20)
	c.CloseWrite()
	_ = c.Wait(ctx)
	return string(b)
}

// TestReverseAuthReplayAndForgery: a nonce works once; a replayed request
// and a request whose MAC is wrong get nothing but a refusal.
func TestReverseAuthReplayAndForgery(t *testing.T) {
	srv, _ := startServer(t, ServerConfig{AllowReverse: true, Keys: mustKeys(t, hexKeyA)})
	ep, err := udp.DialSocket(srv.Addr().String(), udp.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer ep.Close()
	cfg := ClientConfig{Addr: srv.Addr().String(), Bytes: 1000, Reverse: true, Keys: mustKeys(t, hexKeyA)}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	cfg.tc = cfg.newTransportConfig(ep.PathMaxPayload()) // as Run sets it
	peer := srv.Addr()
	ctx := context.Background()
	req := Request{V: Version, Reverse: true, Bytes: 1000, Seed: 7}
	line, err := authenticate(ctx, ep, peer, &cfg, &req)
	if err != nil {
		t.Fatalf("authenticate: %v", err)
	}
	// The genuine request is served: 1000 pattern bytes.
	if got := authDial(t, ep, srv, req.encode(), line); len(got) != 1000 || strings.HasPrefix(got, "{") {
		t.Fatalf("first use of the nonce: got %d bytes %.60q, want the 1000-byte stream", len(got), got)
	}
	// Replayed: the nonce is gone.
	if got := authDial(t, ep, srv, req.encode(), line); !strings.Contains(got, "used or expired challenge") {
		t.Errorf("replayed request: got %.200q, want a refusal naming the challenge", got)
	}
	// A fresh nonce with a MAC made with another key, and with the request
	// altered after the MAC was made (more bytes).
	for _, tamper := range []string{"key", "request"} {
		req := Request{V: Version, Reverse: true, Bytes: 1000, Seed: 7}
		line, err := authenticate(ctx, ep, peer, &cfg, &req)
		if err != nil {
			t.Fatalf("authenticate: %v", err)
		}
		switch tamper {
		case "key":
			sn, _ := decodeNonce(req.Nonce)
			other, _ := hex.DecodeString(hexKeyB)
			line = append(mustJSON(authLine{MAC: hex.EncodeToString(authMAC(other, labelReverse, sn, req.encode()))}), '\n')
		case "request":
			req.Bytes = 100000
		}
		got := authDial(t, ep, srv, req.encode(), line)
		var rep Report
		if json.Unmarshal([]byte(got), &rep) != nil || !strings.Contains(rep.Error, "wrong key") {
			t.Errorf("tampered %s: got %.200q, want a refusal saying wrong key", tamper, got)
		}
	}
}

// TestReverseCaps: requests beyond the server's caps are refused with the
// cap's flag named, before anything is sent.
func TestReverseCaps(t *testing.T) {
	allowed := []string{" Reno", "CUBIC "}
	srv, _ := startServer(t, ServerConfig{AllowReverse: true, MaxReverseBytes: 1 << 20,
		MaxReverseDuration: 2 * time.Second, ReverseCC: allowed})
	// The names are normalised for the server, not in the caller's slice.
	if got, want := strings.Join(allowed, ","), " Reno,CUBIC "; got != want {
		t.Errorf("caller's ReverseCC after NewServer: got %q, want %q (unchanged)", got, want)
	}
	for _, tc := range []struct {
		req  string
		want string
	}{
		{`{"v":3,"reverse":true,"bytes":2000000,"seed":1}`, "-max-reverse-bytes"},
		{`{"v":3,"reverse":true,"seconds":3,"seed":1}`, "-max-reverse-seconds"},
		{`{"v":3,"reverse":true,"bytes":1000,"cc":"vegas","seed":1}`, "-reverse-cc"},
		{`{"v":3,"reverse":true,"bytes":1000,"cc":"reno:iw=100","seed":1}`, "-reverse-cc-params"},
		{`{"v":3,"reverse":true,"bytes":1000,"cc":"reno:iw=100000","seed":1}`, "0..16384 packets"},
		{`{"v":3,"reverse":true,"bytes":1000,"min_rto_ms":0.001,"seed":1}`, "min_rto_ms"},
		{`{"v":3,"reverse":true,"bytes":1000,"nonce":"00","seed":1}`, "no pre-shared key"},
	} {
		before := srv.Stats()
		got := rawDial(t, srv, []byte(tc.req))
		var rep Report
		if err := json.Unmarshal([]byte(got), &rep); err != nil || !strings.Contains(rep.Error, tc.want) {
			t.Errorf("request %s: got %.200q, want a refusal naming %s", tc.req, got, tc.want)
		}
		after := srv.Stats()
		if after.BadParameters+after.AuthFailed != before.BadParameters+before.AuthFailed+1 {
			t.Errorf("request %s: refusal counters %+v -> %+v, want one more", tc.req, before, after)
		}
	}
	// Within the caps it is served.
	if got := rawDial(t, srv, []byte(`{"v":3,"reverse":true,"bytes":1000,"cc":"cubic","seed":1}`)); len(got) != 1000 {
		t.Errorf("request within the caps: got %d bytes %.80q, want 1000", len(got), got)
	}
}

func TestChallengeTable(t *testing.T) {
	var tab challenges
	now := time.Unix(1000, 0)
	a, b := netip.MustParseAddr("192.0.2.1"), netip.MustParseAddr("192.0.2.2")
	n1 := tab.issue(a, now)
	if tab.take(n1, b, now) {
		t.Errorf("take from another address: got true, want false")
	}
	n2 := tab.issue(a, now)
	if !tab.take(n2, a, now.Add(time.Second)) || tab.take(n2, a, now.Add(time.Second)) {
		t.Errorf("take twice: want true then false")
	}
	n3 := tab.issue(a, now)
	if tab.take(n3, a, now.Add(challengeTTL+time.Second)) {
		t.Errorf("take after the TTL: got true, want false")
	}
	for range 3 * maxChallenges {
		tab.issue(a, now)
	}
	if got := len(tab.m); got > maxChallenges {
		t.Errorf("table size after %d issues: got %d, want ≤ %d", 3*maxChallenges, got, maxChallenges)
	}
}
