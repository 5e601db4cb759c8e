package transport

import (
	"slices"
	"testing"
	"time"
)

// TestGrowCumAcked: the controller's Ack.CumAcked is the cumulative advance
// of the ACK, data SACKed before included, so that reno's grow=cum (RFC 5681
// §3.1, ns-3 3.37's ProcessAck) grows on the ACK that fills a hole by the
// segments it moved over and not on SACK-only duplicate ACKs; the default
// grows on every ACK by the data it newly delivered.
func TestGrowCumAcked(t *testing.T) {
	for _, tc := range []struct {
		cc   string
		want []int // cwnd in segments after: the first ACK, two SACK-only ACKs, the ACK filling the hole
	}{
		{"reno:grow=cum", []int{11, 11, 11, 13}}, // the last ACK moves over 3 segments: +min(3, L=2) in slow start
		{"reno", []int{11, 12, 13, 14}},          // each SACKed segment once, the filled hole once
	} {
		t.Run(tc.cc, func(t *testing.T) {
			f := newFixture(t, Config{CC: tc.cc, Recovery: "sack"}, 1<<30, false)
			f.c.SetSource(NewPatternSource(1), -1)
			if got := len(f.drain()); got != 10 {
				t.Fatalf("initial flight: %d segments, want 10", got)
			}
			var got []int
			step := func(cum uint64, blocks ...sackBlock) {
				f.now = f.now.Add(time.Millisecond)
				f.ack(cum, f.sent[0].ts, blocks...)
				got = append(got, f.c.cc.Cwnd()/testMSS)
			}
			step(seg(1).Start)             // segment 0
			step(seg(1).Start, span(2, 3)) // segment 1 missing, 2 SACKed
			step(seg(1).Start, span(2, 4)) // 3 SACKed
			step(seg(4).Start)             // 1 arrives: 1..3 cumulatively acknowledged
			if !slices.Equal(got, tc.want) {
				t.Errorf("cwnd (segments) %v, want %v", got, tc.want)
			}
		})
	}
}
