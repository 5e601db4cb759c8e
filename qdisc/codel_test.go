package qdisc

import (
	"math"
	"slices"
	"testing"
	"time"

	"cclab/clock"
	"cclab/ecn"
)

func newCoDelT(t *testing.T, s string, h Handler) *CoDel {
	t.Helper()
	q, err := New(s, Env{Handler: h, MTU: 1500})
	if err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return q.(*CoDel)
}

// standing runs a queue with a standing backlog: backlog packets of 1500 bytes
// at time 0, then every tick one arrival and one Dequeue, for dur. It returns
// the instants (since Start) of drops and of marks.
func standing(q *CoDel, rc *rec, backlog int, tick, dur time.Duration, ect bool) (drops, marks []time.Duration) {
	var g pktGen
	newPkt := func() *Packet {
		if ect {
			return g.ect(1, 1500)
		}
		return g.pkt(1, 1500)
	}
	for i := 0; i < backlog; i++ {
		q.Enqueue(at(0), newPkt())
	}
	for now := tick; now <= dur; now += tick {
		q.Enqueue(at(now), newPkt())
		nd, nm := len(rc.drops), len(rc.marks)
		p := q.Dequeue(at(now))
		for range rc.drops[nd:] {
			drops = append(drops, now)
		}
		for _, id := range rc.marks[nm:] {
			marks = append(marks, now)
			if p == nil || p.ID != id || p.ECN != ecn.CE {
				panic("marked packet is not the one returned with CE")
			}
		}
	}
	return drops, marks
}

// wantSchedule applies RFC 8289's rules to a queue filled at time 0 whose
// sojourn time then stays above TARGET and whose Dequeue is called every tick
// from tick on: the first dequeue with sojourn >= target arms first_above_time = now + INTERVAL; the
// first drop is at the first dequeue at or after it; then drop_next =
// drop_next + INTERVAL/sqrt(count) (§5.4), each drop at the first dequeue
// at or after drop_next.
func wantSchedule(target, interval, tick, dur time.Duration) []time.Duration {
	var out []time.Duration
	ceilTick := func(t float64) time.Duration {
		return time.Duration(math.Ceil(t/float64(tick))) * tick
	}
	first := ceilTick(float64(target)) + interval
	out = append(out, first)
	next := float64(first) + float64(interval) // count = 1
	for count := 2; ; count++ {
		d := ceilTick(next)
		if d > dur {
			return out
		}
		out = append(out, d)
		next += float64(interval) / math.Sqrt(float64(count))
	}
}

func TestCoDelControlLaw(t *testing.T) {
	tests := []struct {
		spec     string
		target   time.Duration
		interval time.Duration
		tick     time.Duration
	}{
		{"codel", 5 * time.Millisecond, 100 * time.Millisecond, time.Millisecond},
		{"codel:interval=50ms,target=2ms", 2 * time.Millisecond, 50 * time.Millisecond, time.Millisecond},
		{"codel:interval=200ms", 5 * time.Millisecond, 200 * time.Millisecond, 500 * time.Microsecond},
		{"codel:target=3ms", 3 * time.Millisecond, 100 * time.Millisecond, 2 * time.Millisecond},
	}
	for _, tt := range tests {
		rc := &rec{}
		q := newCoDelT(t, tt.spec, rc)
		dur := 6 * tt.interval
		// backlog keeps the sojourn time far above target throughout.
		drops, _ := standing(q, rc, 900, tt.tick, dur, false)
		want := wantSchedule(tt.target, tt.interval, tt.tick, dur)
		if !slices.Equal(drops, want) {
			t.Errorf("%s: drop instants got %v, want %v", tt.spec, drops, want)
		}
		for _, d := range rc.drops {
			if d.reason != DropCoDel {
				t.Errorf("%s: drop reason got %v, want %v", tt.spec, d.reason, DropCoDel)
			}
		}
		if got, want := q.count, uint32(len(want)); got != want {
			t.Errorf("%s: count got %d, want %d", tt.spec, got, want)
		}
	}
}

// With ecn, ECT packets are marked on the same schedule and delivered;
// nothing is dropped. Not-ECT packets are still dropped.
func TestCoDelECN(t *testing.T) {
	rc := &rec{}
	q := newCoDelT(t, "codel:ecn", rc)
	dur := 600 * time.Millisecond
	drops, marks := standing(q, rc, 900, time.Millisecond, dur, true)
	want := wantSchedule(5*time.Millisecond, 100*time.Millisecond, time.Millisecond, dur)
	if len(drops) != 0 {
		t.Errorf("ecn with ECT packets: drops got %d, want 0", len(drops))
	}
	if !slices.Equal(marks, want) {
		t.Errorf("ecn: mark instants got %v, want %v", marks, want)
	}
	rc = &rec{}
	q = newCoDelT(t, "codel:ecn", rc)
	drops, marks = standing(q, rc, 900, time.Millisecond, dur, false)
	if !slices.Equal(drops, want) || len(marks) != 0 {
		t.Errorf("ecn with not-ECT packets: drops got %v marks %d, want %v and 0", drops, len(marks), want)
	}
}

