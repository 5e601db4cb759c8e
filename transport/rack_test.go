package transport

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"cclab/clock"
)

// rackOf returns the RACK state of the fixture's strategy.
func rackOf(t *testing.T, f *fixture) (*sackLoss, *rackState) {
	t.Helper()
	var l *sackLoss
	switch r := f.c.rec.(type) {
	case *RACK:
		l = &r.sackLoss
	case *SACK:
		l = &r.sackLoss
	case *PRR:
		l = &r.sackLoss
	default:
		t.Fatalf("strategy %T has no sackLoss", r)
	}
	if l.rack == nil {
		t.Fatalf("strategy %s: RACK is off", f.c.rec.Name())
	}
	return l, l.rack
}

// smallFixture is sackFixture for a stream of total segments, fewer than
// the window.
func smallFixture(t *testing.T, rec string, cwnd, total int) *fixture {
	t.Helper()
	f := newFixture(t, Config{CC: "testcc:cwnd=" + itoa(cwnd), Recovery: rec}, 1<<30, false)
	f.c.SetSource(NewPatternSource(1), int64(total*testMSS))
	if got := len(f.drain()); got != min(cwnd, total) {
		t.Fatalf("initial flight: got %d datagrams, want %d", got, min(cwnd, total))
	}
	return f
}

func itoa(n int) string { return fmt.Sprint(n) }

// runTimers advances the fixture's clock to at and runs the endpoint's
// expired timers.
func (f *fixture) runTimers(at clock.Time) {
	f.now = at
	f.ep.OnDeadline(at)
}

// TestRACKReoWnd checks RACK_update_reo_wnd (RFC 8985 §6.2 step 4): 0 while
// no reordering was seen and the sender is in recovery or DupThresh segments
// are SACKed, else min(reo_wnd_mult * min_RTT / 4, SRTT).
func TestRACKReoWnd(t *testing.T) {
	for _, tc := range []struct {
		name        string
		reord, inRc bool
		sacked      int // segments SACKed
		mult        int
		minRTT      time.Duration
		srtt        time.Duration
		want        time.Duration
	}{
		{"no reordering, 1 SACKed", false, false, 1, 1, 40 * time.Millisecond, 50 * time.Millisecond, 10 * time.Millisecond},
		{"no reordering, DupThresh SACKed", false, false, 3, 1, 40 * time.Millisecond, 50 * time.Millisecond, 0},
		{"no reordering, in recovery", false, true, 1, 1, 40 * time.Millisecond, 50 * time.Millisecond, 0},
		{"reordering seen, in recovery", true, true, 5, 1, 40 * time.Millisecond, 50 * time.Millisecond, 10 * time.Millisecond},
		{"mult 3", true, false, 0, 3, 40 * time.Millisecond, 50 * time.Millisecond, 30 * time.Millisecond},
		{"capped at SRTT", true, false, 0, 8, 40 * time.Millisecond, 50 * time.Millisecond, 50 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := sackFixture(t, "rack", 10, 0)
			_, k := rackOf(t, f)
			for i := 1; i <= tc.sacked; i++ {
				f.c.sb.sack(seg(i).Start, seg(i).End, func(*Segment) {})
			}
			k.reordSeen, k.reoWndMult = tc.reord, tc.mult
			f.c.rtt.min, f.c.rtt.srtt = tc.minRTT, tc.srtt
			f.c.ctx.Now = f.now
			if got := k.ReoWnd(&f.c.ctx, tc.inRc, DupThresh); got != tc.want {
				t.Errorf("reo_wnd: got %v, want %v", got, tc.want)
			}
		})
	}
}

