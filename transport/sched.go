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
//     Deadline or OnDeadline, or as soon as Transmit finds it has nothing
//     to send (idle); touched connections are ready (below), so they are
//     found by the ready bitset and counted, with no list to keep;
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
//
// The work per packet is done by schedCore, which knows each connection
// only by its schedState (no call through the type parameter's dictionary:
// the state is a field of the connection); the generic part keeps the
// connections themselves for iteration and for OnDeadline.
type scheduler[T schedItem] struct {
	conns []T // in creation order (deterministic iteration)
	schedCore
	due   []T           // scratch for OnDeadline
	dueSt []*schedState // scratch for dueNow
}

// schedCore is the scheduler's state by connection state: the heap, the
// ready bitset and the count of touched connections (positions index conns
// and byPos). The fields a datagram in or out reads (a Transmit's scan and
// a touch) come first: with conns before them they take the first two
// lines of an endpoint's scheduler (Endpoint's layout).
type schedCore struct {
	heap   []*schedState // by cached deadline, then position; every connection is in it
	ready  []uint64      // bitset by position in conns: may have something to send
	ndirty int           // connections touched since their deadline was last computed (all of them ready)
	nready int           // bits set in ready
	rr     int           // round-robin position: where the next Transmit scan starts (at most len(heap))
	byPos  []*schedState // by position in conns
	marked []*schedState // scratch for markDue
}

// schedItem is a connection the scheduler keeps.
type schedItem interface {
	comparable
	timed
	schedState() *schedState
}

// timed is a connection with timers: deadline returns the earliest
// instant it needs control (clock.Never: none).
type timed interface {
	deadline() clock.Time
}

// schedState is a connection's place in its scheduler.
type schedState struct {
	core    *schedCore // the scheduler keeping the connection; nil before it is added and once it is removed (Endpoint.closed)
	conn    timed      // the connection itself (its deadline)
	pos     int        // index in conns
	heapIdx int        // index in heap
	at      int64      // cached deadline as a heap key (key: math.MaxInt64 for none)
	dirty   bool       // touched since at was computed (counted in ndirty; its ready bit is set)
}

// schedState returns the connection's scheduler state.
func (h *connCommon) schedState() *schedState { return &h.sched }

// touch tells the endpoint's scheduler that the connection's state changed
// (what it may send, or when its timers run): every entry point that
// changes it calls this.
func (h *connCommon) touch() {
	if s := h.sched.core; s != nil {
		s.touch(&h.sched)
	}
}

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
	st.core = &s.schedCore
	st.conn = c
	st.pos = len(s.conns)
	s.conns = append(s.conns, c)
	if len(s.ready)*64 < len(s.conns) {
		s.ready = append(s.ready, 0)
	}
	st.heapIdx = len(s.heap)
	st.at = key(clock.Never)
	s.heap = append(s.heap, st)
	s.byPos = append(s.byPos, st)
	s.touch(st)
}

// touch marks st's connection as possibly changed: its deadline is
// recomputed and it is asked at the next Transmit. A connection touched
// already is ready already (its bit is cleared only by idle, which also
// recomputes its deadline): nothing to do.
func (s *schedCore) touch(st *schedState) {
	if st.dirty {
		return
	}
	s.setReady(uint(st.pos))
	st.dirty = true
	s.ndirty++
}

// setReady sets position p's ready bit.
func (s *schedCore) setReady(p uint) {
	w, bit := &s.ready[p/64], uint64(1)<<(p%64)
	if *w&bit == 0 {
		*w |= bit
		s.nready++
	}
}

// clearReady clears position p's ready bit.
func (s *schedCore) clearReady(p uint) {
	w, bit := &s.ready[p/64], uint64(1)<<(p%64)
	if *w&bit != 0 {
		*w &^= bit
		s.nready--
	}
}

// idle records that Transmit asked st's connection (touched) and it had
// nothing to send: it is no longer ready, and its deadline is recomputed
// now (it cannot change before the connection is touched again).
func (s *schedCore) idle(st *schedState) {
	s.clearReady(uint(st.pos))
	if !st.dirty {
		return
	}
	s.ndirty--
	s.update(st)
}

// refresh recomputes the deadlines of the touched connections: they are
// among the ready ones (the order of the updates does not matter, the
// heap's order being total).
func (s *schedCore) refresh() {
	for w, word := range s.ready {
		if s.ndirty == 0 {
			return
		}
		for ; word != 0; word &= word - 1 {
			if st := s.byPos[w*64+bits.TrailingZeros64(word)]; st.dirty {
				s.ndirty--
				s.update(st)
			}
		}
	}
}

// update recomputes st's deadline and its heap place.
func (s *schedCore) update(st *schedState) {
	st.dirty = false
	if k := key(st.conn.deadline()); k != st.at {
		st.at = k
		s.up(st.heapIdx)
		s.down(st.heapIdx)
	}
}

// earliest returns the earliest deadline.
func (s *schedCore) earliest() clock.Time {
	if s.ndirty > 0 {
		s.refresh()
	}
	if len(s.heap) == 0 || s.heap[0].at == math.MaxInt64 {
		return clock.Never
	}
	return clock.Time(s.heap[0].at)
}

