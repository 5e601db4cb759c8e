package perf

import (
	"context"
	"testing"
	"time"

	"cclab/link"
)

// TestECNThroughREDRelay runs transfers through the userspace relay with a
// RED/ECN queue at 20 Mbit/s in each direction, forward and reverse: with
// -ecn the transfer negotiates ECN, its data leaves ECT(0), the relay marks
// CE instead of dropping early, the receiver counts exactly the relay's marks,
// the sender receives ECN-Echo and its controller reduces; without -ecn
// nothing is negotiated and the relay marks nothing. Counts, not timing.
func TestECNThroughREDRelay(t *testing.T) {
	if testing.Short() {
		t.Skip("live loopback run through the relay")
	}
	srv, _ := startServer(t, ServerConfig{AllowReverse: true})
	r := startHopRelay(t, srv.Addr().String(), 3, link.Config{Rate: 20e6, Delay: 5 * time.Millisecond, Queue: "red:min=5,max=15,maxp=0.1,limit=100p,ecn"})
	for _, tc := range []struct {
		name         string
		reverse, ecn bool
	}{
		{"forward", false, true},
		{"reverse", true, true},
		{"forward-no-ecn", false, false},
	} {
		dir := 0 // the hop the data crosses: client→receiver, or back for -R
		if tc.reverse {
			dir = 1
		}
		before := r.HopStats(dir)[0].Marks
		res, err := Run(context.Background(), ClientConfig{Addr: r.Addr().String(), Duration: 1500 * time.Millisecond,
			Reverse: tc.reverse, ECN: tc.ecn, CC: "reno"})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		marks := r.HopStats(dir)[0].Marks - before
		x := res.End.ECN
		if x == nil {
			t.Fatalf("%s: end.ecn missing", tc.name)
		}
		t.Logf("%s: %.2f Mbit/s, relay marks %d, ECN %+v", tc.name, res.End.ThroughputBps/1e6, marks, *x)
		if !tc.ecn {
			if x.Requested || x.Negotiated || x.Validated || x.ECTSent != 0 || marks != 0 || x.Codepoint != "Not-ECT" {
				t.Errorf("%s: got %+v with %d relay marks, want nothing negotiated, Not-ECT and no marks", tc.name, *x, marks)
			}
			continue
		}
		if !x.Requested || !x.Negotiated || !x.Validated || x.Codepoint != "ECT(0)" {
			t.Errorf("%s: requested/negotiated/validated/codepoint = %v/%v/%v/%s, want true/true/true/ECT(0)",
				tc.name, x.Requested, x.Negotiated, x.Validated, x.Codepoint)
		}
		if marks == 0 {
			t.Errorf("%s: the relay marked nothing (a greedy Reno flow fills a 20 Mbit/s RED queue)", tc.name)
		}
		if x.CERecv != marks {
			t.Errorf("%s: receiver counted %d CE, want the relay's %d marks", tc.name, x.CERecv, marks)
		}
		if x.ECTSent == 0 || x.ECTRecv+x.CERecv > x.ECTSent {
			t.Errorf("%s: ECT(0) sent %d, received %d ECT + %d CE: want > 0 sent and no more received", tc.name, x.ECTSent, x.ECTRecv, x.CERecv)
		}
		if x.ECEAcks == 0 || x.Reductions == 0 || x.Reductions > x.CERecv {
			t.Errorf("%s: %d ECE ACKs, %d reductions for %d CE: want ECE ACKs and 1..CE reductions", tc.name, x.ECEAcks, x.Reductions, x.CERecv)
		}
	}
}
