package simrun

import (
	"context"
	"fmt"
	"testing"
	"time"

	"cclab/event"
	"cclab/plan"
)

// firstAcks records the time of each flow's first data packet and of its
// first acknowledgement at the sender.
type firstAcks struct{ sent, acked map[uint64]time.Duration }

func (f firstAcks) Record(e *event.Event) {
	m := map[event.Kind]map[uint64]time.Duration{event.PacketSent: f.sent, event.PacketAcked: f.acked}[e.Kind]
	if _, ok := m[e.Flow]; m != nil && !ok && e.Flow != 0 {
		m[e.Flow] = time.Duration(e.Time)
	}
}

// TestSimRunAckFirst: the scenario's ack_first reaches the simulated
// receiver. On the ccperf path (16 Mbit/s, 7.5 ms one way) the initial
// window's segments cross the bottleneck back to back; without ack_first
// the first ACK waits at the receiver for the second segment, one
// segment's time at the bottleneck (a 1,448-byte segment, its header, 28
// bytes of IPv4 and UDP: 749 µs) later than with it, where the first
// segment is acknowledged on arrival as ns-3's receiver does.
func TestSimRunAckFirst(t *testing.T) {
	rtt := map[bool]time.Duration{}
	for _, first := range []bool{false, true} {
		src := fmt.Sprintf("name: af\nduration: 100ms\ntopology:\n  kind: dumbbell\n"+
			"  bottleneck: {rate: 16Mbit, delay: 7.5ms, queue: droptail:20p}\n"+
			"flows: [{name: bulk, traffic: greedy, datagram: 1483B, ack_every: 2, delayed_ack: 200ms, ack_first: %v}]\n", first)
		p, err := plan.New(parseScenario(t, src).Points[0].Scenario, 1)
		if err != nil {
			t.Fatal(err)
		}
		if p.Flows[0].AckFirst != first {
			t.Fatalf("ack_first %v: the plan's flow has AckFirst %v", first, p.Flows[0].AckFirst)
		}
		rec := firstAcks{map[uint64]time.Duration{}, map[uint64]time.Duration{}}
		s, err := Build(p, Options{Sink: rec, NoSeries: true})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		id := p.Flows[0].ID
		sent, ok1 := rec.sent[id]
		acked, ok2 := rec.acked[id]
		if !ok1 || !ok2 {
			t.Fatalf("ack_first %v: no data sent or acknowledged", first)
		}
		rtt[first] = acked - sent
	}
	// One data segment's time at the bottleneck: its 1,448 bytes of
	// payload, the short header (at most the datagram's 1,483 in all) and
	// 28 bytes of IPv4 and UDP.
	wire := func(bytes int) time.Duration { return time.Duration(float64((bytes+28)*8) / 16e6 * 1e9) }
	if got, lo, hi := rtt[false]-rtt[true], wire(1448), wire(1483); got < lo || got > hi {
		t.Errorf("first ACK without ack_first %v after the first send, with it %v: %v later, want one segment's time at the bottleneck, %v..%v",
			rtt[false], rtt[true], got, lo, hi)
	}
}
