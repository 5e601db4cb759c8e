package transport

import (
	"testing"
	"time"
)

// TestSACKBlindStrategiesStayWithinTheWindow: Reno and NewReno ignore SACK
// (RFC 5681, RFC 6582 senders), so SACKed bytes stay in flight. Counting them
// out (as RFC 6675 pipe does) let a Reno sender keep sending past a window of
// holes it repairs one per episode: over a 20-packet buffer its cwnd grew
// without bound and most of what it sent was dropped. Here both must move a
// transfer with few retransmissions and a cwnd near the path's capacity.
func TestSACKBlindStrategiesStayWithinTheWindow(t *testing.T) {
	const size = 4 << 20
	for _, rec := range []string{"reno", "newreno"} {
		t.Run(rec, func(t *testing.T) {
			// 16 Mbit/s, 15 ms RTT: BDP 30 kB; a 20-packet drop-tail buffer.
			fwd := pathModel{Delay: 7500 * time.Microsecond, Rate: 16e6, QueueBytes: 20 * 1228}
			rev := pathModel{Delay: 7500 * time.Microsecond}
			h := newHarness(t, 1, fwd, rev, Config{Recovery: rec})
			cli, srv, ok := h.transfer(size, 5*time.Minute)
			if !ok {
				t.Fatalf("transfer did not finish: %v", cli.Err())
			}
			checkTransfer(t, cli, srv, size, 0)
			s := cli.Stats()
			if frac := float64(s.Retransmits) / float64(s.PacketsSent); frac > 0.10 {
				t.Errorf("retransmitted %d of %d packets (%.1f%%), want at most 10%%", s.Retransmits, s.PacketsSent, 100*frac)
			}
			// BDP + buffer is about 50 kB; Reno's window oscillates up to that.
			if limit := 4 * (30000 + 20*1228); s.Cwnd > limit {
				t.Errorf("cwnd at the end %d bytes, want at most %d (4 × BDP+buffer)", s.Cwnd, limit)
			}
		})
	}
}
