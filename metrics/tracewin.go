package metrics

import (
	"cclab/clock"
	"cclab/event"
)

// TraceWindow is a TraceSpec on a backend's clock (RunInfo.Trace).
type TraceWindow struct {
	Flow     uint64     // event.Event.Flow of the traced flow
	Origin   clock.Time // the run's start: trace times are seconds from it
	From, To clock.Time // the window, inclusive
}

// Kinds of trace points (TracePoint.Kind).
const (
	TraceSent    = "sent"    // a new packet sent
	TraceResent  = "resent"  // a retransmission sent (stream mode; DCCP never retransmits)
	TraceLost    = "lost"    // the sender declared the packet lost
	TraceTimeout = "timeout" // a retransmission timeout fired; Seq: the oldest unacknowledged packet
)

// TracePoint is one event of a packet trace.
type TracePoint struct {
	T    float64 `json:"t"`    // seconds from the run's start
	Kind string  `json:"kind"` // TraceSent, TraceResent, TraceLost or TraceTimeout
	// Seq is the packet's sequence number: the DCCP sequence number in
	// datagram mode, the byte offset in stream mode, the datagram number
	// of a raw UDP flow.
	Seq uint64 `json:"seq"`
}

// MaxTracePoints bounds a run's packet trace (a 10 s window of a
// 10 Mbit/s flow of 1200-byte packets is about 10 000 points); points
// past it are not kept.
const MaxTracePoints = 200000

// tracePoint returns e as a point of the trace w, if it is one.
func (w *TraceWindow) tracePoint(e *event.Event) (TracePoint, bool) {
	if e.Flow != w.Flow || e.Time < w.From || e.Time > w.To {
		return TracePoint{}, false
	}
	p := TracePoint{T: e.Time.Sub(w.Origin).Seconds(), Seq: e.Seq}
	switch e.Kind {
	case event.PacketSent:
		p.Kind = TraceSent
		if e.Reason == event.SentRetransmission {
			p.Kind = TraceResent
		}
	case event.PacketLost:
		p.Kind = TraceLost
	case event.RTO:
		p.Kind = TraceTimeout
	default:
		return TracePoint{}, false
	}
	return p, true
}
