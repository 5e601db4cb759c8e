package transport

import "testing"

// TestNS3EntryAfterEpisode checks option ns3entry against ns-3 3.37's DupAck
// (tcp-socket-base.cc:1787): after an episode ends with SACKed segments above
// a hole whose retransmission is still in flight, RFC 6675 step (1.b),
// IsLost(HighACK + 1), holds at the first SACK and starts the next episode
// there; ns-3 tests IsLost(HighACK + SMSS), the SACKed segment after the
// hole, which is never lost, and starts it at the DupThresh-th duplicate ACK.
func TestNS3EntryAfterEpisode(t *testing.T) {
	for _, tc := range []struct {
		rec      string
		wantACKs int // duplicate ACKs (one new SACKed segment each) until the second episode
	}{
		{"prr:flight=pipe,bound=ns3,partialrxt,nextseg", 1},
		{"prr:flight=pipe,bound=ns3,partialrxt,nextseg,ns3entry", 3},
		{"sack", 1},
		{"sack:ns3entry", 3},
	} {
		f, _, rp, above := episodeEnd(t, tc.rec)
		got := 0
		for k := rp + 5; k < rp+12 && !sackOf(f).InRecovery(); k++ {
			above = append(above, k)
			sackAck(f, rp, above...)
			got++
		}
		if got != tc.wantACKs || !sackOf(f).InRecovery() {
			t.Errorf("%s: second episode after %d duplicate ACKs (in recovery %v), want %d",
				tc.rec, got, sackOf(f).InRecovery(), tc.wantACKs)
		}
	}
}

// TestNS3EntryAdvancingSACK checks that with option ns3entry an ACK that moves
// snd.una and SACKs new data counts as a duplicate ACK (ns-3 3.37's
// ProcessAck: isDupack is "the scoreboard was updated", tcp-socket-base.cc:
// 1965, and the count is not reset, :2024-2027): segment 1 lost, the ACKs
// acknowledge 0 and SACK 2, then SACK 3, then 4. ns-3 counts three duplicate
// ACKs and starts the episode at the third, where only one segment (2) lies
// between the hole and the segment its step (1.b) tests; without counting
// the first ACK the count would be two and the test false.
func TestNS3EntryAdvancingSACK(t *testing.T) {
	for _, rec := range []string{"sack:ns3entry", "prr:flight=pipe,bound=ns3,partialrxt,ns3entry", "sack"} {
		f := sackFixture(t, rec, 20, 0)
		var got []bool
		for _, sacked := range [][]int{{2}, {2, 3}, {2, 3, 4}} {
			sackAck(f, 1, sacked...)
			got = append(got, sackOf(f).InRecovery())
		}
		want := []bool{false, false, true}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("%s: in recovery after ACK %d: %v, want %v (all: %v)", rec, i+1, got[i], want[i], got)
			}
		}
	}
}
