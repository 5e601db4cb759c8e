package transport

import (
	"testing"
	"time"

	"cclab/ccalgo"
)

// TestDgramCCID3 runs a greedy CCID3 flow over the 10 Mbit/s bottleneck:
// it fills the link with TFRC's smooth rate, the receiver sees the loss
// events the drops cause, and the sender's rate follows the equation.
func TestDgramCCID3(t *testing.T) {
	rev := pathModel{Delay: 20 * time.Millisecond}
	cfg := DgramConfig{CC: "ccid3"}
	n := newDnet(t, 1, bottleneck, rev, cfg)
	cli, srv := n.dial(cfg, &seqSource{size: 1100}, true)
	n.run(30*time.Second, nil)
	cs, ss := cli.Stats(), (*srv).Stats()
	gp := float64(ss.RecvBytes) * 8 / 30
	if gp < 0.8*10e6 || gp > 10e6 {
		t.Errorf("goodput got %.2f Mbit/s, want 8..10", gp/1e6)
	}
	if ss.LossEvents == 0 || ss.LossEventRate <= 0 {
		t.Errorf("receiver: %d loss events, p %g: want some over a drop-tail bottleneck", ss.LossEvents, ss.LossEventRate)
	}
	cc := cli.Controller().(*ccalgo.CCID3)
	if got := cc.LossEventRate(); got <= 0 {
		t.Errorf("sender's p got %g, want > 0", got)
	}
	if v := cc.State().Vars[4].Value; v != 0 {
		t.Errorf("no-feedback timer expired %v times with reports every RTT, want 0", v)
	}
	// One report per RTT (about 45 ms here), plus the loss events'.
	if max := uint64(30/0.040) + 2*ss.LossEvents + 10; ss.AcksSent > max {
		t.Errorf("receiver sent %d acknowledgements, want at most %d (once per RTT and per loss event)", ss.AcksSent, max)
	}
	t.Logf("goodput %.2f Mbit/s, X %.2f Mbit/s, p %.5f (receiver %.5f, %d events), R %v, acks %d, lost %d, nofeedback %v",
		gp/1e6, cc.Rate()*8/1e6, cc.LossEventRate(), ss.LossEventRate, ss.LossEvents, cc.SenderRTT(), ss.AcksSent, cs.Lost, cc.State().Vars[4].Value)
}
