package transport

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"cclab/event"
)

// lossSetup sends 10 segments with a 10-MSS window, ACKs segment 0 (so 11
// segments were sent: 0..10) and returns with segment 1 "lost".
func lossSetup(t *testing.T, recovery string) *fixture {
	f := newFixture(t, Config{CC: "testcc:cwnd=10", Recovery: recovery}, 1<<30, false)
	f.c.SetSource(NewPatternSource(1), -1)
	if got := len(f.drain()); got != 10 {
		t.Fatalf("initial flight: got %d datagrams, want 10 (cwnd 10 MSS)", got)
	}
	f.now = f.now.Add(50 * time.Millisecond)
	f.ack(seg(1).Start, f.sent[0].ts)
	if got := f.dataOffsets(); len(f.drain()) != 1 {
		t.Fatalf("after first ACK: sent %v, want one new segment", got)
	}
	return f
}

func hasCall(f *fixture, s string) int {
	n := 0
	for _, c := range f.tcc().calls {
		if strings.HasPrefix(c, s) {
			n++
		}
	}
	return n
}

// dupAcks sends the duplicate ACKs for a lost segment 1 reporting segments
// 2..2+n as SACKed one by one.
func dupAcks(f *fixture, from, n int) {
	for k := from; k < from+n; k++ {
		f.ack(seg(1).Start, 0, span(2, k+1))
	}
}

