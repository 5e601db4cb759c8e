package transport

import (
	"encoding/binary"
	"testing"
	"time"

	"cclab/ecn"
)

// FuzzDgramEndpoint: arbitrary datagram-mode packets addressed to live
// connections (both ends, mid-transfer) never panic, and the connections
// keep working or end cleanly.
func FuzzDgramEndpoint(f *testing.F) {
	for _, b := range dgramSeeds() {
		f.Add(b, false)
		f.Add(b, true)
	}
	f.Fuzz(func(t *testing.T, b []byte, toClient bool) {
		n := newDnet(t, 1, pathModel{Delay: 5 * time.Millisecond, Rate: 10e6, QueueBytes: 20 * 1200},
			pathModel{Delay: 5 * time.Millisecond}, DgramConfig{})
		cli, srv := n.dial(DgramConfig{}, &seqSource{size: 1000}, true)
		n.run(200*time.Millisecond, nil)
		to, cid := 1, (*srv).localCID
		if toClient {
			to, cid = 0, cli.localCID
		}
		if len(b) >= 2+cidLen {
			binary.BigEndian.PutUint64(b[2:], cid)
		}
		n.eps[to].Receive(n.now, n.addrs[1-to], ecn.NotECT, b)
		n.run(200*time.Millisecond, nil)
		if !cli.Done() && cli.Stats().InFlight < 0 {
			t.Fatalf("negative in flight")
		}
	})
}
