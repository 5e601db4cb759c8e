package agent

import (
	"context"
	"testing"
	"time"
)

// TestNTPSample checks one exchange against RFC 5905 §8's formulas: an
// agent clock 100 ms ahead, 10 ms out and 30 ms back, 5 ms at the agent.
func TestNTPSample(t *testing.T) {
	ms := int64(time.Millisecond)
	for _, tc := range []struct {
		name               string
		t1, t2, t3, t4     int64
		rt                 time.Duration
		wantOff, wantDelay time.Duration
	}{
		// offset ((110−0)+(115−45))/2 = 90 ms (true 100: the asymmetry's
		// error (30−10)/2 = 10 ms lies within delay/2 = 20 ms).
		{"asymmetric", 0, 110 * ms, 115 * ms, 45 * ms, 45 * time.Millisecond, 90 * time.Millisecond, 40 * time.Millisecond},
		{"symmetric, agent behind", 1000 * ms, 800 * ms, 801 * ms, 1021 * ms, 21 * time.Millisecond, -210 * time.Millisecond, 20 * time.Millisecond},
		// The agent's T3−T2 exceeds the round trip (clock noise): delay 0.
		{"noise", 0, 5 * ms, 9 * ms, 3 * ms, 3 * time.Millisecond, 5500 * time.Microsecond, 0},
	} {
		off, d := ntpSample(tc.t1, tc.t2, tc.t3, tc.t4, tc.rt)
		if off != tc.wantOff || d != tc.wantDelay {
			t.Errorf("%s: got offset %v delay %v, want %v %v", tc.name, off, d, tc.wantOff, tc.wantDelay)
		}
	}
}

// TestClockOffsetSkewed: an agent whose clock is 3 s ahead is measured 3 s
// ahead (within the bound), and a transfer to it carries +3 s, from it −3 s.
func TestClockOffsetSkewed(t *testing.T) {
	creds := pskCreds(t, "lab "+hexKeyA)
	const skew = 3 * time.Second
	a := startAgent(t, Config{Creds: creds})
	b := startAgent(t, Config{Creds: creds}, func(s *Server) { s.skew = skew })
	ca, cb := dial(t, a, creds), dial(t, b, creds)
	off, rtt, err := cb.ClockOffset(context.Background(), 16)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("skewed agent: offset %v, rtt %v (the offset lies within rtt/2 of the true %v)", off, rtt, skew)
	if d := (off - skew).Abs(); d > rtt/2+time.Millisecond {
		t.Errorf("offset %v (rtt %v), want %v within rtt/2", off, rtt, skew)
	}
	for _, tc := range []struct {
		name       string
		send, recv *Client
		want       time.Duration
	}{{"to the skewed host", ca, cb, skew}, {"from it", cb, ca, -skew}} {
		res, err := RunTransfer(context.Background(), tc.send, tc.recv, TransferSpec{ID: tc.name, ReceiverHost: "127.0.0.1", Bytes: 100 << 10})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if d := (res.ClockOffset - tc.want).Abs(); d > res.OffsetRTT/2+time.Millisecond {
			t.Errorf("%s: offset %v (bound %v), want %v", tc.name, res.ClockOffset, res.OffsetRTT/2, tc.want)
		}
	}
}