// newRenoCases are NewReno's rules, each on a fresh lossSetup fixture.
var newRenoCases = []struct {
	name string
	run  func(t *testing.T, f *fixture)
}{
	{"RFC5681 DupThresh: two duplicate ACKs do not retransmit", func(t *testing.T, f *fixture) {
		dupAcks(f, 2, 2)
		f.drain()
		if slices.Contains(f.dataOffsets(), seg(1).Start) || hasCall(f, "congestion") > 0 {
			t.Errorf("after 2 dupacks: sent %v calls %v, want no fast retransmit", f.dataOffsets(), f.tcc().calls)
		}
	}},
	{"RFC6582 3.2 step 2-3: third duplicate ACK retransmits the first unacked segment, ssthresh from controller, window ssthresh+3*SMSS", func(t *testing.T, f *fixture) {
		dupAcks(f, 2, 3)
		f.drain()
		if got := f.dataOffsets(); len(got) != 1 || got[0] != seg(1).Start {
			t.Errorf("after 3 dupacks: sent %v, want [%d]", got, seg(1).Start)
		}
		if hasCall(f, "congestion loss") != 1 {
			t.Errorf("controller calls %v, want one congestion loss", f.tcc().calls)
		}
		nr := f.c.rec.(*NewReno)
		if want := 5 * testMSS; f.tcc().ssthresh != want {
			t.Errorf("ssthresh got %d, want FlightSize/2 = %d", f.tcc().ssthresh, want)
		}
		if got, want := nr.Window(), 8*testMSS; got != want {
			t.Errorf("recovery window got %d, want ssthresh+3*SMSS = %d", got, want)
		}
		if got, want := nr.Recover(), uint64(11*testMSS); got != want {
			t.Errorf("recover got %d, want HighData %d", got, want)
		}
	}},
	{"RFC6582 3.2 step 4: each further duplicate ACK inflates by SMSS; new data when FlightSize < window", func(t *testing.T, f *fixture) {
		dupAcks(f, 2, 3)
		f.drain()
		dupAcks(f, 5, 2) // window 10 MSS = FlightSize: nothing new
		if f.drain(); len(f.dataOffsets()) != 0 {
			t.Errorf("window 10 MSS, FlightSize 10 MSS: sent %v, want nothing", f.dataOffsets())
		}
		dupAcks(f, 7, 1) // window 11 MSS
		if got := f.dataOffsets(); len(f.drain()) != 1 || f.dataOffsets()[0] != uint64(11*testMSS) {
			t.Errorf("window 11 MSS: sent %v, want new segment at %d", got, 11*testMSS)
		}
	}},
	{"RFC6582 3.2 step 5: partial ACK retransmits the next hole, deflates, stays in recovery", func(t *testing.T, f *fixture) {
		dupAcks(f, 2, 3)
		f.drain()
		f.now = f.now.Add(50 * time.Millisecond)
		f.ack(seg(5).Start, 0, span(6, 10)) // segments 1-4 acked, 5 still missing
		f.drain()
		if got := f.dataOffsets(); len(got) == 0 || got[0] != seg(5).Start {
			t.Errorf("partial ACK: sent %v, want retransmission of %d first", got, seg(5).Start)
		}
		nr := f.c.rec.(*NewReno)
		if !nr.InRecovery() || hasCall(f, "exit") != 0 {
			t.Errorf("partial ACK left recovery (calls %v)", f.tcc().calls)
		}
		if got, want := nr.Window(), 8*testMSS-4*testMSS+testMSS; got != want {
			t.Errorf("window after partial ACK of 4 MSS got %d, want %d (deflate by 4 MSS, add back 1)", got, want)
		}
	}},
	{"RFC6582 3.2 step 3 (full ACK): ACK of recover exits; controller sets cwnd", func(t *testing.T, f *fixture) {
		dupAcks(f, 2, 3)
		f.drain()
		f.ack(uint64(11*testMSS), 0)
		if f.c.rec.InRecovery() || hasCall(f, "exit") != 1 {
			t.Errorf("full ACK: in recovery %v, calls %v, want exit", f.c.rec.InRecovery(), f.tcc().calls)
		}
		if got, want := f.tcc().cwnd, 5*testMSS; got != want {
			t.Errorf("cwnd after exit %d, want ssthresh %d", got, want)
		}
	}},
	{"RFC6582 3.2 step 2: duplicate ACKs not covering recover after an RTO do not start recovery", func(t *testing.T, f *fixture) {
		f.now = f.c.rtoAt
		f.ep.OnDeadline(f.now)
		if hasCall(f, "rto") != 1 {
			t.Fatalf("no RTO: calls %v", f.tcc().calls)
		}
		f.drain() // retransmits segment 1
		dupAcks(f, 2, 4)
		if hasCall(f, "congestion") != 0 || f.c.rec.InRecovery() {
			t.Errorf("dupacks below recover started recovery: calls %v", f.tcc().calls)
		}
	}},
	{"RFC5681 eq. (4): an RTO during recovery takes FlightSize without the window inflation", func(t *testing.T, f *fixture) {
		dupAcks(f, 2, 3) // ssthresh 5 MSS, window 8 MSS
		f.drain()
		dupAcks(f, 5, 6) // window 14 MSS: new data up to FlightSize 14 MSS
		f.drain()
		if got, want := f.c.sb.FlightSize(), 14*testMSS; got != want {
			t.Fatalf("FlightSize %d, want %d (inflated window filled)", got, want)
		}
		f.now = f.c.rtoAt
		f.c.onDeadline(f.now)
		if hasCall(f, "rto") != 1 {
			t.Fatalf("no RTO: calls %v", f.tcc().calls)
		}
		// The controller's cwnd (10 MSS) bounds the flight it sees:
		// ssthresh stays 5 MSS instead of 14/2 = 7 MSS.
		if got, want := f.tcc().ssthresh, 5*testMSS; got != want {
			t.Errorf("ssthresh after the RTO %d, want %d (FlightSize capped at cwnd)", got, want)
		}
	}},
	{"RFC6582 Impatient: only the first partial ACK restarts the RTO timer", func(t *testing.T, f *fixture) {
		dupAcks(f, 2, 3)
		f.drain()
		f.now = f.now.Add(10 * time.Millisecond)
		f.ack(seg(3).Start, 0, span(4, 10))
		first := f.c.rtoAt
		if want := f.now.Add(f.c.rtt.current()); first != want {
			t.Errorf("first partial ACK: RTO at %v, want %v", first, want)
		}
		f.now = f.now.Add(10 * time.Millisecond)
		f.ack(seg(4).Start, 0, span(5, 10))
		if f.c.rtoAt != first {
			t.Errorf("second partial ACK moved the RTO timer to %v (from %v)", f.c.rtoAt, first)
		}
	}},
}