// TestRACKTimeRule checks RACK_detect_loss (RFC 8985 §6.2 step 5): once a
// later-sent segment is SACKed, an earlier one is lost only when xmit_ts +
// RACK.rtt + reo_wnd has passed; until then the RACK timer is armed for the
// remaining time, and its expiry marks the loss and starts recovery with a
// retransmission of the first lost segment.
func TestRACKTimeRule(t *testing.T) {
	f := sackFixture(t, "rack", 10, 10)
	t0 := f.now
	_, k := rackOf(t, f)
	f.now = t0.Add(40 * time.Millisecond)
	// Segment 2 SACKed 40 ms after all ten were sent: RACK.rtt = 40 ms,
	// min_RTT = 40 ms, no reordering seen, one SACKed: reo_wnd = 10 ms.
	if got := sackAck(f, 0, 2); len(got) != 0 {
		t.Fatalf("sent %v before any loss is due", got)
	}
	if k.rtt != 40*time.Millisecond {
		t.Fatalf("RACK.rtt: got %v, want 40ms", k.rtt)
	}
	if f.c.sb.LostBytes() != 0 || f.c.rec.InRecovery() {
		t.Fatalf("segments 0, 1 marked lost before RACK.rtt + reo_wnd elapsed")
	}
	if got, want := f.c.rec.(RecoveryTimer).Deadline(), t0.Add(50*time.Millisecond); got != want {
		t.Fatalf("RACK timer: got %v, want %v (xmit_ts + rtt + reo_wnd)", got, want)
	}
	f.runTimers(t0.Add(49 * time.Millisecond))
	if f.c.sb.LostBytes() != 0 {
		t.Fatalf("lost marked 1 ms early")
	}
	f.runTimers(t0.Add(50 * time.Millisecond))
	if got, want := f.c.sb.LostBytes(), 2*testMSS; got != want {
		t.Fatalf("lost bytes at the timer: got %d, want %d (segments 0 and 1)", got, want)
	}
	if !f.c.rec.InRecovery() {
		t.Fatalf("not in recovery after RACK marked losses")
	}
	if got := sentSegs(f); len(got) == 0 || got[0] != 0 {
		t.Fatalf("after the timer sent %v, want the retransmission of segment 0 first", got)
	}
	// Segments 3..9, sent with 2 (same instant, later SendSeq), are not lost:
	// RACK_sent_after(RACK.xmit, seg) is false for them.
	for i := 3; i < 10; i++ {
		if f.c.sb.Seg(i).Lost {
			t.Errorf("segment %d sent after RACK.xmit marked lost", i)
		}
	}
}

// TestRACKReordering checks RACK_detect_reordering (RFC 8985 §6.2 step 2)
// and its effect: a never-retransmitted segment delivered below RACK.fack
// sets reordering_seen, after which the reordering window stays open even
// with DupThresh segments SACKed.
func TestRACKReordering(t *testing.T) {
	f := sackFixture(t, "rack", 10, 0)
	t0 := f.now
	_, k := rackOf(t, f)
	f.now = t0.Add(40 * time.Millisecond)
	sackAck(f, 0, 5)
	if k.reordSeen {
		t.Fatalf("reordering seen after an in-order SACK")
	}
	f.now = t0.Add(41 * time.Millisecond)
	f.ack(0, 0, seg(3), seg(5)) // 3 arrives after 5: first block [3,4)
	if !k.reordSeen {
		t.Fatalf("reordering not seen: segment 3 delivered below RACK.fack (6)")
	}
	sackAck(f, 0, 3, 4, 5, 6) // 4 SACKed segments >= DupThresh
	f.c.ctx.Now = f.now
	if got := k.ReoWnd(&f.c.ctx, false, DupThresh); got <= 0 {
		t.Errorf("reo_wnd with reordering seen and 4 SACKed: got %v, want > 0", got)
	}
	if f.c.sb.LostBytes() != 0 {
		t.Errorf("segments lost within the reordering window")
	}
}

// TestRACKReoWndDSACK checks the D-SACK adaptation of RACK_update_reo_wnd
// (RFC 8985 §6.2): reo_wnd_mult grows by one per round trip with a D-SACK
// (a second D-SACK in the same round does not count), and falls back to 1
// after 16 recoveries without one (reo_wnd_persist).
func TestRACKReoWndDSACK(t *testing.T) {
	f := sackFixture(t, "rack", 10, 0)
	_, k := rackOf(t, f)
	x := &f.c.ctx
	x.Now = f.now
	ds := &AckInfo{DSACK: true, DSACKStart: 0, DSACKEnd: 1}
	k.onAck(x, ds, false, DupThresh)
	if k.reoWndMult != 2 || k.reoWndPersist != RACKReoWndPersist {
		t.Fatalf("after a D-SACK: mult %d persist %d, want 2, %d", k.reoWndMult, k.reoWndPersist, RACKReoWndPersist)
	}
	k.onAck(x, ds, false, DupThresh)
	if k.reoWndMult != 2 {
		t.Fatalf("second D-SACK in the same round: mult %d, want 2", k.reoWndMult)
	}
	// The round ends when SND.UNA passes dsack_round (SND.NXT at the first).
	f.c.sb.una = k.dsackRound
	k.onAck(x, ds, false, DupThresh)
	if k.reoWndMult != 3 {
		t.Fatalf("D-SACK in a new round: mult %d, want 3", k.reoWndMult)
	}
	for i := 0; i < RACKReoWndPersist-1; i++ {
		k.onRecoveryExit()
	}
	if k.reoWndMult != 3 {
		t.Fatalf("after 15 recoveries: mult %d, want 3", k.reoWndMult)
	}
	k.onRecoveryExit()
	if k.reoWndMult != 1 {
		t.Fatalf("after 16 recoveries without D-SACK: mult %d, want 1", k.reoWndMult)
	}
}

