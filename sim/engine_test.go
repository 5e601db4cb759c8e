package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"cclab/clock"
	"cclab/internal/rusage"
)

type recorder struct {
	e     *Engine
	fired []uint64
	times []clock.Time
}

func (r *recorder) Fire(now clock.Time, arg uint64) {
	r.fired = append(r.fired, arg)
	r.times = append(r.times, now)
	if now != r.e.Now() {
		panic("Fire's now differs from Engine.Now")
	}
}

func TestEngineStartsNonZero(t *testing.T) {
	e := NewEngine()
	if e.Now() != clock.Start || e.Now() == clock.Never {
		t.Errorf("Now() = %v, want clock.Start (%v), non-zero", e.Now(), clock.Start)
	}
}

func TestEngineOrdering(t *testing.T) {
	ms := func(n int) clock.Time { return clock.Start.Add(time.Duration(n) * time.Millisecond) }
	tests := []struct {
		name  string
		at    []clock.Time // event i is scheduled at at[i] with arg i, in this order
		order []uint64     // expected firing order of args
	}{
		{"sorted", []clock.Time{ms(1), ms(2), ms(3)}, []uint64{0, 1, 2}},
		{"reversed", []clock.Time{ms(3), ms(2), ms(1)}, []uint64{2, 1, 0}},
		{"ties by insertion", []clock.Time{ms(5), ms(5), ms(5), ms(5)}, []uint64{0, 1, 2, 3}},
		{"mixed ties", []clock.Time{ms(2), ms(1), ms(2), ms(1), ms(0)}, []uint64{4, 1, 3, 0, 2}},
		{"past runs now", []clock.Time{ms(-5), ms(0)}, []uint64{0, 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := NewEngine()
			r := &recorder{e: e}
			for i, at := range tc.at {
				e.Schedule(at, r, uint64(i))
			}
			for e.Step() {
			}
			if !slices.Equal(r.fired, tc.order) {
				t.Errorf("firing order got %v, want %v", r.fired, tc.order)
			}
			if !slices.IsSorted(r.times) {
				t.Errorf("fire times not monotone: %v", r.times)
			}
		})
	}
}

// TestEngineRandomOrder checks the heap against a stable sort on many events.
func TestEngineRandomOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	e := NewEngine()
	r := &recorder{e: e}
	type ev struct {
		at  clock.Time
		arg uint64
	}
	var want []ev
	for i := range 5000 {
		at := clock.Start.Add(time.Duration(rng.IntN(200)) * time.Microsecond)
		e.Schedule(at, r, uint64(i))
		want = append(want, ev{at, uint64(i)})
	}
	slices.SortStableFunc(want, func(a, b ev) int { return int(a.at - b.at) })
	for e.Step() {
	}
	for i := range want {
		if r.fired[i] != want[i].arg {
			t.Fatalf("event %d got arg %d, want %d", i, r.fired[i], want[i].arg)
		}
	}
}

// TestEngineScheduleFromHandler: events scheduled while firing, for the same
// instant, run after those already queued for that instant.
func TestEngineScheduleFromHandler(t *testing.T) {
	e := NewEngine()
	var got []uint64
	var h HandlerFunc
	h = func(now clock.Time, arg uint64) {
		got = append(got, arg)
		if arg == 1 {
			e.Schedule(now, h, 3)
		}
	}
	e.Schedule(clock.Start, h, 1)
	e.Schedule(clock.Start, h, 2)
	for e.Step() {
	}
	if want := []uint64{1, 2, 3}; !slices.Equal(got, want) {
		t.Errorf("order got %v, want %v", got, want)
	}
}