func TestNewRenoRules(t *testing.T) {
	for _, tc := range newRenoCases {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, lossSetup(t, "newreno")) })
	}
}

// TestNewRenoAtRecover: duplicate ACKs whose cumulative point is exactly
// one past recover (the full ACK's point; the first segment sent after it is
// lost) start a new recovery only with newreno:atrecover (ns-3 3.37's
// TcpSocketBase::DupAck, m_highRxAckMark >= m_recover); RFC 6582 §3.2 step
// 2 and §4 (the default) wait, as such ACKs do not cover more than recover.
func TestNewRenoAtRecover(t *testing.T) {
	for _, tc := range []struct {
		recovery string
		wantLoss int // congestion loss calls: the first episode, and the second if entered
	}{
		{"newreno", 1},
		{"newreno:atrecover", 2},
	} {
		t.Run(tc.recovery, func(t *testing.T) {
			f := lossSetup(t, tc.recovery)
			dupAcks(f, 2, 3)
			f.drain()
			f.ack(uint64(11*testMSS), 0) // full ACK of recover (HighData 11 MSS at entry)
			if got := len(f.drain()); got != 5 {
				t.Fatalf("after the full ACK: sent %d segments, want 5 (cwnd = ssthresh = 5 MSS)", got)
			}
			// Segment 11, the first sent after recovery, is lost; 12..14 arrive.
			for k := 12; k < 15; k++ {
				f.ack(uint64(11*testMSS), 0, span(12, k+1))
			}
			f.drain()
			if got := hasCall(f, "congestion loss"); got != tc.wantLoss {
				t.Errorf("congestion loss calls %d, want %d (%v)", got, tc.wantLoss, f.tcc().calls)
			}
			if got, want := slices.Contains(f.dataOffsets(), uint64(11*testMSS)), tc.wantLoss == 2; got != want {
				t.Errorf("fast retransmission of %d sent: %v, want %v (sent %v)", 11*testMSS, got, want, f.dataOffsets())
			}
		})
	}
}

