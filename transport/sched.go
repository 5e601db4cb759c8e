package transport

import (
	"math"
	"math/bits"
	"slices"

	"cclab/clock"
)

// scheduler keeps an endpoint's connections of one kind (stream or
// datagram mode) so that Transmit, Deadline and OnDeadline cost time in
// proportion to the connections with work, not to all of them:
//
//   - a binary min-heap of the connections by cached deadline (timers in a
//     heap), refreshed lazily: a connection whose state may have changed is
//     "touched" (a packet for it arrived, the application called it, it ran
//     a timer or transmitted) and its deadline is recomputed at the next
//     Deadline, OnDeadline or Transmit;
//   - a bitset of the connections that may have something to send: touched
//     ones and those whose deadline has passed (pacing). Transmit asks only
//     those, in the same round-robin order over creation order as a scan of
//     every connection would (a connection neither touched nor due has
//     nothing to send), so behaviour, and the simulator's results, do not
//     change.
//
// A datagram no connection accepts (garbage, unknown CIDs) touches nothing:
// the driver's Transmit and Deadline after it cost O(1) plus a scan of the
// bitset (one word per 64 connections). Every exported method of a
// connection that can change what it sends or when must touch it.
type scheduler[T schedItem] struct {
	conns []T      // in creation order (deterministic iteration)
	heap  []T      // by cached deadline
	dirty []T      // touched since the last refresh
	ready []uint64 // bitset by position in conns: may have something to send
	rr    int      // round-robin position: where the next Transmit scan starts
	due   []T      // scratch for OnDeadline
}

// schedItem is a connection the scheduler keeps.
type schedItem interface {
	comparable
	deadline() clock.Time
	schedState() *schedState
}

// schedState is a connection's place in its scheduler.
type schedState struct {
	pos     int        // index in conns
	heapIdx int        // index in heap
	due     clock.Time // cached deadline (Never: none)
	dirty   bool
}

// schedState returns the connection's scheduler state.
func (h *connCommon) schedState() *schedState { return &h.sched }

// key orders the heap: Never sorts last.
func key(t clock.Time) int64 {
	if t == clock.Never {
		return math.MaxInt64
	}
	return int64(t)
}

// add appends a new connection (touched).
func (s *scheduler[T]) add(c T) {
	st := c.schedState()
	st.pos = len(s.conns)
	s.conns = append(s.conns, c)
	if len(s.ready)*64 < len(s.conns) {
		s.ready = append(s.ready, 0)
	}
	st.heapIdx = len(s.heap)
	st.due = clock.Never
	s.heap = append(s.heap, c)
	s.touch(c)
}

// touch marks c as possibly changed: its deadline is recomputed and it is
// asked at the next Transmit.
func (s *scheduler[T]) touch(c T) {
	st := c.schedState()
	s.ready[st.pos/64] |= 1 << (st.pos % 64)
	if !st.dirty {
		st.dirty = true
		s.dirty = append(s.dirty, c)
	}
}

// refresh recomputes the deadlines of the touched connections.
func (s *scheduler[T]) refresh() {
	for _, c := range s.dirty {
		s.update(c)
	}
	clear(s.dirty)
	s.dirty = s.dirty[:0]
}

// refreshIdle recomputes the deadlines of the touched connections that are
// not ready; the ready ones stay touched (markDue).
func (s *scheduler[T]) refreshIdle() {
	if len(s.dirty) == 0 {
		return
	}
	keep := s.dirty[:0]
	for _, c := range s.dirty {
		if p := c.schedState().pos; s.ready[p/64]&(1<<(p%64)) != 0 {
			keep = append(keep, c)
			continue
		}
		s.update(c)
	}
	if len(keep) < len(s.dirty) {
		clear(s.dirty[len(keep):])
		s.dirty = keep
	}
}

// update recomputes touched connection c's deadline and its heap place.
func (s *scheduler[T]) update(c T) {
	st := c.schedState()
	st.dirty = false
	if d := c.deadline(); d != st.due {
		st.due = d
		s.up(st.heapIdx)
		s.down(st.heapIdx)
	}
}

// earliest returns the earliest deadline.
func (s *scheduler[T]) earliest() clock.Time {
	s.refresh()
	if len(s.heap) == 0 {
		return clock.Never
	}
	return s.heap[0].schedState().due
}