func TestEngineRun(t *testing.T) {
	ms := func(n int) clock.Time { return clock.Start.Add(time.Duration(n) * time.Millisecond) }
	tests := []struct {
		name      string
		run       func(e *Engine, r *recorder) bool
		wantFired int
		wantNow   clock.Time
		wantOK    bool
	}{
		{"RunFor stops at horizon inclusive", func(e *Engine, r *recorder) bool { e.RunFor(5 * time.Millisecond); return true }, 5, ms(5), true},
		{"RunFor past last event advances clock", func(e *Engine, r *recorder) bool { e.RunFor(50 * time.Millisecond); return true }, 10, ms(50), true},
		{"RunUntil true at once fires nothing", func(e *Engine, r *recorder) bool { return e.RunUntil(func() bool { return true }) }, 0, ms(0), true},
		{"RunUntil stops right after pred holds", func(e *Engine, r *recorder) bool {
			return e.RunUntil(func() bool { return len(r.fired) >= 3 })
		}, 3, ms(3), true},
		{"RunUntil runs dry", func(e *Engine, r *recorder) bool { return e.RunUntil(func() bool { return false }) }, 10, ms(10), false},
		{"RunUntilOrTimeout pred first", func(e *Engine, r *recorder) bool {
			return e.RunUntilOrTimeout(func() bool { return len(r.fired) >= 2 }, ms(7))
		}, 2, ms(2), true},
		{"RunUntilOrTimeout deadline first", func(e *Engine, r *recorder) bool {
			return e.RunUntilOrTimeout(func() bool { return len(r.fired) >= 9 }, ms(7))
		}, 7, ms(7), false},
		{"RunUntilOrTimeout deadline between events", func(e *Engine, r *recorder) bool {
			return e.RunUntilOrTimeout(func() bool { return false }, ms(4).Add(time.Microsecond))
		}, 4, ms(4).Add(time.Microsecond), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := NewEngine()
			r := &recorder{e: e}
			for i := 1; i <= 10; i++ {
				e.Schedule(ms(i), r, uint64(i))
			}
			ok := tc.run(e, r)
			if len(r.fired) != tc.wantFired {
				t.Errorf("fired got %d, want %d", len(r.fired), tc.wantFired)
			}
			if e.Now() != tc.wantNow {
				t.Errorf("Now got %v, want %v", e.Now(), tc.wantNow)
			}
			if ok != tc.wantOK {
				t.Errorf("result got %v, want %v", ok, tc.wantOK)
			}
		})
	}
}

func TestTimer(t *testing.T) {
	ms := func(n int) clock.Time { return clock.Start.Add(time.Duration(n) * time.Millisecond) }
	tests := []struct {
		name string
		sets []clock.Time // successive Set calls at time Start
		want []clock.Time // fire times
		// timer events that called no handler (Engine.TimerEvents)
		stale, rearmed uint64
	}{
		{"single", []clock.Time{ms(3)}, []clock.Time{ms(3)}, 0, 0},
		{"re-arm later", []clock.Time{ms(3), ms(8)}, []clock.Time{ms(8)}, 0, 1},
		{"re-arm earlier", []clock.Time{ms(8), ms(3)}, []clock.Time{ms(3)}, 1, 0},
		{"disarm", []clock.Time{ms(8), clock.Never}, nil, 1, 0},
		{"disarm then re-arm", []clock.Time{ms(8), clock.Never, ms(9)}, []clock.Time{ms(9)}, 0, 1},
		// events at 8 and 2 superseded, the one at 1 re-arms for 7
		{"many moves", []clock.Time{ms(8), ms(2), ms(6), ms(1), ms(7)}, []clock.Time{ms(7)}, 2, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := NewEngine()
			r := &recorder{e: e}
			tm := e.NewTimer(r, 42)
			for _, s := range tc.sets {
				tm.Set(s)
			}
			for e.Step() {
			}
			if !slices.Equal(r.times, tc.want) {
				t.Errorf("fire times got %v, want %v", r.times, tc.want)
			}
			if e.Pending() != 0 {
				t.Errorf("pending events got %d, want 0", e.Pending())
			}
			if stale, rearmed := e.TimerEvents(); stale != tc.stale || rearmed != tc.rearmed {
				t.Errorf("stale, re-armed events got %d, %d, want %d, %d", stale, rearmed, tc.stale, tc.rearmed)
			}
		})
	}
}

