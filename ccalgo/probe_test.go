package ccalgo

import (
	"math"
	"testing"
	"time"

	"cclab/clock"
)

// TestProbePacing: the probe paces one window of start packets at its
// rate until they are delivered, then at gain × the largest delivery-rate sample (at most
// the rate), and keeps its window and rate through loss and a timeout.
func TestProbePacing(t *testing.T) {
	const mss = 1000
	c, err := New("probe:rate=50Mbit,gain=1.5,start=4", Env{MSS: mss})
	if err != nil {
		t.Fatal(err)
	}
	p := c.(PacingController)
	steps := []struct {
		acked     int
		rate      float64 // delivery-rate sample
		congest   bool
		wantPace  float64
		wantPhase string
	}{
		{2 * mss, 20e6, false, 50e6, "start"},
		{1 * mss, 8e6, false, 50e6, "start"},
		{1 * mss, 10e6, false, 30e6, "paced"}, // 1.5 × the largest, 20 Mbit/s
		{1 * mss, 0, true, 30e6, "paced"},     // loss changes nothing
		{1 * mss, 40e6, false, 50e6, "paced"}, // 60 Mbit/s capped at the rate
	}
	for i, s := range steps {
		if s.congest {
			c.OnCongestion(Congestion{Kind: Loss, InFlight: 10 * mss})
			c.OnRTO(clock.Start, 10*mss)
		}
		c.OnAck(Ack{Acked: s.acked, Rate: RateSample{DeliveryRate: s.rate}})
		if got := p.PacingRate(); got != s.wantPace {
			t.Errorf("step %d: pacing rate %g, want %g", i, got, s.wantPace)
		}
		if got := c.State().Phase; got != s.wantPhase {
			t.Errorf("step %d: phase %s, want %s", i, got, s.wantPhase)
		}
		want := MaxWindowParam * mss
		if s.wantPhase == "start" {
			want = 4 * mss // one window of start packets
		}
		if got := c.Cwnd(); got != want {
			t.Errorf("step %d: cwnd %d, want %d", i, got, want)
		}
	}
}

// PacingController is a controller that paces.
type PacingController interface {
	Controller
	Pacer
}

// TestProbeBadParams: each out-of-range parameter is refused naming it.
func TestProbeBadParams(t *testing.T) {
	for _, s := range []string{"probe:rate=0", "probe:rate=20Gbit", "probe:gain=0.5", "probe:gain=5", "probe:start=0"} {
		if _, err := New(s, Env{MSS: 1000}); err == nil {
			t.Errorf("New(%q): no error", s)
		}
	}
}

// TestProbeStartTrain: the start's window comes back spaced by the
// bottleneck; after it the probe paces at the gain times that train's
// dispersion rate (its ACKs after the first: bytes over their span) when
// the delivery-rate samples, one window a round trip, are lower.
func TestProbeStartTrain(t *testing.T) {
	const mss = 1000
	c, err := New("probe:rate=50Mbit,gain=1.5,start=4", Env{MSS: mss})
	if err != nil {
		t.Fatal(err)
	}
	p := c.(PacingController)
	t0 := clock.Start.Add(100 * time.Millisecond)
	for i, acked := range []int{1, 1, 1, 1} {
		if got, want := c.Cwnd(), 4*mss; got != want {
			t.Errorf("ACK %d: start window %d, want %d", i, got, want)
		}
		c.OnAck(Ack{Now: t0.Add(time.Duration(i) * time.Millisecond), Acked: acked * mss, Rate: RateSample{DeliveryRate: 1e6}})
	}
	// 3 packets of 1000 bytes after the first ACK, over 3 ms: 8 Mbit/s.
	if got, want := p.PacingRate(), 1.5*8e6; math.Abs(got-want) > 1 {
		t.Errorf("pacing rate %g, want %g", got, want)
	}
	if got, want := c.Cwnd(), MaxWindowParam*mss; got != want {
		t.Errorf("window after the start %d, want %d", got, want)
	}
}
