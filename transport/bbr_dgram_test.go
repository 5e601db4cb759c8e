package transport

import (
	"testing"
	"time"

	"cclab/ccalgo"
)

// TestDgramBBR: BBR runs in the datagram mode too (delivery-rate samples
// from the Ack Vectors, pacing): a greedy flow fills the 10 Mbit/s
// bottleneck with a short queue.
func TestDgramBBR(t *testing.T) {
	rev := pathModel{Delay: 20 * time.Millisecond}
	cfg := DgramConfig{CC: "bbr"}
	n := newDnet(t, 1, bottleneck, rev, cfg)
	cli, srv := n.dial(cfg, &seqSource{size: 1100}, true)
	n.run(20*time.Second, nil)
	ss := (*srv).Stats()
	gp := float64(ss.RecvBytes) * 8 / 20
	b := cli.Controller().(*ccalgo.BBR)
	t.Logf("goodput %.2f Mbit/s, state %s, btlbw %.2f Mbit/s, rtprop %v, srtt %v", gp/1e6, b.StateName(), b.BtlBw()/1e6, b.RTprop(), cli.Stats().SRTT)
	if gp < 0.8*10e6 || gp > 10e6 {
		t.Errorf("goodput got %.2f Mbit/s, want 8..10", gp/1e6)
	}
	if bw := b.BtlBw(); bw < 0.8*10e6 || bw > 1.1*10e6 {
		t.Errorf("BtlBw got %.2f Mbit/s, want near the 10 Mbit/s bottleneck", bw/1e6)
	}
}
