package transport

import (
	"errors"
	"math/rand/v2"
	"net/netip"
	"testing"
	"time"

	"cclab/clock"
	"cclab/ecn"
)

// resetHarness is a harness whose server has a stateless-reset key and a
// transfer under way; rtt is its path's round-trip time.
func resetHarness(t *testing.T, key []byte) (h *harness, cli *Conn, rtt time.Duration) {
	const delay = 10 * time.Millisecond
	h = newHarness(t, 3, pathModel{Delay: delay, Rate: 20e6}, pathModel{Delay: delay}, Config{})
	h.eps[1] = NewEndpoint(EndpointConfig{Server: true, ResetKey: key, Rand: rand.New(rand.NewPCG(3, 4))})
	cli, err := h.eps[0].Dial(h.now, h.addrs[1], Config{Request: []byte("bulk")})
	if err != nil {
		t.Fatal(err)
	}
	cli.SetSource(NewPatternSource(1), 50<<20)
	var srv *Conn
	buf := make([]byte, 64<<10)
	h.app = func(h *harness) {
		if srv == nil {
			srv = h.eps[1].Accept()
		}
		if srv != nil && !srv.Done() {
			for srv.Read(buf) > 0 {
			}
		}
	}
	if !h.run(time.Second, func() bool { return srv != nil && srv.stats.PacketsReceived > 50 }) {
		t.Fatal("transfer did not start")
	}
	if !cli.hasResetTok {
		t.Fatal("the client has no stateless-reset token from the Accept")
	}
	return h, cli, 2 * delay
}

// TestStatelessResetRestart: a server restarted with the same key answers
// the client's next packets with a stateless reset, and the client ends at
// once (within 2 RTTs) with ErrStatelessReset; with another key the reset is
// not recognised (counted) and the client does not end by it.
func TestStatelessResetRestart(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	for _, tc := range []struct {
		name    string
		key     []byte
		wantErr bool
	}{{"same key", key, true}, {"other key", []byte("fedcba9876543210fedcba9876543210"), false}} {
		t.Run(tc.name, func(t *testing.T) {
			h, cli, rtt := resetHarness(t, key)
			h.app = nil
			h.eps[1] = NewEndpoint(EndpointConfig{Server: true, ResetKey: tc.key, Rand: rand.New(rand.NewPCG(9, 9))})
			start := h.now
			ended := h.run(2*rtt, cli.Done)
			if got := ended && errors.Is(cli.Err(), ErrStatelessReset); got != tc.wantErr {
				t.Fatalf("client ended by a stateless reset within 2 RTTs: %v (err %v), want %v", got, cli.Err(), tc.wantErr)
			}
			srv := h.eps[1].Stats()
			if srv.ResetsSent == 0 || srv.ResetsSent > resetBurst {
				t.Errorf("resets sent = %d, want 1..%d", srv.ResetsSent, resetBurst)
			}
			if !tc.wantErr && h.eps[0].Stats().Rejects[RejectReset] == 0 {
				t.Error("a reset under another key was not counted as unknown_reset")
			}
			t.Logf("ended %v after the restart; %d resets sent", h.now.Sub(start), srv.ResetsSent)
		})
	}
}

// TestForgedCloseEndsSender: one forged CLOSE (from the client's address,
// the server's CID sniffed) aborts the server's connection; the sender ends
// within 2 RTTs with ErrStatelessReset instead of retransmitting until its
// give-up time.
func TestForgedCloseEndsSender(t *testing.T) {
	h, cli, rtt := resetHarness(t, []byte("0123456789abcdef0123456789abcdef"))
	p := packet{typ: typeShort, dcid: cli.peerCID, flags: flagCLOSE, pn: 1 << 40}
	b := make([]byte, 64)
	h.eps[1].Receive(h.now, h.addrs[0], ecn.NotECT, b[:encodePacket(b, &p)])
	start := h.now
	if !h.run(2*rtt+10*time.Millisecond, cli.Done) || !errors.Is(cli.Err(), ErrStatelessReset) {
		t.Fatalf("sender after a forged CLOSE: done %v err %v (after %v), want ErrStatelessReset within 2 RTTs", cli.Done(), cli.Err(), h.now.Sub(start))
	}
	t.Logf("sender ended %v after the forged CLOSE", h.now.Sub(start))
}

