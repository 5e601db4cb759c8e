package ccalgo

import (
	"math"
	"testing"
	"time"

	"cclab/clock"
)

// cubicAfterLoss puts c in congestion avoidance after a loss at cwnd
// segments (flight = cwnd) and returns the time of the first CA ACK.
func cubicAfterLoss(c *Cubic, cwnd int, now clock.Time) {
	c.cwnd = cwnd * testMSS
	c.OnCongestion(Congestion{Now: now, Kind: Loss, InFlight: cwnd * testMSS})
	c.OnRecoveryExit(now, 0)
}

// rfcK is RFC 9438 Figure 2 for a congestion event at W_max with
// cwnd_epoch = W_max*beta.
func rfcK(wmax, beta, cc float64) float64 { return math.Cbrt(wmax * (1 - beta) / cc) }

func TestCubicKAndW(t *testing.T) {
	for _, tc := range []struct {
		spec string
		wmax int // segments at the loss
		beta float64
		c    float64
	}{
		{"cubic", 100, 0.7, 0.4},
		{"cubic", 1000, 0.7, 0.4},
		{"cubic:beta=0.5", 100, 0.5, 0.4},
		{"cubic:c=0.8", 100, 0.7, 0.8},
		{"cubic:c=0.1,beta=0.8", 400, 0.8, 0.1},
	} {
		c := newTest[*Cubic](t, tc.spec)
		now := clock.Start
		cubicAfterLoss(c, tc.wmax, now)
		if got, want := c.Cwnd(), int(float64(tc.wmax*testMSS)*tc.beta); got != want {
			t.Errorf("%s: cwnd after recovery: got %d, want %d (beta*flight)", tc.spec, got, want)
		}
		// The first CA ACK starts the epoch.
		c.OnAck(Ack{Now: now, Acked: testMSS, SRTT: ms(100)})
		wantK := rfcK(float64(tc.wmax), tc.beta, tc.c)
		if got := c.K(); math.Abs(got-wantK) > 1e-2 {
			t.Errorf("%s: K got %v, want %v", tc.spec, got, wantK)
		}
		if got := c.WMax(); got != float64(tc.wmax) {
			t.Errorf("%s: W_max got %v, want %v", tc.spec, got, tc.wmax)
		}
		for _, tt := range []float64{0, 1, wantK / 2, wantK, wantK + 1, 2 * wantK, 10} {
			want := tc.c*math.Pow(tt-wantK, 3) + float64(tc.wmax)
			if got := c.WCubic(tt); math.Abs(got-want) > 0.05 {
				t.Errorf("%s: W_cubic(%v) got %v, want %v", tc.spec, tt, got, want)
			}
		}
		// W_cubic(0) is the reduced window and W_cubic(K) = W_max.
		if got, want := c.WCubic(0), float64(tc.wmax)*tc.beta; math.Abs(got-want) > 0.05 {
			t.Errorf("%s: W_cubic(0) got %v, want cwnd_epoch %v", tc.spec, got, want)
		}
	}
}

// TestCubicIncrement checks one ACK's increase: cwnd += (target - cwnd)/cwnd
// per acked segment, target = W_cubic(t+RTT) clamped to [cwnd, 1.5 cwnd].
func TestCubicIncrement(t *testing.T) {
	for _, tc := range []struct {
		name string
		at   float64 // seconds after the epoch start
		srtt time.Duration
	}{
		{"concave early", 0.5, ms(100)},
		{"concave near K", 3.9, ms(100)},
		{"plateau at K", 4.2, ms(50)},
		{"convex", 6, ms(100)},
		{"convex far: 1.5x clamp", 30, ms(100)},
	} {
		c := newTest[*Cubic](t, "cubic:friendly=false")
		start := clock.Start
		cubicAfterLoss(c, 100, start)
		c.OnAck(Ack{Now: start, Acked: testMSS, SRTT: tc.srtt}) // starts the epoch
		before := c.Cwnd()
		cw := float64(before) / testMSS
		now := start.Add(time.Duration(tc.at * float64(time.Second)))
		c.OnAck(Ack{Now: now, Acked: 4 * testMSS, SRTT: tc.srtt})
		target := math.Min(math.Max(c.WCubic(tc.at+tc.srtt.Seconds()), cw), 1.5*cw)
		want := float64(before) + (target-cw)/cw*4*testMSS
		if got := float64(c.Cwnd()); math.Abs(got-want) > 2 {
			t.Errorf("%s: cwnd got %v, want %v", tc.name, got, want)
		}
	}
}

