package sim

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"cclab/clock"
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
	}{
		{"single", []clock.Time{ms(3)}, []clock.Time{ms(3)}},
		{"re-arm later", []clock.Time{ms(3), ms(8)}, []clock.Time{ms(8)}},
		{"re-arm earlier", []clock.Time{ms(8), ms(3)}, []clock.Time{ms(3)}},
		{"disarm", []clock.Time{ms(8), clock.Never}, nil},
		{"disarm then re-arm", []clock.Time{ms(8), clock.Never, ms(9)}, []clock.Time{ms(9)}},
		{"many moves", []clock.Time{ms(8), ms(2), ms(6), ms(1), ms(7)}, []clock.Time{ms(7)}},
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

type chain struct {
	e *Engine
	n int
}

func (c *chain) Fire(now clock.Time, arg uint64) {
	c.n++
	// re-schedule at a pseudo-random offset so the heap stays populated
	c.e.Schedule(now.Add(time.Duration(1+(arg*2654435761)%1000)*time.Microsecond), c, arg+1)
}

// BenchmarkEngine measures one fire+schedule with 10,000 pending events.
func BenchmarkEngine(b *testing.B) {
	e := NewEngine()
	c := &chain{e: e}
	for i := range 10000 {
		e.Schedule(clock.Start.Add(time.Duration(i)*time.Microsecond), c, uint64(i))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		e.Step()
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
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
