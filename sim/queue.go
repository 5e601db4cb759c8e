package sim

import (
	"math"
	"math/bits"
	"slices"

	"cclab/clock"
)

// node is one scheduled event in the queue: its instant, its insertion
// order and the slot of its payload (Engine.slots). Nodes are 16 bytes, so
// four siblings of the near heap share one 64-byte cache line.
type node struct {
	at   clock.Time
	seq  uint32 // insertion order, breaks ties; renumbered before it wraps (queue.renumber)
	slot uint32
}

func (a node) less(b node) bool {
	return a.at < b.at || (a.at == b.at && a.seq < b.seq)
}

// queue is the engine's event queue, a ladder queue (Tang, Goh and Thng,
// "Ladder Queue: An O(1) Priority Queue Structure for Large-Scale Discrete
// Event Simulation", ACM TOMACS 15(3), 2005; after Brown's calendar queue,
// CACM 31(10), 1988). Events due before nearEnd are in a small heap ordered
// by (at, seq) (the ladder queue's Bottom; a sorted array while it holds
// at most sortedMax events); later events wait unsorted in
// the buckets of a few rungs, each rung an array of buckets of 2^shift ns
// covering a range of time; events beyond the outermost rung wait unsorted
// in far (Top). When the near heap runs dry, the next non-empty bucket of
// the innermost rung moves into it, or, if it holds more than rungSplit
// events, is spread over a new, finer rung; when the outermost rung is used
// up it is rebuilt from far, about two events per bucket. Every event is
// moved O(1) times and the heap stays small, so push and pop cost O(1) on
// average for any distribution of instants, where one heap of everything
// costs O(log n).
//
// Buckets and far are linked lists through one arena of entries, so the
// queue's memory is proportional to the most events ever pending, and
// moving events between rungs relinks them without copying. A list is
// unordered (the near heap orders what it takes by (at, seq)), so an event
// joins a list at its head: a push writes its own entry and the list's
// head, not also the entry of the list's last event, which with tens of
// thousands of events pending is a cache line of its own.
//
// The ranges are contiguous while the near heap holds events: near
// (-∞, nearEnd), then the innermost rung's unread buckets, then each outer
// rung's, then far. (refill only ever ends by moving a bucket into the near
// heap, which sets nearEnd to the end of that bucket, cut at its rung's
// end.) Order is exact:
// buckets cover disjoint ranges and the near heap breaks ties by sequence
// number, so events fire by (at, seq) exactly as from a single heap
// (TestEngineMatchesReference).
type queue struct {
	// near holds the events due before nearEnd from index heapBase on: a
	// 4-ary min-heap on (at, seq), root at heapBase, or, while sorted,
	// sorted from the latest to the earliest (a pop takes the last).
	near    []node
	nearEnd clock.Time
	nearCap int // a push that makes the near heap larger than this demotes it to a rung
	// sorted: near is sorted (latest first), not a heap. It is while it
	// holds at most sortedMax events since it was last empty: the common
	// case of a handful of events, where insertion from the earliest end
	// takes a comparison or two and a pop none, against a heap's sift-down
	// along a group of four children.
	sorted bool

	rungs []rung // rungs[0] is the outermost; rungs[:nr] are in use
	nr    int
	far   list // at >= the outermost rung's end
	n     int  // events in rungs and far

	arena []entry // bucket and far entries
	free  int32   // first unused arena entry, chained by next; -1 if none

	seq    uint32 // sequence number of the latest event pushed
	maxSeq uint32 // renumber when seq reaches it (math.MaxUint32; lower in tests)
	// renumbered, if set, is called after a renumbering with the map from
	// a queued event's former sequence number to its new one (Engine's
	// timers remember their live event's).
	renumbered func(newSeq func(old uint32) uint32)
}

// entry is an event waiting in a bucket or in far.
type entry struct {
	node
	next int32 // next entry of the same list (or of the free list); -1 ends it
}

// list is a singly linked list of arena entries, latest first.
type list struct{ head int32 }

var emptyList = list{-1}

// rung is an array of buckets: bucket i holds the events in
// [base + i<<shift, base + (i+1)<<shift), unsorted; buckets below cur have
// been read.
type rung struct {
	buckets []list
	cur     int
	base    clock.Time
	shift   uint
	// end is base + len(buckets)<<shift (saturated), or earlier: a rung
	// made by demote or spawn ends where the range it takes over ends,
	// possibly inside its last bucket (refill cuts that bucket's range
	// there too).
	end clock.Time
	n   int // events in the unread buckets
}

