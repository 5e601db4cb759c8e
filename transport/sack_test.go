package transport

import (
	"fmt"
	"slices"
	"sort"
	"testing"
	"time"
)

// sackFixture dials with a fixed window of cwnd segments and the strategy
// rec, gives it total segments of data (0: unlimited) and sends the first
// window: segments 0..cwnd-1.
func sackFixture(t *testing.T, rec string, cwnd, total int) *fixture {
	t.Helper()
	f := newFixture(t, Config{CC: fmt.Sprintf("testcc:cwnd=%d", cwnd), Recovery: rec}, 1<<30, false)
	length := int64(-1)
	if total > 0 {
		length = int64(total * testMSS)
	}
	f.c.SetSource(NewPatternSource(1), length)
	if got := len(f.drain()); got != min(cwnd, max(total, cwnd)) {
		t.Fatalf("initial flight: got %d datagrams, want %d", got, cwnd)
	}
	return f
}

// sackAck feeds an ACK with cumulative point cum (segments) and SACK blocks
// covering the given segment numbers (merged, at most MaxSACKBlocks, the
// highest ranges kept), then transmits and returns the segment numbers sent.
func sackAck(f *fixture, cum int, segs ...int) []int {
	s := slices.Clone(segs)
	sort.Ints(s)
	var blocks []sackBlock
	for i := 0; i < len(s); {
		j := i
		for j+1 < len(s) && s[j+1] == s[j]+1 {
			j++
		}
		blocks = append(blocks, span(s[i], s[j]+1))
		i = j + 1
	}
	if len(blocks) > MaxSACKBlocks {
		blocks = blocks[len(blocks)-MaxSACKBlocks:]
	}
	slices.Reverse(blocks) // RFC 2018: most recent first
	f.ack(uint64(cum*testMSS), 0, blocks...)
	return sentSegs(f)
}

// sentSegs drains and returns the segment numbers of the data sent.
func sentSegs(f *fixture) []int {
	f.drain()
	var n []int
	for _, o := range f.dataOffsets() {
		n = append(n, int(o)/testMSS)
	}
	return n
}

// upTo returns the segment numbers from..to-1.
func upTo(from, to int) []int {
	var s []int
	for k := from; k < to; k++ {
		s = append(s, k)
	}
	return s
}

func sackOf(f *fixture) *sackLoss {
	switch r := f.c.rec.(type) {
	case *SACK:
		return &r.sackLoss
	case *FACK:
		return &r.sackLoss
	case *RateHalving:
		return &r.sackLoss
	case *PRR:
		return &r.sackLoss
	}
	f.t.Fatalf("strategy %T is not SACK-based", f.c.rec)
	return nil
}

// TestIsLost checks RFC 6675 IsLost and the FACK loss rule on SACK patterns.
func TestIsLost(t *testing.T) {
	cases := []struct {
		rec    string
		sacked []int
		lost   []int // segments (below 12) the rule must declare lost
	}{
		{"sack", []int{2}, nil},
		{"sack", []int{1, 2}, nil},
		{"sack", []int{1, 2, 3}, []int{0}},                   // DupThresh SACKed segments above
		{"sack", []int{2, 4, 6}, []int{0, 1}},                // discontiguous; 3 has only 2 above
		{"sack", []int{2, 4, 6, 8}, []int{0, 1, 3}},          // 5 has 6 and 8 above: not lost
		{"sack:dupthresh=2", []int{2, 4}, []int{0, 1}},       // 3 has only 4 above
		{"sack:dupthresh=2", []int{2, 4, 7}, []int{0, 1, 3}}, // 5, 6: only 7 above
		{"fack", []int{5}, []int{0, 1, 2}},                   // snd.fack = 6 MSS: lost if more than 3 MSS below it
		{"fack", []int{3}, []int{0}},                         // snd.fack - snd.una = 4 MSS > 3 MSS
		{"fack", []int{2}, nil},                              // snd.fack - snd.una = 3 MSS: not more than 3 MSS
		{"fack", []int{1, 9}, []int{0, 2, 3, 4, 5, 6}},       // snd.fack = 10 MSS
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%s/%v", tc.rec, tc.sacked), func(t *testing.T) {
			f := sackFixture(t, tc.rec, 12, 12)
			sackAck(f, 0, tc.sacked...)
			r := sackOf(f)
			var got []int
			for i := 0; i < 12; i++ {
				if r.IsLost(&f.c.sb, i) {
					got = append(got, i)
				}
			}
			if want := tc.lost; !slices.Equal(got, want) {
				t.Errorf("IsLost true for %v, want %v", got, tc.lost)
			}
		})
	}
}