// markDue marks the connections whose deadline has passed as ready (they
// may send at now: pacing). No deadline is recomputed: a touched
// connection is ready already (touch sets its bit; Transmit recomputes the
// deadline of each connection whose bit it clears, idle), so its deadline
// could only set a bit already set, and every other connection's cached
// deadline is current. The heap is ordered by the cached deadlines, so the
// ready set is the one a full refresh gives, without recomputing the
// deadline of the connection that just received or sent at every
// Transmit.
func (s *schedCore) markDue(now clock.Time) {
	if len(s.heap) > 0 && s.heap[0].at <= int64(now) { // (most often nothing is due)
		s.markReady(now)
	}
}

// markReady sets the ready bits of the connections due at now (markDue).
func (s *schedCore) markReady(now clock.Time) {
	s.marked = s.appendDue(s.marked[:0], 0, now)
	for _, st := range s.marked {
		s.setReady(uint(st.pos))
	}
	clear(s.marked)
}

// appendDue appends to out every connection in the heap below i whose
// cached deadline is at or before now.
func (s *schedCore) appendDue(out []*schedState, i int, now clock.Time) []*schedState {
	for i < len(s.heap) && s.heap[i].at <= int64(now) {
		out = append(out, s.heap[i])
		out = s.appendDue(out, 2*i+1, now)
		i = 2*i + 2
	}
	return out
}

// dueNow returns the connections whose deadline has passed, in creation
// order (the slice is reused).
func (s *scheduler[T]) dueNow(now clock.Time) []T {
	if s.ndirty > 0 {
		s.refresh()
	}
	s.dueSt = s.appendDue(s.dueSt[:0], 0, now)
	slices.SortFunc(s.dueSt, func(a, b *schedState) int { return a.pos - b.pos })
	s.due = s.due[:0]
	for _, st := range s.dueSt {
		s.due = append(s.due, s.conns[st.pos])
	}
	clear(s.dueSt)
	return s.due
}

// next returns the position of the next ready connection at or after
// position from (at most the number of connections, which is as position
// 0), cyclically; -1 if none is ready, at once (the last call of most
// Transmits, which has just found the one ready connection idle). The bit
// stays set: the connection stays ready until idle clears it. It runs
// twice at most Transmits: the ready bits at and above from in from's word
// are looked at here, the rest in nextWrap.
func (s *schedCore) next(from int) int {
	if s.nready == 0 {
		return -1
	}
	if from >= len(s.heap) {
		from = 0
	}
	if w := uint(from) / 64; w < uint(len(s.ready)) {
		if word := s.ready[w] >> (uint(from) % 64); word != 0 {
			return from + bits.TrailingZeros64(word)
		}
	}
	return s.nextWrap(from)
}

// nextWrap is next past from's word: the following words cyclically, and
// last from's word whole (its bits below from). It steps through the
// words without divisions.
func (s *schedCore) nextWrap(from int) int {
	w := uint(from) / 64
	for range s.ready {
		if w++; w >= uint(len(s.ready)) {
			w = 0
		}
		if word := s.ready[w]; word != 0 {
			return int(w)*64 + bits.TrailingZeros64(word)
		}
	}
	return -1
}

// compact removes the connections gone(c) reports, keeping the others in
// creation order, and rebuilds positions, the heap and the bitset.
func (s *scheduler[T]) compact(gone func(T) bool) {
	j := 0
	s.nready = 0
	for i, c := range s.conns {
		// The bitset is compacted in place: bit i is read and cleared
		// before bit j <= i is set.
		bit := s.ready[i/64]&(1<<(i%64)) != 0
		s.ready[i/64] &^= 1 << (i % 64)
		st := c.schedState()
		if gone(c) {
			if st.dirty {
				st.dirty = false
				s.ndirty--
			}
			continue
		}
		if bit {
			s.ready[j/64] |= 1 << (j % 64)
			s.nready++
		}
		st.pos = j
		s.conns[j] = c
		s.byPos[j] = st
		j++
	}
	clear(s.conns[j:])
	s.conns = s.conns[:j]
	clear(s.byPos[j:])
	s.byPos = s.byPos[:j]
	s.ready = s.ready[:(j+63)/64] // (as add keeps it) the words cut off are zero: every bit was cleared above
	if s.rr > j {
		s.rr = 0
	}
	s.heap = append(s.heap[:0], s.byPos...)
	for i, st := range s.heap {
		st.heapIdx = i
	}
	clear(s.heap[len(s.heap):cap(s.heap)])
	for i := len(s.heap)/2 - 1; i >= 0; i-- {
		s.down(i)
	}
}

func (s *schedCore) less(i, j int) bool {
	a, b := s.heap[i], s.heap[j]
	if a.at != b.at {
		return a.at < b.at
	}
	return a.pos < b.pos
}

func (s *schedCore) swap(i, j int) {
	s.heap[i], s.heap[j] = s.heap[j], s.heap[i]
	s.heap[i].heapIdx = i
	s.heap[j].heapIdx = j
}

func (s *schedCore) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !s.less(i, p) {
			return
		}
		s.swap(i, p)
		i = p
	}
}

func (s *schedCore) down(i int) {
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
