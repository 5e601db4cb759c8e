package transport

import (
	"slices"
	"testing"
)

// dupStep is one ACK of a duplicate-ACK sequence: the cumulative point and
// the SACKed segments it carries, and the segments it must release.
type dupStep struct {
	cum    int
	sacked []int
	want   []int
}

// runDupSteps feeds the steps to f and checks what each one releases.
func runDupSteps(t *testing.T, f *fixture, rec string, steps []dupStep) {
	t.Helper()
	for i, s := range steps {
		if got := sackAck(f, s.cum, s.sacked...); !slices.Equal(got, s.want) {
			t.Errorf("%s: ACK %d (cum %d, SACK %v): sent %v, want %v", rec, i+1, s.cum, s.sacked, got, s.want)
		}
	}
}

// TestRateHalvingDraftOnePerTwo holds option draft to the draft's rules on a
// window of 10 segments whose first one is lost (draft-mathis-tcp-
// ratehalving-00; awnd = snd.nxt - snd.fack + retran_data, segments):
//
//	ACK 1, SACK 1:     §4.4 the interval starts, prior_rhcwnd = 10; §4.6 snd.fack
//	                   advances 2 over one new hole: rhcwnd = 10 - 2/2 - 1/2 = 8.5;
//	                   awnd = 10 - 2 = 8, 8 + 1 > 8.5: nothing
//	ACK 2, SACK 1-2:   rhcwnd 8, awnd 7: new segment 10 (§5.4: one new segment
//	                   before the retransmission)
//	ACK 3, SACK 1-3:   DupThresh: the episode's fast retransmission of 0
//	ACK 4, 5:          rhcwnd 7, 6.5; awnd 11 - 5 + 1 = 7, 6: nothing
//	ACK 6:             rhcwnd 6, awnd 5: segment 11
//	ACK 7:             rhcwnd 5.5, awnd 5: nothing
//	ACK 8:             rhcwnd 5 (= ssthresh, half of 10), awnd 4: segment 12
//
// one segment per two delivered from the first duplicate ACK on.
func TestRateHalvingDraftOnePerTwo(t *testing.T) {
	for _, rec := range []string{"ratehalving:draft", "ratehalving:draft,lostretx"} {
		f := sackFixture(t, rec, 10, 0)
		runDupSteps(t, f, rec, []dupStep{
			{0, []int{1}, nil},
			{0, []int{1, 2}, []int{10}},
			{0, []int{1, 2, 3}, []int{0}},
			{0, []int{1, 2, 3, 4}, nil},
			{0, []int{1, 2, 3, 4, 5}, nil},
			{0, []int{1, 2, 3, 4, 5, 6}, []int{11}},
			{0, []int{1, 2, 3, 4, 5, 6, 7}, nil},
			{0, []int{1, 2, 3, 4, 5, 6, 7, 8}, []int{12}},
		})
		if !sackOf(f).InRecovery() {
			t.Errorf("%s: not in recovery after DupThresh SACKed segments", rec)
		}
	}
}

