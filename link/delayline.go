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
// are non-decreasing and it is a FIFO ring (its length a power of two, so an
// index wraps with a mask instead of a division); with reordering (rh set)
// it is a binary min-heap on (at, seq) so equal instants keep their order.
// Neither allocates once grown. The heap is behind a pointer so that the
// ring's fields, which every packet of a link reads, stay small (Link's
// layout).
type delayLine struct {
	n    int          // the ring's length (0 with rh)
	rh   *reorderHeap // nil: the FIFO ring
	ring []inTransit
	head int // the ring's first entry
}

// reorderHeap is the delay line of a link whose jitter may reorder.
type reorderHeap struct {
	items []heapItem
	seq   uint64
}

type heapItem struct {
	inTransit
	seq uint64
}

func (d *delayLine) len() int {
	if d.rh != nil {
		return len(d.rh.items)
	}
	return d.n
}

func (d *delayLine) push(p *qdisc.Packet, at clock.Time) {
	if h := d.rh; h != nil {
		h.seq++
		h.items = append(h.items, heapItem{inTransit{p, at}, h.seq})
		h.up(len(h.items) - 1)
		return
	}
	if d.n == len(d.ring) {
		nr := make([]inTransit, max(16, 2*len(d.ring)))
		for i := 0; i < d.n; i++ {
			nr[i] = d.ring[(d.head+i)&(len(d.ring)-1)]
		}
		d.ring, d.head = nr, 0
	}
	d.ring[(d.head+d.n)&(len(d.ring)-1)] = inTransit{p, at}
	d.n++
}

// peek returns the earliest arrival; only valid if len() > 0.
func (d *delayLine) peek() clock.Time {
	if d.rh != nil {
		return d.rh.items[0].at
	}
	return d.ring[d.head].at
}

func (d *delayLine) pop() inTransit {
	if h := d.rh; h != nil {
		top := h.items[0].inTransit
		last := len(h.items) - 1
		h.items[0] = h.items[last]
		h.items[last] = heapItem{}
		h.items = h.items[:last]
		if last > 0 {
			h.down(0)
		}
		return top
	}
	it := d.ring[d.head]
	d.ring[d.head] = inTransit{}
	d.head = (d.head + 1) & (len(d.ring) - 1)
	d.n--
	return it
}

func (h *reorderHeap) less(i, j int) bool {
	a, b := &h.items[i], &h.items[j]
	return a.at < b.at || (a.at == b.at && a.seq < b.seq)
}

func (h *reorderHeap) up(i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if !h.less(i, parent) {
			return
		}
		h.items[i], h.items[parent] = h.items[parent], h.items[i]
		i = parent
	}
}

func (h *reorderHeap) down(i int) {
	n := len(h.items)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && h.less(r, l) {
			m = r
		}
		if !h.less(m, i) {
			return
		}
		h.items[i], h.items[m] = h.items[m], h.items[i]
		i = m
	}
}
