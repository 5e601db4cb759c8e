package transport

import (
	"fmt"
	"slices"
	"testing"
)

// TestExitGrow: with exitgrow, the ACK that ends recovery is given to the
// controller a second time, outside recovery, after OnRecoveryExit, with
// the ACK's whole cumulative advance (ns-3 3.37's TcpSocketBase::ProcessAck:
// cwnd = ssthresh, then IncreaseWindow with the segments acknowledged);
// without it the controller sees that ACK only in recovery (RFC 6582 §3.2
// step 3: cwnd = ssthresh on the full ACK).
func TestExitGrow(t *testing.T) {
	for _, tc := range []struct {
		recovery string
		grow     bool
	}{
		{"newreno", false},
		{"newreno:exitgrow", true},
		{"sack", false},
		{"sack:exitgrow", true},
		{"prr:exitgrow", true},
	} {
		t.Run(tc.recovery, func(t *testing.T) {
			f := lossSetup(t, tc.recovery)
			dupAcks(f, 2, 3)
			f.drain()
			if !f.c.rec.InRecovery() {
				t.Fatalf("not in recovery after three duplicate ACKs (calls %v)", f.tcc().calls)
			}
			una, nxt := f.c.sb.una, f.c.sb.nxt
			f.ack(nxt, 0) // full ACK: everything sent
			if f.c.rec.InRecovery() {
				t.Fatalf("still in recovery after the full ACK of %d", nxt)
			}
			calls := f.tcc().calls
			i := slices.Index(calls, "exit")
			if i < 0 {
				t.Fatalf("no exit call: %v", calls)
			}
			want := []string{}
			if tc.grow {
				want = append(want, fmt.Sprintf("ack %d rec=false", nxt-una))
			}
			if got := calls[i+1:]; !slices.Equal(got, want) {
				t.Errorf("controller calls after exit %q, want %q (all calls %v)", got, want, calls)
			}
		})
	}
}

// TestNewRenoFlightPipe: with flight=pipe, NewReno's ssthresh on entering
// recovery is computed from FlightSize less one segment per duplicate ACK
// (ns-3 3.37's BytesInFlight without SACK: one Reno SACK per duplicate
// ACK, the head marked lost and counted back in); by default from
// FlightSize bounded by cwnd (RFC 5681 §3.2 step 2, Limited Transmit left
// out).
func TestNewRenoFlightPipe(t *testing.T) {
	for _, tc := range []struct {
		recovery string
		want     int // ssthresh, bytes
	}{
		// FlightSize at the third duplicate ACK: segments 1..12 (two of
		// them sent by Limited Transmit), cwnd 10.
		{"newreno", 10 * testMSS / 2},
		{"newreno:flight=flightsize", 10 * testMSS / 2},
		{"newreno:flight=pipe", (12 - 3) * testMSS / 2},
	} {
		t.Run(tc.recovery, func(t *testing.T) {
			f := lossSetup(t, tc.recovery)
			dupAcks(f, 2, 2)
			f.drain() // Limited Transmit: segments 11 and 12
			dupAcks(f, 4, 1)
			if got := f.tcc().ssthresh; got != tc.want {
				t.Errorf("ssthresh %d, want %d", got, tc.want)
			}
		})
	}
	if _, err := ParseRecoverySpec("newreno:flight=cwnd"); err == nil {
		t.Errorf("newreno:flight=cwnd parsed, want an error naming the values")
	}
}
