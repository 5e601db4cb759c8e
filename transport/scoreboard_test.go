package transport

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
	"unsafe"

	"cclab/clock"
	"cclab/event"
)

// TestScoreboardRandomOps applies random sends, SACKs, loss marks,
// retransmissions, cumulative advances and undos to a connection's
// scoreboard and checks after each: the counters and derived structures
// (checkScoreboard: the transmission-ordered list, the SACK skips), that
// sack marks exactly the un-SACKed segments inside the block, in stream
// order, and that RACK's detectLoss (which walks the list) marks and
// waits as RACK_detect_loss defined over every segment (rackReference).
func TestScoreboardRandomOps(t *testing.T) {
	f := sackFixture(t, "rack", 4, 0)
	c := f.c
	sb := &c.sb
	_, k := rackOf(t, f)
	var lostSeqs lostRecorder
	c.sink = &lostSeqs
	rng := rand.New(rand.NewPCG(7, 9))
	now := f.now
	checks, few, many := 0, 0, 0 // detectLoss calls checked, of which with 2..maxRACKDue and more segments due
	for step := 0; step < 20000; step++ {
		now = now.Add(time.Duration(rng.IntN(3)) * time.Millisecond)
		n := sb.Count()
		switch op := rng.IntN(20); {
		case op < 8 || n == 0:
			for range 1 + rng.IntN(8) {
				sb.push(Segment{Off: sb.Nxt(), Len: 100, SentAt: now})
			}
		case op < 11:
			a := rng.IntN(n)
			b := min(n, a+1+rng.IntN(4))
			start, end := sb.Seg(a).Off, sb.Seg(b-1).End()
			var want []uint64
			for i := a; i < b; i++ {
				if !sb.Seg(i).Sacked {
					want = append(want, sb.Seg(i).Off)
				}
			}
			var got []uint64
			sb.sack(start, end, func(s *Segment) { got = append(got, s.Off) })
			if !slices.Equal(got, want) {
				t.Fatalf("step %d: sack [%d, %d) marked %v, want %v", step, start, end, got, want)
			}
		case op < 13:
			sb.markLost(rng.IntN(n))
		case op < 15:
			sb.retransmitted(rng.IntN(n), now, 0)
		case op < 19 && n > 100:
			sb.advance(sb.Seg(rng.IntN(min(n, 20))).End(), func(*Segment) {})
		case op == 19:
			sb.unmarkLost()
		}
		checkScoreboard(t, sb)
		if sb.sends == 0 || rng.IntN(40) != 0 {
			continue
		}
		k.xmitSeq = sb.sends - rng.Uint64N(min(sb.sends, 100)) // recent: some outstanding segments were sent before it
		k.rtt = time.Duration(rng.IntN(20)) * time.Millisecond
		reoWnd := time.Duration(rng.IntN(5)) * time.Millisecond
		wantWait, wantLost := rackReference(sb, k.xmitSeq, k.rtt, reoWnd, now)
		before := lostIndexes(sb)
		lostSeqs = lostSeqs[:0]
		c.ctx.Now = now
		gotWait, marked := k.detectLoss(&c.ctx, reoWnd)
		var newly []int
		for _, i := range lostIndexes(sb) {
			if !slices.Contains(before, i) {
				newly = append(newly, i)
			}
		}
		if gotWait != wantWait || marked != (len(wantLost) > 0) || !slices.Equal(newly, wantLost) {
			t.Fatalf("step %d: detectLoss wait %v marked %v newly lost %v, want %v, %v, %v", step, gotWait, marked, newly, wantWait, len(wantLost) > 0, wantLost)
		}
		for j, i := range wantLost { // the PacketLost events, in stream order
			if lostSeqs[j] != sb.Seg(i).Off {
				t.Fatalf("step %d: PacketLost events for offsets %v, want the segments %v in stream order", step, lostSeqs, wantLost)
			}
		}
		switch {
		case len(wantLost) > maxRACKDue:
			many++
		case len(wantLost) > 1:
			few++
		}
		checkScoreboard(t, sb)
		checks++
	}
	t.Logf("%d detectLoss checks: %d with 2-%d segments due, %d with more", checks, few, maxRACKDue, many)
	if checks < 300 || few < 10 || many < 10 {
		t.Fatalf("only %d detectLoss checks: %d with 2-%d segments due, %d with more", checks, few, maxRACKDue, many)
	}
}

// lostRecorder records the offsets of PacketLost events.
type lostRecorder []uint64

func (r *lostRecorder) Record(e *event.Event) {
	if e.Kind == event.PacketLost {
		*r = append(*r, e.Seq)
	}
}

// rackReference is RACK_detect_loss (RFC 8985 §6.2 step 5) over every
// outstanding segment: the indexes due (neither SACKed nor lost, sent
// before RACK.xmit, xmit_ts + rtt + reoWnd passed) and the longest wait of
// the others.
func rackReference(sb *Scoreboard, xmitSeq uint64, rtt, reoWnd time.Duration, now clock.Time) (time.Duration, []int) {
	var wait time.Duration
	var due []int
	for i := 0; i < sb.Count(); i++ {
		s := sb.Seg(i)
		if s.Sacked || s.Lost || s.SendSeq >= xmitSeq {
			continue
		}
		if r := s.SentAt.Add(rtt + reoWnd).Sub(now); r <= 0 {
			due = append(due, i)
		} else {
			wait = max(wait, r)
		}
	}
	return wait, due
}

// lostIndexes returns the indexes of the segments marked lost.
func lostIndexes(sb *Scoreboard) []int {
	var l []int
	for i := 0; i < sb.Count(); i++ {
		if sb.Seg(i).Lost {
			l = append(l, i)
		}
	}
	return l
}

// TestScoreboardEmptyRestartsAtFirstSlot checks that a flight sent after
// the scoreboard emptied starts at the ring's first slot (advance), so a
// connection with short flights keeps reusing the same few slots, and
// that the segments and the transmission-ordered list are intact.
func TestScoreboardEmptyRestartsAtFirstSlot(t *testing.T) {
	var sb Scoreboard
	for flight, n := range []int{3, 5, 2, 70, 1} {
		for range n {
			sb.push(Segment{Off: sb.Nxt(), Len: 100})
		}
		if got := sb.Seg(0); got != &sb.segs[0] {
			t.Errorf("flight %d: first segment at ring slot %d, want 0", flight, (uintptr(unsafe.Pointer(got))-uintptr(unsafe.Pointer(&sb.segs[0])))/unsafe.Sizeof(Segment{}))
		}
		if got, want := sb.pos(0), uint32(1); sb.tsHead != want || got != want {
			t.Errorf("flight %d: list head %d, position of segment 0 %d, want %d", flight, sb.tsHead, got, want)
		}
		if got := sb.advance(sb.Nxt(), func(*Segment) {}); got != 100*n {
			t.Errorf("flight %d: advance acknowledged %d bytes, want %d", flight, got, 100*n)
		}
		if sb.Count() != 0 || sb.tsHead != 0 || sb.tsTail != 0 || sb.head != 0 {
			t.Errorf("flight %d: after the ACK count %d, list %d..%d, head %d; want all 0", flight, sb.Count(), sb.tsHead, sb.tsTail, sb.head)
		}
	}
}
