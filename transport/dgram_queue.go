package transport

import "cclab/clock"

// dgramQueue is a bounded FIFO of datagrams of any length up to a size
// fixed when it is set up, kept in one byte ring allocated at first use:
// at most limit datagrams and the ring's bytes. Each datagram is stored
// contiguously; one that would cross the ring's end starts at its
// beginning instead, the skipped tail counted as used until the datagram
// before it is popped. The ring holds limit+2 datagrams of the size it was
// set up for (init, grow): with datagrams no larger, the skipped tails never
// cost a place and limit alone bounds the queue, as a queue of limit
// fixed-size slots would; larger datagrams (the receive queue after the
// peer's datagram size discovery, dplpmtud.go) are bounded by the bytes.
type dgramQueue struct {
	buf     []byte       // the ring (nil until the first datagram)
	offs    []uint64     // each datagram's position in the byte sequence written (offset in buf: modulo len)
	lens    []int        // each datagram's length, bytes
	ats     []clock.Time // arrival (receive queue) or queueing (send queue) instants
	head, n int          // the oldest datagram's index, datagrams queued
	limit   int          // datagrams
	bytes   int          // the ring's size, bytes
	wr      uint64       // position of the next byte written
	next    uint64       // position reserved by room for the datagram push commits
}

// init sets the queue up for limit datagrams of up to size bytes.
func (q *dgramQueue) init(limit, size int) {
	q.limit, q.bytes = limit, (limit+2)*size
}

// grow makes room for limit datagrams of up to size bytes (a datagram size
// raised by discovery), keeping what is queued; it never shrinks the ring.
func (q *dgramQueue) grow(size int) {
	b := (q.limit + 2) * size
	if b <= q.bytes {
		return
	}
	if q.buf == nil {
		q.bytes = b
		return
	}
	buf := make([]byte, b)
	w := 0
	for k := range q.n {
		i := (q.head + k) % q.limit
		w += copy(buf[w:], q.at(i))
		q.offs[i] = uint64(w - q.lens[i])
	}
	q.buf, q.bytes, q.wr = buf, b, uint64(w)
}

// at returns datagram i's bytes.
func (q *dgramQueue) at(i int) []byte {
	p := int(q.offs[i] % uint64(q.bytes))
	return q.buf[p : p+q.lens[i]]
}

// room reserves a contiguous place for a datagram of up to n bytes and
// returns it (commit with push or pushAt), or nil when the queue has no
// room for it.
func (q *dgramQueue) room(n int) []byte {
	if q.n == q.limit || n > q.bytes {
		return nil
	}
	if q.buf == nil {
		q.buf = make([]byte, q.bytes)
		q.offs = make([]uint64, q.limit)
		q.lens = make([]int, q.limit)
		q.ats = make([]clock.Time, q.limit)
	}
	if q.n == 0 {
		q.wr = 0 // empty: start at the ring's beginning
	}
	rd := q.wr
	if q.n > 0 {
		rd = q.offs[q.head]
	}
	at := q.wr
	if p := int(at % uint64(q.bytes)); p+n > q.bytes {
		at += uint64(q.bytes - p) // skip the tail: a datagram is contiguous
	}
	if at+uint64(n)-rd > uint64(q.bytes) {
		return nil
	}
	q.next = at
	p := int(at % uint64(q.bytes))
	return q.buf[p : p+n]
}

// push commits the n bytes written into the place room returned.
func (q *dgramQueue) push(n int) { q.pushAt(n, clock.Never) }

// pushAt is push recording the datagram's instant.
func (q *dgramQueue) pushAt(n int, at clock.Time) {
	i := (q.head + q.n) % q.limit
	q.offs[i], q.lens[i], q.ats[i] = q.next, n, at
	q.wr = q.next + uint64(n)
	q.n++
}

// front returns the oldest datagram (the queue must not be empty).
func (q *dgramQueue) front() []byte { return q.at(q.head) }

// frontAt returns the oldest datagram's instant.
func (q *dgramQueue) frontAt() clock.Time { return q.ats[q.head] }

// pop drops the oldest datagram.
func (q *dgramQueue) pop() {
	q.head = (q.head + 1) % q.limit
	q.n--
}