// No drop while the sojourn time is below TARGET, or while at most MAXPACKET
// bytes would remain queued (RFC 8289 §5.3).
func TestCoDelNoDrop(t *testing.T) {
	tests := []struct {
		name      string
		backlog   int
		tick      time.Duration
		wantDrops bool
	}{
		{"sojourn 4ms < target", 4, time.Millisecond, false},
		{"sojourn 5ms = target", 5, time.Millisecond, true},
		{"one packet left (1500 B <= MTU), sojourn 20ms", 1, 20 * time.Millisecond, false},
		{"two packets left (3000 B > MTU), sojourn 40ms", 2, 20 * time.Millisecond, true},
	}
	for _, tt := range tests {
		rc := &rec{}
		q := newCoDelT(t, "codel", rc)
		drops, _ := standing(q, rc, tt.backlog, tt.tick, 2*time.Second, false)
		if got := len(drops) > 0; got != tt.wantDrops {
			t.Errorf("%s: dropped got %v (%d), want %v", tt.name, got, len(drops), tt.wantDrops)
		}
	}
}

// Leaving the dropping state: when a dequeued packet's sojourn time falls
// below TARGET, dropping stops (and first_above_time is cleared).
func TestCoDelLeavesDropping(t *testing.T) {
	rc := &rec{}
	q := newCoDelT(t, "codel", rc)
	standing(q, rc, 300, time.Millisecond, 400*time.Millisecond, false)
	if !q.dropping {
		t.Fatalf("setup: not in dropping state")
	}
	// Stop arrivals; dequeue the backlog quickly; add fresh packets.
	var g pktGen
	now := at(400 * time.Millisecond)
	for q.Len() > 0 {
		q.Dequeue(now)
	}
	for i := 0; i < 10; i++ {
		q.Enqueue(now, g.pkt(1, 1500))
	}
	q.Dequeue(now.Add(time.Millisecond)) // sojourn 1 ms < 5 ms
	if q.dropping || q.firstAboveTime != clock.Never {
		t.Errorf("after a below-target sojourn: dropping %v first_above %v, want false, never", q.dropping, q.firstAboveTime)
	}
}

// Count re-entry rule, RFC 8289 §5.5: on entering the dropping state,
// count = count - lastcount if that is > 1 and now - drop_next < 16·INTERVAL,
// else 1; drop_next = now + INTERVAL/sqrt(count); lastcount = count.
func TestCoDelReentry(t *testing.T) {
	interval := 100 * time.Millisecond
	tests := []struct {
		count, lastCount uint32
		sinceDropNext    time.Duration // now - drop_next
		wantCount        uint32
	}{
		{5, 1, 300 * time.Millisecond, 4},
		{5, 1, 1599 * time.Millisecond, 4},
		{5, 1, 1600 * time.Millisecond, 1}, // not < 16 intervals
		{5, 1, 10 * time.Second, 1},
		{3, 1, 0, 2},
		{2, 1, 0, 1}, // delta 1 is not > 1
		{7, 7, 0, 1}, // delta 0
		{50, 10, 200 * time.Millisecond, 40},
	}
	for _, tt := range tests {
		rc := &rec{}
		q := newCoDelT(t, "codel", rc)
		var g pktGen
		for i := 0; i < 5; i++ {
			q.Enqueue(at(0), g.pkt(1, 1500))
		}
		now := at(2 * time.Second)
		q.count, q.lastCount, q.dropping = tt.count, tt.lastCount, false
		q.dropNext = now.Add(-tt.sinceDropNext)
		q.firstAboveTime = now.Add(-time.Millisecond)
		p := q.Dequeue(now)
		if got, want := len(rc.drops), 1; got != want {
			t.Fatalf("case %+v: drops got %d, want %d", tt, got, want)
		}
		if p == nil || p.ID != 2 {
			t.Errorf("case %+v: returned packet got %v, want id 2 (the one after the drop)", tt, p)
		}
		if !q.dropping || q.count != tt.wantCount || q.lastCount != tt.wantCount {
			t.Errorf("case %+v: dropping, count, lastcount got %v, %d, %d, want true, %d, %d",
				tt, q.dropping, q.count, q.lastCount, tt.wantCount, tt.wantCount)
		}
		wantNext := now.Add(time.Duration(float64(interval) / math.Sqrt(float64(tt.wantCount))))
		if q.dropNext != wantNext {
			t.Errorf("case %+v: drop_next got %v, want %v", tt, q.dropNext, wantNext)
		}
	}
}

func TestCoDelLimitAndOrder(t *testing.T) {
	rc := &rec{}
	q := newCoDelT(t, "codel:limit=10p", rc)
	var g pktGen
	for i := 0; i < 15; i++ {
		q.Enqueue(at(0), g.pkt(1, 100))
	}
	if got, want := rc.count(DropOverflow), 5; got != want {
		t.Errorf("overflow drops got %d, want %d", got, want)
	}
	if got, want := drain(q, at(time.Millisecond)), []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}; !slices.Equal(got, want) {
		t.Errorf("order got %v, want %v", got, want)
	}
}
