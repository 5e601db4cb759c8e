package qdisc

import (
	"fmt"
	"strconv"

	"cclab/clock"
	"cclab/internal/spec"
)

// DRRConfig configures a Deficit Round Robin scheduler. Example spec:
// "drr:quantum=1500,limit=200p".
type DRRConfig struct {
	Quantum Quantum `param:"quantum" help:"bytes added to a flow's deficit per round, 1..1048576; unset: Env.MTU (1500 if unset)"`
	Limit   Limit   `param:"limit" help:"shared buffer: 100p (packets) or 150kb (bytes); when full, the longest queue (bytes) loses its tail"`
}

// Capacity returns the queue's limit (Bounded).
func (c DRRConfig) Capacity() Limit { return c.Limit }

// Quantum is a DRR quantum in bytes, 1..MaxQuantum; the zero value (not
// settable from a spec: quantum=0 is an error) means the MTU.
type Quantum int

// MaxQuantum is the largest DRR quantum, bytes.
const MaxQuantum = 1 << 20

// UnmarshalText parses a quantum in bytes.
func (q *Quantum) UnmarshalText(b []byte) error {
	n, err := strconv.Atoi(string(b))
	if err != nil {
		return fmt.Errorf("not an integer (bytes, 1..%d)", MaxQuantum)
	}
	if n < 1 || n > MaxQuantum {
		return fmt.Errorf("must be between 1 and %d bytes (omit it for the MTU)", MaxQuantum)
	}
	*q = Quantum(n)
	return nil
}

// String formats the quantum ("mtu" for the zero value).
func (q Quantum) String() string {
	if q == 0 {
		return "mtu"
	}
	return strconv.Itoa(int(q))
}

// DefaultDRRConfig returns quantum = MTU and a 100-packet shared buffer.
func DefaultDRRConfig() DRRConfig { return DRRConfig{Limit: Limit{Packets: 100}} }

// drrFlow is one flow's queue and scheduling state. Flow structs are recycled
// through a free list when a flow goes idle, so steady-state operation does
// not allocate.
type drrFlow struct {
	key        uint64
	q          fifo
	deficit    int      // DC_i, bytes
	prev, next *drrFlow // ActiveList links
	heapIdx    int      // position in DRR.heap (max-heap by queued bytes)
}

// DRR is Deficit Round Robin (Shreedhar & Varghese, "Efficient Fair Queuing
// using Deficit Round Robin", SIGCOMM 1995, hereafter [SV95]) over per-flow
// queues keyed by Packet.Flow, with a shared buffer from which the longest
// queue is dropped when full ([SV95] §4: "buffer stealing").
//
// Dequeue serves one packet at a time in the equivalent form used by Linux
// sch_drr: the flow at the head of ActiveList sends while its head packet fits
// in its deficit; when it does not fit, the flow gets another quantum and
// moves to the tail. A newly active flow starts with one quantum (the quantum
// [SV95] Figure 3 adds at the start of its first visit); a flow whose queue
// empties leaves ActiveList with its deficit reset to 0 ([SV95] §3).
type DRR struct {
	quantum    int
	limit      Limit
	flows      map[uint64]*drrFlow
	free       []*drrFlow
	head, tail *drrFlow   // ActiveList
	heap       []*drrFlow // active flows, max-heap by q.bytes
	n, bytes   int
	h          Handler
}

// NewDRR returns a DRR scheduler; quantum is in bytes.
func NewDRR(quantum int, limit Limit, h Handler) (*DRR, error) {
	if quantum <= 0 {
		return nil, fmt.Errorf("drr: quantum=%d must be positive (bytes)", quantum)
	}
	if limit.Packets <= 0 && limit.Bytes <= 0 {
		return nil, fmt.Errorf("drr: limit must be positive")
	}
	if h == nil {
		h = NopHandler{}
	}
	return &DRR{quantum: quantum, limit: limit, flows: make(map[uint64]*drrFlow), h: h}, nil
}

// Flows returns the number of active flows (flows with queued packets).
func (d *DRR) Flows() int { return len(d.heap) }

// FlowLen returns the number of packets queued for flow.
func (d *DRR) FlowLen(flow uint64) int {
	if f := d.flows[flow]; f != nil {
		return f.q.n
	}
	return 0
}

