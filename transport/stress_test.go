package transport

import (
	"testing"
	"time"
)

// TestRandomizedPaths runs transfers over randomized paths (rate 1-100
// Mbit/s, loss up to 30%, 5% reordering and duplication, small and large
// receive windows, ECN with CE marking) with both strategies: each must
// finish intact with a consistent scoreboard.
func TestRandomizedPaths(t *testing.T) {
	n := uint64(60)
	if testing.Short() {
		n = 10
	}
	for seed := uint64(100); seed < 100+n; seed++ {
		for _, rec := range []string{"newreno", "reno"} {
			loss := []float64{0, 0.01, 0.05, 0.2, 0.3}[seed%5]
			p := impairedPath(loss)
			p.Reorder = 0.05
			p.Dup = 0.05
			p.Rate = []float64{1e6, 20e6, 100e6}[seed%3]
			h := newHarness(t, seed, p, p, Config{IdleTimeout: time.Hour, HandshakeTimeout: time.Hour, Recovery: rec, RecvWindow: []int{64 << 10, 1 << 20, 8 << 20}[seed/3%3], ECN: seed%2 == 0})
			if seed%2 == 0 {
				h.paths[0].MarkBytes = 20000
			}
			cli, srv, ok := h.transfer(int64(50_000+seed*1000), 10*time.Hour)
			if !ok || cli.Err() != nil || srv.Stats().RecvDigest != cli.Stats().SentDigest {
				t.Fatalf("seed %d %s loss %v: ok %v err %v", seed, rec, loss, ok, cli.Err())
			}
			checkScoreboard(t, &cli.sb)
		}
	}
}
