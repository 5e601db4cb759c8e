package ccalgo

import (
	"testing"
	"time"

	"cclab/clock"
)

// hsAck is an ACK of one segment at t (from the start) with RTT rtt,
// cumulative point cum and SND.NXT nxt.
func hsAck(t, rtt time.Duration, cum, nxt uint64) Ack {
	return Ack{Now: clock.Start.Add(t), Acked: testMSS, AckedPackets: 1, RTT: rtt, SRTT: rtt, MinRTT: rtt, CumAck: cum, SndNxt: nxt}
}

// TestHyStartDelay checks the delay rule of tcp_cubic.c: after the round's
// first 8 samples, the round's smallest RTT above the minimum RTT by
// clamp(minRTT/8, 4 ms, 16 ms) ends slow start; at the threshold it does
// not. ACKs 5 ms apart never form a train.
func TestHyStartDelay(t *testing.T) {
	for _, tc := range []struct {
		rise time.Duration // RTT of the second round above the 40 ms minimum
		want int           // ACK of the second round (1-based) that ends slow start; 0: none
	}{
		{6 * time.Millisecond, 9},  // 46 ms > 40 + 40/8: the 9th sample (after 8)
		{5 * time.Millisecond, 0},  // 45 ms: not above
		{17 * time.Millisecond, 9}, // clamp: 16 ms at most
	} {
		var h hyStart
		cwnd := 20 * testMSS
		at := time.Duration(0)
		// Round 1 (ends at byte 100 000): the minimum RTT, 40 ms.
		for i := range 10 {
			at += 5 * time.Millisecond
			if h.onAck(hsAck(at, 40*time.Millisecond, uint64(i+1)*1000, 100_000), cwnd, testMSS, clock.Never) {
				t.Fatalf("rise %v: round 1 ACK %d ended slow start", tc.rise, i+1)
			}
		}
		got := 0
		for i := range 12 {
			at += 5 * time.Millisecond
			if h.onAck(hsAck(at, 40*time.Millisecond+tc.rise, 100_001+uint64(i)*1000, 200_000), cwnd, testMSS, clock.Never) {
				got = i + 1
				break
			}
		}
		if got != tc.want {
			t.Errorf("RTT rise %v: slow start ended at ACK %d of round 2, want %d", tc.rise, got, tc.want)
		}
	}
}

// TestHyStartAckTrain checks the ACK-train rule: ACKs 1 ms apart from the
// round's start end slow start at the first one more than (min RTT + the
// offload allowance)/2 after it: (40 + 1)/2 = 20.5 ms, so at 21 ms; a gap
// over 2 ms breaks the train; below 16 segments nothing is detected.
func TestHyStartAckTrain(t *testing.T) {
	if got := hyStartAckDelay(20*testMSS, 40*time.Millisecond); got != time.Millisecond {
		t.Errorf("offload allowance: got %v, want the 1 ms cap", got)
	}
	run := func(cwnd int, gap time.Duration) int {
		var h hyStart
		h.onAck(hsAck(0, 40*time.Millisecond, 1, 1_000_000), cwnd, testMSS, clock.Never) // starts the round at 0
		for i := 1; i <= 40; i++ {
			if h.onAck(hsAck(time.Duration(i)*gap, 40*time.Millisecond, uint64(1+i), 1_000_000), cwnd, testMSS, clock.Never) {
				return i
			}
		}
		return 0
	}
	if got := run(20*testMSS, time.Millisecond); got != 21 {
		t.Errorf("ACKs 1 ms apart: slow start ended at ACK %d (%d ms), want 21", got, got)
	}
	if got := run(20*testMSS, 3*time.Millisecond); got != 0 {
		t.Errorf("ACKs 3 ms apart: slow start ended at ACK %d, want no train", got)
	}
	if got := run(15*testMSS, time.Millisecond); got != 0 {
		t.Errorf("cwnd 15 segments: slow start ended at ACK %d, want nothing below %d", got, HyStartLowWindow)
	}
}

// TestCubicHyStart checks that cubic:hystart=true sets ssthresh = cwnd when
// HyStart detects, so growth goes on in congestion avoidance, and that an
// RTO lets it detect again; without hystart slow start goes on.
func TestCubicHyStart(t *testing.T) {
	for _, spec := range []string{"cubic:hystart=true", "cubic:hystart=true,linux=true", "cubic"} {
		c := newTest[*Cubic](t, spec)
		c.cwnd = 20 * testMSS
		var exitAt int
		for i := 0; i <= 30 && exitAt == 0; i++ {
			c.OnAck(hsAck(time.Second+time.Duration(i)*time.Millisecond, 40*time.Millisecond, uint64(1+i)*testMSS, 1<<30))
			if !c.inSlowStart() {
				exitAt = i
			}
		}
		hy := spec != "cubic"
		if got := exitAt > 0; got != hy {
			t.Errorf("%s: slow start ended: %v (ACK %d), want %v", spec, got, exitAt, hy)
		}
		if hy && c.Ssthresh() > c.Cwnd() {
			t.Errorf("%s: ssthresh %d above cwnd %d after HyStart", spec, c.Ssthresh(), c.Cwnd())
		}
	}
}
