// Package sim is cclab's discrete-event simulator (docs/sim.md, docs/architecture.md): a virtual
// clock and event queue (this file), a topology of hosts, routers and links
// driving the shared link/qdisc pipeline, and endpoints driving the shared
// transport through exactly the public API the live driver uses.
//
// The engine is single-threaded and deterministic: events fire in time order
// and events scheduled for the same instant fire in the order they were
// scheduled. In steady state it does not allocate: events are 16-byte values
// (instant, sequence number, payload slot) in a ladder queue (queue.go)
// with the payloads (handler, argument) in a slot table, and handlers are
// small interface values; a Timer's events point at the timer itself
// (Engine.timers), which Step runs directly.
package sim

import (
	"math"
	"time"

	"cclab/clock"
)

// Handler is called when an event fires. arg is the value given to Schedule
// (an index, a generation counter, ...), so one handler object can serve
// many events without closures.
type Handler interface {
	Fire(now clock.Time, arg uint64)
}

// HandlerFunc adapts a function to a Handler. A func value stored in an
// interface does not allocate, but building a new closure does: create
// HandlerFuncs once, not per event.
type HandlerFunc func(now clock.Time, arg uint64)

// Fire calls f(now, arg).
func (f HandlerFunc) Fire(now clock.Time, arg uint64) { f(now, arg) }

// payload is the rest of a scheduled event, in a slot that stays put while
// its node moves through the heap.
type payload struct {
	h   Handler
	arg uint64
}

// Engine is a virtual clock and an event queue.
type Engine struct {
	now    clock.Time
	q      queue
	slots  []payload // by node.slot (events given to Schedule)
	free   []uint32  // unused slots, reused last-freed first (warm in cache)
	timers []*Timer  // by node.slot&^timerSlot (events of Timers)
	fired  uint64    // events fired so far
	late   uint64    // events scheduled in the past (run at now instead)
	// stale and rearmed count the Timers' events that called no handler
	// (Engine.TimerEvents).
	stale, rearmed uint64
}

// timerSlot marks a node that is a Timer's event: its slot (without the
// mark) indexes Engine.timers instead of Engine.slots. A timer keeps its
// index for good (timers live as long as the simulation), so its events
// need no payload slot taken and given back per event, and Step runs the
// timer directly instead of through the Handler interface.
const timerSlot = 1 << 31

// NewEngine returns an engine whose clock reads clock.Start.
func NewEngine() *Engine {
	e := &Engine{now: clock.Start, q: newQueue(math.MaxUint32), slots: make([]payload, 0, 1024)}
	e.q.renumbered = e.renumbered
	return e
}

// Now returns the current virtual time.
func (e *Engine) Now() clock.Time { return e.now }

// Pending returns the number of scheduled events (including stale timer events).
func (e *Engine) Pending() int { return e.q.len() }

// Fired returns the number of events fired so far.
func (e *Engine) Fired() uint64 { return e.fired }

// Late returns how many events were scheduled for an instant already past;
// they were run at the current time instead. Non-zero means a component
// reported a deadline in the past, which is worth investigating.
func (e *Engine) Late() uint64 { return e.late }

// TimerEvents returns how many of the fired events were Timers' events
// that called no handler: stale ones (superseded by an earlier re-arm, or
// of a disarmed timer), which the queue keeps until their instant rather
// than deleting them, and early ones, which re-armed the timer for a later
// instant. Both are included in Fired.
func (e *Engine) TimerEvents() (stale, rearmed uint64) { return e.stale, e.rearmed }

// Schedule arranges for h.Fire(at, arg) to be called at virtual time at.
// Events for the same instant fire in the order they were scheduled. An
// instant before Now is run at Now (and counted by Late). at must not be
// clock.Never.
func (e *Engine) Schedule(at clock.Time, h Handler, arg uint64) {
	if at < e.now {
		at = e.now
		e.late++
	}
	var slot uint32
	if k := len(e.free); k > 0 {
		slot = e.free[k-1]
		e.free = e.free[:k-1]
		e.slots[slot] = payload{h: h, arg: arg}
	} else {
		slot = uint32(len(e.slots))
		e.slots = append(e.slots, payload{h: h, arg: arg})
	}
	e.q.push(at, slot)
}

// After schedules h.Fire after d has elapsed from Now.
func (e *Engine) After(d time.Duration, h Handler, arg uint64) {
	e.Schedule(e.now.Add(d), h, arg)
}

// Next returns the time of the earliest scheduled event, or clock.Never.
func (e *Engine) Next() clock.Time {
	x, ok := e.q.peek()
	if !ok {
		return clock.Never
	}
	return x.at
}

// Step fires the earliest event and reports whether there was one.
func (e *Engine) Step() bool {
	top, ok := e.q.pop()
	if !ok {
		return false
	}
	e.fire(top)
	return true
}

