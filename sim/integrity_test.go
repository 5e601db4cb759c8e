package sim

import (
	"testing"
	"time"

	"cclab/clock"
	"cclab/qdisc"
	"cclab/traffic"
	"cclab/transport"
)

// corrupter stands in front of a host's receiver and flips the last byte of
// the n-th datagram longer than 1000 bytes (stream data: the transport has
// no checksum of its own, as UDP's is not modelled).
type corrupter struct {
	next    Receiver
	n, seen int
}

func (c *corrupter) Receive(now clock.Time, p *qdisc.Packet) {
	if len(p.Buf) > 1000 {
		c.seen++
		if c.seen == c.n {
			p.Buf[len(p.Buf)-1] ^= 0x40
		}
	}
	c.next.Receive(now, p)
}

// TestIntegrityCatchesCorruption: transfers whose stream arrives intact are
// verified; one flipped byte makes its transfer a mismatch.
func TestIntegrityCatchesCorruption(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		corrupt              int // which large datagram to corrupt; 0 = none
		verified, mismatched int
	}{
		{"intact", 0, 3, 0},
		{"one byte flipped", 50, 2, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := NewEngine()
			db, err := NewDumbbell(e, DumbbellConfig{Flows: 1, Rate: 10e6, Delay: 10 * time.Millisecond, Queue: "droptail:50p"},
				Options{Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			s := New(db.Net, nil)
			g, err := traffic.New("onoff:size=100kB,off=100ms,count=3", traffic.Env{Rand: traffic.Stream(1, "t")})
			if err != nil {
				t.Fatal(err)
			}
			s.AddTCPFlow("f", db.Senders[0], db.Receivers[0], g.(traffic.StreamGen), transport.Config{}, clock.Start)
			if tc.corrupt > 0 {
				r := db.Receivers[0]
				r.Receiver = &corrupter{next: r.Receiver, n: tc.corrupt}
			}
			e.RunUntilOrTimeout(s.AllFinished, clock.Start.Add(30*time.Second))
			if !s.AllFinished() {
				t.Fatal("transfers did not finish in 30 s")
			}
			e.RunFor(10 * time.Second) // the receiving sides close too
			if s.Integrity.Verified != tc.verified || s.Integrity.Mismatched != tc.mismatched {
				t.Errorf("verified, mismatched got %d, %d, want %d, %d", s.Integrity.Verified, s.Integrity.Mismatched,
					tc.verified, tc.mismatched)
			}
		})
	}
}
