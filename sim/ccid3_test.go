package sim

import (
	"fmt"
	"math"
	"testing"
	"time"

	"cclab/clock"
	"cclab/traffic"
	"cclab/transport"
)

// rateCoV returns the coefficient of variation of the goodput of f over
// intervals of step from t0 to end, running the engine.
func rateCoV(e *Engine, f *DgramFlow, t0, end clock.Time, step time.Duration) (mean, cov float64) {
	var xs []float64
	e.RunUntilTime(t0)
	last := f.Meter.Bytes
	for at := t0.Add(step); !at.After(end); at = at.Add(step) {
		e.RunUntilTime(at)
		xs = append(xs, float64(f.Meter.Bytes-last)*8/step.Seconds())
		last = f.Meter.Bytes
	}
	var s, s2 float64
	for _, x := range xs {
		s += x
	}
	mean = s / float64(len(xs))
	for _, x := range xs {
		s2 += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(s2/float64(len(xs))) / mean
}

// TestCCID3Alone: one greedy CCID3 flow on a 10 Mbit/s DropTail dumbbell
// fills the link, and its rate varies less than CCID2's over 500 ms
// intervals (TFRC's smoothness, RFC 5348 §1) with a 10-packet buffer, where
// CCID2's halvings empty the queue.
func TestCCID3Alone(t *testing.T) {
	for _, dl := range []time.Duration{10 * time.Millisecond, 30 * time.Millisecond} {
		res := map[string][2]float64{}
		for _, cc := range []string{"ccid3", "ccid2"} {
			e := NewEngine()
			db, err := NewDumbbell(e, DumbbellConfig{Flows: 1, Rate: 10e6, Delay: dl, Queue: "droptail:10p"}, Options{Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			d := NewDgram(New(db.Net, nil))
			f := d.AddFlow(cc, db.Senders[0], db.Receivers[0], transport.DgramConfig{CC: cc}, clock.Start)
			m, cov := rateCoV(e, f, clock.Start.Add(10*time.Second), clock.Start.Add(60*time.Second), 500*time.Millisecond)
			res[cc] = [2]float64{m, cov}
		}
		t.Logf("delay %v: ccid3 %.2f Mbit/s CoV %.3f; ccid2 %.2f Mbit/s CoV %.3f", dl,
			res["ccid3"][0]/1e6, res["ccid3"][1], res["ccid2"][0]/1e6, res["ccid2"][1])
		if m := res["ccid3"][0]; m < 0.85*10e6 || m > 10e6 {
			t.Errorf("delay %v: CCID3 goodput %.2f Mbit/s, want 8.5..10", dl, m/1e6)
		}
		if res["ccid3"][1] >= res["ccid2"][1] {
			t.Errorf("delay %v: CCID3 rate CoV %.3f, want below CCID2's %.3f", dl, res["ccid3"][1], res["ccid2"][1])
		}
	}
}

// TestCCID3VsNewReno: a CCID3 flow and a NewReno flow share a 10 Mbit/s
// bottleneck; TFRC is TCP-friendly within a factor of about two either way
// over buffers of 10-40 packets (the SAINT 2005 and TFRC papers report
// ratios of that order, moving with the buffer).
func TestCCID3VsNewReno(t *testing.T) {
	for _, buf := range []int{10, 40} {
		e := NewEngine()
		db, err := NewDumbbell(e, DumbbellConfig{Flows: 2, Rate: 10e6, Delay: 20 * time.Millisecond,
			Queue: fmt.Sprintf("droptail:%dp", buf)}, Options{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		s := New(db.Net, nil)
		d := NewDgram(s)
		t0 := clock.Start
		cf := d.AddFlow("ccid3", db.Senders[0], db.Receivers[0], transport.DgramConfig{CC: "ccid3"}, t0)
		rf := s.AddTCPFlow("newreno", db.Senders[1], db.Receivers[1], traffic.NewGreedy(traffic.GreedyConfig{}), transport.Config{CC: "newreno"}, t0)
		e.RunUntilTime(t0.Add(10 * time.Second))
		cb, rb := cf.Meter.Bytes, renoBytes(rf)
		e.RunUntilTime(t0.Add(60 * time.Second))
		c, r := float64(cf.Meter.Bytes-cb)*8/50, float64(renoBytes(rf)-rb)*8/50
		t.Logf("buffer %d: ccid3 %.2f Mbit/s, newreno %.2f Mbit/s, ratio %.2f", buf, c/1e6, r/1e6, c/r)
		if ratio := c / r; ratio < 0.4 || ratio > 2.5 {
			t.Errorf("buffer %d: CCID3/NewReno %.2f, want 0.4..2.5", buf, ratio)
		}
		if c+r < 0.8*10e6 {
			t.Errorf("buffer %d: total %.2f Mbit/s, want >= 8", buf, (c+r)/1e6)
		}
	}
}