// heapBase is the index of the near heap's root. With the root at 3 the
// children of index j are 4j-8 … 4j-5: every group of siblings starts at a
// multiple of four nodes (64 bytes), one cache line when the array is
// 64-byte aligned.
const heapBase = 3

// Ladder parameters: a rung has about one bucket per two events, a power of
// two within [minBuckets, maxBuckets]; a bucket of more than rungSplit
// events becomes a new rung (the ladder queue's THRES, 50 in the paper),
// at most maxRungs deep.
const (
	minBuckets = 64
	maxBuckets = 1 << 16
	rungSplit  = 64
	maxRungs   = 8
	// smallQueue: while no more events are pending than this, they all
	// stay in the near heap (a heap of a few is cheaper than any rung).
	smallQueue = 32
	// nearMax: a near heap pushed beyond this many events (nearEnd lies
	// far ahead, e.g. after smallQueue let it take a distant event) is
	// spread over a new innermost rung (demote), as the ladder queue moves
	// an overfull Bottom to a rung; a heap of thousands costs a pop a
	// dozen cache-missing levels.
	nearMax = 256
	// sortedMax: the near heap is a sorted array while it has held at most
	// this many events since it was last empty (queue.sorted).
	sortedMax = 16
)

func newQueue(maxSeq uint32) queue {
	return queue{near: make([]node, heapBase, 1024), sorted: true, maxSeq: maxSeq, nearEnd: clock.Time(-1 << 63),
		nearCap: nearMax, rungs: make([]rung, maxRungs), far: emptyList, free: -1}
}

// len returns the number of queued events.
func (q *queue) len() int { return len(q.near) - heapBase + q.n }

// push queues an event and returns its sequence number; at must not be
// earlier than the last popped event.
func (q *queue) push(at clock.Time, slot uint32) uint32 {
	if q.seq >= q.maxSeq {
		q.renumber()
	}
	q.seq++
	x := node{at: at, seq: q.seq, slot: slot}
	if at >= q.nearEnd && q.n == 0 && len(q.near)-heapBase < smallQueue && at < 1<<63-1 {
		// Nothing waits beyond the near heap and it is small: let it take
		// this event too rather than build a rung for a handful of events.
		q.nr = 0 // every rung is empty
		q.nearEnd = at + 1
	}
	if at < q.nearEnd {
		if h := q.near; q.sorted && len(h)-heapBase < sortedMax {
			// pushNear's sorted case for the newest event, which comes
			// after every queued one at its instant: one comparison per
			// move.
			i := len(h)
			h = append(h, x)
			for i > heapBase && h[i-1].at <= at {
				h[i] = h[i-1]
				i--
			}
			h[i] = x
			q.near = h
			return x.seq
		}
		q.pushNear(x)
		if len(q.near)-heapBase > q.nearCap {
			q.demote()
		}
		return x.seq
	}
	q.n++
	for k := q.nr - 1; k >= 0; k-- {
		r := &q.rungs[k]
		if at < r.end {
			q.add(&r.buckets[uint64(at-r.base)>>r.shift], x)
			r.n++
			return x.seq
		}
	}
	q.add(&q.far, x)
	return x.seq
}

// pushNear adds x to the near heap: sorted in place while that stays
// within sortedMax events, else (turned into a heap first) by the heap's
// sift-up.
func (q *queue) pushNear(x node) {
	q.near = append(q.near, x)
	h := q.near
	i := len(h) - 1
	if q.sorted {
		if i-heapBase < sortedMax {
			for i > heapBase && h[i-1].less(x) {
				h[i] = h[i-1]
				i--
			}
			h[i] = x
			return
		}
		// Earliest first: an ascending array is a valid heap (a parent's
		// index is below its children's).
		slices.Reverse(h[heapBase:i])
		q.sorted = false
	}
	q.up(i, x)
}

// add adds x to l in a new arena entry.
func (q *queue) add(l *list, x node) {
	i := q.free
	if i >= 0 {
		q.free = q.arena[i].next
		q.arena[i] = entry{x, -1}
	} else {
		i = int32(len(q.arena))
		if len(q.arena) == cap(q.arena) {
			q.arena = slices.Grow(q.arena, max(arenaMin, len(q.arena)))
		}
		q.arena = append(q.arena, entry{x, -1})
	}
	q.link(l, i)
}

// arenaMin is the arena's first capacity, entries. The arena doubles when
// full: append's growth of a large slice (a quarter at a time) would copy
// the arena about four times its final size over its growth, doubling
// about once (and leaves the collector less garbage), for a tail of at most
// as many entries unused (never written, so never paged in).
const arenaMin = 1024

// link adds arena entry i to l, at its head.
func (q *queue) link(l *list, i int32) {
	q.arena[i].next = l.head
	l.head = i
}

