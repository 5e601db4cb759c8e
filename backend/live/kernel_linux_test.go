package liverun

import (
	"context"
	"fmt"
	"testing"

	"cclab/internal/testenv"
	"cclab/metrics"
	"cclab/scenario"
	"cclab/tunshell"
)

// kernelConformanceSrc is the bounded conformance check: one bulk flow on
// the 20 Mbit/s, 40 ms, 100-packet path of docs/compat.md, kernel TCP and
// cclab set to match Linux (docs/compat.md "Kernel TCP vs cclab").
const kernelConformanceSrc = `name: kernel-conformance
duration: 6s
seeds: [1, 2, 3]
warmup: 0s
backends: [live]
topology:
  kind: dumbbell
  bottleneck: {rate: 20Mbit, delay: 20ms, queue: droptail:100p}
flows: [{name: bulk, stack: [kernel, cclab], traffic: greedy, datagram: 1483B, stagger: 0s, recovery: "rack:echo=cum,rtorearm", cc: %s}]
`

// TestKernelConformance runs kernel TCP and cclab set to match Linux live
// through the link shell, three 6 s bulk transfers (seeds) each per
// controller, and holds the medians of cclab to the conformance tolerance
// of docs/compat.md: goodput within ±10 % of the kernel's, retransmissions
// within a factor of 2 (plus 10 packets: with a few dozen the count of one
// overshoot decides). Medians of three, not means: Linux's HyStart decides
// from ACK-train spacing and delay, which move with the timing of the ACKs
// the link shell hands to the kernel, and in about one run of eight it
// misses the exit and its slow start overruns the queue (211 kernel
// retransmissions against cclab's 12 in one CI run, 571 against 22 in the
// docs' 8-seed series, where the other seeds were equal seed by seed);
// a mean of two fails on that one run, a median of three does not, and a
// median still fails when the stacks differ in most runs. cclab runs
// rack:echo=cum (scenario.KernelRACK): with the default echo=all, 4 cclab
// Reno runs in 10 at load 18-25 ended their slow-start overshoot in an
// RTO (340-438 retransmissions against the kernel's 170-180), a
// retransmission lost at the head of the hole that the timestamp echo hid
// from RACK (docs/recovery.md, docs/compat.md). The stacks run paired and
// alternated per seed; a run the host limited (docs/metrics.md) is run
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
		var runs [2]map[string][]float64 // kernel, cclab: one value per seed
		for i := range runs {
			runs[i] = map[string][]float64{}
		}
		// Paired and alternated (seed 1 kernel, cclab; seed 2 kernel,
		// cclab; ...): the host's load drifts, and the kernel's figure moves
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
							runs[i][m] = append(runs[i][m], v[m])
						}
						break
					}
				}
			}
		}
		k, c := medians(runs[0]), medians(runs[1])
		t.Logf("%s: medians over %d seeds: kernel %v, cclab %v", cc, len(exp.Points[0].Scenario.Seeds), k, c)
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

// medians returns the median of each metric's per-seed values.
func medians(runs map[string][]float64) map[string]float64 {
	out := make(map[string]float64, len(runs))
	for m, xs := range runs {
		out[m] = metrics.Median(xs)
	}
	return out
}
