package link

import (
	"math/rand/v2"
	"testing"
	"time"

	"cclab/qdisc"
)

// BenchmarkManyLinks sends packets across 8,192 links in a scattered
// order, as a large simulation does (every host has an access link), so
// that a link's state is rarely in cache: "through" passes each packet
// across an idle transparent link (an access link, Link.Through), "hop"
// sends it into a 10 Mbit/s, 10 ms link and delivers what has arrived
// (Send, DeliveryDeadline, DeliverAt). One op is one packet.
func BenchmarkManyLinks(b *testing.B) {
	const n = 8192
	for _, c := range []struct {
		name string
		cfg  Config
	}{
		{"through", Config{Queue: "droptail:1000p"}},
		{"hop", Config{Rate: 10e6, Delay: 10 * time.Millisecond, Queue: "droptail:1000p"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			links := make([]*Link, n)
			for i := range links {
				l, err := New(c.cfg, Env{Rand: rand.New(rand.NewPCG(uint64(i), 1))})
				if err != nil {
					b.Fatal(err)
				}
				links[i] = l
			}
			pkts := make([]*qdisc.Packet, 0, 4*n)
			for range 4 * n {
				pkts = append(pkts, &qdisc.Packet{Size: 1200})
			}
			now := t0
			step := func(i int) {
				now = now.Add(time.Microsecond) // each link: a packet every 8 ms
				l := links[(i*7919)%n]
				p := pkts[len(pkts)-1]
				pkts = pkts[:len(pkts)-1]
				if l.Through(now, p) {
					pkts = append(pkts, p)
					return
				}
				l.Send(now, p)
				if l.DeliveryDeadline() > now {
					return
				}
				for q, _ := l.DeliverAt(now); q != nil; q, _ = l.DeliverAt(now) {
					pkts = append(pkts, q)
				}
			}
			for i := range 4 * n { // warm up: every link in steady state
				step(i)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				step(i)
			}
		})
	}
}
