package transport

import (
	"slices"
	"testing"
	"time"
)

// TestLostRetransmission: the fast retransmission of segment 0 is lost; new
// segment 20, sent after it, is SACKed. With lostretx segment 0 is
// retransmitted again at once (no RTO); without it only the RTO repairs it,
// and that RTO is classified as a lost retransmission.
func TestLostRetransmission(t *testing.T) {
	for _, rec := range []string{"sack", "fack", "ratehalving", "prr"} {
		for _, on := range []bool{false, true} {
			spec := rec
			if on {
				spec += ":lostretx"
			}
			f := sackFixture(t, spec, 20, 0)
			r := sackOf(f)
			if got := sackAck(f, 0, 1, 2, 3); len(got) == 0 || got[0] != 0 {
				t.Fatalf("%s: entry sent %v, want the fast retransmission of 0 first", spec, got)
			}
			// SACK 4..k until segment 20 (sent after the retransmission) went out.
			k := 3
			for f.c.sb.Nxt() <= uint64(20*testMSS) && k < 19 {
				k++
				sackAck(f, 0, upTo(1, k+1)...)
			}
			if f.c.sb.Nxt() <= uint64(20*testMSS) {
				t.Fatalf("%s: segment 20 never sent", spec)
			}
			got := sackAck(f, 0, append(upTo(1, k+1), 20)...)
			resent := slices.Contains(got, 0)
			// The strategy's window may defer the retransmission to the
			// next ACK (PRR on alternate ACKs).
			if !resent {
				k++
				got = append(got, sackAck(f, 0, append(upTo(1, k+1), 20)...)...)
				resent = slices.Contains(got, 0)
			}
			if resent != on {
				t.Errorf("%s: after SACK of 20 sent %v; segment 0 resent %v, want %v", spec, got, resent, on)
			}
			if want := map[bool]uint64{false: 0, true: 1}[on]; r.LostRetransmissions() != want {
				t.Errorf("%s: lost retransmissions detected %d, want %d", spec, r.LostRetransmissions(), want)
			}
			if !on {
				f.now = f.now.Add(5 * time.Second)
				f.ep.OnDeadline(f.now)
				st := f.c.Stats()
				if st.RTOs != 1 || st.RTOCauses[RTOLostRetransmission] != 1 {
					t.Errorf("%s: RTOs %d causes %v, want 1 lost_retransmission", spec, st.RTOs, st.RTOCauses)
				}
				continue
			}
			f.ack(f.c.sb.Nxt(), 0)
			f.now = f.now.Add(5 * time.Second)
			f.ep.OnDeadline(f.now)
			if st := f.c.Stats(); st.RTOs != 0 {
				t.Errorf("%s: %d RTOs, want none", spec, st.RTOs)
			}
		}
	}
}

// TestClassifyRTO checks each RTO cause on hand-built scoreboards.
func TestClassifyRTO(t *testing.T) {
	cases := []struct {
		name    string
		n       int   // segments outstanding
		sacked  []int // SACKed segments
		retrans []int // retransmitted segments
		want    RTOCause
	}{
		{"nothing outstanding", 0, nil, nil, RTOOther},
		{"oldest segment retransmitted", 10, []int{1, 2}, []int{0}, RTOLostRetransmission},
		{"two segments: at most one dupack", 2, nil, nil, RTOTooFewDupAcks},
		{"three segments: two dupacks < DupThresh", 3, []int{1, 2}, nil, RTOTooFewDupAcks},
		{"four segments, none SACKed: burst", 4, nil, nil, RTOBurstLoss},
		{"ten segments, two holes", 10, []int{1, 2, 3, 4, 6, 7, 8, 9}, nil, RTOBurstLoss},
		{"one hole with enough SACKed above", 10, []int{1, 2, 3, 4, 5, 6, 7, 8, 9}, nil, RTOOther},
		{"a later retransmission does not count", 10, nil, []int{5}, RTOBurstLoss},
	}
	for _, tc := range cases {
		var sb Scoreboard
		for i := 0; i < tc.n; i++ {
			sb.push(Segment{Off: uint64(i * 100), Len: 100})
		}
		for _, i := range tc.sacked {
			sb.sack(uint64(i*100), uint64(i*100+100), func(*Segment) {})
		}
		for _, i := range tc.retrans {
			sb.retransmitted(i, 0, 0)
		}
		if got := ClassifyRTO(&sb, DupThresh); got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestLostRetransmissionKarn: the SACK of a retransmitted segment may be for
// its original transmission, so it does not prove that retransmissions sent
// before its retransmission were lost (no cascade of spurious resends).
func TestLostRetransmissionKarn(t *testing.T) {
	f := sackFixture(t, "sack:lostretx", 20, 0)
	r := sackOf(f)
	// 0 and 4 missing: enter, both lost, fast retransmission of 0.
	if got := sackAck(f, 0, 1, 2, 3, 5, 6, 7); !slices.Equal(got, []int{0}) {
		t.Fatalf("entry: sent %v, want [0]", got)
	}
	var sent []int
	for k := 8; k <= 11; k++ { // pipe 12 -> 9: 4 is retransmitted after 0
		sent = append(sent, sackAck(f, 0, append([]int{1, 2, 3}, upTo(5, k+1)...)...)...)
	}
	if !slices.Equal(sent, []int{4}) {
		t.Fatalf("sent %v, want the retransmission of 4", sent)
	}
	// The original 4 arrives late and is SACKed; 0's retransmission is still
	// in flight and must not be declared lost.
	got := sackAck(f, 0, upTo(1, 13)...)
	if slices.Contains(got, 0) || r.LostRetransmissions() != 0 {
		t.Errorf("sent %v, lost retransmissions %d: want 0 neither resent nor declared lost", got, r.LostRetransmissions())
	}
}