// Enqueue adds p to its flow's queue; if the shared buffer then exceeds the
// limit, packets are dropped from the tail of the longest queue until it fits.
func (d *DRR) Enqueue(now clock.Time, p *Packet) bool {
	f := d.flows[p.Flow]
	if f == nil {
		f = d.activate(p.Flow)
	}
	p.Enqueued = now
	f.q.push(p)
	d.n++
	d.bytes += p.Size
	d.up(f.heapIdx)
	accepted := true
	for d.overLimit() {
		l := d.heap[0]
		v := l.q.popBack()
		d.n--
		d.bytes -= v.Size
		if v == p {
			accepted = false
		}
		if l.q.n == 0 {
			d.deactivate(l)
		} else {
			d.down(0)
		}
		d.h.Dropped(now, v, DropOverflow)
	}
	return accepted
}

func (d *DRR) overLimit() bool {
	if d.limit.Bytes > 0 {
		return d.bytes > d.limit.Bytes
	}
	return d.n > d.limit.Packets
}

// activate creates (or recycles) the state of a flow that has become active
// and appends it to ActiveList with DC = one quantum.
func (d *DRR) activate(key uint64) *drrFlow {
	var f *drrFlow
	if n := len(d.free); n > 0 {
		f, d.free = d.free[n-1], d.free[:n-1]
	} else {
		f = new(drrFlow)
	}
	f.key, f.deficit = key, d.quantum
	d.flows[key] = f
	f.prev, f.next = d.tail, nil
	if d.tail != nil {
		d.tail.next = f
	} else {
		d.head = f
	}
	d.tail = f
	f.heapIdx = len(d.heap)
	d.heap = append(d.heap, f)
	return f
}

// deactivate removes an empty flow from ActiveList, the heap and the flow
// table, resetting its deficit ([SV95] §3) and recycling the struct.
func (d *DRR) deactivate(f *drrFlow) {
	if f.prev != nil {
		f.prev.next = f.next
	} else {
		d.head = f.next
	}
	if f.next != nil {
		f.next.prev = f.prev
	} else {
		d.tail = f.prev
	}
	i, last := f.heapIdx, len(d.heap)-1
	if i != last {
		d.swap(i, last)
	}
	d.heap[last] = nil
	d.heap = d.heap[:last]
	if i != last {
		d.down(i)
		d.up(i)
	}
	delete(d.flows, f.key)
	f.deficit, f.prev, f.next, f.heapIdx = 0, nil, nil, -1
	d.free = append(d.free, f)
}

// moveToTail moves the head flow to the tail of ActiveList.
func (d *DRR) moveToTail(f *drrFlow) {
	if d.tail == f {
		return
	}
	d.head = f.next
	d.head.prev = nil
	f.prev, f.next = d.tail, nil
	d.tail.next = f
	d.tail = f
}

// Dequeue returns the next packet in DRR order ([SV95] Figure 3).
func (d *DRR) Dequeue(now clock.Time) *Packet {
	for d.head != nil {
		f := d.head
		hp := f.q.peek()
		if hp.Size <= f.deficit {
			// Send: DC_i <- DC_i - size.
			f.deficit -= hp.Size
			f.q.pop()
			d.n--
			d.bytes -= hp.Size
			if f.q.n == 0 {
				d.deactivate(f)
			} else {
				d.down(f.heapIdx)
			}
			return hp
		}
		// The head packet does not fit: end this flow's visit; it gets
		// another quantum at its next visit.
		f.deficit += d.quantum
		d.moveToTail(f)
	}
	return nil
}

// Len returns the number of queued packets.
func (d *DRR) Len() int { return d.n }

// Bytes returns the number of queued bytes.
func (d *DRR) Bytes() int { return d.bytes }

func (d *DRR) less(i, j int) bool { return d.heap[i].q.bytes < d.heap[j].q.bytes }

func (d *DRR) swap(i, j int) {
	d.heap[i], d.heap[j] = d.heap[j], d.heap[i]
	d.heap[i].heapIdx, d.heap[j].heapIdx = i, j
}

func (d *DRR) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !d.less(p, i) {
			break
		}
		d.swap(p, i)
		i = p
	}
}

func (d *DRR) down(i int) {
	n := len(d.heap)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		c := l
		if r := l + 1; r < n && d.less(l, r) {
			c = r
		}
		if !d.less(i, c) {
			return
		}
		d.swap(i, c)
		i = c
	}
}

func init() {
	spec.Add(Registry, "drr", "Deficit Round Robin over per-flow queues (Shreedhar & Varghese 1995), drop from the longest queue",
		DefaultDRRConfig, func(c DRRConfig, env Env) (Queue, error) {
			q := int(c.Quantum)
			if q == 0 {
				q = env.mtu()
			}
			return NewDRR(q, c.Limit, env.handler())
		})
}