// peek returns the earliest event, filling the near heap if needed; ok is
// false if the queue is empty.
func (q *queue) peek() (node, bool) {
	if len(q.near) == heapBase && !q.refill() {
		return node{}, false
	}
	if q.sorted {
		return q.near[len(q.near)-1], true
	}
	return q.near[heapBase], true
}

// pop removes and returns the earliest event; ok is false if the queue is
// empty.
func (q *queue) pop() (node, bool) { return q.popUntil(math.MaxInt64) }

// popUntil is pop if the earliest event is due at or before t; ok is
// false if there is none.
func (q *queue) popUntil(t clock.Time) (node, bool) {
	if len(q.near) == heapBase && !q.refill() {
		return node{}, false
	}
	last := len(q.near) - 1
	if q.sorted {
		top := q.near[last]
		if top.at > t {
			return node{}, false
		}
		q.near = q.near[:last]
		return top, true
	}
	top := q.near[heapBase]
	if top.at > t {
		return node{}, false
	}
	if last > heapBase {
		q.down(q.near[last], last)
	} else {
		q.sorted = true // empty
	}
	q.near = q.near[:last]
	return top, true
}

// refill moves the next non-empty bucket into the empty near heap,
// splitting crowded buckets into finer rungs and rebuilding the outermost
// rung from far when the rungs are used up. It reports whether there is an
// event.
func (q *queue) refill() bool {
	for {
		if q.nr == 0 {
			if q.far.head < 0 {
				return false
			}
			q.rebuild()
		}
		r := &q.rungs[q.nr-1]
		if r.n == 0 { // used up
			q.nr--
			continue
		}
		for r.buckets[r.cur].head < 0 {
			r.cur++
		}
		b := r.buckets[r.cur]
		r.buckets[r.cur] = emptyList
		start := r.base + clock.Time(r.cur)<<r.shift
		r.cur++
		k := 0
		for i := b.head; i >= 0; i = q.arena[i].next {
			k++
		}
		r.n -= k
		// The bucket's range, cut at the rung's end: a rung made by
		// demote ends inside its last bucket, and later instants are
		// in far (TestEngineClampedRungOrder).
		stop := min(addSat(start, 1, r.shift), r.end)
		if k > rungSplit && r.shift > 0 && q.nr < maxRungs {
			q.spawn(b, k, start, r.shift, stop)
			continue
		}
		q.n -= k
		q.nearEnd = stop
		q.nearCap = max(nearMax, 2*k)
		q.sorted = k <= sortedMax // empty: a heap at once if it will be one (pushNear)
		for i := b.head; i >= 0; {
			e := &q.arena[i]
			q.pushNear(e.node)
			next := e.next
			e.next = q.free
			q.free = i
			i = next
		}
		return true
	}
}

// demote spreads the near heap over a new innermost rung covering
// [its earliest instant, nearEnd), which keeps the ranges contiguous, and
// empties it: the next pop refills it from the rung's first bucket. It
// does nothing if the rungs are all in use. nearCap then doubles what
// the next refill moves into the heap (at least nearMax), so a heap that
// stays large (events at a few instants, which no rung splits) is demoted
// again only once it has doubled: O(1) moves per event.
func (q *queue) demote() {
	k := len(q.near) - heapBase
	if q.nr >= maxRungs {
		q.nearCap = 2 * k
		return
	}
	lo := q.near[heapBase].at // the heap's root (more than sortedMax events: not sorted)
	nb := bucketsFor(k)
	shift := shiftFor(uint64(q.nearEnd-lo), nb)
	q.nr++
	r := q.setRung(q.nr-1, lo, shift, nb)
	r.end = min(r.end, q.nearEnd) // later instants belong to the outer rungs
	for _, x := range q.near[heapBase:] {
		q.add(&r.buckets[uint64(x.at-lo)>>shift], x)
	}
	r.n = k
	q.n += k
	q.near = q.near[:heapBase]
	q.sorted = true // empty
	q.nearEnd = lo
	q.nearCap = nearMax
}

// spawn spreads the k events of bucket b, [start, start+1<<shift), over a
// new innermost rung covering the same range up to stop (the end of the
// rung b belongs to, if that comes first).
func (q *queue) spawn(b list, k int, start clock.Time, shift uint, stop clock.Time) {
	lg := uint(bits.Len(uint(bucketsFor(k))) - 1)
	if lg > shift {
		lg = shift
	}
	q.nr++
	r := q.setRung(q.nr-1, start, shift-lg, 1<<lg)
	r.end = min(r.end, stop)
	q.spread(r, b)
	r.n = k
}