// markDue marks the connections whose deadline has passed as ready (they
// may send at now: pacing). Only the touched connections that are not
// ready have their deadlines recomputed first: a ready one is asked
// anyway, so its deadline can only set a bit already set, and it stays
// touched until the next refresh (Deadline, OnDeadline). The heap is
// ordered by the cached deadlines, so visitDue still finds every
// connection whose cached deadline has passed, and every other
// connection's cached deadline is current: the ready set is the one a full
// refresh gives, without recomputing the deadline of the connection that
// just received or sent at every Transmit.
func (s *scheduler[T]) markDue(now clock.Time) {
	s.refreshIdle()
	s.visitDue(0, now, func(c T) {
		p := c.schedState().pos
		s.ready[p/64] |= 1 << (p % 64)
	})
}

// visitDue calls f for every connection in the heap below i whose
// deadline is at or before now.
func (s *scheduler[T]) visitDue(i int, now clock.Time, f func(T)) {
	if i >= len(s.heap) {
		return
	}
	d := s.heap[i].schedState().due
	if d == clock.Never || d > now {
		return
	}
	f(s.heap[i])
	s.visitDue(2*i+1, now, f)
	s.visitDue(2*i+2, now, f)
}

// dueNow returns the connections whose deadline has passed, in creation
// order (the slice is reused).
func (s *scheduler[T]) dueNow(now clock.Time) []T {
	s.refresh()
	s.due = s.due[:0]
	s.visitDue(0, now, func(c T) { s.due = append(s.due, c) })
	slices.SortFunc(s.due, func(a, b T) int { return a.schedState().pos - b.schedState().pos })
	return s.due
}

// next returns the position of the next ready connection at or after
// position from (at most len(conns)), cyclically, and clears its bit; -1 if
// none is ready. It steps through the bitset's words without divisions (it
// runs at every Transmit).
func (s *scheduler[T]) next(from int) int {
	n := len(s.conns)
	if n == 0 {
		return -1
	}
	if from >= n {
		from %= n
	}
	w := from / 64
	word := s.ready[w] & (^uint64(0) << (from % 64))
	for k := 0; ; { // the last round sees from's word whole (bits below from)
		if word != 0 {
			b := bits.TrailingZeros64(word)
			s.ready[w] &^= 1 << b
			return w*64 + b
		}
		if k++; k > len(s.ready) {
			return -1
		}
		if w++; w == len(s.ready) {
			w = 0
		}
		word = s.ready[w]
	}
}

// clearReady marks the connection at position p as having nothing to send.
func (s *scheduler[T]) clearReady(p int) { s.ready[p/64] &^= 1 << (p % 64) }

// compact removes the connections gone(c) reports, keeping the others in
// creation order, and rebuilds positions, the heap and the bitset.
func (s *scheduler[T]) compact(gone func(T) bool) {
	j := 0
	var zero T
	for i, c := range s.conns {
		// The bitset is compacted in place: bit i is read and cleared
		// before bit j <= i is set.
		bit := s.ready[i/64]&(1<<(i%64)) != 0
		s.ready[i/64] &^= 1 << (i % 64)
		if gone(c) {
			continue
		}
		if bit {
			s.ready[j/64] |= 1 << (j % 64)
		}
		c.schedState().pos = j
		s.conns[j] = c
		j++
	}
	clear(s.conns[j:])
	s.conns = s.conns[:j]
	s.ready = s.ready[:(j+63)/64] // (as add keeps it) the words cut off are zero: every bit was cleared above
	if s.rr > j {
		s.rr = 0
	}
	s.heap = append(s.heap[:0], s.conns...)
	for i, c := range s.heap {
		c.schedState().heapIdx = i
	}
	for i := len(s.heap)/2 - 1; i >= 0; i-- {
		s.down(i)
	}
	d := s.dirty[:0]
	for _, c := range s.dirty {
		if !gone(c) {
			d = append(d, c)
		}
	}
	for i := len(d); i < len(s.dirty); i++ {
		s.dirty[i] = zero
	}
	s.dirty = d
}

func (s *scheduler[T]) less(i, j int) bool {
	a, b := s.heap[i].schedState(), s.heap[j].schedState()
	if ka, kb := key(a.due), key(b.due); ka != kb {
		return ka < kb
	}
	return a.pos < b.pos
}

func (s *scheduler[T]) swap(i, j int) {
	s.heap[i], s.heap[j] = s.heap[j], s.heap[i]
	s.heap[i].schedState().heapIdx = i
	s.heap[j].schedState().heapIdx = j
}

func (s *scheduler[T]) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !s.less(i, p) {
			return
		}
		s.swap(i, p)
		i = p
	}
}

func (s *scheduler[T]) down(i int) {
	for {
		l := 2*i + 1
		if l >= len(s.heap) {
			return
		}
		m := l
		if r := l + 1; r < len(s.heap) && s.less(r, l) {
			m = r
		}
		if !s.less(m, i) {
			return
		}
		s.swap(i, m)
		i = m
	}
}
