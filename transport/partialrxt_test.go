package transport

import (
	"slices"
	"testing"
)

// TestPartialRxt checks option partialrxt against ns-3 3.37's
// TcpSocketBase::ProcessAck: a partial ACK whose first unacknowledged
// segment was never retransmitted retransmits it at once, even when RFC 6675
// does not deem it lost (fewer than DupThresh segments SACKed above it);
// without the option, or once that segment was retransmitted, the partial
// ACK forces nothing.
func TestPartialRxt(t *testing.T) {
	for _, tc := range []struct {
		rec      string
		lostSACK []int // SACKed above segment 5 before the partial ACK
		want     bool  // segment 5 sent in response to the partial ACK
	}{
		{"prr:flight=pipe", []int{6}, false},
		{"prr:flight=pipe,partialrxt", []int{6}, true},
		{"sack:partialrxt", []int{6}, true},
		{"sack", []int{6}, false},
		// 5 is deemed lost (three SACKed above) and retransmitted before the
		// partial ACK: not again.
		{"prr:flight=pipe,partialrxt", []int{6, 7, 8, 9, 10, 11}, false},
	} {
		// 20 segments out; 0 and 5 lost.
		f := sackFixture(t, tc.rec, 20, 0)
		sackAck(f, 0, 1)
		sackAck(f, 0, 1, 2)
		if got := sackAck(f, 0, 1, 2, 3); !slices.Contains(got, 0) {
			t.Fatalf("%s: entering recovery sent %v, want the fast retransmission of 0", tc.rec, got)
		}
		sacked := []int{1, 2, 3, 4}
		sackAck(f, 0, sacked...)
		for _, s := range tc.lostSACK {
			sacked = append(sacked, s)
			sackAck(f, 0, sacked...)
		}
		// The retransmission of 0 arrives: the cumulative point moves to 5,
		// short of the recovery point (20).
		got := sackAck(f, 5, tc.lostSACK...)
		if has := slices.Contains(got, 5); has != tc.want {
			t.Errorf("%s, SACKed above 5 %v: partial ACK sent %v; segment 5 among them %v, want %v",
				tc.rec, tc.lostSACK, got, has, tc.want)
		}
	}
}
