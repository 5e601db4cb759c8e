package transport

import (
	"testing"
	"time"

	"cclab/clock"
)

const ms = time.Millisecond

func TestRFC6298Estimator(t *testing.T) {
	cases := []struct {
		rule       string
		min, max   time.Duration
		samples    []time.Duration
		backoffs   int
		wantSRTT   time.Duration
		wantRTTVAR time.Duration
		wantRTO    time.Duration
	}{
		{rule: "2.1 initial RTO 1 s before any sample", min: 200 * ms, max: 60 * time.Second,
			wantRTO: time.Second},
		{rule: "2.2 first sample: SRTT=R, RTTVAR=R/2, RTO=SRTT+4*RTTVAR", min: 200 * ms, max: 60 * time.Second,
			samples: []time.Duration{100 * ms}, wantSRTT: 100 * ms, wantRTTVAR: 50 * ms, wantRTO: 300 * ms},
		{rule: "2.3 later samples: RTTVAR=3/4 RTTVAR+1/4|SRTT-R|, SRTT=7/8 SRTT+1/8 R", min: 200 * ms, max: 60 * time.Second,
			samples: []time.Duration{100 * ms, 200 * ms}, wantSRTT: 112500 * time.Microsecond, wantRTTVAR: 62500 * time.Microsecond, wantRTO: 362500 * time.Microsecond},
		{rule: "2.4 RTO rounded up to the configured minimum", min: 200 * ms, max: 60 * time.Second,
			samples: []time.Duration{10 * ms}, wantSRTT: 10 * ms, wantRTTVAR: 5 * ms, wantRTO: 200 * ms},
		{rule: "2.4 minimum is configurable", min: 5 * ms, max: 60 * time.Second,
			samples: []time.Duration{1 * ms}, wantSRTT: ms, wantRTTVAR: ms / 2, wantRTO: 5 * ms},
		{rule: "2.5 RTO capped at the maximum", min: 200 * ms, max: 60 * time.Second,
			samples: []time.Duration{30 * time.Second}, wantSRTT: 30 * time.Second, wantRTTVAR: 15 * time.Second, wantRTO: 60 * time.Second},
		{rule: "2.2 G: RTO = SRTT + max(G, 4*RTTVAR) when RTTVAR is 0", min: 1 * time.Nanosecond, max: 60 * time.Second,
			samples: []time.Duration{time.Nanosecond}, wantSRTT: time.Nanosecond, wantRTTVAR: 0, wantRTO: time.Nanosecond + ClockGranularity},
		{rule: "5.5 backoff doubles the RTO", min: 200 * ms, max: 60 * time.Second,
			samples: []time.Duration{100 * ms}, backoffs: 2, wantSRTT: 100 * ms, wantRTTVAR: 50 * ms, wantRTO: 1200 * ms},
		{rule: "5.5 backoff doubles the initial RTO", min: 200 * ms, max: 60 * time.Second,
			backoffs: 3, wantRTO: 8 * time.Second},
		{rule: "5.5 backoff stops at the maximum", min: 200 * ms, max: 60 * time.Second,
			samples: []time.Duration{100 * ms}, backoffs: 20, wantSRTT: 100 * ms, wantRTTVAR: 50 * ms, wantRTO: 60 * time.Second},
	}
	for _, tc := range cases {
		e := newRTTEstimator(tc.min, time.Second, tc.max)
		for _, s := range tc.samples {
			e.sample(s)
		}
		for i := 0; i < tc.backoffs; i++ {
			e.backOff()
		}
		if e.srtt != tc.wantSRTT || e.rttvar != tc.wantRTTVAR || e.current() != tc.wantRTO {
			t.Errorf("%s: got SRTT %v RTTVAR %v RTO %v, want %v %v %v", tc.rule, e.srtt, e.rttvar, e.current(), tc.wantSRTT, tc.wantRTTVAR, tc.wantRTO)
		}
	}
	// A new sample after backoff recomputes the RTO from SRTT and RTTVAR (the backoff is collapsed).
	e := newRTTEstimator(200*ms, time.Second, 60*time.Second)
	e.sample(100 * ms)
	e.backOff()
	e.backOff()
	e.sample(100 * ms)
	if got, want := e.current(), 100*ms+4*(50*ms*3/4); got != want {
		t.Errorf("sample after backoff: RTO %v, want %v", got, want)
	}
}

