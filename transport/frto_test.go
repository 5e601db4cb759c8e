package transport

import (
	"slices"
	"testing"
	"time"
)

// TestFRTO checks F-RTO (RFC 5682) with its two ACKs, on a timeout of ten
// outstanding segments (no timestamps echoed, so only F-RTO can tell):
//
//   - the timeout resends segment 0 only;
//   - first ACK advances (below recover): two new segments go out whatever
//     cwnd; second ACK advances again: spurious, nothing else is resent, the
//     RTO counts as spurious and (undo) the window is restored;
//   - second ACK only SACKs a new segment: conventional recovery, segments
//     1..9 marked lost;
//   - first ACK is a duplicate: conventional recovery at once.
func TestFRTO(t *testing.T) {
	for _, tc := range []struct {
		name      string
		first     func(f *fixture) // the first ACK after the timeout
		second    func(f *fixture) // the second (nil: none)
		newAfter1 []int            // segments sent after the first ACK
		spurious  bool
	}{
		{"spurious", func(f *fixture) { f.ack(uint64(testMSS), 0) }, func(f *fixture) { f.ack(uint64(2*testMSS), 0) }, []int{10, 11}, true},
		{"loss: second ACK a duplicate", func(f *fixture) { f.ack(uint64(testMSS), 0) }, func(f *fixture) { f.ack(uint64(testMSS), 0, seg(10)) }, []int{10, 11}, false},
		{"loss: first ACK a duplicate", func(f *fixture) { f.ack(0, 0, seg(5)) }, nil, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := sackFixture(t, "sack:frto,undo", 10, 0)
			f.now = f.now.Add(time.Millisecond)
			f.runTimers(f.c.rtoAt)
			if got := sentSegs(f); !slices.Equal(got, []int{0}) {
				t.Fatalf("at the timeout sent %v, want [0] only", got)
			}
			if got, want := f.c.sb.LostBytes(), 0; got != want {
				t.Fatalf("lost bytes after the retransmission: got %d, want %d (nothing else marked)", got, want)
			}
			lost0 := f.c.stats.Lost
			tc.first(f)
			got := sentSegs(f)
			if tc.newAfter1 != nil && !slices.Equal(got, tc.newAfter1) {
				t.Fatalf("after the first ACK sent %v, want %v (two new segments)", got, tc.newAfter1)
			}
			if tc.second != nil {
				tc.second(f)
				got = append(got, sentSegs(f)...)
			}
			l := sackOf(f)
			sp, conv := l.FRTOStats()
			if tc.spurious {
				if sp != 1 || conv != 0 {
					t.Errorf("F-RTO verdicts: spurious %d conventional %d, want 1, 0", sp, conv)
				}
				if f.c.stats.RTOCauses[RTOSpurious] != 1 || f.c.stats.Undos != 1 {
					t.Errorf("RTO causes %v, undos %d: want the RTO counted spurious and undone", f.c.stats.RTOCauses, f.c.stats.Undos)
				}
				for _, s := range got {
					if s < 10 {
						t.Errorf("segment %d resent after a spurious timeout", s)
					}
				}
				return
			}
			if sp != 0 || conv != 1 {
				t.Errorf("F-RTO verdicts: spurious %d conventional %d, want 0, 1", sp, conv)
			}
			if f.c.stats.RTOCauses[RTOSpurious] != 0 {
				t.Errorf("RTO counted spurious after a real loss")
			}
			if f.c.stats.Lost-lost0 < 8 {
				t.Errorf("conventional recovery marked %d segments lost, want the 8-9 sent before the timeout", f.c.stats.Lost-lost0)
			}
		})
	}
}
