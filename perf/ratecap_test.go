package perf

import (
	"context"
	"testing"
	"time"
)

// TestRateCap: with RateCap the sender never writes faster than the cap
// (so a -n transfer takes at least bytes*8/cap) and a -t transfer sends at
// most cap*seconds; both are verified.
func TestRateCap(t *testing.T) {
	srv, _ := startServer(t, ServerConfig{})
	const capBps = 4e6
	res, err := Run(context.Background(), ClientConfig{Addr: srv.Addr().String(), Bytes: 256 << 10, RateCap: capBps})
	if err != nil {
		t.Fatal(err)
	}
	if minSecs := float64(256<<10) * 8 / capBps; !res.End.Verified || res.End.Seconds < minSecs {
		t.Errorf("-n 256KiB -b 4M: verified %v in %.3f s; want verified, at least %.3f s", res.End.Verified, res.End.Seconds, minSecs)
	}
	res, err = Run(context.Background(), ClientConfig{Addr: srv.Addr().String(), Duration: 300 * time.Millisecond, RateCap: capBps})
	if err != nil {
		t.Fatal(err)
	}
	if limit := capBps * res.End.Seconds / 8; !res.End.Verified || res.End.SenderBytes <= 0 || float64(res.End.SenderBytes) > limit {
		t.Errorf("-t 0.3 -b 4M: verified %v, %d bytes sent in %.3f s; want verified, some and at most %.0f", res.End.Verified, res.End.SenderBytes, res.End.Seconds, limit)
	}
	if _, err := Run(context.Background(), ClientConfig{Addr: srv.Addr().String(), Bytes: 1, RateCap: capBps, Reverse: true}); err == nil {
		t.Errorf("-b with -R: got no error, want one naming -b")
	}
}
