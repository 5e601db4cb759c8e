package perf

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"cclab/transport"
)

// TestDgramFlowLoopback: a CCID2 flow and an uncontrolled flow to one
// receiver port (which also serves stream tests); the receiver's account
// comes back to the sender and agrees with it.
func TestDgramFlowLoopback(t *testing.T) {
	srv, flows := startServer(t, ServerConfig{})
	addr := srv.Addr().String()
	for _, cfg := range []DgramClientConfig{
		{Addr: addr, Duration: time.Second, CC: "ccid2", Rate: 20e6},
		{Addr: addr, Duration: time.Second, CC: "none", Rate: 5e6, On: 200 * time.Millisecond, Off: 200 * time.Millisecond},
	} {
		res, err := RunDgram(context.Background(), cfg)
		if err != nil {
			t.Fatalf("%s: %v", cfg.CC, err)
		}
		if res.Receiver == nil {
			t.Fatalf("%s: no receiver report (%s)", cfg.CC, res.ReceiverError)
		}
		r := res.Receiver
		// Nothing is lost on loopback without congestion: the receiver got
		// what was sent, and the sender heard of (nearly) all of it.
		if r.Datagrams+r.RecvDropped+r.LostNetwork != res.Sent {
			t.Errorf("%s: sent %d, receiver got %d + dropped %d + lost %d", cfg.CC, res.Sent, r.Datagrams, r.RecvDropped, r.LostNetwork)
		}
		if res.Generated != res.Sent+res.QueueDropped {
			t.Errorf("%s: generated %d != sent %d + queue-dropped %d", cfg.CC, res.Generated, res.Sent, res.QueueDropped)
		}
		if r.OWDms <= 0 || r.OWDms > 1000 || r.Jitterms < 0 {
			t.Errorf("%s: one-way delay %.3f ms, jitter %.3f ms: implausible on loopback", cfg.CC, r.OWDms, r.Jitterms)
		}
		if len(res.Intervals) < 5 || len(res.AckRatio) == 0 {
			t.Errorf("%s: %d intervals, %d Ack Ratio points", cfg.CC, len(res.Intervals), len(res.AckRatio))
		}
		b, _ := json.Marshal(res)
		t.Logf("%s", b[:min(len(b), 600)])
	}
	got := waitFlows(t, srv, flows, 2)
	for _, f := range got {
		if f.Mode != ModeDatagram || f.Dgram == nil || f.Error != "" {
			t.Errorf("receiver summary %+v: want a datagram flow without error", f)
		}
	}
}

func TestDgramConfigErrors(t *testing.T) {
	for _, c := range []DgramClientConfig{
		{Addr: "x", CC: "none"},             // none needs a rate
		{Addr: "x", CC: "bogus"},            // unknown controller
		{Addr: "x", DropPolicy: "middle"},   // bad policy
		{Addr: "x", On: time.Second},        // ON without OFF
		{Addr: "x", CC: "ccid2:ackratio=0"}, // bad parameter
	} {
		if err := c.Validate(); err == nil {
			t.Errorf("%+v: got nil error", c)
		}
	}
}

func TestDgramQlog(t *testing.T) {
	srv, _ := startServer(t, ServerConfig{})
	dir := t.TempDir()
	res, err := RunDgram(context.Background(), DgramClientConfig{Addr: srv.Addr().String(), Duration: 300 * time.Millisecond, QlogDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	n := qlogNames(t, filepath.Join(dir, res.ConnID+"-client.sqlog"))
	if len(n) == 0 {
		t.Errorf("empty qlog")
	}
	t.Logf("qlog events: %v", n)
}

// TestDgramAuthenticated: a datagram-mode flow with -psk-file at both ends
// is authenticated (both accounts say so) and its report is fetched on an
// authenticated connection too; a keyless one is refused.
func TestDgramAuthenticated(t *testing.T) {
	keys := mustKeys(t, hexKeyA)
	srv, flows := startServer(t, ServerConfig{Keys: keys})
	addr := srv.Addr().String()
	res, err := RunDgram(context.Background(), DgramClientConfig{Addr: addr, Duration: 300 * time.Millisecond, CC: "ccid2", Rate: 5e6, Keys: keys})
	if err != nil || res.Receiver == nil {
		t.Fatalf("authenticated datagram flow: %v (receiver %v)", err, res.ReceiverError)
	}
	if res.Auth == nil || res.Auth.Cipher != AuthCipher || res.Auth.AuthFailed != 0 {
		t.Errorf("sender's account %+v, want %s and nothing dropped", res.Auth, AuthCipher)
	}
	if f := waitFlows(t, srv, flows, 1); f[0].Auth == nil {
		t.Errorf("receiver's flow summary without its authentication account: %+v", f[0])
	}
	if _, err := RunDgram(context.Background(), DgramClientConfig{Addr: addr, Duration: 300 * time.Millisecond, CC: "ccid2", Rate: 5e6}); !errors.Is(err, transport.ErrAuthRequired) {
		t.Errorf("keyless datagram flow: %v, want transport.ErrAuthRequired", err)
	}
}
