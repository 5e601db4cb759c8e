package transport

import (
	"slices"
	"testing"
)

// lose0 starts a fixture of 20 segments in flight (of total; 0: unlimited)
// with segment 0 lost: three SACKs start recovery and its fast
// retransmission. It returns the fixture, the highest segment sent so far and
// a function that records what an ACK sent.
func lose0(t *testing.T, rec string, total int) (f *fixture, high *int, send func([]int) []int) {
	t.Helper()
	f = sackFixture(t, rec, 20, total)
	high = new(int)
	*high = 19
	send = func(got []int) []int {
		for _, s := range got {
			*high = max(*high, s)
		}
		return got
	}
	send(sackAck(f, 0, 1))
	send(sackAck(f, 0, 1, 2))
	if got := send(sackAck(f, 0, 1, 2, 3)); !slices.Contains(got, 0) {
		t.Fatalf("%s: entering recovery sent %v, want the fast retransmission of 0", rec, got)
	}
	return f, high, send
}

// episodeEnd plays an episode to its end with rec: 20 segments out, 0 lost,
// then rp, the first segment at the recovery point, lost; rp is deemed lost
// and retransmitted in the episode, and the ACK of 0's retransmission ends
// it while rp's retransmission is still in flight, with above (rp+1..rp+4)
// SACKed. It returns the fixture, the highest segment sent, rp and above.
func episodeEnd(t *testing.T, rec string) (f *fixture, high *int, rp int, above []int) {
	t.Helper()
	f, high, send := lose0(t, rec, 0)
	rp = int(sackOf(f).RecoveryPoint()) / testMSS
	// Every segment but 0 and rp arrives, one ACK each.
	sacked := []int{1, 2, 3}
	var rxt bool
	for k := 4; k <= rp+4; k++ {
		if k == rp {
			continue
		}
		if k > *high {
			t.Fatalf("%s: episode sent up to %d, want %d", rec, *high, k)
		}
		sacked = append(sacked, k)
		rxt = slices.Contains(send(sackAck(f, 0, sacked...)), rp) || rxt
	}
	if !rxt {
		t.Fatalf("%s: %d (the recovery point) not retransmitted in the first episode", rec, rp)
	}
	above = upTo(rp+1, rp+5)
	send(sackAck(f, rp, above...))
	if sackOf(f).InRecovery() {
		t.Fatalf("%s: still in recovery at the cumulative ACK of the recovery point", rec)
	}
	return f, high, rp, above
}

// TestNextSegEntry checks option nextseg at the start of an episode against
// ns-3 3.37's EnterRecovery and DoRetransmit: when an episode starts while
// the first unacknowledged segment's retransmission (from the previous
// episode) is still in flight, ns-3 does not resend it but sends NextSeg's
// choice, here one new segment; RFC 6675 §5 step 4.3, without the option,
// resends it.
func TestNextSegEntry(t *testing.T) {
	for _, tc := range []struct {
		rec        string
		wantResent bool // the head (rp) sent again at the second entry
		wantNew    bool // a segment never sent before goes out at the second entry
	}{
		{"prr:flight=pipe,bound=ns3,partialrxt", true, false},
		{"prr:flight=pipe,bound=ns3,partialrxt,nextseg", false, true},
		{"sack", true, false},
		{"sack:nextseg", false, true},
	} {
		f, high, rp, above := episodeEnd(t, tc.rec)
		// The next SACK starts a new episode with rp at its head.
		got := sackAck(f, rp, append(above, rp+5)...)
		if !sackOf(f).InRecovery() {
			t.Fatalf("%s: no second episode (sent %v)", tc.rec, got)
		}
		resent := slices.Contains(got, rp)
		newSeg := slices.ContainsFunc(got, func(s int) bool { return s > *high })
		if resent != tc.wantResent || newSeg != tc.wantNew {
			t.Errorf("%s: second entry sent %v (highest before %d): %d resent %v, want %v; new segment %v, want %v",
				tc.rec, got, *high, rp, resent, tc.wantResent, newSeg, tc.wantNew)
		}
	}
}

// TestNextSegPartial checks option nextseg on a partial ACK with partialrxt
// against ns-3 3.37's ProcessAck and DoRetransmit: a partial ACK whose new
// first segment was never retransmitted and is not deemed lost sends one new
// segment (NextSeg rule 2), not that segment (partialrxt alone); a segment
// marked lost still goes first (rule 1), and with nothing new to send the
// first segment is resent.
func TestNextSegPartial(t *testing.T) {
	for _, tc := range []struct {
		rec      string
		total    int   // segments the source has; 0: unlimited
		lostSACK []int // SACKed above segment 5 before the partial ACK
		want5    bool  // segment 5 sent in response to the partial ACK
		wantNew  bool  // a segment never sent before sent in response
	}{
		{"prr:flight=pipe,bound=ns3,partialrxt", 0, []int{6}, true, false},
		{"prr:flight=pipe,bound=ns3,partialrxt,nextseg", 0, []int{6}, false, true},
		// nothing new to send: the first segment, as DoRetransmit's fallback
		{"prr:flight=pipe,bound=ns3,partialrxt,nextseg", 20, []int{6}, true, false},
		{"sack:partialrxt,nextseg", 0, []int{6}, false, true},
	} {
		// 20 segments out; 0 and 5 lost.
		f, high, send := lose0(t, tc.rec, tc.total)
		sacked := []int{1, 2, 3, 4}
		send(sackAck(f, 0, sacked...))
		for _, s := range tc.lostSACK {
			sacked = append(sacked, s)
			send(sackAck(f, 0, sacked...))
		}
		// The retransmission of 0 arrives: the cumulative point moves to 5,
		// short of the recovery point.
		got := sackAck(f, 5, tc.lostSACK...)
		has5 := slices.Contains(got, 5)
		newSeg := slices.ContainsFunc(got, func(s int) bool { return s > *high })
		if has5 != tc.want5 || newSeg != tc.wantNew {
			t.Errorf("%s, %d segments: partial ACK sent %v (highest before %d); 5 among them %v, want %v; new segment %v, want %v",
				tc.rec, tc.total, got, *high, has5, tc.want5, newSeg, tc.wantNew)
		}
	}
}