// TestTimerBoundedQueue: a timer re-armed at every step keeps few queue entries.
func TestTimerBoundedQueue(t *testing.T) {
	e := NewEngine()
	r := &recorder{e: e}
	tm := e.NewTimer(r, 0)
	for i := range 100000 {
		tm.Set(e.Now().Add(time.Duration(100+i%7) * time.Millisecond))
	}
	if e.Pending() > 2 {
		t.Errorf("pending got %d, want <= 2", e.Pending())
	}
}

// scheduler is what BenchmarkEngine and TestEngineMatchesReference need of
// an event queue: the engine and refQueue.
type scheduler interface {
	Schedule(at clock.Time, h Handler, arg uint64)
	Step() bool
}

type chain struct {
	e scheduler
	n int
}

func (c *chain) Fire(now clock.Time, arg uint64) {
	c.n++
	// re-schedule at a pseudo-random offset so the heap stays populated
	c.e.Schedule(now.Add(time.Duration(1+(arg*2654435761)%1000)*time.Microsecond), c, arg+1)
}

// BenchmarkEngine measures one fire+schedule with 10,000 pending events, in
// the engine and in the engine's former queue (refQueue, "ref") side by
// side: compare events/s within one run. "engine-far-first" first schedules
// an event an hour ahead, which stretched the near heap's range over every
// later event before queue.demote. events/s is per second of wall
// time (what the benchmark framework times); events/CPU-s per second of the
// process's CPU time, which on a shared, loaded machine is the steadier
// figure (the wall time then includes the time the process waited for a CPU).
func BenchmarkEngine(b *testing.B) {
	for _, q := range []struct {
		name string
		new  func() scheduler
	}{
		{"engine", func() scheduler { return NewEngine() }},
		{"ref", func() scheduler { return &refQueue{now: clock.Start} }},
		{"engine-far-first", func() scheduler { // an event an hour ahead first (demote)
			e := NewEngine()
			e.Schedule(clock.Start.Add(time.Hour), HandlerFunc(func(clock.Time, uint64) {}), 0)
			return e
		}},
	} {
		b.Run(q.name, func(b *testing.B) {
			e := q.new()
			c := &chain{e: e}
			for i := range 10000 {
				e.Schedule(clock.Start.Add(time.Duration(i)*time.Microsecond), c, uint64(i))
			}
			b.ReportAllocs()
			b.ResetTimer()
			cpu0, _ := rusage.CPU()
			for range b.N {
				e.Step()
			}
			cpu1, _ := rusage.CPU()
			cpu := cpu1 - cpu0
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
			if cpu > 0 {
				b.ReportMetric(float64(b.N)/cpu.Seconds(), "events/CPU-s")
			}
		})
	}
}

// BenchmarkTimer measures re-arming a timer and firing it.
func BenchmarkTimer(b *testing.B) {
	e := NewEngine()
	var tm *Timer
	h := HandlerFunc(func(now clock.Time, _ uint64) { tm.Set(now.Add(time.Millisecond)) })
	tm = e.NewTimer(h, 0)
	tm.Set(e.Now())
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		e.Step()
	}
}

// spawner records each firing and schedules 0–3 new events at offsets from
// a mix of scales: the same instant, nanoseconds, microseconds, seconds,
// far future, and the past (run at now).
type spawner struct {
	e    scheduler
	now  func() clock.Time
	rng  *rand.Rand
	next uint64
	log  []ev
	dist int // which offset mix
	live int // events scheduled and not yet fired
	most int // keep about this many pending
}

type ev struct {
	at  clock.Time
	arg uint64
}

