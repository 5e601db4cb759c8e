package transport

import (
	"fmt"
	"slices"
	"testing"
	"time"
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

// TestRTOFlightPipe: with flight=pipe a SACK strategy's timeout takes
// ssthresh from the pipe before the timeout marks every segment lost (ns-3
// 3.37's ReTxTimeout passes BytesInFlight()); by default from FlightSize
// bounded by cwnd (RFC 5681 §3.1 eq. (4)).
func TestRTOFlightPipe(t *testing.T) {
	for _, tc := range []struct {
		recovery string
		want     func(f *fixture) int // ssthresh after the RTO, bytes
	}{
		{"sack", func(f *fixture) int { return min(f.c.sb.FlightSize(), f.tcc().cwnd) / 2 }},
		{"sack:flight=pipe", func(f *fixture) int { return f.c.sb.Pipe() / 2 }},
	} {
		t.Run(tc.recovery, func(t *testing.T) {
			f := lossSetup(t, tc.recovery)
			dupAcks(f, 2, 5) // segment 1 lost, 2..6 SACKed: in recovery
			f.drain()
			if !f.c.rec.InRecovery() {
				t.Fatalf("not in recovery (calls %v)", f.tcc().calls)
			}
			want := max(tc.want(f), 2*testMSS)
			if f.c.sb.Pipe() >= min(f.c.sb.FlightSize(), f.tcc().cwnd) {
				t.Fatalf("pipe %d not below min(FlightSize %d, cwnd %d): the case does not tell the two apart",
					f.c.sb.Pipe(), f.c.sb.FlightSize(), f.tcc().cwnd)
			}
			f.now = f.c.rtoAt
			f.c.onDeadline(f.now)
			if hasCall(f, "rto") != 1 {
				t.Fatalf("no RTO: calls %v", f.tcc().calls)
			}
			if got := f.tcc().ssthresh; got != want {
				t.Errorf("ssthresh after the RTO %d, want %d", got, want)
			}
		})
	}
}

// TestNewRenoRTOFlightPipe: with newreno:flight=pipe a timeout during
// recovery takes ssthresh from FlightSize less the window inflation above
// ssthresh (ns-3's BytesInFlight without SACK: one Reno SACK per duplicate
// ACK still outstanding); by default from FlightSize bounded by cwnd.
func TestNewRenoRTOFlightPipe(t *testing.T) {
	for _, recovery := range []string{"newreno", "newreno:flight=pipe"} {
		t.Run(recovery, func(t *testing.T) {
			f := newFixture(t, Config{CC: "testcc:cwnd=20", Recovery: recovery}, 1<<30, false)
			f.c.SetSource(NewPatternSource(1), -1)
			f.drain()
			f.now = f.now.Add(50 * time.Millisecond)
			f.ack(seg(1).Start, f.sent[0].ts)
			f.drain()
			dupAcks(f, 2, 2)
			f.drain() // Limited Transmit
			dupAcks(f, 4, 1)
			f.drain() // fast retransmit
			for k := 5; k < 11; k++ {
				dupAcks(f, k, 1)
				f.drain() // the inflated window's new data
			}
			flight, win, ss := f.c.sb.FlightSize(), f.c.rec.(*NewReno).Window(), f.tcc().ssthresh
			want := max(min(flight, f.tcc().cwnd)/2, 2*testMSS)
			if recovery != "newreno" {
				want = max((flight-(win-ss))/2, 2*testMSS)
				if want == 2*testMSS || want == max(min(flight, f.tcc().cwnd)/2, 2*testMSS) {
					t.Fatalf("FlightSize %d, window %d, ssthresh %d: the case does not tell the rules apart", flight, win, ss)
				}
			}
			f.now = f.c.rtoAt
			f.c.onDeadline(f.now)
			if hasCall(f, "rto") != 1 {
				t.Fatalf("no RTO: calls %v", f.tcc().calls)
			}
			if got := f.tcc().ssthresh; got != want {
				t.Errorf("ssthresh after the RTO %d, want %d (FlightSize %d, window %d, ssthresh before %d)", got, want, flight, win, ss)
			}
		})
	}
}

// TestRTOHold checks option rtohold against ns-3 3.37's rule in
// TcpSocketBase::ReTxTimeout (src/internet/model/tcp-socket-base.cc): a
// timeout recomputes ssthresh (GetSsThresh) only if the socket is not in
// CA_LOSS (entered at a timeout, left when the cumulative ACK reaches
// m_recover, HighData at that timeout) or the head of its sent list has not
// been retransmitted (TcpTxBuffer::IsHeadRetransmitted). Between the two
// timeouts an ACK acknowledges the first timeout's retransmission, so
// RFC 5681's hold (no new ACK since) would not apply.
func TestRTOHold(t *testing.T) {
	for _, tc := range []struct {
		name       string
		recovery   string
		fast       bool // the timeout comes in fast recovery (CA_RECOVERY), not after an earlier timeout
		resendHead bool // the new head is retransmitted before the second timeout
		hold       bool // ns-3: CA_LOSS and IsHeadRetransmitted
	}{
		{"CA_LOSS, head retransmitted", "sack:rtohold", false, true, true},
		{"CA_LOSS, head not retransmitted", "sack:rtohold", false, false, false},
		{"CA_RECOVERY, head retransmitted", "sack:flight=pipe,rtohold", true, true, false},
		{"option off", "sack", false, true, false},
		{"prr", "prr:flight=pipe,rtohold", false, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := lossSetup(t, tc.recovery)
			var first int
			wantRTOs := 1
			if tc.fast {
				dupAcks(f, 2, 5) // segment 1 lost, 2..6 SACKed
				f.drain()        // its fast retransmission
				if !f.c.rec.InRecovery() {
					t.Fatalf("not in recovery (calls %v)", f.tcc().calls)
				}
				first = f.tcc().ssthresh
			} else {
				f.now = f.c.rtoAt
				f.c.onDeadline(f.now)
				first, wantRTOs = f.tcc().ssthresh, 2
				if hasCall(f, "rto") != 1 {
					t.Fatalf("no first RTO: calls %v", f.tcc().calls)
				}
				f.drain() // the head (segment 1) again
				f.now = f.now.Add(50 * time.Millisecond)
				f.ack(seg(2).Start, 0) // below the RecoveryPoint (segment 11): still CA_LOSS
				if tc.resendHead {
					f.drain() // segment 2, marked lost by the timeout
				}
			}
			if got, want := f.c.sb.Seg(0).Retrans > 0, tc.resendHead; got != want {
				t.Fatalf("head retransmitted %v, want %v", got, want)
			}
			f.now = f.c.rtoAt
			f.c.onDeadline(f.now)
			holds, rtos := hasCall(f, "holdrto"), hasCall(f, "rto")
			wantHolds := 0
			if tc.hold {
				wantHolds, wantRTOs = 1, wantRTOs-1
			}
			if holds != wantHolds || rtos != wantRTOs {
				t.Fatalf("calls %v: got %d holds and %d recomputing RTOs, want %d and %d", f.tcc().calls, holds, rtos, wantHolds, wantRTOs)
			}
			if got := f.tcc().ssthresh; tc.hold && got != first {
				t.Errorf("ssthresh after the RTO %d, want the earlier %d", got, first)
			} else if !tc.hold && got == first {
				t.Errorf("ssthresh after the RTO %d: the earlier one, want it recomputed (the case does not tell the rules apart)", got)
			}
		})
	}
}