// TestCubicTrajectory drives ACKs for one full RTT at a time and checks that
// cwnd follows W_cubic: it stays below W_max until about K, and reaches it
// near K.
func TestCubicTrajectory(t *testing.T) {
	c := newTest[*Cubic](t, "cubic:friendly=false")
	now := clock.Start
	cubicAfterLoss(c, 100, now)
	rtt := ms(100)
	k := rfcK(100, 0.7, 0.4)
	for now.Sub(clock.Start).Seconds() < k+1 {
		w := c.Cwnd() / testMSS
		for range w {
			now = now.Add(rtt / time.Duration(w))
			c.OnAck(Ack{Now: now, Acked: testMSS, SRTT: rtt})
		}
		tt := now.Sub(clock.Start).Seconds()
		lo := c.WCubic(tt) - 2
		hi := c.WCubic(tt+rtt.Seconds()) + 1
		if got := float64(c.Cwnd()) / testMSS; got < lo || got > hi {
			t.Fatalf("t=%.2fs: cwnd %.2f segments outside [W(t)-2, W(t+RTT)+1] = [%.2f, %.2f]", tt, got, lo, hi)
		}
	}
}

func TestCubicDecrease(t *testing.T) {
	for _, tc := range []struct {
		spec         string
		cwnd, flight int // segments
		want         int // ssthresh, bytes
	}{
		{"cubic", 100, 100, 70 * testMSS},
		{"cubic", 100, 50, 35 * testMSS},
		{"cubic:beta=0.5", 100, 100, 50 * testMSS},
		{"cubic", 2, 2, 2 * testMSS}, // floor 2 SMSS
	} {
		c := newTest[*Cubic](t, tc.spec)
		c.cwnd = tc.cwnd * testMSS
		c.OnCongestion(Congestion{Kind: Loss, InFlight: tc.flight * testMSS})
		if got := c.Ssthresh(); got != tc.want {
			t.Errorf("%s cwnd %d flight %d: ssthresh got %d, want %d", tc.spec, tc.cwnd, tc.flight, got, tc.want)
		}
		c.OnAck(Ack{Now: clock.Start, Acked: testMSS, InRecovery: true})
		if got := c.Cwnd(); got != tc.cwnd*testMSS {
			t.Errorf("%s: cwnd changed in recovery: got %d, want %d", tc.spec, got, tc.cwnd*testMSS)
		}
		c.OnRecoveryExit(0, 0)
		if got := c.Cwnd(); got != tc.want {
			t.Errorf("%s: cwnd at recovery exit got %d, want %d", tc.spec, got, tc.want)
		}
	}
	// ECN: cwnd = ssthresh at once.
	c := newTest[*Cubic](t, "cubic")
	c.cwnd = 100 * testMSS
	c.OnCongestion(Congestion{Kind: ECN, InFlight: 100 * testMSS})
	if got, want := c.Cwnd(), 70*testMSS; got != want {
		t.Errorf("ECN: cwnd got %d, want %d", got, want)
	}
}

// TestCubicFastConvergence checks RFC 9438 §4.7.
func TestCubicFastConvergence(t *testing.T) {
	for _, tc := range []struct {
		spec        string
		first, then int // cwnd at the two losses, segments
		want        float64
	}{
		{"cubic", 100, 80, 80 * 1.7 / 2},          // below W_max: release bandwidth
		{"cubic:fastconv=false", 100, 80, 80},     // off
		{"cubic", 100, 120, 120},                  // above W_max: plain
		{"cubic:beta=0.5", 100, 60, 60 * 1.5 / 2}, // beta enters the rule
	} {
		c := newTest[*Cubic](t, tc.spec)
		c.cwnd = tc.first * testMSS
		c.OnCongestion(Congestion{Kind: Loss, InFlight: tc.first * testMSS})
		if got := c.WMax(); got != float64(tc.first) {
			t.Errorf("%s: W_max after first loss got %v, want %v", tc.spec, got, tc.first)
		}
		c.OnRecoveryExit(0, 0)
		c.cwnd = tc.then * testMSS
		c.OnCongestion(Congestion{Kind: Loss, InFlight: tc.then * testMSS})
		if got := c.WMax(); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%s: W_max after loss at %d (previous %d): got %v, want %v", tc.spec, tc.then, tc.first, got, tc.want)
		}
	}
}