func TestRenoRules(t *testing.T) {
	cases := []struct {
		name string
		run  func(t *testing.T, f *fixture)
	}{
		{"RFC5681 3.2 step 1-3: first two duplicate ACKs send new data only (RFC 3042); the third retransmits, window ssthresh+3*SMSS", func(t *testing.T, f *fixture) {
			dupAcks(f, 2, 2)
			f.drain()
			if got, want := f.dataOffsets(), []uint64{seg(11).Start, seg(12).Start}; !slices.Equal(got, want) {
				t.Errorf("2 dupacks sent %v, want limited transmit %v", got, want)
			}
			dupAcks(f, 4, 1)
			f.drain()
			if got := f.dataOffsets(); len(got) != 1 || got[0] != seg(1).Start {
				t.Errorf("after 3 dupacks sent %v, want [%d]", got, seg(1).Start)
			}
			// FlightSize at the third dupack: segments 1..12 = 12 MSS, of
			// which 2 were sent by Limited Transmit; RFC 5681 §3.2 step 2:
			// "additional data sent in limited transmit MUST NOT be
			// included in this calculation", so ssthresh = 10 MSS / 2.
			if got, want := f.tcc().ssthresh, 5*testMSS; got != want {
				t.Errorf("ssthresh %d, want (FlightSize - limited transmit)/2 = %d", got, want)
			}
			if got, want := f.c.rec.(*Reno).Window(), 8*testMSS; got != want {
				t.Errorf("window %d, want ssthresh+3*SMSS = %d", got, want)
			}
		}},
		{"RFC5681 3.2 step 4: further duplicate ACKs inflate by SMSS", func(t *testing.T, f *fixture) {
			dupAcks(f, 2, 4)
			if got, want := f.c.rec.(*Reno).Window(), 9*testMSS; got != want {
				t.Errorf("window %d, want %d", got, want)
			}
		}},
		{"RFC5681 3.2 step 6: a partial ACK ends recovery (no retransmission of the next hole)", func(t *testing.T, f *fixture) {
			dupAcks(f, 2, 3)
			f.drain()
			f.ack(seg(5).Start, 0, span(6, 10))
			f.drain()
			if f.c.rec.InRecovery() || hasCall(f, "exit") != 1 {
				t.Errorf("partial ACK: in recovery %v calls %v, want exit", f.c.rec.InRecovery(), f.tcc().calls)
			}
			if slices.Contains(f.dataOffsets(), seg(5).Start) {
				t.Errorf("Reno retransmitted the next hole on a partial ACK: %v", f.dataOffsets())
			}
		}},
		{"RFC5681: a second loss in the window needs three more duplicate ACKs and reduces again", func(t *testing.T, f *fixture) {
			dupAcks(f, 2, 3)
			f.drain()
			f.ack(seg(5).Start, 0, span(6, 10))
			f.drain() // cwnd = ssthresh is below FlightSize (SACKed bytes count for Reno): nothing new
			for k := 0; k < 3; k++ {
				f.ack(seg(5).Start, 0, span(6, 10))
			}
			f.drain()
			if hasCall(f, "congestion loss") != 2 {
				t.Errorf("calls %v, want two congestion events", f.tcc().calls)
			}
			if got := f.dataOffsets(); len(got) == 0 || got[0] != seg(5).Start {
				t.Errorf("second fast retransmit sent %v, want %d first", got, seg(5).Start)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, lossSetup(t, "reno")) })
	}
}

// dropOffsets returns a Drop function losing the first transmission of the
// data segments at the given stream offsets.
func dropOffsets(offs ...uint64) func([]byte) bool {
	done := map[uint64]bool{}
	return func(b []byte) bool {
		var p packet
		if decodePacket(b, &p) != RejectNone || p.typ != typeShort || p.flags&flagDATA == 0 {
			return false
		}
		for _, o := range offs {
			if p.off == o && !done[o] {
				done[o] = true
				return true
			}
		}
		return false
	}
}

