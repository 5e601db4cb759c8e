package campaign

import (
	"fmt"
	"math"
	"testing"
	"time"

	"cclab/link"
)

// multiHostTruth is the network of the multi-host test
// (campaign/multihost, multihostNetwork) as the two kinds of path its
// transfers cross, one dumbbell each: inside a continent two access links
// of 20 Mbit/s, 2.5 ms and 0.2 % random loss each way (0.4 % per
// direction, 10 ms round trips, 100-packet queues); between continents
// the inter-continental link of 10 Mbit/s, 45 ms and Gilbert-Elliott loss
// ge:p=interP,r=0.3 between two access links (their 0.4 % folded into
// k = 0.996; 100 ms round trips, a 200-packet queue). Datagrams are
// discovered up to 1,472 bytes, as the agents discover theirs.
func multiHostTruth(interP float64) (intra, inter PathProfile) {
	access := link.GEConfig{P: 0.004, R: 0.996, H: 0, K: 1}
	ge := link.GEConfig{P: interP, R: 0.3, H: 0, K: 0.996}
	intra = PathProfile{Name: "intra", RateBps: 20e6, MinRTT: 10 * time.Millisecond, QueuePackets: 100, Loss: access, RevLoss: &access, Datagram: 1472, Discovered: true}
	inter = PathProfile{Name: "inter", RateBps: 10e6, MinRTT: 100 * time.Millisecond, QueuePackets: 200, Loss: ge, RevLoss: &ge, Datagram: 1472, Discovered: true}
	return intra, inter
}

// perfectModelShare replays the network against itself as validate holds
// a replay against a measurement: per path kind and variant of the
// multi-host test, groups cells, each the mean goodput of rounds
// transfers of bytes (the "measured", simulated with seeds of their own)
// against the mean of max(rounds, ValidateSeeds) replay seeds; it returns
// the share of cells within ±ValidateTolerance, and per path kind and
// variant its count.
func perfectModelShare(t *testing.T, interP float64, bytes int64, rounds, groups int) (float64, map[string]int) {
	t.Helper()
	intra, inter := multiHostTruth(interP)
	sp := testSpec(t, 2, 4, 1, "")
	sp.Transfer.Bytes = bytes
	for i, v := range [][2]string{{"reno", "reno"}, {"reno", "sack"}, {"reno", "ratehalving"}, {"vegas", "newreno"}} {
		sp.Variants[i].Name, sp.Variants[i].CC, sp.Variants[i].Recovery = v[1], v[0], v[1]
	}
	sp.Variants[3].Name = "vegas"
	goodput := func(path PathProfile, variant string, seed uint64) float64 {
		return simTransfer(t, sp, path, variant, seed).GoodputBps
	}
	seeds := max(rounds, ValidateSeeds)
	within, cells := 0, 0
	byCell := map[string]int{}
	for _, path := range []PathProfile{intra, inter} {
		for _, v := range sp.Variants {
			for g := range groups {
				// Each cell a campaign of its own: its replay's seeds
				// and its transfers' drawn anew.
				var predicted, measured float64
				for s := range seeds {
					predicted += goodput(path, v.Name, uint64(1+g*seeds+s)) / float64(seeds)
				}
				for r := range rounds {
					measured += goodput(path, v.Name, uint64(100000+g*rounds+r)) / float64(rounds)
				}
				cells++
				if math.Abs(predicted/measured-1) <= ValidateTolerance {
					within++
					byCell[path.Name+" "+v.Name]++
				}
			}
		}
	}
	return float64(within) / float64(cells), byCell
}

// TestPerfectModelCells: whether validate's criterion per path and
// variant (replayed goodput within ±25 % of the measured mean) can be
// met by the multi-host test at all, with the simulator replaying the
// test's own network against itself (perfectModelShare, 20 cells per path
// kind and variant, 160 in all). With the test's campaign (100 kB
// transfers, 6 rounds, the inter-continental link's loss ge:p=0.002,r=0.3,
// 0.66 % stationary) a perfect model puts at least 95 % of cells within;
// with the campaign and network before (2 rounds, ge:p=0.01,r=0.3, 3.2 %)
// it put far fewer (a bootstrap over 200 transfers per cell: 100 kB
// transfers there have a goodput CV of 0.32-0.47 between continents,
// and 16 rounds put only 86-97 % within, 3 MB or timed transfers no
// better: timeouts and their backoff dominate; at 0.66 % the CV is
// 0.17-0.23, within ±25 % for 96-98 % of 6-round cells).
func TestPerfectModelCells(t *testing.T) {
	if testing.Short() {
		t.Skip("about 1,400 simulated transfers: skipped in -short")
	}
	for _, c := range []struct {
		name    string
		interP  float64
		rounds  int
		atLeast bool // the share at least 95 %, else below it
	}{
		{"the test's campaign", 0.002, 6, true},
		{"before: 2 rounds at 3.2 % bursty loss", 0.01, 2, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			share, byCell := perfectModelShare(t, c.interP, 100e3, c.rounds, 20)
			t.Logf("%.0f %% of cells within ±25 %% (%s of 20 per path kind and variant)", 100*share, fmt.Sprint(byCell))
			if (share >= 0.95) != c.atLeast {
				t.Errorf("%.0f %% of cells within ±25 %%: want at least 95 %% %v", 100*share, c.atLeast)
			}
		})
	}
}
