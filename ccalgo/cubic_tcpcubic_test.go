package ccalgo

import (
	"math"
	"testing"
	"time"

	"cclab/clock"
)

// TestCubicLinuxCnt checks bictcp_update's cnt: target = origin ±
// trunc(C·|d|³), cnt = cwnd/(target-cwnd) or 100·cwnd, at most 20 while
// last_max_cwnd is 0.
func TestCubicLinuxCnt(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		seg, origin, lastMax int
		d                    float64
		want                 int
	}{
		{"at the origin: flat", 100, 100, 100, 0, 100 * 100},
		{"below the origin, target under cwnd", 70, 100, 100, -4, 100 * 70},  // 100 - trunc(25.6) = 75 > 70: see next
		{"below the origin, target above cwnd", 70, 100, 100, -3, 70 / 20},   // 100 - trunc(10.8) = 90
		{"truncation: C·d³ = 0.4 adds nothing", 100, 100, 100, 1, 100 * 100}, // trunc(0.4) = 0
		{"above the origin", 100, 100, 100, 2, 100 / 3},                      // trunc(3.2) = 3
		{"no W_max: clamp of 20", 100, 100, 0, 0, 20},
	} {
		if tc.name == "below the origin, target under cwnd" {
			tc.want = 70 / 5 // 100 - 25 = 75: 5 above cwnd
		}
		if got := linuxCnt(tc.seg, tc.origin, tc.lastMax, CubicC, tc.d); got != tc.want {
			t.Errorf("%s: cnt got %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestCubicLinuxDecrease checks bictcp_recalc_ssthresh: ssthresh and W_max
// from cwnd in whole segments, whatever the flight, with fast convergence;
// and bictcp_reset after an RTO (W_max 0).
func TestCubicLinuxDecrease(t *testing.T) {
	c := newTest[*Cubic](t, "cubic:linux=true")
	c.cwnd = 101 * testMSS
	c.OnCongestion(Congestion{Kind: Loss, InFlight: 60 * testMSS})
	if got, want := c.Ssthresh(), 70*testMSS; got != want { // trunc(101·0.7) = 70
		t.Errorf("ssthresh got %d, want %d (cwnd·beta, not FlightSize·beta)", got, want)
	}
	if c.WMax() != 101 {
		t.Errorf("W_max got %v, want 101", c.WMax())
	}
	c.OnRecoveryExit(0, 0)
	c.OnCongestion(Congestion{Kind: Loss, InFlight: 70 * testMSS})
	if got, want := c.WMax(), 59.0; got != want { // fast convergence: trunc(70·1.7/2)
		t.Errorf("W_max after a loss below it got %v, want %v", got, want)
	}
	c.OnRecoveryExit(0, 0)
	c.cwnd = 40 * testMSS
	c.OnRTO(0, 10*testMSS)
	if got, want := c.Ssthresh(), 28*testMSS; got != want || c.Cwnd() != testMSS || c.WMax() != 0 {
		t.Errorf("RTO: ssthresh %d cwnd %d W_max %v, want %d, %d, 0", got, c.Cwnd(), c.WMax(), want, testMSS)
	}
	// An RTO during recovery keeps the episode's ssthresh (tcp_enter_loss).
	c = newTest[*Cubic](t, "cubic:linux=true")
	c.cwnd = 100 * testMSS
	c.OnCongestion(Congestion{Kind: Loss, InFlight: 100 * testMSS})
	c.OnRTO(0, 100*testMSS)
	if got, want := c.Ssthresh(), 70*testMSS; got != want || c.WMax() != 0 {
		t.Errorf("RTO in recovery: ssthresh %d W_max %v, want %d, 0", got, c.WMax(), want)
	}
}

// TestCubicLinuxGrowth checks the counting growth: whole segments, at most
// one segment per two acknowledged (cnt >= 2) far above the origin, and the
// target taken at t + min RTT.
func TestCubicLinuxGrowth(t *testing.T) {
	c := newTest[*Cubic](t, "cubic:linux=true,friendly=false")
	c.cwnd = 100 * testMSS
	c.OnCongestion(Congestion{Kind: Loss, InFlight: 100 * testMSS})
	c.OnRecoveryExit(0, 0)
	start := clock.Start.Add(time.Second)
	c.OnAck(Ack{Now: start, Acked: 2 * testMSS, AckedPackets: 2, MinRTT: ms(20)})
	if k, want := c.K(), math.Cbrt(30/CubicC); math.Abs(k-want) > 1e-9 {
		t.Errorf("K got %v, want cbrt((W_max-cwnd)/C) = %v", k, want)
	}
	// 100 s later the target is far above: cnt = 2, +1 segment per ACK of 2.
	late := start.Add(100 * time.Second)
	c.OnAck(Ack{Now: late, Acked: 2 * testMSS, AckedPackets: 2, MinRTT: ms(20)}) // spends the first ACK's credit
	before := c.Cwnd()
	for range 10 {
		c.OnAck(Ack{Now: late, Acked: 2 * testMSS, AckedPackets: 2, MinRTT: ms(20)})
		if c.Cwnd()%testMSS != 0 {
			t.Fatalf("cwnd %d is not whole segments", c.Cwnd())
		}
	}
	if got := (c.Cwnd() - before) / testMSS; got != 10 {
		t.Errorf("growth over 10 ACKs of 2 segments at cnt 2: got %d segments, want 10", got)
	}
	// The min RTT moves the target: at t = K - minRTT the target is the
	// origin (flat), at t = K the target is C·minRTT³ above it.
	c2 := newTest[*Cubic](t, "cubic:linux=true,friendly=false")
	c2.cwnd = 100 * testMSS
	c2.OnCongestion(Congestion{Kind: Loss, InFlight: 100 * testMSS})
	c2.OnRecoveryExit(0, 0)
	c2.OnAck(Ack{Now: start, Acked: 2 * testMSS, AckedPackets: 2, MinRTT: 2 * time.Second})
	if got, want := c2.lx.cnt, linuxCnt(70, 100, 100, CubicC, 2-c2.K()); got != max(want, 2) {
		t.Errorf("cnt at t=0 with min RTT 2 s: got %d, want %d (target at t + min RTT)", got, want)
	}
}
