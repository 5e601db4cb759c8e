// Package event is cclab's single event vocabulary for metrics and traces.
// Connections, links and queues emit the same Events whichever backend (live or
// simulated) drives them, and metrics are computed from these events by one
// code path (docs/architecture.md, docs/metrics.md).
package event

import (
	"encoding/binary"
	"time"

	"cclab/clock"
)

// Kind names what happened.
type Kind uint8

// Event kinds. Transport kinds are emitted by connections, queue and link kinds
// by qdisc and link stages.
const (
	Unknown Kind = iota
	// PacketSent: a data packet left the sender (Seq, Bytes; Reason
	// SentNew or SentRetransmission).
	PacketSent
	// PacketAcked: a data packet was acknowledged (cumulatively or by SACK).
	PacketAcked
	// PacketLost: loss recovery declared a packet lost (Reason is a LossReason).
	PacketLost
	// Retransmit: a packet was retransmitted (Seq, Bytes).
	Retransmit
	// SpuriousRetransmit: a retransmission turned out to be unnecessary.
	SpuriousRetransmit
	// RTO: the retransmission timer fired (Reason is an RTOCause).
	RTO
	// MetricsUpdated: congestion state after an ACK or timer (Cwnd, Ssthresh,
	// InFlight, SRTT, RTT, MinRTT), the qlog recovery:metrics_updated event.
	MetricsUpdated
	// RecoveryStart and RecoveryEnd bracket a loss-recovery episode
	// (RecoveryEnd's Reason: RecoveryEndFull, RecoveryEndRTO or
	// RecoveryEndUndo).
	RecoveryStart
	RecoveryEnd
	// CongestionSignal: an ECN-Echo or delay-based decision reduced the window.
	CongestionSignal
	// Delivered: the receiver delivered Bytes in order to the application.
	Delivered
	// Enqueue: a packet entered a queue (QueueLen/QueueBytes after).
	Enqueue
	// Drop: a packet was discarded by a loss stage or queue (Reason is a DropReason).
	Drop
	// Mark: a queue set CE on a packet instead of dropping it.
	Mark
	// Dequeue: a packet left a queue for the serializer (Sojourn set).
	Dequeue
	// Departure: a packet finished serialization and propagation and left the link.
	Departure
	// SpuriousRTO: an earlier RTO was found spurious (Reason is the RTOCause
	// it was counted under; it now counts as cause "spurious").
	SpuriousRTO
	kindCount
)

// Reason codes of PacketSent.
const (
	SentNew            uint8 = 0 // a new data packet
	SentRetransmission uint8 = 1 // a retransmission
)

// Reason codes of RecoveryEnd.
const (
	RecoveryEndFull uint8 = 0 // the recovery point was cumulatively acknowledged
	RecoveryEndRTO  uint8 = 1 // a retransmission timeout ended the episode
	RecoveryEndUndo uint8 = 2 // the episode was found spurious and undone
)

var kindNames = [...]string{
	Unknown: "unknown", PacketSent: "packet_sent", PacketAcked: "packet_acked",
	PacketLost: "packet_lost", Retransmit: "retransmit", SpuriousRetransmit: "spurious_retransmit",
	RTO: "rto", MetricsUpdated: "metrics_updated", RecoveryStart: "recovery_start",
	RecoveryEnd: "recovery_end", CongestionSignal: "congestion_signal", Delivered: "delivered",
	Enqueue: "enqueue", Drop: "drop", Mark: "mark", Dequeue: "dequeue", Departure: "departure",
	SpuriousRTO: "spurious_rto",
}

// String returns the kind's snake_case name, used in JSON traces.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "unknown"
}

// Event is one occurrence. Fields that do not apply to a Kind are zero.
// Sinks take a pointer to the emitter's event (Sink), so that an event of
// 128 bytes is neither built in a temporary nor copied per call: emitters
// on packet paths keep one Event of their own and set its fields in place,
// which allocates nothing.
type Event struct {
	Time   clock.Time // when it happened
	Kind   Kind       // what happened
	Flow   uint64     // connection ID or flow key; 0 if not per flow
	Link   int32      // link/hop index for queue and link events; -1 for endpoint events
	Seq    uint64     // packet number or sequence number
	Bytes  int        // packet or delivery size, bytes
	Reason uint8      // kind-specific reason code (drop reason, RTO cause, retransmission flag)

	Cwnd     int // congestion window, bytes
	Ssthresh int // slow-start threshold, bytes
	InFlight int // bytes in flight

	SRTT   time.Duration // smoothed RTT
	RTT    time.Duration // latest RTT sample
	MinRTT time.Duration // minimum RTT seen

	QueueLen   int           // queue length after the event, packets
	QueueBytes int           // queue length after the event, bytes
	Sojourn    time.Duration // time the packet spent in the queue (Dequeue, Drop at dequeue)
}