// TestTLPSchedule checks TLP (RFC 8985 §7): after new data the PTO is 2·SRTT
// (plus WCDelAckT with one segment in flight), at most the RTO expiry; when
// it fires, a probe goes out (new data if any, else the last segment),
// whatever cwnd, and the RTO is rearmed; an ACK beyond a retransmitted
// probe's TLP.end_seq makes the controller react once.
func TestTLPSchedule(t *testing.T) {
	t.Run("two segments: 2 SRTT, probe retransmits the last", func(t *testing.T) {
		f := smallFixture(t, "rack", 10, 2)
		_, k := rackOf(t, f)
		srtt := f.c.rtt.srtt
		want := f.now.Add(2 * srtt)
		if rto := f.c.rtoAt; rto.Before(want) {
			want = rto
		}
		if k.ptoAt != want {
			t.Fatalf("PTO: got %v, want %v (2*SRTT=%v, RTO at %v)", k.ptoAt, want, 2*srtt, f.c.rtoAt)
		}
		f.runTimers(want)
		if got := sentSegs(f); !slices.Equal(got, []int{1}) {
			t.Fatalf("probe: sent %v, want [1] (the last segment)", got)
		}
		if !k.tlpSet || !k.tlpRetrans || k.tlpEnd != uint64(2*testMSS) {
			t.Fatalf("TLP state: set %v retrans %v end %d", k.tlpSet, k.tlpRetrans, k.tlpEnd)
		}
		if got, want := f.c.rtoAt, want.Add(f.c.rtt.current()); got != want {
			t.Errorf("RTO after the probe: got %v, want %v (rearmed)", got, want)
		}
		if f.c.stats.RTOs != 0 {
			t.Errorf("RTO fired with the PTO")
		}
	})
	t.Run("one segment: plus WCDelAckT", func(t *testing.T) {
		f := smallFixture(t, "rack", 10, 1)
		_, k := rackOf(t, f)
		f.c.rtt.srtt = 20 * time.Millisecond
		f.c.rtoAt = f.now.Add(time.Second)
		f.c.ctx.Now = f.now
		k.tlpSet = false
		k.armPTO(&f.c.ctx, false)
		if got, want := k.ptoAt, f.now.Add(40*time.Millisecond+TLPWCDelAckT); got != want {
			t.Errorf("PTO: got %v, want %v (2*SRTT + WCDelAckT)", got, want)
		}
	})
	t.Run("new data is probed first", func(t *testing.T) {
		f := sackFixture(t, "rack", 2, 0) // cwnd 2, unlimited data
		_, k := rackOf(t, f)
		f.runTimers(k.ptoAt)
		if got := sentSegs(f); !slices.Equal(got, []int{2}) {
			t.Fatalf("probe: sent %v, want [2] (new data, beyond cwnd)", got)
		}
		if k.tlpRetrans {
			t.Errorf("probe of new data flagged as a retransmission")
		}
	})
	t.Run("no PTO in recovery or with SACKed data", func(t *testing.T) {
		f := sackFixture(t, "rack", 10, 0)
		_, k := rackOf(t, f)
		f.now = f.now.Add(10 * time.Millisecond)
		sackAck(f, 0, 4)
		f.c.ctx.Now = f.now
		k.armPTO(&f.c.ctx, false)
		if k.ptoAt != clock.Never {
			t.Errorf("PTO armed with SACKed data outstanding")
		}
	})
}

// TestTLPProcessAck checks TLP_process_ack (RFC 8985 §7.4.2) for a
// retransmitted probe with TLP.end_seq E: an ACK below E keeps the episode;
// a D-SACK of the probe ends it (redundant); an ACK beyond E ends it with a
// congestion response (the probe repaired a loss), unless a recovery episode began after the probe was sent; a duplicate ACK without
// SACK information ends it (both copies delivered).
func TestTLPProcessAck(t *testing.T) {
	const e = 10 * testMSS
	for _, tc := range []struct {
		name     string
		a        AckInfo
		inRec    bool // a recovery episode began after the probe was sent
		open     bool // episode still open
		response bool // controller told of a loss
	}{
		{"below end", AckInfo{CumAck: e - testMSS, PrevUna: 0}, false, true, false},
		{"D-SACK of the probe", AckInfo{CumAck: e, PrevUna: e - testMSS, DSACK: true, DSACKStart: e - testMSS, DSACKEnd: e}, false, false, false},
		{"beyond end", AckInfo{CumAck: e + testMSS, PrevUna: e - testMSS}, false, false, true},
		{"beyond end during recovery", AckInfo{CumAck: e + testMSS, PrevUna: e - testMSS}, true, false, false},
		{"dupack without SACK", AckInfo{CumAck: e, PrevUna: e, DupAck: true}, false, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := sackFixture(t, "rack", 10, 0)
			_, k := rackOf(t, f)
			k.tlpSet, k.tlpEnd, k.tlpRetrans = true, e, true
			f.c.ctx.Now = f.now
			calls := len(f.tcc().calls)
			k.tlpAck(&f.c.ctx, &tc.a, tc.inRec)
			if k.tlpSet != tc.open {
				t.Errorf("episode open: got %v, want %v", k.tlpSet, tc.open)
			}
			resp := slices.Contains(f.tcc().calls[calls:], "congestion loss")
			if resp != tc.response {
				t.Errorf("congestion response: got %v, want %v (calls %v)", resp, tc.response, f.tcc().calls[calls:])
			}
		})
	}
}