// TestStatelessResetLimits: a Reset is never larger than its trigger, none
// is sent without a key, for a short trigger or beyond the rate limit, and
// its token depends on the key and the CID only.
func TestStatelessResetLimits(t *testing.T) {
	key := []byte("0123456789abcdef")
	ep := NewEndpoint(EndpointConfig{Server: true, ResetKey: key, Rand: rand.New(rand.NewPCG(1, 1))})
	now := clock.Start
	from := netip.MustParseAddrPort("192.0.2.1:9")
	p := packet{typ: typeShort, dcid: 77, flags: flagPING}
	b := make([]byte, 64)
	n := encodePacket(b, &p)
	for range 1000 {
		ep.Receive(now, from, ecn.NotECT, b[:n])
	}
	out, _, sizes := drainAll(t, ep, now)
	if len(out) == 0 || len(out) > resetBurst {
		t.Fatalf("%d resets for 1000 triggers at one instant, want 1..%d", len(out), resetBurst)
	}
	for i, r := range out {
		if r.typ != typeReset || sizes[i] > n {
			t.Fatalf("reply %d: type %d, %d bytes for a %d-byte trigger", i, r.typ, sizes[i], n)
		}
		if r.resetTok != ep.resets.token(77) {
			t.Fatalf("reset token %x, want the CID's %x", r.resetTok, ep.resets.token(77))
		}
	}
	// Refilled at resetRate per second.
	now = now.Add(100 * time.Millisecond)
	for range 1000 {
		ep.Receive(now, from, ecn.NotECT, b[:n])
	}
	if again, _, _ := drainAll(t, ep, now); len(again) > resetBurst-len(out)+resetRate/10+1 {
		t.Errorf("%d resets 100 ms later, want at most %d (the bucket's rest and 100 ms of refill)", len(again), resetBurst-len(out)+resetRate/10+1)
	}
	// The same key gives the same token in another endpoint (a restart).
	other := NewEndpoint(EndpointConfig{Server: true, ResetKey: key})
	if other.resets.token(77) != ep.resets.token(77) || other.resets.token(78) == ep.resets.token(77) {
		t.Error("tokens do not depend on the key and the CID alone")
	}
	// No key: no reset.
	plain := NewEndpoint(EndpointConfig{Server: true})
	plain.Receive(now, from, ecn.NotECT, b[:n])
	if out, _, _ := drainAll(t, plain, now); len(out) != 0 {
		t.Errorf("an endpoint without a key sent %d replies", len(out))
	}
}