// Sink receives events. The event *e is the emitter's and valid only
// during the call: Record must neither keep e nor change *e (an emitter
// may keep the fields it does not set from one event to the next); a sink
// that needs a changed event changes a copy. Sinks should be cheap: they
// run on packet paths.
type Sink interface {
	Record(e *Event)
}

// Discard is a Sink that drops every event.
var Discard Sink = discard{}

type discard struct{}

func (discard) Record(*Event) {}

// Log is a Sink that appends every event to a slice, for tests and offline metrics.
type Log struct {
	Events []Event
}

// Record appends a copy of *e.
func (l *Log) Record(e *Event) { l.Events = append(l.Events, *e) }

// Count returns how many recorded events have kind k.
func (l *Log) Count(k Kind) int {
	n := 0
	for i := range l.Events {
		if l.Events[i].Kind == k {
			n++
		}
	}
	return n
}

// Func adapts a function to a Sink; it gets the event by pointer, on the
// same terms as Sink.Record.
type Func func(*Event)

// Record calls f(e).
func (f Func) Record(e *Event) { f(e) }

// Tee is a Sink that forwards each event to every sink in order.
type Tee []Sink

// Record forwards e to every sink.
func (t Tee) Record(e *Event) {
	for _, s := range t {
		s.Record(e)
	}
}

// EncodedSize is the length of an event's fixed binary encoding (Encode), bytes.
const EncodedSize = 8 + 1 + 1 + 8 + 4 + 8 + 8 + 3*8 + 3*8 + 8 + 8 + 8

// Encode writes every field of e into b (at least EncodedSize bytes) in a
// fixed little-endian layout and returns the bytes written: a canonical form
// for hashing traces (Hasher).
func (e *Event) Encode(b []byte) int {
	le := binary.LittleEndian
	le.PutUint64(b[0:], uint64(e.Time))
	b[8] = byte(e.Kind)
	b[9] = e.Reason
	le.PutUint64(b[10:], e.Flow)
	le.PutUint32(b[18:], uint32(e.Link))
	le.PutUint64(b[22:], e.Seq)
	le.PutUint64(b[30:], uint64(e.Bytes))
	le.PutUint64(b[38:], uint64(e.Cwnd))
	le.PutUint64(b[46:], uint64(e.Ssthresh))
	le.PutUint64(b[54:], uint64(e.InFlight))
	le.PutUint64(b[62:], uint64(e.SRTT))
	le.PutUint64(b[70:], uint64(e.RTT))
	le.PutUint64(b[78:], uint64(e.MinRTT))
	le.PutUint64(b[86:], uint64(e.QueueLen))
	le.PutUint64(b[94:], uint64(e.QueueBytes))
	le.PutUint64(b[102:], uint64(e.Sojourn))
	return EncodedSize
}

// FNV-1a 64 parameters (Fowler, Noll, Vo; draft-eastlake-fnv).
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// Hasher is a Sink that hashes every event it records (FNV-1a 64 over
// Encode) in order: two runs that emit the same events in the same order
// have the same Sum. The zero value is ready; it does not allocate.
type Hasher struct {
	h   uint64
	n   uint64
	buf [EncodedSize]byte
}

// Record adds *e to the hash.
func (h *Hasher) Record(e *Event) {
	if h.n == 0 && h.h == 0 {
		h.h = fnvOffset
	}
	h.n++
	x := h.h
	for _, c := range h.buf[:e.Encode(h.buf[:])] {
		x ^= uint64(c)
		x *= fnvPrime
	}
	h.h = x
}

// Sum returns the hash of the events recorded so far and their number.
func (h *Hasher) Sum() (hash, events uint64) {
	if h.n == 0 {
		return fnvOffset, 0
	}
	return h.h, h.n
}
