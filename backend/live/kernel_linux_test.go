package liverun

import (
	"context"
	"fmt"
	"testing"

	"cclab/internal/testenv"
	"cclab/scenario"
	"cclab/tunshell"
)

// kernelConformanceSrc is the bounded conformance check: one bulk flow on
// the 20 Mbit/s, 40 ms, 100-packet path of docs/compat.md, kernel TCP and
// cclab set to match Linux (docs/compat.md "Kernel TCP vs cclab").
const kernelConformanceSrc = `name: kernel-conformance
duration: 6s
seeds: [1, 2]
warmup: 0s
backends: [live]
topology:
  kind: dumbbell
  bottleneck: {rate: 20Mbit, delay: 20ms, queue: droptail:100p}
flows: [{name: bulk, stack: [kernel, cclab], traffic: greedy, datagram: 1483B, stagger: 0s, recovery: "rack:echo=cum,rtorearm", cc: %s}]
`

// TestKernelConformance runs kernel TCP and cclab set to match Linux live
// through the link shell, two 6 s bulk transfers (seeds) each per
// controller, and holds the means of cclab to the conformance tolerance of
// docs/compat.md: goodput within ±10 % of the kernel's, retransmissions
// within a factor of 2 (plus 10 packets: with a few dozen the count of one
// overshoot decides). Means of two, as the acceptance is on means. cclab
// runs rack:echo=cum (scenario.KernelRACK): with the default echo=all,
// 4 cclab Reno runs in 10 at load 18-25 ended their slow-start overshoot
// in an RTO (340-438 retransmissions against the kernel's 170-180), a
// retransmission lost at the head of the hole that the timestamp echo
// hid from RACK (docs/recovery.md, docs/compat.md). The stacks run paired
// and alternated per seed; a run the host limited (docs/metrics.md) is run
// again, up to twice; it needs root and /dev/net/tun, and under CI=true
// fails without them.
func TestKernelConformance(t *testing.T) {
	testenv.Need(t, "the link shell", tunshell.Supported())
	skipShort(t)
	for _, cc := range []string{"reno", `"cubic:linux=true,hystart=true"`} {
		exp, err := scenario.ParseScenario("k.yaml", []byte(fmt.Sprintf(kernelConformanceSrc, cc)))
		if err != nil {
			t.Fatal(err)
		}
		var got [2]map[string]float64 // kernel, cclab: means over the seeds
		for i := range got {
			got[i] = map[string]float64{}
		}
		// Paired and alternated (seed 1 kernel, cclab; seed 2 kernel,
		// cclab): the host's load drifts, and the kernel's figure moves
		// with it (docs/compat.md).
		for _, seed := range exp.Points[0].Scenario.Seeds {
			for i, p := range exp.Points {
				for try := 0; ; try++ {
					res, err := Runner{}.Run(context.Background(), scenario.RunSpec{Experiment: exp.Name, Point: p, Backend: scenario.BackendLive, Seed: seed})
					if err != nil {
						t.Fatalf("%s: %v", p.Label(exp.Axes), err)
					}
					v := res.Metrics.Network.Values
					if res.Notes[NoteHostLimited] == 0 || try == 2 {
						t.Logf("%s seed %d: goodput %.2f Mbit/s, retransmissions %v, RTOs %v; host limited %v, load %.1f",
							p.Label(exp.Axes), seed, v["agg_throughput"]/1e6, v["total_retransmissions"], v["total_rtos"],
							res.Notes[NoteHostLimited], res.Notes[NoteLoadStart])
						for _, m := range []string{"agg_throughput", "total_retransmissions"} {
							got[i][m] += v[m] / float64(len(p.Scenario.Seeds))
						}
						break
					}
				}
			}
		}
		k, c := got[0], got[1]
		if k["agg_throughput"] <= 0 || k["total_retransmissions"] <= 0 {
			t.Errorf("%s: kernel TCP measured no goodput or no retransmissions (a greedy flow fills the DropTail queue): %v", cc, k)
			continue
		}
		if q := c["agg_throughput"] / k["agg_throughput"]; q < 0.9 || q > 1.1 {
			t.Errorf("%s: goodput cclab / kernel = %.3f, want within [0.9, 1.1]", cc, q)
		}
		kr, cr := k["total_retransmissions"], c["total_retransmissions"]
		if cr > 2*kr+10 || kr > 2*cr+10 {
			t.Errorf("%s: retransmissions cclab %v, kernel %v: want within a factor of 2 (+10)", cc, cr, kr)
		}
	}
}