// TestSACKRules checks RFC 6675 §5 rule by rule with a 20-segment window.
func TestSACKRules(t *testing.T) {
	cases := []struct {
		name string
		run  func(t *testing.T, f *fixture, r *sackLoss)
	}{
		{"5(1.a): DupThresh duplicate ACKs enter recovery, RecoveryPoint = HighData, fast retransmit of HighACK+1", func(t *testing.T, f *fixture, r *sackLoss) {
			// Segment 0 lost; dupacks SACK 1, then 1-2 (a third one is needed).
			sackAck(f, 0, 1)
			sackAck(f, 0, 1, 2)
			if r.InRecovery() || hasCall(f, "congestion") > 0 {
				t.Fatalf("after 2 dupacks: in recovery, want not yet")
			}
			f.ack(0, 0, span(1, 4))
			if !r.InRecovery() || hasCall(f, "congestion loss") != 1 {
				t.Fatalf("after 3 dupacks: InRecovery %v calls %v, want recovery and one congestion loss", r.InRecovery(), f.tcc().calls)
			}
			if got, want := r.RecoveryPoint(), f.c.sb.Nxt(); got != want {
				t.Errorf("RecoveryPoint got %d, want HighData %d", got, want)
			}
			if got := sentSegs(f); len(got) == 0 || got[0] != 0 {
				t.Errorf("sent %v, want the fast retransmission of segment 0 first", got)
			}
		}},
		{"5(1.b): one ACK SACKing DupThresh segments enters recovery (IsLost(HighACK+1))", func(t *testing.T, f *fixture, r *sackLoss) {
			got := sackAck(f, 0, 1, 2, 3)
			if !r.InRecovery() || !slices.Equal(got, []int{0}) {
				t.Errorf("InRecovery %v sent %v, want recovery and [0]", r.InRecovery(), got)
			}
		}},
		{"pipe (SetPipe): outstanding - SACKed - lost + retransmitted", func(t *testing.T, f *fixture, r *sackLoss) {
			f.ack(0, 0, span(1, 4)) // 20 out, 3 SACKed, segment 0 lost
			if got, want := f.c.sb.Pipe(), 16*testMSS; got != want {
				t.Errorf("pipe before the retransmission got %d, want %d", got, want)
			}
			sentSegs(f)
			if got, want := f.c.sb.Pipe(), 17*testMSS; got != want {
				t.Errorf("pipe after the retransmission got %d, want %d", got, want)
			}
		}},
		{"5(C)+NextSeg 1,4: losses 0,2,4 repaired in order once cwnd-pipe >= SMSS, then one rescue", func(t *testing.T, f *fixture, r *sackLoss) {
			// ssthresh = 10 MSS. Expected (pipe in MSS after the ACK):
			// SACK 1,3,5: enter, 0 lost, pipe 16, retransmit 0 -> 17;
			// SACK 6: 2 lost, 15; 7: 4 lost, 13; 8: 12; 9: 11; 10: 10;
			// 11: 9 -> retransmit 2; 12: 9 -> retransmit 4; 13: rules 1-3
			// find nothing and no new data: rescue of segment 19 (rule 4).
			want := map[int][]int{5: {0}, 11: {2}, 12: {4}, 13: {19}, 14: nil}
			have := []int{1}
			for _, k := range []int{3, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14} {
				have = append(have, k)
				got := sackAck(f, 0, have...)
				if !slices.Equal(got, want[k]) {
					t.Errorf("after SACK of %d: sent %v, want %v (pipe %d MSS)", k, got, want[k], f.c.sb.Pipe()/testMSS)
				}
			}
			if got, want := r.HighRxt(), uint64(5*testMSS); got != want {
				t.Errorf("HighRxt got %d, want %d (the rescue does not move it)", got, want)
			}
			if r.Rescues() != 1 {
				t.Errorf("rescues got %d, want 1 per episode", r.Rescues())
			}
		}},
		{"exit: a partial ACK stays in recovery, an ACK of RecoveryPoint ends it", func(t *testing.T, f *fixture, r *sackLoss) {
			sackAck(f, 0, 1, 2, 3)
			sackAck(f, 4)
			if !r.InRecovery() {
				t.Fatalf("partial ACK ended recovery")
			}
			f.ack(r.RecoveryPoint(), 0)
			if r.InRecovery() || hasCall(f, "exit") != 1 {
				t.Errorf("after ACK of RecoveryPoint: InRecovery %v calls %v, want one exit", r.InRecovery(), f.tcc().calls)
			}
		}},
		{"5.1: an RTO ends recovery, RecoveryPoint = HighData, no new episode below it", func(t *testing.T, f *fixture, r *sackLoss) {
			sackAck(f, 0, 1, 2, 3)
			nxt := f.c.sb.Nxt()
			f.now = f.now.Add(5 * time.Second)
			f.ep.OnDeadline(f.now)
			if r.InRecovery() || r.RecoveryPoint() != nxt {
				t.Fatalf("after RTO: InRecovery %v RecoveryPoint %d, want false and %d", r.InRecovery(), r.RecoveryPoint(), nxt)
			}
			sentSegs(f)
			// New holes SACKed above while the cumulative ACK is below RecoveryPoint.
			sackAck(f, 5, 7, 8, 9)
			sackAck(f, 5, 7, 8, 9, 10)
			sackAck(f, 5, 7, 8, 9, 10, 11)
			if r.InRecovery() || hasCall(f, "congestion") != 1 {
				t.Errorf("new episode before RecoveryPoint was reached: calls %v", f.tcc().calls)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := sackFixture(t, "sack", 20, 20)
			tc.run(t, f, sackOf(f))
		})
	}
}

// TestSACKNextSegRule3: with no new data and no segment IsLost, NextSeg rule
// 3 retransmits the first unSACKed segment above HighRxt below the highest
// SACK.
func TestSACKNextSegRule3(t *testing.T) {
	f := sackFixture(t, "sack", 8, 8) // ssthresh = 4 MSS
	if got := sackAck(f, 0, 1, 2, 3); !slices.Equal(got, []int{0}) {
		t.Fatalf("entry: sent %v, want [0]", got)
	}
	// Segment 4 missing, 5 SACKed: pipe 4 (no room), 4 not lost (1 SACK above).
	if got := sackAck(f, 0, 1, 2, 3, 5); len(got) != 0 {
		t.Errorf("SACK 5: sent %v, want nothing (pipe = ssthresh)", got)
	}
	got := sackAck(f, 0, 1, 2, 3, 5, 6) // pipe 3: room for one; 4 still not IsLost (2 above)
	if !slices.Equal(got, []int{4}) {
		t.Errorf("SACK 6: sent %v, want [4] by NextSeg rule 3", got)
	}
	if sackOf(f).IsLost(&f.c.sb, 4) {
		t.Errorf("segment 4 IsLost, want not (rule 3 case)")
	}
}

// TestSACKNewDataRule2: with unsent data, NextSeg prefers it to rule 3/4 once
// no segment is marked lost, within cwnd - pipe.
func TestSACKNewDataRule2(t *testing.T) {
	f := sackFixture(t, "sack", 20, 0)
	sackAck(f, 0, 1, 2, 3) // enter, retransmit 0: pipe 17
	var sent []int
	for k := 4; k <= 12; k++ {
		sent = append(sent, sackAck(f, 0, upTo(1, k+1)...)...)
	}
	// pipe after SACK of k (k >= 4): 17-(k-3); room once pipe < 10: k = 11, 12.
	if want := []int{20, 21}; !slices.Equal(sent, want) {
		t.Errorf("sent %v, want new segments %v", sent, want)
	}
}

// TestScoreboardRuns: runs gives the outstanding segments in index order,
// as Seg does, also when they wrap around the ring's end.
func TestScoreboardRuns(t *testing.T) {
	var sb Scoreboard
	off := uint64(0)
	wrapped := false
	for step := 0; step < 200; step++ {
		if step%3 != 2 {
			sb.push(Segment{Off: off, Len: 100})
			off += 100
		} else if sb.count > 0 {
			sb.advance(sb.Seg(0).End(), func(*Segment) {})
		}
		a, b := sb.runs()
		wrapped = wrapped || len(b) > 0
		if got, want := len(a)+len(b), sb.Count(); got != want {
			t.Fatalf("step %d: runs hold %d segments, want %d", step, got, want)
		}
		for i := 0; i < sb.Count(); i++ {
			var got *Segment
			if i < len(a) {
				got = &a[i]
			} else {
				got = &b[i-len(a)]
			}
			if got != sb.Seg(i) {
				t.Fatalf("step %d: runs' segment %d is not Seg(%d) (offset %d, want %d)", step, i, i, got.Off, sb.Seg(i).Off)
			}
		}
	}
	if !wrapped {
		t.Error("the segments never wrapped around the ring's end: the test does not cover the second run")
	}
}
