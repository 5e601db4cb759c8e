package transport

import (
	"cclab/ccalgo"
	"testing"
	"time"
)

// TestWindowLimitedSenderDoesNotGrowCwnd checks RFC 7661 §4 / RFC 5681 §3.1:
// a sender held back by the peer's receive window (not by cwnd) must not keep
// growing cwnd, or cwnd loses all meaning as a measure of the path.
func TestWindowLimitedSenderDoesNotGrowCwnd(t *testing.T) {
	const win = 16 * testMSS
	h := newHarness(t, 1, pathModel{Delay: 10 * time.Millisecond}, pathModel{Delay: 10 * time.Millisecond}, Config{RecvWindow: win})
	cli, err := h.eps[0].Dial(h.now, h.addrs[1], Config{CC: "reno"})
	if err != nil {
		t.Fatal(err)
	}
	const size = 8 << 20
	cli.SetSource(NewPatternSource(9), size)
	if _, ok := h.serve(cli, 5*time.Minute); !ok {
		t.Fatal("transfer did not finish")
	}
	// The window caps the flight at win bytes; slow start may overshoot it by
	// what one window of ACKs adds (doubling), no more.
	if got, limit := cli.Stats().Cwnd, 2*win+ccalgo.InitialWindow(cli.MSS()); got > limit {
		t.Errorf("cwnd of a receive-window-limited sender: got %d bytes, want at most %d (window %d)", got, limit, win)
	}
}