// TestRecoveryEpisodes: end to end over a clean 20 ms path, one loss costs
// one fast retransmit in one episode and no RTO with either strategy; three
// losses in one window are repaired by NewReno in one episode (partial
// ACKs), while Reno needs more than one reduction or an RTO.
func TestRecoveryEpisodes(t *testing.T) {
	mss := uint64(testMSS)
	// With IW = 10 and slow start, segments 40.. are in a window of ~30+.
	single := []uint64{60 * mss}
	triple := []uint64{60 * mss, 63 * mss, 66 * mss}
	cases := []struct {
		recovery string
		drops    []uint64
		check    func(t *testing.T, s ConnStats)
	}{
		{"newreno", single, func(t *testing.T, s ConnStats) {
			if s.Recoveries != 1 || s.Retransmits != 1 || s.RTOs != 0 {
				t.Errorf("one loss: recoveries %d retransmits %d rtos %d, want 1 1 0", s.Recoveries, s.Retransmits, s.RTOs)
			}
		}},
		{"reno", single, func(t *testing.T, s ConnStats) {
			if s.Recoveries != 1 || s.Retransmits != 1 || s.RTOs != 0 {
				t.Errorf("one loss: recoveries %d retransmits %d rtos %d, want 1 1 0", s.Recoveries, s.Retransmits, s.RTOs)
			}
		}},
		{"newreno", triple, func(t *testing.T, s ConnStats) {
			if s.Recoveries != 1 || s.Retransmits != 3 || s.RTOs != 0 {
				t.Errorf("three losses: recoveries %d retransmits %d rtos %d, want 1 3 0 (RFC 6582 partial ACKs)", s.Recoveries, s.Retransmits, s.RTOs)
			}
		}},
		{"reno", triple, func(t *testing.T, s ConnStats) {
			if s.Recoveries < 2 && s.RTOs == 0 {
				t.Errorf("three losses: recoveries %d rtos %d, want Reno to need several reductions or an RTO", s.Recoveries, s.RTOs)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%s/%d", tc.recovery, len(tc.drops)), func(t *testing.T) {
			// A rate spreads arrivals, so each out-of-order segment gets its own
			// immediate ACK (RFC 5681 §4.2) as on a real path.
			p := pathModel{Delay: 20 * time.Millisecond, Rate: 20e6, Drop: dropOffsets(tc.drops...)}
			h := newHarness(t, 1, p, pathModel{Delay: 20 * time.Millisecond}, Config{Recovery: tc.recovery})
			cli, srv, ok := h.transfer(300_000, time.Minute)
			if !ok || srv.Stats().RecvDigest != cli.Stats().SentDigest {
				t.Fatalf("transfer failed")
			}
			tc.check(t, cli.Stats())
			s := cli.Stats()
			t.Logf("recoveries %d retransmits %d rtos %d spurious %d", s.Recoveries, s.Retransmits, s.RTOs, s.SpuriousRetransmits)
		})
	}
}

// TestRecoveryOwner: "in loss recovery" has one owner, the strategy
// (Recovery.InRecovery); the connection keeps no copy. Over lossy,
// reordering transfers with every strategy, the episodes the connection
// reports alternate strictly: a RecoveryStart (Ctx.EnterRecovery) is
// followed by one RecoveryEnd (Ctx.ExitRecovery, an RTO or an undo) before
// the next start, one start per counted recovery, and no episode is open
// once the transfer finished (12 seeds each; TestTLPProcessAck has the case
// of a tail loss probe acknowledged during an episode).
func TestRecoveryOwner(t *testing.T) {
	specs := append(Recoveries.Names(), "sack:undo,frto", "prr:lostretx,undo")
	for _, spec := range specs {
		if strings.HasPrefix(spec, "test") {
			continue // the tests' own strategies
		}
		for seed := uint64(1); seed <= 12; seed++ {
			t.Run(fmt.Sprintf("%s/seed=%d", spec, seed), func(t *testing.T) {
				h := newHarness(t, seed, impairedPath(0.04), impairedPath(0.02), Config{Recovery: spec})
				h.keep = true
				// Both ends' events carry the connection ID: keep only the
				// client's (the server's FIN has episodes of its own).
				h.eps[1].cfg.Sink, h.eps[1].cfg.Defaults.Sink = event.Discard, event.Discard
				cli, _, ok := h.transfer(600_000, time.Hour)
				if !ok {
					t.Fatalf("transfer did not finish")
				}
				open, starts := false, 0
				for _, e := range h.log.Events {
					if e.Flow != cli.ID() {
						continue
					}
					switch e.Kind {
					case event.RecoveryStart:
						if open {
							t.Fatalf("%v: RecoveryStart while an episode is open", e.Time)
						}
						open = true
						starts++
					case event.RecoveryEnd:
						if !open {
							t.Fatalf("%v: RecoveryEnd (reason %d) with no episode open", e.Time, e.Reason)
						}
						open = false
					}
				}
				if got, want := uint64(starts), cli.Stats().Recoveries; got != want || got == 0 {
					t.Errorf("RecoveryStart events %d, stats.Recoveries %d; want equal and above 0", got, want)
				}
				if open || cli.Recovery().InRecovery() {
					t.Errorf("after the transfer: episode open %v, strategy in recovery %v; want neither", open, cli.Recovery().InRecovery())
				}
			})
		}
	}
}