// TestRACKLostRetransmissionEcho: segments 0..4 of a flight of 20 are lost
// and retransmitted in order as PRR allows; the retransmission of 1 is
// SACKed, that of 0 lost again, and nothing but retransmissions was sent
// after it (as in recovery from a slow-start overshoot). With echo=cum RACK
// marks 0 lost from the SACK of the later-sent retransmission (RACK.rtt +
// reo_wnd after it was sent) whatever the ACK echoes, as Linux does: a
// receiver following RFC 7323 §4.3 echoes the last in-order segment's
// timestamp while the hole at 0 is open, older than every retransmission.
// With echo=all (RFC 8985 §6.2 as written, the default) that echo keeps the
// retransmission of 1 from becoming RACK.xmit and counts it as reordering,
// so 0 waits for the RTO (docs/compat.md).
func TestRACKLostRetransmissionEcho(t *testing.T) {
	noEcho := func([]packet) uint32 { return 0 }
	oldEcho := func(orig []packet) uint32 { return orig[0].ts } // the original flight's
	for _, tc := range []struct {
		name     string
		rec      string
		echo     func(orig []packet) uint32
		wantLost bool // 0 marked lost, RACK.xmit = the retransmission of 1, no reordering
	}{
		{"echo=cum, no echo", "rack:echo=cum", noEcho, true},
		{"echo=cum, echo of the original flight", "rack:echo=cum", oldEcho, true},
		{"echo=all, no echo", "rack", noEcho, true},
		{"echo=all, echo of the original flight", "rack", oldEcho, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := sackFixture(t, tc.rec, 20, 0)
			echo := tc.echo(slices.Clone(f.sent))
			t0 := f.now
			_, k := rackOf(t, f)
			var sent []int
			for j := 8; j <= 20 && f.c.sb.Seg(1).Retrans == 0; j++ {
				f.now = t0.Add(40 * time.Millisecond)
				f.ack(0, echo, span(5, j))
				sent = append(sent, sentSegs(f)...)
			}
			if len(sent) < 2 || sent[0] != 0 || sent[1] != 1 {
				t.Fatalf("recovery sent %v, want the retransmissions of 0 and 1 first", sent)
			}
			f.now = t0.Add(90 * time.Millisecond) // 50 ms after the retransmissions: RTT >= min_RTT
			f.ack(0, echo, seg(1), span(5, 20))   // RFC 2018: the most recent arrival first
			if got := f.c.sb.Seg(0).Lost; got != tc.wantLost {
				t.Errorf("segment 0 marked lost: got %v, want %v", got, tc.wantLost)
			}
			if got := k.reordSeen; got == tc.wantLost {
				t.Errorf("reordering seen: got %v, want %v", got, !tc.wantLost)
			}
			if got, want := k.xmitSeq == f.c.sb.Seg(1).SendSeq, tc.wantLost; got != want {
				t.Errorf("RACK.xmit is the retransmission of 1: got %v, want %v", got, want)
			}
		})
	}
}

// TestRTORearm: with option rtorearm a retransmission of the first
// unacknowledged segment restarts the retransmission timer (Linux's
// tcp_xmit_retransmit_queue); without it the timer armed before keeps
// running (RFC 6298 §5.1: started on a send only when not running; a
// SACK-only ACK does not restart it, §5.3).
func TestRTORearm(t *testing.T) {
	for _, tc := range []struct {
		rec    string
		rearms bool
	}{
		{"rack", false},
		{"rack:rtorearm", true},
		{"prr:rack,rtorearm", true},
		{"sack:rtorearm", true},
	} {
		f := sackFixture(t, tc.rec, 10, 0)
		before := f.c.rtoAt
		f.now = f.now.Add(40 * time.Millisecond)
		f.ack(0, 0, span(1, 10)) // 0 missing, 9 SACKed above it: lost
		if got := sentSegs(f); len(got) == 0 || got[0] != 0 {
			t.Fatalf("%s: sent %v, want the retransmission of 0 first", tc.rec, got)
		}
		want := before
		if tc.rearms {
			want = f.now.Add(f.c.rtt.current())
		}
		if got := f.c.rtoAt; got != want {
			t.Errorf("%s: RTO at %v after the retransmission of the first segment, want %v (armed before at %v)", tc.rec, got, want, before)
		}
	}
}