func (s *spawner) offset() time.Duration {
	r := s.rng
	switch s.dist {
	case 1: // ties: a handful of instants
		return time.Duration(r.IntN(3)) * time.Microsecond
	case 2: // bimodal: near link events and far flow timers
		if r.IntN(10) == 0 {
			return time.Duration(r.Int64N(int64(30 * time.Second)))
		}
		return time.Duration(r.Int64N(int64(200 * time.Microsecond)))
	case 3: // dense: nanoseconds apart, with ties
		return time.Duration(r.IntN(1000))
	case 4: // on a power-of-two grid and next to it: instants at bucket edges
		return time.Duration(1024*r.IntN(64) + r.IntN(3) - 1)
	case 5: // powers of two: ties at bucket edges of every width
		return time.Duration(1) << r.IntN(24)
	}
	switch r.IntN(8) {
	case 0:
		return 0
	case 1:
		return -time.Duration(r.IntN(1000)) // the past: runs at now
	case 2:
		return time.Duration(r.IntN(100))
	case 3:
		return time.Duration(r.IntN(1000)) * time.Microsecond
	case 4:
		return time.Duration(r.Int64N(int64(10 * time.Second)))
	case 5:
		return time.Duration(r.Int64N(1 << 50)) // days
	default:
		return time.Duration(r.IntN(20)) * time.Millisecond
	}
}

// Fire logs the event and schedules 0–2 more, keeping about most pending.
func (s *spawner) Fire(now clock.Time, arg uint64) {
	s.log = append(s.log, ev{now, arg})
	s.live--
	n := 1 + s.rng.IntN(2)
	if s.live > s.most {
		n = s.rng.IntN(2)
	}
	for range n {
		s.next++
		s.live++
		s.e.Schedule(now.Add(s.offset()), s, s.next)
	}
}

// TestEngineMatchesReference: the engine fires exactly the events of the
// former single-heap queue, in the same order, for random workloads mixing
// ties, the past, near and far future, with the sequence numbers renumbered
// often (a small maxSeq) and the clock moved by RunUntilTime between steps;
// and its memory stays within the most events ever pending. In the last
// six runs the first event is an hour ahead, so the near heap's range
// (smallQueue) covers everything the run schedules, as a simulation's end
// or a flow's late start can make it: the near heap must still stay small
// (demote) except when most events share a few instants (dist 1).
func TestEngineMatchesReference(t *testing.T) {
	for run := range 18 {
		dist, most, maxSeq := run%6, 400, uint32(math.MaxUint32)
		if run >= 6 && run < 12 { // few pending (the near heap alone), and frequent renumbering
			most, maxSeq = 12, 1000
		}
		farFirst := run >= 12
		t.Run(fmt.Sprintf("dist %d pending %d far first %v", dist, most, farFirst), func(t *testing.T) {
			e := NewEngine()
			e.q.maxSeq = maxSeq
			ref := &refQueue{now: clock.Start}
			a := &spawner{e: e, now: e.Now, rng: rand.New(rand.NewPCG(uint64(dist), 7)), dist: dist, most: most}
			b := &spawner{e: ref, now: ref.Now, rng: rand.New(rand.NewPCG(uint64(dist), 7)), dist: dist, most: most}
			if farFirst {
				e.Schedule(clock.Start.Add(time.Hour), a, 1<<62)
				ref.Schedule(clock.Start.Add(time.Hour), b, 1<<62)
				a.live++
				b.live++
			}
			maxNear := 0
			for i := range min(200, most) {
				a.next, b.next = uint64(i+1)<<32, uint64(i+1)<<32
				at := clock.Start.Add(time.Duration(i) * 37 * time.Microsecond)
				e.Schedule(at, a, uint64(i))
				ref.Schedule(at, b, uint64(i))
				a.live++
				b.live++
			}
			maxPending := 0
			steps := 200000
			if raceEnabled || testing.Short() {
				steps = 30000
			}
			for step := 0; step < steps; step++ {
				maxPending = max(maxPending, e.Pending())
				maxNear = max(maxNear, len(e.q.near)-heapBase)
				if step%1000 == 999 { // move the clock past the next event's instant, then schedule at it
					t0 := e.Next()
					if t0 == clock.Never {
						break
					}
					for ref.heap[0].at <= t0 {
						ref.Step()
					}
					e.RunUntilTime(t0)
					a.live++ // Fire counts itself as fired
					b.live++
					a.Fire(e.Now(), 0)
					b.Fire(ref.Now(), 0)
					continue
				}
				okA, okB := e.Step(), ref.Step()
				if okA != okB {
					t.Fatalf("dist %d maxSeq %d step %d: engine had an event %v, reference %v", dist, maxSeq, step, okA, okB)
				}
				if !okA {
					break
				}
			}
			if len(a.log) != len(b.log) {
				t.Fatalf("dist %d maxSeq %d: fired got %d events, want %d", dist, maxSeq, len(a.log), len(b.log))
			}
			for i := range a.log {
				if a.log[i] != b.log[i] {
					t.Fatalf("dist %d maxSeq %d: event %d got %+v, want %+v", dist, maxSeq, i, a.log[i], b.log[i])
				}
			}
			if len(e.q.arena) > maxPending {
				t.Errorf("dist %d maxSeq %d: queue arena got %d entries, want at most the %d events ever pending",
					dist, maxSeq, len(e.q.arena), maxPending)
			}
			if len(a.log) < steps/20 {
				t.Errorf("dist %d maxSeq %d: only %d events fired, want a long run", dist, maxSeq, len(a.log))
			}
			t.Logf("largest near heap %d events, most pending %d", maxNear, maxPending)
			if farFirst && dist != 1 && maxNear > nearMax {
				t.Errorf("dist %d: near heap got up to %d events, want at most nearMax = %d", dist, maxNear, nearMax)
			}
		})
	}
}

