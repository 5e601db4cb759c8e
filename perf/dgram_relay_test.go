package perf

import (
	"context"
	"testing"
	"time"

	"cclab/link"
	"cclab/relay"
)

// TestDgramThroughRelayLoss: through the userspace relay (cmd/bottleneck's
// engine) with 2% random loss, the receiver's "lost in the network" equals
// the relay's drop count, and the sender declared (about) as many lost. A
// count check, not a timing check: scripts/live-ccid2.sh adds the rates.
func TestDgramThroughRelayLoss(t *testing.T) {
	if testing.Short() {
		t.Skip("live loopback run")
	}
	srv, _ := startServer(t, ServerConfig{})
	for _, cc := range []string{"ccid2", "none"} {
		r, err := relay.New(relay.Config{Listen: "127.0.0.1:0", Target: srv.Addr().String(), Seed: 7,
			Hops: [2][]link.Config{
				{{Rate: 20e6, Delay: 5 * time.Millisecond, Queue: "droptail:1000p", Loss: "0.02"}},
				{{Delay: 5 * time.Millisecond}},
			}})
		if err != nil {
			t.Fatal(err)
		}
		r.Start()
		res, err := RunDgram(context.Background(), DgramClientConfig{Addr: r.Addr().String(), Duration: time.Second, CC: cc, Rate: 5e6})
		time.Sleep(100 * time.Millisecond) // the close's last packets cross the relay
		drops := r.HopStats(0)[0].TotalDrops()
		r.Close()
		if err != nil {
			t.Fatalf("%s: %v", cc, err)
		}
		if res.Receiver == nil {
			t.Fatalf("%s: no receiver report: %s", cc, res.ReceiverError)
		}
		lost := res.Receiver.LostNetwork
		// A dropped Initial or CLOSE is a relay drop but no data gap.
		if int64(lost) > drops || drops-int64(lost) > 2 || drops == 0 {
			t.Errorf("%s: receiver lost %d, relay dropped %d", cc, lost, drops)
		}
		// Every network loss is declared. Declared losses match them within a
		// few unless the sender had timeouts: an RTO gives up on whatever is
		// in flight (the datagram sender's rule), and on a loaded machine late
		// ACKs can make that most of a window that did arrive.
		if d := int64(res.LostDeclared) - int64(lost); d < -3 || (d > 3 && res.RTOs == 0) {
			t.Errorf("%s: sender declared %d lost (%d RTOs), receiver saw %d missing", cc, res.LostDeclared, res.RTOs, lost)
		}
		t.Logf("%s: sent %d at %.2f Mbit/s, relay drops %d, receiver lost %d, sender declared %d (%d RTOs)", cc, res.Sent, res.SendRateBps/1e6, drops, lost, res.LostDeclared, res.RTOs)
	}
}
