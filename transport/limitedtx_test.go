package transport

import (
	"slices"
	"testing"
)

// TestLimitedTransmitOff: with nolt, Reno's and NewReno's first two
// duplicate ACKs release no new segment beyond a full cwnd (no RFC 3042
// Limited Transmit, as the TCPs before it and ns-2's Agent/TCP/Reno); the
// third still retransmits the first unacknowledged segment, with ssthresh
// half of the 10 segments in flight. Without nolt the same ACKs release
// segments 11 and 12.
func TestLimitedTransmitOff(t *testing.T) {
	for _, tc := range []struct {
		recovery string
		want     []uint64 // data offsets sent on the first two duplicate ACKs
	}{
		{"reno", []uint64{seg(11).Start, seg(12).Start}},
		{"reno:nolt", nil},
		{"newreno", []uint64{seg(11).Start, seg(12).Start}},
		{"newreno:nolt", nil},
	} {
		t.Run(tc.recovery, func(t *testing.T) {
			f := lossSetup(t, tc.recovery)
			dupAcks(f, 2, 2)
			f.drain()
			if got := f.dataOffsets(); !slices.Equal(got, tc.want) {
				t.Errorf("2 duplicate ACKs sent %v, want %v", got, tc.want)
			}
			dupAcks(f, 4, 1)
			f.drain()
			if got := f.dataOffsets(); len(got) == 0 || got[0] != seg(1).Start {
				t.Errorf("third duplicate ACK sent %v, want the retransmission of %d first", got, seg(1).Start)
			}
			if got, want := f.tcc().ssthresh, 5*testMSS; got != want {
				t.Errorf("ssthresh %d, want FlightSize/2 = %d", got, want)
			}
		})
	}
}