// TestCubicRenoFriendly checks RFC 9438 §4.3: W_est grows by
// alpha_cubic*acked/cwnd with alpha_cubic = 3(1-beta)/(1+beta), 1 once
// W_est >= cwnd_prior, and cwnd = W_est when W_cubic(t) < W_est.
func TestCubicRenoFriendly(t *testing.T) {
	c := newTest[*Cubic](t, "cubic")
	now := clock.Start
	cubicAfterLoss(c, 100, now)
	c.OnAck(Ack{Now: now, Acked: testMSS, SRTT: ms(1)})
	alpha := 3 * (1 - 0.7) / (1 + 0.7)
	if got, want := c.WEst(), 70+alpha/70; math.Abs(got-want) > 1e-9 {
		t.Errorf("W_est after one segment: got %v, want %v", got, want)
	}
	// A short-RTT path: many RTTs per second, W_est outgrows W_cubic.
	rtt := ms(1)
	for range 200 { // 200 RTTs = 0.2 s
		w := c.Cwnd() / testMSS
		for range w {
			now = now.Add(rtt / time.Duration(w))
			before := c.WEst()
			cw := float64(c.Cwnd()) / testMSS
			c.OnAck(Ack{Now: now, Acked: testMSS, SRTT: rtt})
			a := alpha
			if before >= 100 {
				a = 1
			}
			if got, want := c.WEst()-before, a/cw; math.Abs(got-want) > 1e-9 {
				t.Fatalf("W_est step at W_est=%v: got %v, want %v", before, got, want)
			}
		}
	}
	tt := now.Sub(clock.Start).Seconds()
	if !(c.WCubic(tt) < c.WEst()) {
		t.Fatalf("test setup: W_cubic(%v)=%v not below W_est=%v", tt, c.WCubic(tt), c.WEst())
	}
	if got, want := c.Cwnd(), int(c.WEst()*testMSS); got != want {
		t.Errorf("Reno-friendly region: cwnd got %d, want W_est %d", got, want)
	}
	// With friendly=false the same path follows W_cubic only.
	d := newTest[*Cubic](t, "cubic:friendly=false")
	now = clock.Start
	cubicAfterLoss(d, 100, now)
	for range 200 {
		w := d.Cwnd() / testMSS
		for range w {
			now = now.Add(rtt / time.Duration(w))
			d.OnAck(Ack{Now: now, Acked: testMSS, SRTT: rtt})
		}
	}
	if got, limit := float64(d.Cwnd())/testMSS, d.WCubic(tt+rtt.Seconds())+1; got > limit {
		t.Errorf("friendly=false: cwnd %v segments above W_cubic(t+RTT)=%v", got, limit)
	}
	if d.Cwnd() >= c.Cwnd() {
		t.Errorf("friendly=false cwnd %d not below friendly cwnd %d on a short-RTT path", d.Cwnd(), c.Cwnd())
	}
}

func TestCubicRTOAndSlowStart(t *testing.T) {
	c := newTest[*Cubic](t, "cubic")
	// An earlier loss at 200 segments leaves W_max = 200; the RTO must make
	// the next CA stage forget it.
	c.cwnd = 200 * testMSS
	c.OnCongestion(Congestion{Kind: Loss, InFlight: 200 * testMSS})
	c.OnRecoveryExit(0, 0)
	c.cwnd = 100 * testMSS
	c.OnRTO(0, 100*testMSS)
	if c.Cwnd() != testMSS || c.Ssthresh() != 70*testMSS {
		t.Errorf("RTO: cwnd/ssthresh got %d/%d, want %d/%d", c.Cwnd(), c.Ssthresh(), testMSS, 70*testMSS)
	}
	c.OnRTO(0, testMSS) // backed off: ssthresh held
	if c.Ssthresh() != 70*testMSS {
		t.Errorf("second RTO: ssthresh got %d, want %d", c.Ssthresh(), 70*testMSS)
	}
	// Slow start up to ssthresh, then the first CA stage has K=0 and
	// W_max = cwnd at its start (§4.8).
	now := clock.Start
	for c.inSlowStart() {
		now = now.Add(time.Millisecond)
		c.OnAck(Ack{Now: now, Acked: testMSS, SRTT: ms(100)})
	}
	c.OnAck(Ack{Now: now, Acked: testMSS, SRTT: ms(100)})
	if c.K() != 0 || c.WMax() != 70 {
		t.Errorf("CA after RTO: K, W_max got %v, %v, want 0, 70", c.K(), c.WMax())
	}
	// App-limited ACKs do not grow cwnd, and the time spent app-limited
	// does not count as epoch time.
	before, epoch := c.Cwnd(), c.epochStart
	c.OnAck(Ack{Now: now.Add(time.Second), Acked: 10 * testMSS, SRTT: ms(100), AppLimited: true})
	c.OnAck(Ack{Now: now.Add(2 * time.Second), Acked: 10 * testMSS, SRTT: ms(100), AppLimited: true})
	if c.Cwnd() != before {
		t.Errorf("app-limited ACK grew cwnd: got %d, want %d", c.Cwnd(), before)
	}
	c.OnAck(Ack{Now: now.Add(3 * time.Second), Acked: testMSS, SRTT: ms(100)})
	if got, want := c.epochStart, epoch.Add(2*time.Second); got != want {
		t.Errorf("epoch start after 2 s app-limited: got %v, want %v", got, want)
	}
}

func TestCubicConfigErrors(t *testing.T) {
	checkSpecErrors(t, []specError{
		{"cubic:beta=1", []string{"beta=1"}},
		{"cubic:c=0", []string{"c=0"}},
		{"cubic:fastconv=maybe", []string{"fastconv", "boolean"}},
		{"cubic:hystart=sometimes", []string{"hystart", "boolean"}},
		{"cubic:hystartpp", []string{`unknown parameter "hystartpp"`, "abc, acks, beta, c, ca, fastconv, friendly, hystart, iw, linux, rtoalways, rtoflight, ss, ssthresh"}},
	})
	cfg := newTest[*Cubic](t, "cubic").Config()
	if cfg.C != 0.4 || cfg.Beta != 0.7 || !cfg.FastConv || !cfg.Friendly {
		t.Errorf("defaults: got %+v, want c=0.4 beta=0.7 fastconv friendly", cfg)
	}
}
