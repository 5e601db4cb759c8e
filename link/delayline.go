package link

import (
	"cclab/clock"
	"cclab/qdisc"
)

// inTransit is a packet propagating towards the far end.
type inTransit struct {
	p  *qdisc.Packet
	at clock.Time // arrival instant at the far end
}

// delayLine holds packets in propagation. Without reordering arrival instants
// are non-decreasing and it is a FIFO ring; with reordering it is a binary
// min-heap on (at, seq) so equal instants keep their order. Neither allocates
// once grown.
type delayLine struct {
	reorder bool
	// FIFO ring
	ring    []inTransit
	head, n int
	// heap
	heap []heapItem
	seq  uint64
}

type heapItem struct {
	inTransit
	seq uint64
}

func (d *delayLine) len() int {
	if d.reorder {
		return len(d.heap)
	}
	return d.n
}

func (d *delayLine) push(p *qdisc.Packet, at clock.Time) {
	if d.reorder {
		d.seq++
		d.heap = append(d.heap, heapItem{inTransit{p, at}, d.seq})
		d.up(len(d.heap) - 1)
		return
	}
	if d.n == len(d.ring) {
		nr := make([]inTransit, max(16, 2*len(d.ring)))
		for i := 0; i < d.n; i++ {
			nr[i] = d.ring[(d.head+i)%len(d.ring)]
		}
		d.ring, d.head = nr, 0
	}
	d.ring[(d.head+d.n)%len(d.ring)] = inTransit{p, at}
	d.n++
}

// peek returns the earliest arrival; only valid if len() > 0.
func (d *delayLine) peek() clock.Time {
	if d.reorder {
		return d.heap[0].at
	}
	return d.ring[d.head].at
}

func (d *delayLine) pop() inTransit {
	if d.reorder {
		top := d.heap[0].inTransit
		last := len(d.heap) - 1
		d.heap[0] = d.heap[last]
		d.heap[last] = heapItem{}
		d.heap = d.heap[:last]
		if last > 0 {
			d.down(0)
		}
		return top
	}
	it := d.ring[d.head]
	d.ring[d.head] = inTransit{}
	d.head = (d.head + 1) % len(d.ring)
	d.n--
	return it
}

func (d *delayLine) less(i, j int) bool {
	a, b := &d.heap[i], &d.heap[j]
	return a.at < b.at || (a.at == b.at && a.seq < b.seq)
}

func (d *delayLine) up(i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if !d.less(i, parent) {
			return
		}
		d.heap[i], d.heap[parent] = d.heap[parent], d.heap[i]
		i = parent
	}
}

func (d *delayLine) down(i int) {
	n := len(d.heap)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && d.less(r, l) {
			m = r
		}
		if !d.less(m, i) {
			return
		}
		d.heap[i], d.heap[m] = d.heap[m], d.heap[i]
		i = m
	}
}