// TestEngineSteadyStateNoAlloc: once warmed up, firing and scheduling
// allocate nothing.
func TestEngineSteadyStateNoAlloc(t *testing.T) {
	e := NewEngine()
	c := &chain{e: e}
	for i := range 10000 {
		e.Schedule(clock.Start.Add(time.Duration(i)*time.Microsecond), c, uint64(i))
	}
	for range 200000 {
		e.Step()
	}
	if got := testing.AllocsPerRun(100000, func() { e.Step() }); got != 0 {
		t.Errorf("allocations per event got %v, want 0", got)
	}
}

// timerLoad is a set of timers whose handlers log each firing and re-arm
// 1–3 random timers (itself or others) earlier, later, at the same instant,
// or disarm them: many stale events and re-arms in flight.
type timerLoad struct {
	now    func() clock.Time
	timers []interface{ Set(clock.Time) }
	rng    *rand.Rand
	log    []ev
}

func (l *timerLoad) Fire(now clock.Time, arg uint64) {
	l.log = append(l.log, ev{now, arg})
	for range 1 + l.rng.IntN(3) {
		t := l.timers[l.rng.IntN(len(l.timers))]
		switch k := l.rng.IntN(10); {
		case k == 0:
			t.Set(clock.Never)
		case k == 1:
			t.Set(now)
		default:
			t.Set(now.Add(time.Duration(1+l.rng.IntN(1000)) * time.Microsecond))
		}
	}
}

// TestTimerMatchesReference: timers fire exactly as the former
// generation-counted timers on the reference queue, with sequence numbers
// renumbered often (a small maxSeq: a timer's live event is known by its
// sequence number, which renumbering changes).
func TestTimerMatchesReference(t *testing.T) {
	for _, maxSeq := range []uint32{math.MaxUint32, 50, 1000} {
		e := NewEngine()
		e.q.maxSeq = maxSeq
		ref := &refQueue{now: clock.Start}
		a := &timerLoad{now: e.Now, rng: rand.New(rand.NewPCG(3, 4))}
		b := &timerLoad{now: ref.Now, rng: rand.New(rand.NewPCG(3, 4))}
		for i := range 40 {
			a.timers = append(a.timers, e.NewTimer(a, uint64(i)))
			b.timers = append(b.timers, &refTimer{q: ref, h: b, arg: uint64(i)})
		}
		for i := range 40 {
			at := clock.Start.Add(time.Duration(i) * 7 * time.Microsecond)
			a.timers[i].Set(at)
			b.timers[i].Set(at)
		}
		for len(a.log) < 100000 {
			okA, okB := e.Step(), ref.Step()
			if okA != okB {
				t.Fatalf("maxSeq %d: engine had an event %v, reference %v", maxSeq, okA, okB)
			}
			if !okA {
				break
			}
		}
		if !slices.Equal(a.log, b.log) {
			t.Fatalf("maxSeq %d: firings differ (got %d, want %d)", maxSeq, len(a.log), len(b.log))
		}
		if len(a.log) < 100000 {
			t.Errorf("maxSeq %d: only %d firings, want a long run", maxSeq, len(a.log))
		}
	}
}