// TestRateHalvingDraftSmallWindow: the property behind the ETH study's
// finding that Rate-Halving has fewer "non-trigger" timeouts in small
// windows. With option draft the adjustment interval starts at the first
// duplicate ACK and the window never drops below one segment before
// recovery (max(prior_rhcwnd/4, 1 SMSS)), so each duplicate ACK that leaves
// nothing in the network beyond the holes releases a segment whose ACK is
// another duplicate: with 3 and even 2 segments in flight and the first
// lost, DupThresh duplicate ACKs arrive and the loss is repaired by fast
// retransmission. A sender without Limited Transmit (sack:nolt, the SACK
// stacks before RFC 3042) gets only the 2 or 1 duplicate ACKs of its window
// and must wait for the timeout.
//
// Window 3: ACK 1 (SACK 1): rhcwnd 3 - 2/2 - 1/2 = 1.5, awnd 1: nothing;
// ACK 2 (SACK 1-2): rhcwnd 1, awnd 0: segment 3; ACK 3 (SACK 1-3): DupThresh,
// fast retransmission of 0. Window 2: ACK 1: rhcwnd 2 - 1.5 = 0.5, raised to
// 1 segment, awnd 0: segment 2; ACK 2: segment 3; ACK 3: retransmission.
func TestRateHalvingDraftSmallWindow(t *testing.T) {
	for _, tc := range []struct {
		rec   string
		cwnd  int
		steps []dupStep
	}{
		{"ratehalving:draft", 3, []dupStep{{0, []int{1}, nil}, {0, []int{1, 2}, []int{3}}, {0, []int{1, 2, 3}, []int{0}}}},
		{"ratehalving:draft", 2, []dupStep{{0, []int{1}, []int{2}}, {0, []int{1, 2}, []int{3}}, {0, []int{1, 2, 3}, []int{0}}}},
		{"sack:nolt", 3, []dupStep{{0, []int{1}, nil}, {0, []int{1, 2}, nil}}},
		{"fack:nolt", 3, []dupStep{{0, []int{1}, nil}, {0, []int{1, 2}, nil}}},
		{"ratehalving:nolt", 3, []dupStep{{0, []int{1}, nil}, {0, []int{1, 2}, nil}}},
	} {
		f := sackFixture(t, tc.rec, tc.cwnd, 0)
		runDupSteps(t, f, tc.rec, tc.steps)
		wantRec := len(tc.steps) == 3
		if got := sackOf(f).InRecovery(); got != wantRec {
			t.Errorf("%s, window %d: in recovery %v, want %v", tc.rec, tc.cwnd, got, wantRec)
		}
	}
}

// TestRateHalvingDraftReordering: §4.8. A SACK block that a cumulative ACK
// then covers, with no SACK block left and no retransmission sent, was
// reordering: the interval ends and rhcwnd returns to prior_rhcwnd (the
// controller's cwnd of 10 segments), so the cumulative ACK of 2 segments
// releases 2 new ones (within the interval rhcwnd would stay 8.5 against
// awnd 10 - 2 = 8: none).
func TestRateHalvingDraftReordering(t *testing.T) {
	f := sackFixture(t, "ratehalving:draft", 10, 0)
	runDupSteps(t, f, "ratehalving:draft", []dupStep{
		{0, []int{1}, nil},
		{2, nil, []int{10, 11}},
	})
	r := f.c.rec.(*RateHalving)
	if r.adj || r.Window() != 0 {
		t.Errorf("after reordering: adjustment interval %v, window %d; want none, 0", r.adj, r.Window())
	}
}

// TestSACKNoLT: with nolt the SACK strategies release nothing beyond cwnd
// on the duplicate ACKs before recovery (FlightSize, SACKed data included,
// against cwnd), still enter recovery at DupThresh with the fast
// retransmission, and send by pipe from then on; without nolt each of the
// first duplicate ACKs releases a segment (RFC 6675 pipe).
func TestSACKNoLT(t *testing.T) {
	for _, tc := range []struct {
		rec  string
		want [][]int
	}{
		{"sack", [][]int{{10}, {11}, {0}}},
		{"sack:nolt", [][]int{nil, nil, {0}}},
		{"fack:nolt", [][]int{nil, nil, {0}}},
		{"prr:nolt", [][]int{nil, nil, {0}}},
	} {
		f := sackFixture(t, tc.rec, 10, 0)
		var steps []dupStep
		for i, w := range tc.want {
			steps = append(steps, dupStep{0, []int{1, 2, 3}[:i+1], w})
		}
		runDupSteps(t, f, tc.rec, steps)
		if !sackOf(f).InRecovery() {
			t.Errorf("%s: not in recovery after DupThresh SACKed segments", tc.rec)
		}
	}
}
