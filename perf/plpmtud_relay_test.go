package perf

import (
	"context"
	"testing"
	"time"

	"cclab/link"
	"cclab/relay"
	"cclab/transport"
)

// TestDiscoveryThroughRelay: a sender without -size discovers the path's
// size through the relay: a hop with mtu=1500 drops every larger packet
// (payload plus the 28-byte IPv4+UDP overhead), so the transfer ends with
// 1472-byte datagrams at most, and at most the search granularity (32
// bytes) below; the probes the hop dropped cost no retransmission.
func TestDiscoveryThroughRelay(t *testing.T) {
	if testing.Short() {
		t.Skip("live loopback run through the relay")
	}
	srv, _ := startServer(t, ServerConfig{CloseTimeout: 2 * time.Second})
	hop := link.Config{Delay: 5 * time.Millisecond, Rate: 20e6, MTU: 1500}
	r, err := relay.New(relay.Config{Listen: "127.0.0.1:0", Target: srv.Addr().String(), Seed: 1,
		Hops: [2][]link.Config{{hop}, {hop}}})
	if err != nil {
		t.Fatal(err)
	}
	r.Start()
	defer r.Close()
	res, err := Run(context.Background(), ClientConfig{Addr: r.Addr().String(), Duration: 6 * time.Second})
	if err != nil || !res.End.Verified {
		t.Fatalf("transfer: %v (verified %v)", err, res != nil && res.End.Verified)
	}
	limit := 1500 - link.IPv4UDPOverhead
	got := transport.DatagramFor(res.End.MSS)
	if got > limit || got <= limit-32 {
		t.Errorf("datagram size at the end = %d bytes (mss %d), want (%d, %d]", got, res.End.MSS, limit-32, limit)
	}
	if c := r.Counters(); c.MTUDrops == 0 {
		t.Errorf("the hop dropped no probe (MTUDrops 0): nothing larger than %d bytes was tried", limit)
	}
}
