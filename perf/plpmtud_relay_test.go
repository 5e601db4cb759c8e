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
	r := startHopRelay(t, srv.Addr().String(), 1, link.Config{Delay: 5 * time.Millisecond, Rate: 20e6, MTU: 1500})
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

// TestDgramDiscovery: a datagram-mode sender without -size discovers the
// path's datagram size, on loopback (the route's MTU, 65536 bytes) and
// through the relay (a hop with mtu=1500 drops every larger packet: at
// most 1472 bytes of UDP payload, at most the search granularity below);
// the receiver, whose queue was set up for the handshake's 1200 bytes,
// takes the larger datagrams (their mean size is above the handshake's);
// through the relay the probes the hop dropped are no data loss.
func TestDgramDiscovery(t *testing.T) {
	if testing.Short() {
		t.Skip("live loopback run, through the relay too")
	}
	srv, _ := startServer(t, ServerConfig{CloseTimeout: 2 * time.Second})
	r := startHopRelay(t, srv.Addr().String(), 1, link.Config{Delay: 5 * time.Millisecond, Rate: 20e6, MTU: 1500})
	for _, tc := range []struct {
		name     string
		addr     string
		min, max int // the discovered size's bounds, bytes
	}{
		{"relay", r.Addr().String(), 1500 - link.IPv4UDPOverhead - 32, 1500 - link.IPv4UDPOverhead},
		{"loopback", srv.Addr().String(), 9000, 65535},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := RunDgram(context.Background(), DgramClientConfig{Addr: tc.addr, Duration: 2 * time.Second, Rate: 8e6})
			if err != nil {
				t.Fatal(err)
			}
			p := res.PLPMTU
			if p == nil {
				t.Fatalf("no size discovery (route's MTU unknown?): max datagram %d", res.MaxDatagram)
			}
			if p.Size <= tc.min || p.Size > tc.max {
				t.Errorf("discovered size = %d bytes, want (%d, %d] (%+v)", p.Size, tc.min, tc.max, *p)
			}
			rep := res.Receiver
			if rep == nil {
				t.Fatalf("no receiver report: %s", res.ReceiverError)
			}
			// Not truncated on the way: the mean datagram the receiver read
			// is (within loss) the mean the sender sent, and above the
			// handshake's size.
			rmean, smean := rep.Bytes/max(rep.Datagrams, 1), res.SentBytes/max(res.Sent, 1)
			if rmean <= uint64(res.MaxDatagram) || rmean < smean*9/10 {
				t.Errorf("mean datagram at the receiver = %d bytes, want above the handshake's %d and about the sender's %d", rmean, res.MaxDatagram, smean)
			}
			if rep.RecvDropped != 0 || rep.LostNetwork != 0 {
				t.Errorf("receive queue drops %d, lost in the network %d: want none", rep.RecvDropped, rep.LostNetwork)
			}
			t.Logf("%+v; %d datagrams, %d bytes in %.2f s, %.2f Mbit/s; sender: %d sent at %.2f Mbit/s, %d queue drops, %d RTOs, %d lost", *p, rep.Datagrams, rep.Bytes, rep.Seconds, rep.ThroughputBps/1e6, res.Sent, res.SendRateBps/1e6, res.QueueDropped, res.RTOs, res.LostDeclared)
		})
	}
}

// startHopRelay runs a relay in front of target whose directions are one
// hop each, hop (random streams from seed), closed when the test ends.
func startHopRelay(t *testing.T, target string, seed uint64, hop link.Config) *relay.Relay {
	t.Helper()
	r, err := relay.New(relay.Config{Listen: "127.0.0.1:0", Target: target, Seed: seed, Hops: [2][]link.Config{{hop}, {hop}}})
	if err != nil {
		t.Fatal(err)
	}
	r.Start()
	t.Cleanup(func() { r.Close() })
	return r
}
