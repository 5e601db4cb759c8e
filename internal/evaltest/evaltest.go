// Package evaltest holds the fixtures that the harness packages' tests share
// (metrics, store, report, eval): a hand-made event stream whose metrics are
// worked out by hand, and small helpers for clock times and comparisons.
package evaltest

import (
	"math"
	"time"

	"cclab/clock"
	"cclab/event"
	"cclab/metrics"
	"cclab/qdisc"
)

// At returns clock.Start + s seconds.
func At(s float64) clock.Time { return clock.Start.Add(time.Duration(s * 1e9)) }

// Ms returns x milliseconds.
func Ms(x float64) time.Duration { return time.Duration(x * 1e6) }

// Near reports whether a and b agree to 1e-9 (relative; absolute below 1).
func Near(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

// SyntheticRun is a small hand-made event stream whose metrics are worked out
// from the definitions in docs/metrics.md in the comments of metrics.TestMetricsByHand.
func SyntheticRun() (metrics.RunInfo, []event.Event) {
	info := metrics.RunInfo{
		Start: At(0), End: At(2), Interval: time.Second, Bottleneck: 0,
		Flows: []metrics.FlowInfo{{ID: 1, Name: "f1", BottleneckRate: 8e6, BaseRTT: Ms(10)}},
		Links: []metrics.LinkInfo{{Index: 0, Name: "bottleneck", Rate: 16000, QueueLimit: 10, BaseRTT: Ms(100)}},
	}
	ev := []event.Event{
		{Time: At(0), Kind: event.PacketSent, Flow: 1, Link: -1, Bytes: 1000},
		{Time: At(0), Kind: event.MetricsUpdated, Flow: 1, Link: -1, Cwnd: 2000, InFlight: 1000, SRTT: Ms(20), MinRTT: Ms(10)},
		{Time: At(0), Kind: event.Enqueue, Flow: 1, Link: 0, QueueLen: 1, QueueBytes: 1000},
		{Time: At(0.5), Kind: event.PacketSent, Flow: 1, Link: -1, Bytes: 1000},
		{Time: At(0.5), Kind: event.Delivered, Flow: 1, Link: -1, Bytes: 1000},
		{Time: At(0.6), Kind: event.PacketAcked, Flow: 1, Link: -1, Bytes: 1000},
		{Time: At(1.7), Kind: event.PacketAcked, Flow: 1, Link: -1, Bytes: 1000},
		{Time: At(1.8), Kind: event.PacketAcked, Flow: 1, Link: -1, Bytes: 500},
		{Time: At(0.5), Kind: event.Enqueue, Flow: 1, Link: 0, QueueLen: 6, QueueBytes: 6000},
		{Time: At(0.8), Kind: event.PacketLost, Flow: 1, Link: -1},
		{Time: At(0.8), Kind: event.RecoveryStart, Flow: 1, Link: -1},
		{Time: At(1), Kind: event.PacketSent, Flow: 1, Link: -1, Bytes: 1000, Reason: 1},
		{Time: At(1), Kind: event.Retransmit, Flow: 1, Link: -1, Bytes: 1000},
		{Time: At(1), Kind: event.MetricsUpdated, Flow: 1, Link: -1, Cwnd: 4000, InFlight: 3000, SRTT: Ms(40), MinRTT: Ms(10)},
		{Time: At(1), Kind: event.Dequeue, Flow: 1, Link: 0, QueueLen: 0, Sojourn: 500 * time.Millisecond},
		{Time: At(1), Kind: event.Departure, Flow: 1, Link: 0, Bytes: 1000},
		{Time: At(1.1), Kind: event.Drop, Flow: 1, Link: 0, Reason: uint8(qdisc.DropOverflow)},
		{Time: At(1.15), Kind: event.Drop, Flow: 1, Link: 0, Reason: uint8(qdisc.DropOverflow)},
		{Time: At(1.2), Kind: event.RecoveryEnd, Flow: 1, Link: -1},
		{Time: At(1.4), Kind: event.Drop, Flow: 2, Link: 0, Reason: uint8(qdisc.DropEarly)},
		{Time: At(1.45), Kind: event.Drop, Flow: 1, Link: 0, Reason: uint8(qdisc.DropRandom), QueueLen: 99},
		{Time: At(1.5), Kind: event.Delivered, Flow: 1, Link: -1, Bytes: 1000},
		{Time: At(1.5), Kind: event.Enqueue, Flow: 1, Link: 0, QueueLen: 5, QueueBytes: 5000},
		{Time: At(1.6), Kind: event.RTO, Flow: 1, Link: -1, Reason: 3},
		{Time: At(1.6), Kind: event.Departure, Flow: 1, Link: 0, Bytes: 1000},
		{Time: At(1.9), Kind: event.Mark, Flow: 1, Link: 0, QueueLen: 5, QueueBytes: 5000},
		{Time: At(2.5), Kind: event.Delivered, Flow: 1, Link: -1, Bytes: 99999}, // after End: ignored
	}
	return info, ev
}
