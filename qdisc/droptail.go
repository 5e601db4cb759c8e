package qdisc

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"cclab/clock"
	"cclab/internal/spec"
)

// Limit is a queue capacity in packets or bytes, written "20p" / "20" (packets)
// or "30000b" / "30kb" (bytes).
type Limit struct {
	Packets int // capacity in packets; 0 if limited in bytes
	Bytes   int // capacity in bytes; 0 if limited in packets
}

// UnmarshalText parses "20p", "20", "30000b", "30kb" or "1mb".
func (l *Limit) UnmarshalText(b []byte) error {
	s := strings.ToLower(strings.TrimSpace(string(b)))
	mult, unitBytes := 1, false
	switch {
	case strings.HasSuffix(s, "kb"):
		s, mult, unitBytes = strings.TrimSuffix(s, "kb"), 1000, true
	case strings.HasSuffix(s, "mb"):
		s, mult, unitBytes = strings.TrimSuffix(s, "mb"), 1000*1000, true
	case strings.HasSuffix(s, "b"):
		s, unitBytes = strings.TrimSuffix(s, "b"), true
	case strings.HasSuffix(s, "p"):
		s = strings.TrimSuffix(s, "p")
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		return fmt.Errorf("not a positive limit (examples: 20p for packets, 30000b or 30kb for bytes)")
	}
	if unitBytes {
		*l = Limit{Bytes: n * mult}
	} else {
		*l = Limit{Packets: n}
	}
	return nil
}

// String formats the limit as it is parsed.
func (l Limit) String() string {
	if l.Bytes > 0 {
		return strconv.Itoa(l.Bytes) + "b"
	}
	return strconv.Itoa(l.Packets) + "p"
}

// full reports whether adding a packet of size bytes to a queue holding n
// packets and b bytes would exceed the limit.
func (l Limit) full(n, b, size int) bool {
	if l.Bytes > 0 {
		return b+size > l.Bytes
	}
	return n+1 > l.Packets
}

// DropTailConfig configures a DropTail FIFO.
type DropTailConfig struct {
	Limit Limit `param:"limit,positional" help:"capacity: 20p (packets) or 30000b/30kb (bytes)"`
}

// Capacity returns the queue's limit (Bounded).
func (c DropTailConfig) Capacity() Limit { return c.Limit }

// DropTail is a first-in first-out queue that discards arrivals when full.
type DropTail struct {
	cfg DropTailConfig
	q   fifo
	h   Handler
}

// NewDropTail returns a DropTail queue with the given limit.
func NewDropTail(limit Limit, h Handler) *DropTail {
	if h == nil {
		h = NopHandler{}
	}
	return &DropTail{cfg: DropTailConfig{Limit: limit}, h: h}
}

// Enqueue appends p unless the queue is full.
func (d *DropTail) Enqueue(now clock.Time, p *Packet) bool {
	if d.cfg.Limit.full(d.q.n, d.q.bytes, p.Size) {
		d.h.Dropped(now, p, DropOverflow)
		return false
	}
	p.Enqueued = now
	d.q.push(p)
	return true
}

// Dequeue removes the oldest packet.
func (d *DropTail) Dequeue(clock.Time) *Packet { return d.q.pop() }

// Len returns the number of queued packets.
func (d *DropTail) Len() int { return d.q.n }

// EmptyAdmits returns the largest packet, bytes, the queue accepts when
// empty (Transparent): enqueuing such a packet and dequeuing it at once
// leaves no trace but the packet's Enqueued. A limit in packets (at least
// one) admits any size; a zero Limit (NewDropTail's caller gave none)
// admits nothing: -1.
func (d *DropTail) EmptyAdmits() int {
	switch l := d.cfg.Limit; {
	case l.Bytes > 0:
		return l.Bytes
	case l.Packets > 0:
		return math.MaxInt
	}
	return -1
}

// Bytes returns the number of queued bytes.
func (d *DropTail) Bytes() int { return d.q.bytes }

func init() {
	spec.Add(Registry, "droptail", "FIFO that drops arrivals when full",
		func() DropTailConfig { return DropTailConfig{Limit: Limit{Packets: 100}} },
		func(c DropTailConfig, env Env) (Queue, error) { return NewDropTail(c.Limit, env.handler()), nil })
}
