package simrun

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"cclab/event"
	"cclab/link"
	"cclab/plan"
)

// firstSends records the time of each flow's first data packet.
type firstSends map[uint64]time.Duration

func (f firstSends) Record(e *event.Event) {
	if _, ok := f[e.Flow]; e.Kind == event.PacketSent && !ok && e.Flow != 0 {
		f[e.Flow] = time.Duration(e.Time)
	}
}

// TestSimRunTCPHandshake: four flows starting together on the ccperf
// path (16 Mbit/s) begin sending data one handshake packet's time at the
// bottleneck apart: a padded Initial's (1,483 + 28 bytes: 755.5 µs) by
// default, and with tcp_handshake the larger of the unpadded Initial and
// the Accept (31 and 33 bytes, + 28: 30.5 µs; ns-3's SYN and SYN-ACK are
// 58 bytes on its links, 29 µs; docs/compat.md "Handshake timing"). (Its
// pure ACK leaves with the first data, at the same instant.)
func TestSimRunTCPHandshake(t *testing.T) {
	const rate = 16e6 // bits/s
	wire := func(datagram int) time.Duration {
		return time.Duration(float64((datagram+link.IPv4UDPOverhead)*8) / rate * 1e9)
	}
	for _, tc := range []struct {
		name     string
		unpadded bool
		want     time.Duration
	}{
		{"padded", false, wire(1483)},
		{"unpadded", true, wire(max(31, 33))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := fmt.Sprintf("name: hs\nduration: 100ms\ntopology:\n  kind: dumbbell\n"+
				"  bottleneck: {rate: 16Mbit, delay: 7.5ms, queue: droptail:20p}\n"+
				"flows: [{name: bulk, count: 4, traffic: greedy, datagram: 1483B, stagger: 0s, tcp_handshake: %v}]\n", tc.unpadded)
			p, err := plan.New(parseScenario(t, src).Points[0].Scenario, 1)
			if err != nil {
				t.Fatal(err)
			}
			first := firstSends{}
			s, err := Build(p, Options{Sink: first, NoSeries: true})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Run(context.Background()); err != nil {
				t.Fatal(err)
			}
			if len(first) != 4 {
				t.Fatalf("got %d flows sending data, want 4", len(first))
			}
			var at []time.Duration
			for _, t := range first {
				at = append(at, t)
			}
			slices.Sort(at)
			for i := 1; i < len(at); i++ {
				if got := at[i] - at[i-1]; got != tc.want {
					t.Errorf("flow %d starts %v after flow %d, want %v", i, got, i-1, tc.want)
				}
			}
		})
	}
}
