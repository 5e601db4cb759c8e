package simrun

import (
	"fmt"
	"testing"
)

// TestSimRunBBR: BBR against Reno on a 20 Mbit/s, 40 ms dumbbell. With a
// 1-BDP DropTail buffer BBR fills the link with a short queue where Reno
// fills the buffer; with a 0.1-BDP buffer and 1 % random loss BBR keeps
// most of the link where Reno collapses (the BBR paper's Fig. 8 shape).
func TestSimRunBBR(t *testing.T) {
	type res struct{ util, qlen float64 }
	get := func(cc, buffer, loss string) res {
		exp := parseScenario(t, fmt.Sprintf(`name: bbr
duration: 20s
topology:
  kind: dumbbell
  bottleneck: {rate: 20Mbit, delay: 20ms, queue: "droptail:%s", loss: %s}
flows:
  - {name: f, cc: %s, recovery: sack}
`, buffer, loss, cc))
		r := run(t, exp, 0, 1)
		for _, l := range r.Metrics.Links {
			if l.ID == int64(r.Info.Bottleneck) {
				return res{l.Values["utilization"], l.Values["mean_queue_len"]}
			}
		}
		t.Fatal("no bottleneck link metrics")
		return res{}
	}
	bbr, reno := get("bbr", "82p", "0"), get("reno", "82p", "0")
	t.Logf("1 BDP DropTail: bbr utilization %.3f mean queue %.1f packets; reno %.3f, %.1f", bbr.util, bbr.qlen, reno.util, reno.qlen)
	if bbr.util < 0.9 {
		t.Errorf("BBR utilization %.3f with a 1-BDP buffer, want >= 0.9", bbr.util)
	}
	if bbr.qlen > reno.qlen/3 {
		t.Errorf("BBR mean queue %.1f packets, want well below Reno's %.1f", bbr.qlen, reno.qlen)
	}
	bbr, reno = get("bbr", "8p", "0.01"), get("reno", "8p", "0.01")
	t.Logf("0.1 BDP, 1%% loss: bbr utilization %.3f; reno %.3f", bbr.util, reno.util)
	if bbr.util < 0.8 || reno.util > 0.5 {
		t.Errorf("with 1%% loss: BBR utilization %.3f (want >= 0.8), Reno %.3f (want < 0.5)", bbr.util, reno.util)
	}
}
