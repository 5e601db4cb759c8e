package transport

import (
	"slices"
	"testing"
)

// TestFACKTrigger: recovery starts when snd.fack - snd.una > 3*MSS, even on
// a single duplicate ACK, where RFC 6675 waits for DupThresh SACKed segments.
func TestFACKTrigger(t *testing.T) {
	cases := []struct {
		rec    string
		sacked []int
		want   bool
	}{
		{"fack", []int{2}, false}, // snd.fack - snd.una = 3 MSS
		{"fack", []int{3}, true},  // 4 MSS
		{"fack", []int{4}, true},
		{"sack", []int{4}, false}, // one SACKed segment: not IsLost
		{"sack", []int{2, 3, 4}, true},
	}
	for _, tc := range cases {
		f := sackFixture(t, tc.rec, 20, 20)
		sackAck(f, 0, tc.sacked...)
		if got := f.c.rec.InRecovery(); got != tc.want {
			t.Errorf("%s SACK %v: InRecovery got %v, want %v", tc.rec, tc.sacked, got, tc.want)
		}
	}
}

// TestFACKAwnd checks awnd = snd.nxt - snd.fack + retran_data and the send
// rule awnd < cwnd (cwnd = ssthresh = 10 MSS after a 20-segment flight).
func TestFACKAwnd(t *testing.T) {
	f := sackFixture(t, "fack", 20, 0)
	r := f.c.rec.(*FACK)
	f.ack(0, 0, span(1, 6)) // snd.fack = 6 MSS: enter, segment 0 lost
	sb := &f.c.sb
	if got, want := Fack(sb), uint64(6*testMSS); got != want {
		t.Fatalf("snd.fack got %d, want %d", got, want)
	}
	if got, want := r.Awnd(sb), 14*testMSS; got != want {
		t.Errorf("awnd before the retransmission got %d, want snd.nxt-snd.fack = %d", got, want)
	}
	if got := sentSegs(f); !slices.Equal(got, []int{0}) {
		t.Errorf("sent %v, want only the fast retransmission [0] (awnd 15 >= cwnd 10)", got)
	}
	if got, want := r.RetranData(sb), testMSS; got != want {
		t.Errorf("retran_data got %d, want %d", got, want)
	}
	if got, want := r.Awnd(sb), 15*testMSS; got != want {
		t.Errorf("awnd after the retransmission got %d, want %d", got, want)
	}
	// SACK of k moves snd.fack to k+1: awnd = 20 - (k+1) + 1 = 20 - k, so
	// sending resumes at k = 11, one new segment per ACK (each keeps awnd at cwnd).
	var perAck []int
	for k := 6; k <= 14; k++ {
		perAck = append(perAck, len(sackAck(f, 0, upTo(1, k+1)...)))
		if a := r.Awnd(sb); k >= 10 && a > f.tcc().ssthresh {
			t.Errorf("after SACK of %d: awnd %d > cwnd %d after sending", k, a, f.tcc().ssthresh)
		}
	}
	if want := []int{0, 0, 0, 0, 0, 1, 1, 1, 1}; !slices.Equal(perAck, want) {
		t.Errorf("segments sent per ACK got %v, want %v", perAck, want)
	}
	// The retransmission of 0 is cumulatively acknowledged: retran_data is 0.
	sackAck(f, 1, upTo(2, 15)...)
	if got := r.RetranData(sb); got != 0 {
		t.Errorf("retran_data after the retransmission was acknowledged got %d, want 0", got)
	}
}