// TestEngineClampedRungOrder: a rung made by demote ends where the near
// heap's range ended, inside its last bucket; events after that end wait
// in far. When that last bucket is split into a finer rung (or moved into
// the near heap), the new range must stop at the rung's end too, or those
// far events are overtaken by later ones (they fired late, with the clock
// going backwards).
func TestEngineClampedRungOrder(t *testing.T) {
	e := NewEngine()
	ref := &refQueue{now: clock.Start}
	end := clock.Start.Add(time.Second)
	a, b := &evLog{e: e, from: end.Add(-50 * time.Microsecond)}, &evLog{e: ref, from: end.Add(-50 * time.Microsecond)}
	sched := func(at clock.Time, arg uint64) {
		e.Schedule(at, a, arg)
		ref.Schedule(at, b, arg)
	}
	sched(end, 0) // while few are pending the near heap takes it: its range reaches end+1
	n := uint64(1)
	for i := range 2 * nearMax { // overfill the near heap: demote makes a rung ending at end+1
		sched(clock.Start.Add(time.Duration(i)*time.Second/time.Duration(2*nearMax)), n)
		n++
	}
	for i := range 3 * rungSplit { // crowd the rung's last bucket, up to its end
		sched(end.Add(-time.Duration(i)*time.Microsecond), n)
		n++
	}
	for i := range 100 { // after the rung's end: far
		sched(end.Add(time.Duration(1+i)*time.Microsecond), n)
		n++
	}
	for e.Step() {
		ref.Step()
	}
	if len(a.log) != len(b.log) || len(a.log) < 2*nearMax {
		t.Fatalf("fired got %d events, want %d", len(a.log), len(b.log))
	}
	for i := range a.log {
		if a.log[i] != b.log[i] {
			t.Fatalf("event %d got %+v, want %+v", i, a.log[i], b.log[i])
		}
	}
}

// evLog logs each firing; an event fired from instant from on (with an
// arg below 1<<32) schedules one more 60 µs later, as a simulation
// schedules while it runs.
type evLog struct {
	e    scheduler
	from clock.Time
	log  []ev
}

func (l *evLog) Fire(now clock.Time, arg uint64) {
	l.log = append(l.log, ev{now, arg})
	if now >= l.from && arg < 1<<32 {
		l.e.Schedule(now.Add(60*time.Microsecond), l, arg|1<<32)
	}
}

// TestQueueArenaGrowth: the queue's arena of waiting events doubles as it
// grows (append grows a long slice by a quarter, copying it about four
// times its final size in all), and every event comes out in order.
func TestQueueArenaGrowth(t *testing.T) {
	const n = 200000
	var q queue
	allocs := testing.AllocsPerRun(1, func() {
		q = newQueue(math.MaxUint32)
		for i := range n {
			q.push(clock.Start.Add(time.Duration(i)*time.Millisecond), uint32(i)) // beyond the first few, all wait in far
		}
	})
	switch want := 3 + math.Ceil(math.Log2(n/arenaMin)); { // newQueue's two, then the arena's first and its doublings
	case raceEnabled:
		t.Logf("%d events: %v allocations; not checked against %v: the race detector's runtime allocates more", n, allocs, want)
	case allocs > want:
		t.Errorf("%d events: %v allocations, want at most %v", n, allocs, want)
	}
	for i := range n {
		x, ok := q.pop()
		if want := uint32(i); !ok || x.slot != want {
			t.Fatalf("pop %d: got slot %d (ok %v), want %d", i, x.slot, ok, want)
		}
	}
}