// fire runs the event x just popped from the queue.
func (e *Engine) fire(x node) {
	e.now = x.at
	e.fired++
	if x.slot&timerSlot != 0 {
		e.timers[x.slot&^timerSlot].fire(x.at, x.seq)
		return
	}
	p := &e.slots[x.slot]
	h, arg := p.h, p.arg
	p.h = nil // drop the handler reference
	e.free = append(e.free, x.slot)
	h.Fire(x.at, arg)
}

// RunFor fires every event due within d of Now, then advances the clock to
// Now+d (even if the queue ran dry earlier).
func (e *Engine) RunFor(d time.Duration) {
	e.RunUntilTime(e.now.Add(d))
}

// RunUntilTime fires every event due at or before t, then sets the clock to t
// (if t is later than Now).
func (e *Engine) RunUntilTime(t clock.Time) {
	for {
		x, ok := e.q.popUntil(t)
		if !ok {
			break
		}
		e.fire(x)
	}
	if t > e.now {
		e.now = t
	}
}

// RunUntil fires events until pred returns true or no event is left. pred is
// checked before the first event and after every event. It reports whether
// pred held when it stopped; the clock stays at the last event fired.
func (e *Engine) RunUntil(pred func() bool) bool {
	for !pred() {
		if !e.Step() {
			return false
		}
	}
	return true
}

// RunUntilOrTimeout is RunUntil bounded by deadline: it fires no event later
// than deadline. If pred is still false when no event at or before deadline
// remains, the clock advances to deadline and it reports false.
func (e *Engine) RunUntilOrTimeout(pred func() bool, deadline clock.Time) bool {
	for !pred() {
		if x, ok := e.q.peek(); !ok || x.at > deadline {
			if deadline > e.now {
				e.now = deadline
			}
			return false
		}
		e.Step()
	}
	return true
}

// Timer is a re-armable deadline for one handler, the simulator's side of
// the driver contract's "the simulator schedules one event" (docs/architecture.md): components expose a
// Deadline and the driver keeps a Timer at it. Re-arming later than the
// pending event does not schedule anything new (the pending event re-arms
// itself when it fires early); re-arming earlier schedules a new event and
// makes the old one stale: the timer remembers the sequence number of its
// live event (the queue's, unique among queued events), and an event of
// the timer with another one is ignored. So a timer has at most a few
// events in the queue however often it is re-armed.
type Timer struct {
	e       *Engine
	h       Handler
	arg     uint64
	pending clock.Time // time of the live scheduled event; Never if none
	want    clock.Time // when the handler should run; Never if disarmed
	seq     uint32     // queue sequence number of the live scheduled event (if pending is not Never)
	slot    uint32     // index in Engine.timers plus one; 0 until first scheduled
}

// NewTimer returns a disarmed timer that calls h.Fire(now, arg) when due.
func (e *Engine) NewTimer(h Handler, arg uint64) *Timer {
	t := &Timer{}
	e.InitTimer(t, h, arg)
	return t
}

// InitTimer initialises a Timer in place (for timers embedded in other
// structs). A timer is initialised once; the engine keeps a reference to
// it from its first event on.
func (e *Engine) InitTimer(t *Timer, h Handler, arg uint64) {
	*t = Timer{e: e, h: h, arg: arg}
}

// Set arms the timer for at; clock.Never disarms it.
func (t *Timer) Set(at clock.Time) {
	if t.pending != clock.Never && t.pending <= at {
		// The pending event, which is not before Now (events fire in
		// order), will fire first and re-arm: the common case, inlined.
		t.want = at
		return
	}
	t.set(at)
}

// set is Set's general case.
func (t *Timer) set(at clock.Time) {
	t.want = at
	if at == clock.Never {
		return
	}
	if at < t.e.now {
		at = t.e.now
		t.want = at
	}
	if t.pending != clock.Never && t.pending <= at {
		return // the pending event will fire first and re-arm
	}
	t.schedule(at)
}

// schedule queues the timer's live event at at (not before Now).
func (t *Timer) schedule(at clock.Time) {
	e := t.e
	if t.slot == 0 {
		e.timers = append(e.timers, t)
		t.slot = uint32(len(e.timers))
	}
	t.pending = at
	t.seq = e.q.push(at, (t.slot-1)|timerSlot)
}

// When returns the instant the timer is armed for, or clock.Never.
func (t *Timer) When() clock.Time { return t.want }

// fire runs the timer's queue entry with sequence number seq.
func (t *Timer) fire(now clock.Time, seq uint32) {
	if seq != t.seq || t.pending == clock.Never {
		t.e.stale++
		return // stale: superseded by an earlier re-arm
	}
	t.pending = clock.Never
	switch {
	case t.want == clock.Never:
		t.e.stale++
		return
	case t.want > now:
		t.e.rearmed++
		t.schedule(t.want)
		return
	}
	t.want = clock.Never
	t.h.Fire(now, t.arg)
}

// renumbered is the queue's renumbering hook (queue.renumbered): every
// armed timer's live event has a new sequence number.
func (e *Engine) renumbered(newSeq func(old uint32) uint32) {
	for _, t := range e.timers {
		if t.pending != clock.Never {
			t.seq = newSeq(t.seq)
		}
	}
}
