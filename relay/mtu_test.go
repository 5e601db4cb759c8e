package relay

import (
	"testing"
	"time"

	"cclab/link"
)

// TestHopMTUDrops: a hop with an explicit mtu is the path MTU: a datagram
// whose size on the link (payload plus the IPv4+UDP overhead) exceeds it is
// dropped and counted, one that fits passes; a hop without mtu passes both.
func TestHopMTUDrops(t *testing.T) {
	for _, tc := range []struct {
		hop         string
		passBig     bool
		wantDropped int64
	}{
		{"delay=1ms,mtu=1500", false, 5},
		{"delay=1ms", true, 0},
	} {
		t.Run(tc.hop, func(t *testing.T) {
			tn := memNet()
			dst := newSink(t, tn, false)
			r := startRelay(t, tn, Config{Target: dst.conn.LocalAddr().String(), Hops: [2][]link.Config{{mkHop(t, tc.hop)}}})
			c := dial(t, tn, r.Addr())
			fit := 1500 - link.IPv4UDPOverhead
			if _, err := c.WriteBatch(datagrams(0, 5, fit+1, 0)); err != nil {
				t.Fatal(err)
			}
			if _, err := c.WriteBatch(datagrams(5, 5, fit, 0)); err != nil {
				t.Fatal(err)
			}
			want := 5
			if tc.passBig {
				want = 10
			}
			got := dst.waitFor(want, 5*time.Second)
			if len(got) != want {
				t.Fatalf("received %d datagrams, want %d", len(got), want)
			}
			for _, m := range got {
				if m.size > fit && !tc.passBig {
					t.Errorf("a %d-byte datagram crossed a hop with mtu 1500 (at most %d bytes of payload)", m.size, fit)
				}
			}
			if got := r.Counters().MTUDrops; got != tc.wantDropped {
				t.Errorf("MTUDrops = %d, want %d", got, tc.wantDropped)
			}
		})
	}
}
