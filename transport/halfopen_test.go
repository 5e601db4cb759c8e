package transport

import (
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"cclab/clock"
)

// TestHalfOpenOutlivesClientBackoff: every client packet after the Accept
// is lost for `lost` (the client, connected since the Accept, backs off its
// RTO: 1, 2, 4, 8, 16 s ...). The server keeps the half-open connection for
// its idle timeout, so the first packet through (past the 10 s handshake
// timeout included) completes the transfer. Only when the server's idle
// timeout is shorter than the silence does it answer with a stateless
// reset, and the client then has received nothing after the Accept (what
// backend/live counts as an unconnected flow).
func TestHalfOpenOutlivesClientBackoff(t *testing.T) {
	for _, tc := range []struct {
		name       string
		lost       time.Duration
		serverIdle time.Duration // 0: the default
		wantReset  bool
	}{
		{"5s", 5 * time.Second, 0, false},
		{"12s past the handshake timeout", 12 * time.Second, 0, false},
		{"30s", 30 * time.Second, 0, false},
		{"12s, server idle 5s", 12 * time.Second, 5 * time.Second, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const delay = 10 * time.Millisecond
			h := newHarness(t, 5, pathModel{Delay: delay}, pathModel{Delay: delay}, Config{})
			h.eps[1] = NewEndpoint(EndpointConfig{Server: true, ResetKey: []byte("0123456789abcdef"), Rand: rand.New(rand.NewPCG(3, 4)),
				Configure: func(_ []byte, cfg *Config) {
					if tc.serverIdle > 0 {
						cfg.IdleTimeout = tc.serverIdle
					}
				}})
			var until clock.Time
			h.paths[0].Drop = func(b []byte) bool {
				var p packet
				if decodePacket(b, &p) != RejectNone || p.typ != typeShort {
					return false
				}
				if until == 0 {
					until = h.now.Add(tc.lost)
				}
				return h.now.Before(until)
			}
			cli, err := h.eps[0].Dial(h.now, h.addrs[1], Config{})
			if err != nil {
				t.Fatal(err)
			}
			cli.SetSource(NewPatternSource(1), 10<<10)
			cli.CloseWrite(h.now)
			_, ok := h.serve(cli, 3*time.Minute)
			if tc.wantReset {
				if !errors.Is(cli.Err(), ErrStatelessReset) || cli.Stats().PacketsReceived != 0 {
					t.Fatalf("client error %v after %d packets from the server, want a stateless reset after none", cli.Err(), cli.Stats().PacketsReceived)
				}
				return
			}
			if !ok || cli.Err() != nil {
				t.Fatalf("transfer completed %v, client error %v; server %+v", ok, cli.Err(), h.eps[1].Stats())
			}
		})
	}
}