// TestRTOMark: with rtomark, during a timeout's recovery (cumulative ACK
// below its RecoveryPoint) a segment with DupThresh SACKed segments above
// it is marked lost and resent at once, with no new episode (ns-3 3.37's
// TcpTxBuffer::Update runs UpdateLostCount on every SACK, in CA_LOSS too,
// and NextSeg rule 1 resends it); without it nothing is marked until the
// cumulative ACK passes the RecoveryPoint (RFC 6675 §5.1). The controller's
// Ack carries the timeout's RecoveryPoint (ccalgo.Ack.RTOPoint) meanwhile.
func TestRTOMark(t *testing.T) {
	for _, tc := range []struct {
		recovery string
		resend   bool // segment 11 is resent on the SACKs
	}{
		{"sack", false},
		{"sack:rtomark", true},
		{"prr:flight=pipe,bound=ns3,partialrxt,rtomark", true},
	} {
		t.Run(tc.recovery, func(t *testing.T) {
			f := lossSetup(t, tc.recovery) // segments 0..10 sent, 0 acknowledged
			f.now = f.c.rtoAt
			f.c.onDeadline(f.now) // RecoveryPoint: the end of segment 10
			f.tcc().cwnd = 30 * testMSS
			f.drain() // segments 1..10 again, then new data from 11
			f.now = f.now.Add(20 * time.Millisecond)
			f.ack(seg(2).Start, 0, span(12, 16))
			if got, want := f.tcc().last.RTOPoint, seg(11).Start; got != want {
				t.Errorf("Ack.RTOPoint %d, want %d (the end of segment 10)", got, want)
			}
			if got, want := f.tcc().last.CumAcked, testMSS; got != want {
				t.Errorf("Ack.CumAcked %d, want %d", got, want)
			}
			if got, want := f.tcc().last.Sacked, 4*testMSS; got != want {
				t.Errorf("Ack.Sacked %d, want %d", got, want)
			}
			f.drain()
			if got := slices.Contains(f.dataOffsets(), seg(11).Start); got != tc.resend {
				t.Errorf("sent %v: segment 11 resent %v, want %v", f.dataOffsets(), got, tc.resend)
			}
			if n := hasCall(f, "congestion"); n != 0 {
				t.Errorf("calls %v: %d new episodes, want none below the RecoveryPoint", f.tcc().calls, n)
			}
			f.ack(seg(16).Start, 0)
			if got := f.tcc().last.RTOPoint; got != seg(11).Start {
				t.Errorf("Ack.RTOPoint %d on the ACK that passes it, want %d", got, seg(11).Start)
			}
			f.ack(seg(17).Start, 0)
			if got := f.tcc().last.RTOPoint; got != 0 {
				t.Errorf("Ack.RTOPoint %d after the timeout's recovery, want 0", got)
			}
		})
	}
}

