package ccalgo

import "testing"

// TestOnRTOHold: OnRTOHold (SsthreshHolder, the transport's rtohold) is a
// timeout that keeps ssthresh even though new ACKs arrived since the last
// timeout, where OnRTO recomputes it (RFC 5681 §3.1 holds it only while no
// new ACK arrived; ns-3 3.37's TcpSocketBase::ReTxTimeout holds it in
// CA_LOSS with the head retransmitted).
func TestOnRTOHold(t *testing.T) {
	for _, spec := range []string{"reno", "newreno:ca=acks,abc=1", "cubic", "cubic:linux=true,friendly=false"} {
		t.Run(spec, func(t *testing.T) {
			for _, hold := range []bool{false, true} {
				c, err := New(spec, Env{MSS: testMSS})
				if err != nil {
					t.Fatal(err)
				}
				mss := testMSS
				for k := 1; k <= 30; k++ { // slow start to about 70 segments
					c.OnAck(Ack{Acked: 2 * mss, AckedPackets: 2, InFlight: 60 * mss, CumAck: uint64(2 * k * mss), SndNxt: uint64(130 * mss)})
				}
				c.OnRTO(0, 60*mss)
				first := c.Ssthresh()
				c.OnAck(Ack{Acked: mss, AckedPackets: 1, InFlight: 0, CumAck: uint64(71 * mss), SndNxt: uint64(130 * mss)})
				if hold {
					c.(SsthreshHolder).OnRTOHold(0)
				} else {
					c.OnRTO(0, 4*mss)
				}
				if got := c.Cwnd(); got != LossWindowSegments*mss {
					t.Errorf("hold=%v: cwnd %d, want the loss window %d", hold, got, LossWindowSegments*mss)
				}
				if got := c.Ssthresh(); hold != (got == first) {
					t.Errorf("hold=%v: ssthresh %d after a further timeout, first timeout's %d: want kept only with OnRTOHold", hold, got, first)
				}
			}
		})
	}
}

// TestCubicRTOFlight: with linux=true a timeout during recovery keeps the
// recovery's ssthresh (tcp_enter_loss); with rtoflight it takes
// max(trunc(flight segments·beta), 2) segments from the flight passed
// (ns-3.37's TcpCubic::GetSsThresh on the cwnd TcpPrrRecovery set).
func TestCubicRTOFlight(t *testing.T) {
	for _, tc := range []struct {
		spec   string
		flight int // segments
		want   int // ssthresh, segments
	}{
		{"cubic:linux=true", 23, 70},
		{"cubic:linux=true,rtoflight", 23, 16}, // trunc(23·0.7)
		{"cubic:linux=true,rtoflight", 2, MinSsthreshSegments},
	} {
		c := newTest[*Cubic](t, tc.spec)
		c.cwnd = 100 * testMSS
		c.OnCongestion(Congestion{Kind: Loss, InFlight: 100 * testMSS})
		c.OnRTO(0, tc.flight*testMSS+testMSS/2)
		if got, want := c.Ssthresh(), tc.want*testMSS; got != want || c.WMax() != 0 {
			t.Errorf("%s, flight %d: ssthresh %d W_max %v, want %d, 0", tc.spec, tc.flight, got, c.WMax(), want)
		}
	}
}
