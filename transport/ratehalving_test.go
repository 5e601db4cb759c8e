package transport

import (
	"slices"
	"testing"
)

// TestRateHalving: after a single loss in a 20-segment window (ssthresh 10
// MSS), one segment is sent per two segments delivered until the window has
// come down to ssthresh; from then on one per segment delivered; the window
// never drops below ssthresh nor exceeds pipe + maxburst segments.
func TestRateHalving(t *testing.T) {
	f := sackFixture(t, "ratehalving", 20, 0)
	r := f.c.rec.(*RateHalving)
	if got := sackAck(f, 0, 1, 2, 3); !slices.Equal(got, []int{0}) {
		t.Fatalf("entry: sent %v, want the fast retransmission [0]", got)
	}
	ss := f.tcc().ssthresh
	if ss != 10*testMSS {
		t.Fatalf("ssthresh %d, want 10 MSS", ss)
	}
	var perAck []int
	for k := 4; k <= 27; k++ {
		sent := sackAck(f, 0, upTo(1, k+1)...)
		perAck = append(perAck, len(sent))
		if w := r.Window(); w < ss {
			t.Errorf("after SACK of %d: window %d below ssthresh %d", k, w, ss)
		}
		if w, p := r.Window(), r.Pipe(&f.c.sb); w > p+RateHalvingMaxBurst*testMSS {
			t.Errorf("after SACK of %d: window %d > pipe %d + maxburst", k, w, p)
		}
	}
	// Reduction from pipe 17 to 10 MSS at one send per two ACKs takes 14
	// ACKs (7 sends), then one send per ACK.
	reduce, hold := perAck[:14], perAck[14:]
	if got := sum(reduce); got != 7 {
		t.Errorf("sends during the reduction got %d over 14 ACKs (%v), want 7 (one per two)", got, reduce)
	}
	for i := 0; i+1 < len(reduce); i += 2 {
		if reduce[i]+reduce[i+1] != 1 {
			t.Errorf("ACKs %d,%d sent %v, want exactly one segment per two ACKs", 4+i, 5+i, reduce[i:i+2])
		}
	}
	for i, n := range hold {
		if n != 1 {
			t.Errorf("after the reduction: ACK %d sent %d, want 1 (window held at ssthresh)", 18+i, n)
		}
	}
	if w := r.Window(); w != ss {
		t.Errorf("final window got %d, want ssthresh %d", w, ss)
	}
}

// TestRateHalvingBurstBound: when several losses make pipe fall, the window
// follows pipe + 1 segment (no burst), where plain SACK would send the whole
// cwnd - pipe at once.
func TestRateHalvingBurstBound(t *testing.T) {
	for _, tc := range []struct {
		rec      string
		maxBurst int // largest number of segments sent in response to the ACK
	}{
		{"ratehalving", 1},
		{"ratehalving:maxburst=2", 2},
		{"sack", 3},
	} {
		// 20 segments, 0..9 lost; the ACK SACKing 10..12 declares 0..9
		// lost: pipe 7 MSS < ssthresh 10 MSS.
		f := sackFixture(t, tc.rec, 20, 0)
		got := sackAck(f, 0, 10, 11, 12)
		if len(got) != tc.maxBurst {
			t.Errorf("%s: sent %v on entry, want %d segments", tc.rec, got, tc.maxBurst)
		}
	}
}

func sum(s []int) int {
	n := 0
	for _, v := range s {
		n += v
	}
	return n
}

// TestRateHalvingSmallWindow: the property behind Rate-Halving's fewer
// "non-trigger" timeouts in small windows (draft-mathis-tcp-ratehalving: the
// sender keeps transmitting on the first duplicate ACKs instead of waiting
// for the third): with a window of 3 segments and the first one lost, each of
// the first two duplicate ACKs releases one new segment, so their ACKs make
// the third duplicate ACK and the loss is repaired by fast retransmission,
// not by a timeout. The SACK family shares the rule (RFC 6675 §5 counts
// SACKed segments out of pipe), so every member is held to it.
func TestRateHalvingSmallWindow(t *testing.T) {
	for _, rec := range []string{"ratehalving", "ratehalving:lostretx", "sack", "fack"} {
		f := sackFixture(t, rec, 3, 0) // segments 0, 1, 2 in flight; 0 is lost
		steps := []struct {
			sacked []int
			want   []int
		}{
			{[]int{1}, []int{3}},          // first duplicate ACK: one new segment
			{[]int{1, 2}, []int{4}},       // second: another
			{[]int{1, 2, 3}, []int{0}},    // third: fast retransmission of 0
			{[]int{1, 2, 3, 4}, []int{5}}, // recovery goes on, self-clocked
		}
		for i, s := range steps {
			if got := sackAck(f, 0, s.sacked...); !slices.Equal(got, s.want) {
				t.Errorf("%s: duplicate ACK %d (SACK %v): sent %v, want %v", rec, i+1, s.sacked, got, s.want)
			}
		}
		if !sackOf(f).InRecovery() {
			t.Errorf("%s: not in fast recovery after three duplicate ACKs", rec)
		}
		if n := f.c.Stats().RTOs; n != 0 {
			t.Errorf("%s: %d timeouts, want 0", rec, n)
		}
	}
}
