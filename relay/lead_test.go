package relay

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestWakeLeadConverges feeds wakeLead overshoots from known distributions
// and checks that it settles at their leadQuantile-quantile (0.25) and
// never beyond maxLead.
func TestWakeLeadConverges(t *testing.T) {
	us := time.Microsecond
	cases := []struct {
		name     string
		draw     func(*rand.Rand) time.Duration
		want     time.Duration
		tolerate time.Duration
	}{
		{"constant 50us", func(*rand.Rand) time.Duration { return 50 * us }, 50 * us, leadStep},
		{"uniform 20-80us", func(g *rand.Rand) time.Duration { return 20*us + time.Duration(g.Int64N(int64(60*us))) }, 35 * us, 2 * us},
		{"90% at 10us, 10% at 5ms", func(g *rand.Rand) time.Duration {
			if g.IntN(10) == 0 {
				return 5 * time.Millisecond
			}
			return 10 * us
		}, 10 * us, leadStep},
		{"all above maxLead", func(*rand.Rand) time.Duration { return time.Second }, maxLead, 0},
		{"zero", func(*rand.Rand) time.Duration { return 0 }, 0, leadStep},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := rand.New(rand.NewPCG(1, 2))
			var w wakeLead
			var sum time.Duration
			const n, settle = 20000, 10000
			for i := range n {
				w.observe(c.draw(g))
				if w.lead() < 0 || w.lead() > maxLead {
					t.Fatalf("lead %v outside 0..%v", w.lead(), maxLead)
				}
				if i >= settle {
					sum += w.lead()
				}
			}
			// The estimate wanders around the quantile by a few steps
			// (a random walk with a pull towards it); its mean does not.
			if got := sum / (n - settle); got < c.want-c.tolerate || got > c.want+c.tolerate {
				t.Errorf("mean lead got %v, want %v ± %v", got, c.want, c.tolerate)
			}
		})
	}
}

// TestWakeLeadFollowsChange: after the overshoot moves from 60 µs to 20 µs
// the lead follows within a few hundred wake-ups.
func TestWakeLeadFollowsChange(t *testing.T) {
	var w wakeLead
	for range 1000 {
		w.observe(60 * time.Microsecond)
	}
	for range 200 {
		w.observe(20 * time.Microsecond)
	}
	if got, want := w.lead(), 20*time.Microsecond+leadStep; got > want {
		t.Errorf("lead after 200 wake-ups at 20µs got %v, want at most %v", got, want)
	}
}
