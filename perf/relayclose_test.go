package perf

import (
	"context"
	"testing"
	"time"

	"cclab/link"
	"cclab/relay"
)

// TestRelayClosedAfterTransfer: a verified forward transfer through the
// relay, which stops as soon as the sender has its result (the last ACK of
// the receiver's report may die with it), is not a failed flow at the
// receiver: at most its closing handshake is noted.
func TestRelayClosedAfterTransfer(t *testing.T) {
	if testing.Short() {
		t.Skip("live loopback run through the relay")
	}
	srv, flows := startServer(t, ServerConfig{CloseTimeout: 2 * time.Second})
	r, err := relay.New(relay.Config{Listen: "127.0.0.1:0", Target: srv.Addr().String(), Seed: 1,
		Hops: [2][]link.Config{{{Delay: 20 * time.Millisecond}}, {{Delay: 20 * time.Millisecond}}}})
	if err != nil {
		t.Fatal(err)
	}
	r.Start()
	res, err := Run(context.Background(), ClientConfig{Addr: r.Addr().String(), Bytes: 1 << 20})
	r.Close()
	if err != nil || !res.End.Verified {
		t.Fatalf("transfer: %v (verified %v)", err, res != nil && res.End.Verified)
	}
	got := waitFlows(t, srv, flows, 1)
	t.Logf("receiver: error %q, close note %q", got[0].Error, got[0].CloseNote)
	if got[0].Error != "" {
		t.Errorf("receiver logged the verified transfer as failed: %q", got[0].Error)
	}
}