// rebuild makes far the outermost rung: buckets from far's earliest instant
// that just cover its latest one.
func (q *queue) rebuild() {
	lo, hi := q.arena[q.far.head].at, q.arena[q.far.head].at
	k := 0
	for i := q.far.head; i >= 0; i = q.arena[i].next {
		at := q.arena[i].at
		lo, hi = min(lo, at), max(hi, at)
		k++
	}
	nb := bucketsFor(k)
	shift := shiftFor(uint64(hi-lo), nb)
	q.nr = 1
	r := q.setRung(0, lo, shift, nb)
	q.spread(r, q.far)
	r.n = k
	q.far = emptyList
}

// spread relinks the entries of l into r's buckets.
func (q *queue) spread(r *rung, l list) {
	for i := l.head; i >= 0; {
		next := q.arena[i].next
		q.link(&r.buckets[uint64(q.arena[i].at-r.base)>>r.shift], i)
		i = next
	}
}

// setRung prepares rung k, with nb empty buckets of 2^shift ns from base.
func (q *queue) setRung(k int, base clock.Time, shift uint, nb int) *rung {
	r := &q.rungs[k]
	for len(r.buckets) < nb {
		r.buckets = append(r.buckets, emptyList)
	}
	r.buckets = r.buckets[:nb]
	r.base, r.shift, r.cur, r.n = base, shift, 0, 0
	r.end = addSat(base, uint64(nb), shift)
	return r
}

// shiftFor returns the smallest bucket width 2^shift ns at which nb
// buckets from an instant cover every instant up to span ns after it.
func shiftFor(span uint64, nb int) uint {
	shift := uint(0)
	for span>>shift >= uint64(nb) {
		shift++
	}
	return shift
}

// bucketsFor returns the bucket count for a rung of n events.
func bucketsFor(n int) int {
	return min(max(1<<bits.Len(uint(n/2)), minBuckets), maxBuckets)
}

// up places x, which is at index i of the near heap, on its path to the root.
func (q *queue) up(i int, x node) {
	h := q.near
	for i > heapBase {
		p := (i + 8) / 4 // parent: children of j are 4j-8 … 4j-5
		if !x.less(h[p]) {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = x
}

// down fills the root's place with x, the node at index last, which is
// about to be removed from the end: the hole left by the root sinks along
// the smaller children while they are smaller than x.
func (q *queue) down(x node, last int) {
	h := q.near[:last]
	n := len(h)
	i := heapBase
	for {
		c := 4*i - 8
		if c >= n {
			break
		}
		best := c
		if c+3 < n { // a full group: the common case
			if h[c+1].less(h[best]) {
				best = c + 1
			}
			if h[c+2].less(h[best]) {
				best = c + 2
			}
			if h[c+3].less(h[best]) {
				best = c + 3
			}
		} else {
			for j := c + 1; j < n; j++ {
				if h[j].less(h[best]) {
					best = j
				}
			}
		}
		if !h[best].less(x) {
			break
		}
		h[i] = h[best]
		i = best
	}
	h[i] = x
}

// renumber gives the queued events the sequence numbers 1…n in their
// current order, so that 32-bit sequence numbers never wrap: once every 2³²
// events, an O(n log n) sort. Relabelling preserves every comparison, so
// the heap stays valid.
func (q *queue) renumber() {
	var seqs []uint32
	each := func(f func(x *node)) {
		for i := heapBase; i < len(q.near); i++ {
			f(&q.near[i])
		}
		for k := range q.nr {
			for _, b := range q.rungs[k].buckets {
				for i := b.head; i >= 0; i = q.arena[i].next {
					f(&q.arena[i].node)
				}
			}
		}
		for i := q.far.head; i >= 0; i = q.arena[i].next {
			f(&q.arena[i].node)
		}
	}
	each(func(x *node) { seqs = append(seqs, x.seq) })
	slices.Sort(seqs)
	newSeq := func(old uint32) uint32 {
		r, _ := slices.BinarySearch(seqs, old)
		return uint32(r + 1)
	}
	each(func(x *node) { x.seq = newSeq(x.seq) })
	q.seq = uint32(len(seqs))
	if q.renumbered != nil {
		q.renumbered(newSeq)
	}
}

// addSat returns t + n<<shift, or the largest Time if that overflows.
func addSat(t clock.Time, n uint64, shift uint) clock.Time {
	if shift >= 64 || n > (1<<63-1)>>shift {
		return 1<<63 - 1
	}
	if sum := int64(t) + int64(n<<shift); sum >= int64(t) {
		return clock.Time(sum)
	}
	return 1<<63 - 1
}
