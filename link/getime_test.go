package link

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"cclab/clock"
)

// TestGETime checks the time-based Gilbert-Elliott model against its
// definition: with h=0, k=1 a packet is lost exactly when the chain is in
// Bad, so the loss rate of packets probing at any rate is the fraction of
// time in Bad, bad/(good+bad), and the mean length of a loss run in time is
// the mean Bad sojourn, whatever the probing rate (unlike the per-packet
// chain, whose outages last a number of packets).
func TestGETime(t *testing.T) {
	const good, bad = 90 * time.Millisecond, 10 * time.Millisecond
	for _, gap := range []time.Duration{100 * time.Microsecond, time.Millisecond} {
		m, err := parseLoss("getime:good=90ms,bad=10ms", 0)
		if err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewPCG(7, 7))
		now := clock.Start
		lost, n := 0, 0
		var runs int
		var runTime time.Duration
		var runStart clock.Time
		inRun := false
		for now.Sub(clock.Start) < 2000*time.Second/10 { // 200 s of probing
			l := m.lose(r, now)
			n++
			if l {
				lost++
				if !inRun {
					inRun, runStart = true, now
				}
			} else if inRun {
				inRun = false
				runs++
				runTime += now.Sub(runStart)
			}
			now = now.Add(gap)
		}
		rate := float64(lost) / float64(n)
		if want := float64(bad) / float64(good+bad); math.Abs(rate-want) > 0.01 {
			t.Errorf("probing every %v: loss rate %.4f, want %.4f ± 0.01 (time fraction in Bad)", gap, rate, want)
		}
		mean := runTime / time.Duration(runs)
		// A run measured by probes is the sojourn rounded to whole gaps:
		// within one gap of the mean Bad sojourn, and 5% for sampling.
		if d := mean - bad; d < -gap-bad/20 || d > gap+bad/20 {
			t.Errorf("probing every %v: mean outage %v over %d runs, want %v ± (%v + 5%%)", gap, mean, runs, bad, gap)
		}
	}
}

// TestGETimeIdle: after a long idle period the state is drawn from the
// stationary distribution without walking every sojourn (bounded work), and
// the same seed gives the same decisions.
func TestGETimeIdle(t *testing.T) {
	run := func() []bool {
		m, _ := parseLoss("getime:good=1ms,bad=1ms", 0)
		r := rand.New(rand.NewPCG(1, 2))
		var out []bool
		now := clock.Start
		for i := 0; i < 1000; i++ {
			out = append(out, m.lose(r, now))
			now = now.Add(time.Hour) // 1.8e9 sojourns per step if walked
		}
		return out
	}
	a, b := run(), run()
	lost := 0
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("decision %d differs between runs with the same seed", i)
		}
		if a[i] {
			lost++
		}
	}
	if lost < 400 || lost > 600 {
		t.Errorf("after idle periods: %d of 1000 lost, want about 500 (stationary Bad fraction 0.5)", lost)
	}
}

// TestGETimeSpec: parameters and their errors.
func TestGETimeSpec(t *testing.T) {
	for _, tc := range []struct {
		spec string
		ok   bool
	}{
		{"getime:good=1s,bad=20ms", true},
		{"getime:good=1s,bad=20ms,h=0.5,k=0.99", true},
		{"getime:good=1s", false},
		{"getime:good=0s,bad=1ms", false},
		{"getime:good=1s,bad=1ms,k=2", false},
		{"getime:good=1s,bad=1ms,bogus=1", false},
	} {
		err := ValidateLoss(tc.spec)
		if (err == nil) != tc.ok {
			t.Errorf("ValidateLoss(%q): got %v, want ok=%v", tc.spec, err, tc.ok)
		}
	}
}