// TestRFC6298Timer checks the timer management rules of RFC 6298 §5 on a
// connection with a fake clock.
func TestRFC6298Timer(t *testing.T) {
	// newreno: no tail-loss probe (the default rack sends one before the RTO).
	f := newFixture(t, Config{CC: "testcc:cwnd=4", Recovery: "newreno"}, 1<<30, false)
	// The handshake gave one sample of 100 ms: RTO = 300 ms.
	if got := f.c.rtt.current(); got != 300*ms {
		t.Fatalf("RTO after handshake sample %v, want 300ms", got)
	}
	if f.c.rtoAt != clock.Never {
		t.Errorf("timer running with nothing outstanding")
	}
	f.c.SetSource(NewPatternSource(3), 10*int64(testMSS))
	f.drain()
	t0 := f.now
	// 5.1: sending data with the timer off starts it.
	if want := t0.Add(300 * ms); f.c.rtoAt != want {
		t.Errorf("5.1: timer at %v, want %v", f.c.rtoAt, want)
	}
	// 5.3: an ACK of new data restarts it (RTO recomputed from the new sample of 100 ms).
	f.now = t0.Add(100 * ms)
	f.ack(seg(1).Start, f.sent[0].ts)
	// Four segments were in flight: ExpectedSamples = ceil(4/2) = 2 (RFC 7323
	// Appendix G), so beta is 1/8: RTTVAR = 50 - 50/8 ms, SRTT stays 100 ms.
	wantRTO := 100*ms + 4*(50*ms-50*ms/8)
	if want := f.now.Add(wantRTO); f.c.rtoAt != want {
		t.Errorf("5.3: timer at %v, want %v", f.c.rtoAt, want)
	}
	f.drain()
	// 5.4-5.6: expiry retransmits the earliest outstanding segment, doubles the RTO, restarts the timer.
	f.now = f.c.rtoAt
	f.ep.OnDeadline(f.now)
	if got := f.c.rtt.current(); got != 2*wantRTO {
		t.Errorf("5.5: RTO after expiry %v, want %v", got, 2*wantRTO)
	}
	if want := f.now.Add(2 * wantRTO); f.c.rtoAt != want {
		t.Errorf("5.6: timer at %v, want %v", f.c.rtoAt, want)
	}
	f.drain()
	if got := f.dataOffsets(); len(got) != 1 || got[0] != seg(1).Start {
		t.Errorf("5.4: sent %v after expiry, want only the earliest outstanding segment %d (cwnd = 1 MSS)", got, seg(1).Start)
	}
	if st := f.c.Stats(); st.RTOs != 1 || st.RTOCauses[RTOBurstLoss] != 1 {
		t.Errorf("RTO count %d causes %v, want 1 burst_loss (4 segments outstanding, no dupacks)", st.RTOs, st.RTOCauses)
	}
	// Karn via timestamps: the ACK echoes the retransmission's timestamp, so
	// the sample is the retransmission's RTT (40 ms), not the original's.
	retxTS := f.sent[0].ts
	f.now = f.now.Add(40 * ms)
	f.ack(seg(2).Start, retxTS)
	if got := f.c.rtt.latest; got != 40*ms {
		t.Errorf("sample after retransmission %v, want 40ms", got)
	}
	// 5.2: everything acknowledged stops the timer.
	f.drain()
	all := f.c.sb.Nxt()
	if f.c.finSent {
		all++ // the FIN
	}
	f.ack(all, 0)
	if f.c.rtoAt != clock.Never {
		t.Errorf("5.2: timer still at %v with nothing outstanding", f.c.rtoAt)
	}
}

// TestRTTSamplePerAck: every ACK that newly acknowledges data gives one
// sample: from TSecr when the cumulative point advances, from the send time
// of the newly SACKed (never retransmitted) segment otherwise; an ACK with
// nothing new gives none. (SACK samples need a strategy that uses SACK;
// Reno and NewReno ignore SACK blocks.)
func TestRTTSamplePerAck(t *testing.T) {
	f := newFixture(t, Config{CC: "testcc:cwnd=10", Recovery: "sack"}, 1<<30, false)
	f.c.SetSource(NewPatternSource(3), -1)
	f.drain() // segments 0..9 at t0
	t0, ts0 := f.now, f.sent[0].ts
	f.now = t0.Add(30 * ms)
	f.ack(seg(1).Start, ts0) // cumulative: sample from TSecr
	if f.c.rtt.latest != 30*ms {
		t.Errorf("cumulative ACK: latest sample %v, want 30ms", f.c.rtt.latest)
	}
	n0 := f.c.rtt.samples
	f.now = t0.Add(60 * ms)
	f.ack(seg(1).Start, ts0, seg(3)) // SACK only: sample from segment 3's send time (t0)
	if f.c.rtt.samples != n0+1 || f.c.rtt.latest != 60*ms {
		t.Errorf("SACK-only ACK: %d new samples, latest %v, want 1 and 60ms", f.c.rtt.samples-n0, f.c.rtt.latest)
	}
	f.ack(seg(1).Start, ts0, seg(3)) // nothing new
	if f.c.rtt.samples != n0+1 {
		t.Errorf("ACK with nothing new gave a sample")
	}
}

// TestRFC7323AppendixG checks that per-ACK samples use gains divided by
// ExpectedSamples = ceil(FlightSize/(2*SMSS)).
func TestRFC7323AppendixG(t *testing.T) {
	const mss = 1000
	cases := []struct {
		flight           uint64
		wantSRTT, wantRV time.Duration
	}{
		{flight: 0, wantSRTT: 100*ms + 80*ms/8, wantRV: 50*ms + (80*ms-50*ms)/4},       // ES = 1
		{flight: 2 * mss, wantSRTT: 100*ms + 80*ms/8, wantRV: 50*ms + (80*ms-50*ms)/4}, // ES = 1
		{flight: 2*mss + 1, wantSRTT: 100*ms + 80*ms/16, wantRV: 50*ms + (80*ms-50*ms)/8},
		{flight: 20 * mss, wantSRTT: 100*ms + 80*ms/80, wantRV: 50*ms + (80*ms-50*ms)/40},
	}
	for _, tc := range cases {
		e := newRTTEstimator(200*ms, time.Second, 60*time.Second)
		e.sample(100 * ms)
		e.sampleInFlight(180*ms, tc.flight, mss)
		if e.srtt != tc.wantSRTT || e.rttvar != tc.wantRV {
			t.Errorf("flight %d: SRTT, RTTVAR got %v, %v; want %v, %v", tc.flight, e.srtt, e.rttvar, tc.wantSRTT, tc.wantRV)
		}
	}
}
