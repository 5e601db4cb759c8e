// Package qdisc holds cclab's queue disciplines (docs/qdisc.md): DropTail, RED,
// FRED, DRR, CSFQ and CoDel, one file each, behind one small interface. Queues
// are sans-I/O: time is passed in, randomness comes from an injected seeded
// source, and every drop or mark is reported to a Handler so the caller can
// recycle buffers and emit events.
package qdisc

import (
	"math/rand/v2"
	"time"

	"cclab/clock"
	"cclab/ecn"
	"cclab/internal/spec"
)

// Packet is one datagram as it travels through a link. The buffer belongs to
// the caller (typically a pool); queues only keep the pointer.
//
// The fields a queue and a link read at every enqueue, dequeue and
// departure (Buf, Size, Flow, ID, Enqueued, ECN) are the first 64 bytes, one
// cache line when the packet is so aligned (the simulator's pool): a packet
// dequeued after a wait in a large simulation is found in one line.
type Packet struct {
	Buf      []byte        // the datagram bytes (UDP payload as relayed or simulated)
	Size     int           // size on the wire, bytes, used for byte limits and serialization
	Flow     uint64        // flow key: connection ID for cclab flows, else a 5-tuple hash
	ID       uint64        // serial number for tracing, assigned by the caller
	Enqueued clock.Time    // set by the queue when the packet is accepted
	ECN      ecn.Codepoint // IP ECN field; a marking queue sets CE on ECN-capable packets
	Label    float64       // CSFQ rate label, bits/s; 0 means unlabelled
	Ctx      uintptr       // opaque caller context (e.g. a destination index); queues never touch it
}

// DropReason says why a packet was discarded.
type DropReason uint8

// Drop reasons, recorded in event.Event.Reason for Drop events.
const (
	DropOverflow  DropReason = iota + 1 // buffer full (tail drop, or longest-queue drop in DRR)
	DropEarly                           // RED/FRED probabilistic early drop
	DropForced                          // RED/FRED forced drop above max threshold
	DropFlowLimit                       // FRED per-flow limit (maxq or strikes)
	DropCSFQ                            // CSFQ probabilistic drop, label above fair share
	DropCoDel                           // CoDel dequeue-time drop
	DropRandom                          // a link loss stage (Bernoulli or Gilbert-Elliott)
)

var dropNames = [...]string{"none", "overflow", "early", "forced", "flow_limit", "csfq", "codel", "random_loss"}

// String returns the reason's name as used in JSON output.
func (r DropReason) String() string {
	if int(r) < len(dropNames) {
		return dropNames[r]
	}
	return "unknown"
}

// Handler is told about every packet a queue discards or marks. Dropped is
// called for the arriving packet when Enqueue refuses it, for packets pushed
// out to make room (DRR), and for packets dropped at dequeue (CoDel); after
// Dropped returns the queue holds no reference to p.
type Handler interface {
	Dropped(now clock.Time, p *Packet, reason DropReason)
	Marked(now clock.Time, p *Packet)
}

// Queue is a queue discipline. Len and Bytes count the packets the queue
// holds. Dequeue returns nil when there is nothing to send.
type Queue interface {
	// Enqueue offers p at now. It reports whether p is now held by the queue;
	// if not, Handler.Dropped has been called for p.
	Enqueue(now clock.Time, p *Packet) bool
	// Dequeue removes and returns the next packet to transmit, or nil.
	Dequeue(now clock.Time) *Packet
	// Len is the number of queued packets.
	Len() int
	// Bytes is the number of queued bytes (sum of Packet.Size).
	Bytes() int
}

// Transparent is implemented by queues whose only state is the packets they
// hold (DropTail): a packet that arrives at the empty queue and is dequeued
// at once changes nothing but its own Enqueued, so a link may pass it
// without calling the queue (link.Link.Through). EmptyAdmits returns the
// largest packet, bytes, the empty queue accepts; a queue's limit does not
// change, so a link asks once.
type Transparent interface {
	EmptyAdmits() int
}

// Env is what a queue may need from its surroundings when built from a spec.
type Env struct {
	Handler Handler    // receives drops and marks; nil means NopHandler
	Rand    *rand.Rand // seeded random source owned by this queue (RED, FRED, CSFQ); nil seeds a fixed one
	Rate    float64    // link rate the queue feeds, bits/s (RED idle-time correction, CSFQ capacity); 0 if unknown
	MTU     int        // typical packet size, bytes (RED's mean packet size, DRR's default quantum); 0 means 1500
}

func (e Env) handler() Handler {
	if e.Handler == nil {
		return NopHandler{}
	}
	return e.Handler
}

func (e Env) rand() *rand.Rand {
	if e.Rand == nil {
		return rand.New(rand.NewPCG(1, 2))
	}
	return e.Rand
}

func (e Env) mtu() int {
	if e.MTU <= 0 {
		return 1500
	}
	return e.MTU
}

// NopHandler ignores drops and marks.
type NopHandler struct{}

// Dropped does nothing.
func (NopHandler) Dropped(clock.Time, *Packet, DropReason) {}

// Marked does nothing.
func (NopHandler) Marked(clock.Time, *Packet) {}

// Bounded is a queue discipline's configuration that reports the
// discipline's capacity (plan.QueueLimit describes a queue by it). Every
// registered discipline's configuration implements it.
type Bounded interface {
	Capacity() Limit
}

// Registry holds the queue disciplines by name; specs look like
// "droptail:20p" or "red:min=5,max=15,maxp=0.1,ecn".
var Registry = spec.NewRegistry[Queue, Env]("queue discipline")

// New builds a queue from a spec string.
func New(s string, env Env) (Queue, error) { return Registry.New(s, env) }

// sojourn returns how long p has been queued at now.
func sojourn(now clock.Time, p *Packet) time.Duration { return now.Sub(p.Enqueued) }
