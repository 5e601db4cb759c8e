package transport

import (
	"slices"
	"strings"
	"testing"
)

// TestPRRSndCnt checks the RFC 6937 §3 formula in segment units (mss = 1).
func TestPRRSndCnt(t *testing.T) {
	cases := []struct {
		name                                                string
		ssrb                                                bool
		prrDelivered, prrOut, delivered, pipe, ssthresh, fs int
		want                                                int
	}{
		// Proportional part (pipe > ssthresh), RecoverFS 20, ssthresh 10:
		// CEIL(prr_delivered*10/20) - prr_out sends on alternate ACKs.
		{"PRR first ACK", true, 1, 0, 1, 18, 10, 20, 1},
		{"PRR second ACK", true, 2, 1, 1, 17, 10, 20, 0},
		{"PRR third ACK", true, 3, 1, 1, 17, 10, 20, 1},
		{"PRR bound irrelevant above ssthresh", false, 3, 1, 1, 17, 10, 20, 1},
		{"PRR ssthresh 14 of 20 (0.7 reduction)", true, 10, 6, 1, 15, 14, 20, 1},
		// Reduction bound (pipe <= ssthresh): heavy losses left pipe at 5.
		{"CRB: no more than delivered - out", false, 8, 6, 2, 5, 10, 20, 2},
		{"SSRB: max(delivered-out, DeliveredData) + MSS", true, 8, 6, 2, 5, 10, 20, 3},
		{"CRB: nothing owed", false, 7, 7, 1, 5, 10, 20, 0},
		{"SSRB: slow start, DeliveredData + MSS", true, 7, 7, 1, 5, 10, 20, 2},
		{"both capped by ssthresh - pipe", true, 20, 2, 4, 9, 10, 20, 1},
		{"CRB capped by ssthresh - pipe", false, 20, 2, 4, 9, 10, 20, 1},
	}
	for _, tc := range cases {
		if got := PRRSndCnt(tc.ssrb, tc.prrDelivered, tc.prrOut, tc.delivered, tc.pipe, tc.ssthresh, tc.fs, 1); got != tc.want {
			t.Errorf("%s: sndcnt got %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestPRRSndCntNS3 checks ns-3 3.37's TcpPrrRecovery::DoRecovery (SSRB) in
// segment units: the proportional part as RFC 6937; at or below ssthresh the
// SSRB bound only for an ACK of retransmitted data, else DeliveredData.
func TestPRRSndCntNS3(t *testing.T) {
	for _, tc := range []struct {
		name                                                string
		prrDelivered, prrOut, delivered, pipe, ssthresh, fs int
		retxAcked                                           bool
		want                                                int
	}{
		{"proportional", 3, 1, 1, 17, 10, 20, false, 1},
		{"proportional, retransmission acknowledged", 2, 1, 1, 17, 10, 20, true, 0},
		{"below ssthresh: DeliveredData", 8, 6, 2, 5, 10, 20, false, 2},
		{"below ssthresh, nothing owed: DeliveredData", 7, 7, 1, 5, 10, 20, false, 1},
		{"below ssthresh, retransmission acknowledged: SSRB", 8, 6, 2, 5, 10, 20, true, 3},
		{"capped by ssthresh - pipe", 20, 2, 4, 9, 10, 20, true, 1},
	} {
		if got := PRRSndCntNS3(tc.prrDelivered, tc.prrOut, tc.delivered, tc.pipe, tc.ssthresh, tc.fs, 1, tc.retxAcked); got != tc.want {
			t.Errorf("%s: sndcnt got %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestPRRSingleLoss: one loss in a 20-segment window (RFC 6937 appendix
// style): after the fast retransmission PRR sends on alternate ACKs and
// reaches ssthresh (10 MSS) in flight as recovery ends, whatever the bound.
func TestPRRSingleLoss(t *testing.T) {
	for _, rec := range []string{"prr", "prr:bound=crb"} {
		f := sackFixture(t, rec, 20, 0)
		r := f.c.rec.(*PRR)
		if got := sackAck(f, 0, 1, 2, 3); !slices.Equal(got, []int{0}) {
			t.Fatalf("%s entry: sent %v, want [0]", rec, got)
		}
		if _, out, fs := r.PRRState(); fs != 20*testMSS || out != testMSS {
			t.Errorf("%s: RecoverFS %d prr_out %d, want %d and %d", rec, fs, out, 20*testMSS, testMSS)
		}
		var perAck []int
		for k := 4; k <= 19; k++ {
			perAck = append(perAck, len(sackAck(f, 0, upTo(1, k+1)...)))
		}
		// prr_delivered = k-3 MSS after SACK of k, prr_out counts the fast
		// retransmission. While pipe > ssthresh: CEIL((k-3)*10/20) - prr_out,
		// a send on alternate ACKs (k = 6, 8, 10, 12); at k = 14 pipe reaches
		// ssthresh; then the bound sends one per ACK (ssthresh - pipe = 1).
		want := []int{0, 0, 1, 0, 1, 0, 1, 0, 1, 0, 0, 1, 1, 1, 1, 1}
		if !slices.Equal(perAck, want) {
			t.Errorf("%s: sends per ACK got %v, want %v", rec, perAck, want)
		}
		delivered, out, _ := r.PRRState()
		if delivered != 16*testMSS || out != 10*testMSS {
			t.Errorf("%s: prr_delivered %d prr_out %d MSS, want 16 and 10", rec, delivered/testMSS, out/testMSS)
		}
		if p := r.Pipe(&f.c.sb); p != f.tcc().ssthresh {
			t.Errorf("%s: pipe at the end of the reduction %d, want ssthresh %d", rec, p, f.tcc().ssthresh)
		}
		f.ack(r.RecoveryPoint(), 0)
		if r.InRecovery() {
			t.Errorf("%s: still in recovery after the ACK of RecoveryPoint", rec)
		}
	}
}

// TestPRRBounds: with 10 of 20 segments lost, pipe falls below ssthresh;
// PRR-CRB sends no more than was delivered (packet conservation), PRR-SSRB
// one segment more per ACK (slow start).
func TestPRRBounds(t *testing.T) {
	for _, tc := range []struct {
		rec  string
		want [][]int // segments sent on entry and on the following ACKs
	}{
		// Entry (SACK 10-12): 0-9 lost, pipe 7; fast retransmission of 0 (prr_out 1).
		// SACK 13: prr_delivered 1, pipe 7: CRB min(3, 1-1) = 0; SSRB min(3, max(0,1)+1) = 2.
		// SACK 14: prr_delivered 2: CRB min(3, 2-1)=1; SSRB pipe 8: min(2, max(-1,1)+1)=2.
		{"prr:bound=crb", [][]int{{0}, nil, {1}, {2}}},
		{"prr:bound=ssrb", [][]int{{0}, {1, 2}, {3, 4}, {5}}},
		// ns-3's DoRecovery counts the entry ACK: prr_delivered 3, pipe 7:
		// min(3, DeliveredData 3) = 3 (0, 1, 2); then each SACK of one
		// segment (no retransmission acknowledged): DeliveredData = 1.
		{"prr:bound=ns3", [][]int{{0, 1, 2}, {3}, {4}, {5}}},
	} {
		f := sackFixture(t, tc.rec, 20, 0)
		got := [][]int{sackAck(f, 0, 10, 11, 12)}
		got = append(got, sackAck(f, 0, upTo(10, 14)...))
		got = append(got, sackAck(f, 0, upTo(10, 15)...))
		got = append(got, sackAck(f, 0, upTo(10, 16)...))
		if !slices.EqualFunc(got, tc.want, slices.Equal[[]int]) {
			t.Errorf("%s: sent %v, want %v", tc.rec, got, tc.want)
		}
	}
}

// TestRecoveryFlight checks what ssthresh is computed from on entering
// recovery: by default RFC 6675 §5 step 4.2's FlightSize (bounded by cwnd),
// with flight=pipe the pipe once the losses are marked (as ns-3). A 20-segment
// flight, segments 1-3 SACKed and segment 0 deemed lost: FlightSize 20, pipe
// 20-3-1 = 16; the test controller halves what it is told.
func TestRecoveryFlight(t *testing.T) {
	for _, tc := range []struct {
		rec  string
		want int // ssthresh, segments
	}{
		{"prr", 10},
		{"prr:flight=flightsize", 10},
		{"prr:flight=pipe", 8},
		{"sack:flight=pipe", 8},
	} {
		f := sackFixture(t, tc.rec, 20, 0)
		sackAck(f, 0, 1, 2, 3)
		if got := f.tcc().ssthresh / testMSS; got != tc.want {
			t.Errorf("%s: ssthresh %d segments, want %d", tc.rec, got, tc.want)
		}
	}
	if _, err := newRecovery("prr:flight=cwnd", RecoveryEnv{MSS: testMSS}); err == nil || !strings.Contains(err.Error(), "flight") {
		t.Errorf("flight=cwnd: got %v, want an error naming the parameter", err)
	}
}