// TestRxtPipe: with rxtpipe, a segment retransmitted since the latest
// timeout stays in pipe when it is SACKed, until the cumulative ACK covers
// it or the next timeout (ns-3 3.37's TcpTxBuffer::BytesInFlight = sentSize
// - sackedOut - lostOut + retrans, where Update sets m_sacked but keeps
// m_retrans, and only DiscardUpTo and SetSentListLost clear it); without it
// pipe counts no SACKed segment (RFC 6675 SetPipe).
func TestRxtPipe(t *testing.T) {
	for _, tc := range []struct {
		recovery string
		held     int // segments SACKed after their retransmission that pipe still counts
	}{
		{"sack:rtomark", 0},
		{"sack:rtomark,rxtpipe", 3},
		{"prr:flight=pipe,bound=ns3,partialrxt,rtomark,rxtpipe", 3},
	} {
		t.Run(tc.recovery, func(t *testing.T) {
			f := lossSetup(t, tc.recovery) // segments 0..10 sent, 0 acknowledged
			f.now = f.c.rtoAt
			f.c.onDeadline(f.now) // every outstanding segment marked lost
			f.tcc().cwnd = 30 * testMSS
			f.drain() // segments 1..10 retransmitted, then new data
			// rfc is RFC 6675's pipe: outstanding bytes neither SACKed nor
			// marked lost.
			rfc := func() int {
				n := 0
				for i := 0; i < f.c.sb.Count(); i++ {
					if s := f.c.sb.Seg(i); !s.Sacked && !s.Lost {
						n += s.Len
					}
				}
				return n
			}
			f.now = f.now.Add(20 * time.Millisecond)
			f.ack(seg(2).Start, 0, span(3, 6)) // retransmitted 3..5 SACKed, 2 missing
			if got, want := f.c.sb.Pipe(), rfc()+tc.held*testMSS; got != want {
				t.Errorf("pipe %d after the SACK of retransmitted segments 3..5, want %d (RFC 6675: %d)", got, want, rfc())
			}
			f.ack(seg(6).Start, 0) // the cumulative ACK covers them
			if got, want := f.c.sb.Pipe(), rfc(); got != want {
				t.Errorf("pipe %d once the cumulative ACK covers them, want %d", got, want)
			}
			f.drain()
			f.now = f.now.Add(20 * time.Millisecond)
			f.ack(seg(6).Start, 0, span(7, 10)) // retransmitted 7..9 SACKed, 6 missing
			if got, want := f.c.sb.Pipe(), rfc()+tc.held*testMSS; got != want {
				t.Errorf("pipe %d after the SACK of retransmitted segments 7..9, want %d", got, want)
			}
			f.now = f.c.rtoAt
			f.c.onDeadline(f.now) // a timeout clears the retransmitted marks
			if got := f.c.sb.Pipe(); got != 0 {
				t.Errorf("pipe %d after the second timeout, want 0 (every unSACKed segment marked lost)", got)
			}
			f.tcc().cwnd = 30 * testMSS
			f.drain() // 6, then 10.. again
			if !slices.Contains(f.dataOffsets(), seg(10).Start) {
				t.Fatalf("sent %v after the second timeout, want segment 10 among them", f.dataOffsets())
			}
			f.now = f.now.Add(20 * time.Millisecond)
			f.ack(seg(6).Start, 0, span(7, 11)) // 10 retransmitted since this timeout
			if got, want := f.c.sb.Pipe(), rfc()+min(tc.held, 1)*testMSS; got != want {
				t.Errorf("pipe %d after the SACK of segment 10 resent since the second timeout, want %d", got, want)
			}
		})
	}
}