// TestDgramResetAndRefusal: a datagram-mode client ends with
// ErrStatelessReset when the server restarts with the same key, and with
// ErrReceiverFull when the server cannot admit it.
func TestDgramResetAndRefusal(t *testing.T) {
	key := []byte("0123456789abcdef")
	n := newDnet(t, 5, pathModel{Delay: 10 * time.Millisecond}, pathModel{Delay: 10 * time.Millisecond}, DgramConfig{})
	n.eps[1] = NewEndpoint(EndpointConfig{Server: true, ResetKey: key, MaxConns: 1, Rand: rand.New(rand.NewPCG(5, 4))})
	cli, _ := n.dial(DgramConfig{}, &seqSource{size: 1000}, true)
	second, err := n.eps[0].DialDgram(n.now, n.addrs[1], DgramConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if !n.run(2*time.Second, second.Done) || !errors.Is(second.Err(), ErrReceiverFull) {
		t.Fatalf("second datagram client with the server full: done %v err %v, want ErrReceiverFull", second.Done(), second.Err())
	}
	n.eps[1] = NewEndpoint(EndpointConfig{Server: true, ResetKey: key, Rand: rand.New(rand.NewPCG(6, 6))})
	if !n.run(time.Second, cli.Done) || !errors.Is(cli.Err(), ErrStatelessReset) {
		t.Fatalf("datagram client after a restart: done %v err %v, want ErrStatelessReset", cli.Done(), cli.Err())
	}
}

// TestResetKeyLength: NewEndpoint refuses a reset key shorter than
// MinResetKey (a short HMAC key makes tokens guessable) and accepts nil and
// keys of MinResetKey bytes or more.
func TestResetKeyLength(t *testing.T) {
	for _, tc := range []struct {
		key       []byte
		wantPanic bool
	}{
		{nil, false},
		{make([]byte, MinResetKey-1), true},
		{[]byte{1}, true},
		{make([]byte, MinResetKey), false},
		{make([]byte, 64), false},
	} {
		got := func() (panicked bool) {
			defer func() { panicked = recover() != nil }()
			NewEndpoint(EndpointConfig{Server: true, ResetKey: tc.key})
			return false
		}()
		if got != tc.wantPanic {
			t.Errorf("ResetKey of %d bytes (nil %v): panicked %v, want %v", len(tc.key), tc.key == nil, got, tc.wantPanic)
		}
	}
}

// TestDgramCloseEndsOnStatelessReset: a datagram client whose CLOSE was
// answered but whose peer's RESET was lost retransmits the CLOSE after the
// server has drained the connection; the server answers with a stateless
// reset, and the client's Close ends cleanly (nil error): the peer holds
// no state for a connection we were closing. Before, the live sender's
// Close failed with ErrStatelessReset and so did its run.
func TestDgramCloseEndsOnStatelessReset(t *testing.T) {
	key := []byte("0123456789abcdef")
	dropResets := false
	rev := pathModel{Delay: 10 * time.Millisecond, Drop: func(b []byte) bool {
		var p dgramPacket
		return dropResets && b[1] == byte(typeDgram) && decodeDgram(b, &p) == RejectNone && p.flags&dflagRESET != 0
	}}
	for _, tc := range []struct {
		name       string
		closing    bool
		wantErr    error
		wantResets uint64
	}{
		{"closing", true, nil, 1},
		{"not closing", false, ErrStatelessReset, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dropResets = false
			n := newDnet(t, 7, pathModel{Delay: 10 * time.Millisecond}, rev, DgramConfig{})
			n.eps[1] = NewEndpoint(EndpointConfig{Server: true, ResetKey: key, Rand: rand.New(rand.NewPCG(7, 4))})
			cli, srv := n.dial(DgramConfig{Rate: 1e6}, &seqSource{size: 1000}, true)
			n.run(200*time.Millisecond, nil)
			if tc.closing {
				dropResets = true
				cli.Close(n.now)
			} else {
				// A restart with the same key: the next packet gets a stateless reset.
				n.eps[1] = NewEndpoint(EndpointConfig{Server: true, ResetKey: key, Rand: rand.New(rand.NewPCG(8, 4))})
			}
			if !n.run(10*time.Second, cli.Done) {
				t.Fatal("client not done")
			}
			if got := cli.Err(); !errors.Is(got, tc.wantErr) || (tc.wantErr == nil && got != nil) {
				t.Errorf("client's error: got %v, want %v", got, tc.wantErr)
			}
			if got := n.eps[0].Stats().ResetsRecv; got != tc.wantResets {
				t.Errorf("stateless resets received: got %d, want %d", got, tc.wantResets)
			}
			if tc.closing && (*srv == nil || !(*srv).Done() || (*srv).Err() != nil) {
				t.Errorf("server's connection: want done without error after the client's CLOSE")
			}
		})
	}
}
