package ccalgo

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"cclab/clock"
)

// refStats is a direct transcription of the definition in docs/controllers.md over a slice of samples:
// mean of the last x, mean of the last w, population std dev of the last w.
func refStats(samples []time.Duration, x, w int) (sampled, avg, sd float64) {
	last := samples[len(samples)-w:]
	for _, s := range last {
		avg += float64(s)
	}
	avg /= float64(w)
	for _, s := range samples[len(samples)-x:] {
		sampled += float64(s)
	}
	sampled /= float64(x)
	for _, s := range last {
		sd += (float64(s) - avg) * (float64(s) - avg)
	}
	return sampled, avg, math.Sqrt(sd / float64(w))
}

func ms(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }

// dcaFeed sends one ACK per sample (1 segment each, CumAck/SndNxt advancing
// with a fixed 20-packet flight) and returns the decisions traced.
type dcaFeeder struct {
	d      *DCA
	clk    fakeClock
	cum    uint64
	flight uint64
	recs   []DCADecision
}

func newFeeder(d *DCA) *dcaFeeder {
	f := &dcaFeeder{d: d, flight: 20 * testMSS}
	f.clk.now = clock.Start
	d.SetTrace(func(r DCADecision) { f.recs = append(f.recs, r) })
	return f
}

func (f *dcaFeeder) ack(rtt time.Duration) {
	f.cum += testMSS
	f.d.OnAck(Ack{Now: f.clk.advance(time.Millisecond), Acked: testMSS, AckedPackets: 1, RTT: rtt,
		CumAck: f.cum, SndNxt: f.cum + f.flight})
}

func TestDCAArithmetic(t *testing.T) {
	for _, tc := range []struct {
		name    string
		x, w    int
		samples []float64 // ms
	}{
		{"flat", 2, 4, []float64{50, 50, 50, 50}},
		{"ramp", 2, 4, []float64{10, 20, 30, 40}},
		{"spike", 2, 4, []float64{10, 10, 10, 100}},
		{"spike x=1", 1, 4, []float64{10, 10, 10, 40}},
		{"longer history, window slides", 2, 4, []float64{500, 500, 10, 12, 11, 30}},
		{"x=6 w=20", 6, 20, []float64{40, 41, 39, 40, 42, 38, 40, 40, 41, 39, 40, 40, 43, 45, 48, 50, 52, 55, 57, 60, 61}},
		{"x=w", 3, 3, []float64{1, 2, 9}},
		{"decrease", 2, 5, []float64{90, 80, 70, 60, 50}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newTest[*DCA](t, "dca:x="+itoa(tc.x)+",w="+itoa(tc.w))
			f := newFeeder(d)
			var got []time.Duration
			for _, v := range tc.samples {
				f.ack(ms(v))
				got = append(got, ms(v))
			}
			rec, ok := d.LastDecision()
			if !ok {
				t.Fatalf("no decision after %d samples with w=%d", len(tc.samples), tc.w)
			}
			sampled, avg, sd := refStats(got, tc.x, tc.w)
			for _, c := range []struct {
				what string
				got  time.Duration
				want float64
			}{{"sampledRTT", rec.SampledRTT, sampled}, {"windowAvg", rec.WindowAvg, avg}, {"threshold", rec.Threshold, sd}} {
				if math.Abs(float64(c.got)-c.want) > 1 {
					t.Errorf("%s: got %v, want %v", c.what, c.got, time.Duration(c.want))
				}
			}
			if want := sampled > avg+sd; rec.Congested != want {
				t.Errorf("congested: got %v, want %v (sampled %v, avg+sd %v)", rec.Congested, want, sampled, avg+sd)
			}
			if got, want := len(f.recs), len(tc.samples)-tc.w+1; got != want {
				t.Errorf("decisions traced: got %d, want %d (one per sample once w exist)", got, want)
			}
		})
	}
}

var itoa = strconv.Itoa

// TestDCAReduction checks cwnd = cwnd - cwnd*reduction, floored at 2 SMSS,
// with ssthresh set to the new cwnd.
func TestDCAReduction(t *testing.T) {
	for _, tc := range []struct {
		reduction string
		cwnd      int // bytes
		want      int // bytes
	}{
		{"0.5", 40 * testMSS, 20 * testMSS},
		{"0.25", 40 * testMSS, 30 * testMSS},
		{"0.125", 40 * testMSS, 35 * testMSS},
		{"0.5", 41 * testMSS, 41*testMSS - 41*testMSS/2},
		{"0.5", 3 * testMSS, 2 * testMSS},   // floor
		{"0.125", 2 * testMSS, 2 * testMSS}, // at the floor already
	} {
		d := newTest[*DCA](t, "dca:reduction="+tc.reduction)
		f := newFeeder(d)
		for range 20 {
			f.ack(ms(50))
		}
		d.cwnd, d.ssthresh = tc.cwnd, tc.cwnd // congestion avoidance
		f.ack(ms(200))
		rec, _ := d.LastDecision()
		if !rec.Reacted {
			t.Fatalf("reduction %s: a 4x RTT jump did not react: %+v", tc.reduction, rec)
		}
		if got := d.Cwnd(); got != tc.want {
			t.Errorf("reduction %s from %d: cwnd got %d, want %d", tc.reduction, tc.cwnd, got, tc.want)
		}
		if got := d.Ssthresh(); got != tc.want {
			t.Errorf("reduction %s from %d: ssthresh got %d, want %d", tc.reduction, tc.cwnd, got, tc.want)
		}
		if rec.CwndBefore != tc.cwnd || rec.CwndAfter != tc.want {
			t.Errorf("record cwnd before/after: got %d/%d, want %d/%d", rec.CwndBefore, rec.CwndAfter, tc.cwnd, tc.want)
		}
	}
}

// TestDCASlowStartExit checks that a reaction in slow start leaves slow start.
func TestDCASlowStartExit(t *testing.T) {
	d := newTest[*DCA](t, "dca")
	f := newFeeder(d)
	for range 20 {
		f.ack(ms(50))
	}
	d.cwnd = 10 * testMSS
	if !d.inSlowStart() {
		t.Fatalf("expected slow start")
	}
	f.ack(ms(200))
	if d.inSlowStart() {
		t.Errorf("phase after reaction: got slow start, want congestion avoidance (ssthresh = cwnd)")
	}
}

// TestDCAEpoch checks decision=epoch: one reaction per epoch, a second rise
// inside the epoch is held, and after the RTT returns to the level the
// epoch began at, a new rise reacts again.
func TestDCAEpoch(t *testing.T) {
	d := newTest[*DCA](t, "dca")
	d.cwnd, d.ssthresh = 100*testMSS, 100*testMSS
	f := newFeeder(d)
	for range 20 {
		f.ack(ms(50))
	}
	// RTT rises: the first congested sample opens the epoch and reacts.
	f.ack(ms(100))
	r := f.recs[len(f.recs)-1]
	if !r.Congested || !r.Reacted || !r.EpochOpen {
		t.Fatalf("first rise: got %+v, want congested, reacted, epoch open", r)
	}
	wantCwnd := 50 * testMSS
	if got := d.Cwnd(); got != wantCwnd {
		t.Errorf("cwnd after first reaction: got %d, want %d", got, wantCwnd)
	}
	level := r.WindowAvg
	// RTT keeps rising inside the same epoch: congested but held.
	n0 := len(f.recs)
	for _, v := range []float64{110, 130, 160, 200, 250} {
		f.ack(ms(v))
	}
	held := 0
	for _, r := range f.recs[n0:] {
		if r.Reacted {
			t.Errorf("reaction inside an open epoch: %+v", r)
		}
		if r.Congested && r.Held == "epoch" {
			held++
		}
		if !r.EpochOpen {
			t.Errorf("epoch closed while RTT above its level %v: %+v", level, r)
		}
	}
	if held == 0 {
		t.Errorf("no congested decision held by the epoch rule; records %+v", f.recs[n0:])
	}
	// The RTT stays above the level (but stops rising): epoch stays open.
	for range 30 {
		f.ack(ms(80))
	}
	if !d.epochOpen {
		t.Errorf("epoch closed while sampledRTT (80ms) above the level %v", level)
	}
	// RTT returns to the level the epoch began at: the epoch closes.
	f.ack(ms(50))
	f.ack(ms(50))
	if last := f.recs[len(f.recs)-1]; last.EpochOpen {
		t.Errorf("epoch still open after sampledRTT returned to %v (level %v)", last.SampledRTT, level)
	}
	// A new rise opens a new epoch and reacts.
	before := d.Cwnd()
	for range 20 {
		f.ack(ms(50))
	}
	f.ack(ms(100))
	r = f.recs[len(f.recs)-1]
	if !r.Reacted {
		t.Errorf("rise after the epoch ended: got %+v, want a reaction", r)
	}
	_, _, reactions, epochs := d.Counts()
	if reactions != 2 || epochs != 2 {
		t.Errorf("reactions, epochs: got %d, %d, want 2, 2", reactions, epochs)
	}
	if got := d.Cwnd(); got >= before {
		t.Errorf("cwnd after second reaction: got %d, want below %d", got, before)
	}
}

// TestDCARoundHolds checks decision=rtt and 2rtt: after a reaction at an ACK
// with SndNxt = s, congested samples are held until CumAck >= s (rtt), and
// one more round after that (2rtt).
func TestDCARoundHolds(t *testing.T) {
	for _, tc := range []struct {
		decision string
		rounds   int
	}{{"rtt", 1}, {"2rtt", 2}} {
		t.Run(tc.decision, func(t *testing.T) {
			d := newTest[*DCA](t, "dca:decision="+tc.decision)
			d.cwnd, d.ssthresh = 1000*testMSS, 1000*testMSS
			f := newFeeder(d)
			f.flight = 10 * testMSS // a round is 10 ACKs
			for range 20 {
				f.ack(ms(50))
			}
			// A steep, steady ramp keeps every decision congested.
			rtt := 50.0
			var reactAt []uint64 // CumAck at each reaction
			var roundEnd []uint64
			for range 60 {
				rtt *= 1.15
				f.ack(ms(rtt))
				r := f.recs[len(f.recs)-1]
				if !r.Congested {
					t.Fatalf("ramp sample not congested: %+v", r)
				}
				if r.Reacted {
					reactAt = append(reactAt, f.cum)
					roundEnd = append(roundEnd, f.cum+f.flight)
				} else if r.Held != tc.decision {
					t.Errorf("congested, not reacted: held %q, want %q", r.Held, tc.decision)
				}
			}
			if len(reactAt) < 3 {
				t.Fatalf("reactions: got %d, want several over 6 rounds", len(reactAt))
			}
			for i := 1; i < len(reactAt); i++ {
				// The first round ends when CumAck reaches SndNxt at the
				// reaction; each further round adds one flight.
				want := roundEnd[i-1] + uint64(tc.rounds-1)*f.flight
				if reactAt[i] != want {
					t.Errorf("reaction %d at CumAck %d, want %d (%d round(s) after the previous at %d)",
						i, reactAt[i], want, tc.rounds, reactAt[i-1])
				}
			}
		})
	}
	// decision=epoch on the same ramp reacts once.
	d := newTest[*DCA](t, "dca")
	f := newFeeder(d)
	for range 20 {
		f.ack(ms(50))
	}
	rtt := 50.0
	for range 60 {
		rtt *= 1.15
		f.ack(ms(rtt))
	}
	if _, _, reactions, _ := d.Counts(); reactions != 1 {
		t.Errorf("epoch on a steady ramp: got %d reactions, want 1", reactions)
	}
}

// TestDCASamples checks one sample per ACK whatever it acknowledges, no
// samples during recovery, none from ACKs without an RTT, and no decision
// before w samples.
func TestDCASamples(t *testing.T) {
	d := newTest[*DCA](t, "dca")
	acks := []struct {
		a    Ack
		want uint64 // samples after this ACK
	}{
		{Ack{Acked: testMSS, AckedPackets: 1, RTT: ms(50)}, 1},
		{Ack{Acked: 5 * testMSS, AckedPackets: 5, RTT: ms(50)}, 2}, // stretch ACK: one sample
		{Ack{Acked: 2 * testMSS, AckedPackets: 2, RTT: 0}, 2},      // no RTT
		{Ack{Acked: testMSS, AckedPackets: 1, RTT: ms(60), InRecovery: true}, 2},
		{Ack{Acked: testMSS, AckedPackets: 1, RTT: ms(60), AppLimited: true}, 3},
	}
	for i, c := range acks {
		d.OnAck(c.a)
		if d.total != c.want {
			t.Errorf("ack %d: samples got %d, want %d", i, d.total, c.want)
		}
	}
	// Between OnCongestion(Loss) and OnRecoveryExit, even if the ACK does not say so.
	d.OnCongestion(Congestion{Kind: Loss, InFlight: 10 * testMSS})
	d.OnAck(Ack{Acked: testMSS, RTT: ms(70)})
	if d.total != 3 {
		t.Errorf("sample taken in recovery: got %d samples, want 3", d.total)
	}
	d.OnRecoveryExit(0, 0)
	d.OnAck(Ack{Acked: testMSS, RTT: ms(70)})
	if d.total != 4 {
		t.Errorf("after recovery: got %d samples, want 4", d.total)
	}
	if _, ok := d.LastDecision(); ok {
		t.Errorf("decision before w=20 samples")
	}
	if dec, _, _, _ := d.Counts(); dec != 0 {
		t.Errorf("decisions before w samples: got %d, want 0", dec)
	}
}

// TestDCARenoBase checks that without delay signals DCA grows and reacts to
// loss exactly as Reno.
func TestDCARenoBase(t *testing.T) {
	d := newTest[*DCA](t, "dca")
	r := newTest[*Reno](t, "reno")
	seq := []func(c Controller){
		func(c Controller) { c.OnAck(Ack{Acked: 2 * testMSS, RTT: ms(50)}) },
		func(c Controller) { c.OnAck(Ack{Acked: 2 * testMSS, RTT: ms(50)}) },
		func(c Controller) { c.OnCongestion(Congestion{Kind: Loss, InFlight: 16 * testMSS}) },
		func(c Controller) { c.OnAck(Ack{Acked: testMSS, RTT: ms(50), InRecovery: true}) },
		func(c Controller) { c.OnRecoveryExit(0, 0) },
		func(c Controller) { c.OnAck(Ack{Acked: 8 * testMSS, RTT: ms(50)}) },
		func(c Controller) { c.OnCongestion(Congestion{Kind: ECN, InFlight: 9 * testMSS}) },
		func(c Controller) { c.OnRTO(0, 4*testMSS) },
		func(c Controller) { c.OnAck(Ack{Acked: testMSS, RTT: ms(50)}) },
	}
	for i, step := range seq {
		step(d)
		step(r)
		if d.Cwnd() != r.Cwnd() || d.Ssthresh() != r.Ssthresh() {
			t.Errorf("step %d: dca cwnd/ssthresh got %d/%d, want reno's %d/%d", i, d.Cwnd(), d.Ssthresh(), r.Cwnd(), r.Ssthresh())
		}
	}
}

func TestDCAConfigErrors(t *testing.T) {
	checkSpecErrors(t, []specError{
		{"dca:decision=sometimes", []string{"decision", "epoch, rtt, 2rtt"}},
		{"dca:reduction=1.5", []string{"reduction=1.5"}},
		{"dca:reduction=0", []string{"reduction=0"}},
		{"dca:x=0", []string{"x=0"}},
		{"dca:w=1", []string{"w=1"}},
		{"dca:x=30,w=20", []string{"x=30"}},
		{"dca:y=3", []string{`unknown parameter "y"`, "abc, decision, iw, reduction, ssthresh, tick, w, x"}},
	})
	d := newTest[*DCA](t, "dca:x=6,w=200,reduction=0.125,decision=2rtt")
	if got, want := d.Config(), (DCAConfig{BaseConfig: DefaultBaseConfig(), X: 6, W: 200, Reduction: 0.125, Decision: Per2RTT}); got != want {
		t.Errorf("config: got %+v, want %+v", got, want)
	}
	def := newTest[*DCA](t, "dca").Config()
	if def.X != 2 || def.W != 20 || def.Reduction != 0.5 || def.Decision != PerEpoch {
		t.Errorf("defaults: got %+v, want x=2 w=20 reduction=0.5 decision=epoch", def)
	}
}

func TestDCAStateVars(t *testing.T) {
	d := newTest[*DCA](t, "dca:w=4")
	f := newFeeder(d)
	for _, v := range []float64{10, 20, 30, 40} {
		f.ack(ms(v))
	}
	vars := map[string]float64{}
	for _, v := range d.State().Vars {
		vars[v.Name] = v.Value
	}
	if got, want := vars["sampled_rtt"], 35.0; math.Abs(got-want) > 1e-6 {
		t.Errorf("sampled_rtt: got %v, want %v", got, want)
	}
	if got, want := vars["window_avg"], 25.0; math.Abs(got-want) > 1e-6 {
		t.Errorf("window_avg: got %v, want %v", got, want)
	}
	if got, want := vars["threshold"], math.Sqrt(125); math.Abs(got-want) > 1e-5 {
		t.Errorf("threshold: got %v, want %v", got, want)
	}
	if got, want := vars["samples"], 4.0; got != want {
		t.Errorf("samples: got %v, want %v", got, want)
	}
}

func BenchmarkDCAOnAck(b *testing.B) {
	for _, w := range []int{20, 200} {
		b.Run("w="+itoa(w), func(b *testing.B) {
			c, _ := New("dca:w="+itoa(w), Env{MSS: testMSS})
			b.ReportAllocs()
			var cum uint64
			for i := 0; b.Loop(); i++ {
				cum += testMSS
				c.OnAck(Ack{Acked: testMSS, RTT: ms(50 + float64(i%7)), CumAck: cum, SndNxt: cum + 20*testMSS})
				_ = c.State()
			}
		})
	}
}

// TestDCARunningSums checks the O(1) running sums against a direct
// recomputation over long seeded random sequences, including large RTTs
// with tiny jitter (where a naive float sum of squares loses the variance).
func TestDCARunningSums(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		x, w       int
		base, jitt time.Duration
	}{
		{2, 20, ms(50), ms(5)},
		{6, 20, ms(20), ms(20)},
		{2, 200, ms(100), time.Microsecond},
		{2, 200, 10 * time.Second, time.Microsecond},
		{1, 2, time.Millisecond, 0},
	} {
		d := newTest[*DCA](t, "dca:x="+itoa(tc.x)+",w="+itoa(tc.w))
		var all []time.Duration
		for i := range 3000 {
			s := tc.base
			if tc.jitt > 0 {
				s += time.Duration(rng.Int64N(int64(tc.jitt)))
			}
			all = append(all, s)
			d.OnAck(Ack{Acked: 0, RTT: s})
			if i+1 < tc.w {
				continue
			}
			sampled, avg, sd := d.stats()
			ws, wa, wsd := refStats(all, tc.x, tc.w)
			if math.Abs(sampled-ws) > 1e-6*ws || math.Abs(avg-wa) > 1e-6*wa || math.Abs(sd-wsd) > 1e-3+1e-9*wa {
				t.Fatalf("x=%d w=%d sample %d: got (%v, %v, %v), want (%v, %v, %v)", tc.x, tc.w, i, sampled, avg, sd, ws, wa, wsd)
			}
		}
	}
}

// TestDCATick checks that tick floors samples to its multiples.
func TestDCATick(t *testing.T) {
	for _, tc := range []struct {
		spec      string
		rtt, want time.Duration
	}{
		{"dca:w=2,x=1", ms(57.3), ms(57.3)},
		{"dca:w=2,x=1,tick=10ms", ms(57.3), ms(50)},
		{"dca:w=2,x=1,tick=10ms", ms(60), ms(60)},
		{"dca:w=2,x=1,tick=500ms", ms(57.3), 0},
	} {
		d := newTest[*DCA](t, tc.spec)
		d.OnAck(Ack{RTT: tc.rtt})
		d.OnAck(Ack{RTT: tc.rtt})
		rec, ok := d.LastDecision()
		if !ok || rec.Sample != tc.want || rec.WindowAvg != tc.want {
			t.Errorf("%s sample %v: got sample %v avg %v, want %v", tc.spec, tc.rtt, rec.Sample, rec.WindowAvg, tc.want)
		}
	}
	if _, err := New("dca:tick=-1ms", Env{MSS: testMSS}); err == nil || !strings.Contains(err.Error(), "tick") {
		t.Errorf("tick=-1ms: got %v, want an error naming tick", err)
	}
}

// TestDCAEpochPersistentQueue checks decision=epoch on a persistently
// queued hop (the chapter's ASU link 8-9): the RTT rises from its 100 ms
// base to a standing queue of about 150 ms during slow start and never
// returns to the level it rose from; every 60 samples the RTT rises by a
// further 80 ms and stays up until the queue overflows (a loss). The first
// rise opens an epoch that, by the RTT rule alone, would never close, so
// DCA would react once and then run as Reno. An epoch also ends in a loss
// (or ECN mark or timeout): each rise after a loss opens a new epoch and
// reacts once; the congested samples after it, up to the loss, are held.
func TestDCAEpochPersistentQueue(t *testing.T) {
	for _, end := range []string{"loss", "ecn", "rto"} {
		t.Run(end, func(t *testing.T) {
			d := newTest[*DCA](t, "dca:tick=10ms")
			d.cwnd, d.ssthresh = 100*testMSS, 100*testMSS
			f := newFeeder(d)
			for range 20 {
				f.ack(ms(100))
			}
			f.ack(ms(250)) // the standing queue builds: the epoch opens and reacts
			if r := f.recs[len(f.recs)-1]; !r.Reacted {
				t.Fatalf("first rise: got %+v, want a reaction", r)
			}
			const cycles = 5
			for c := range cycles {
				// The queue stays: samples alternate 240/260 ms (never near
				// 100 ms), then rise to 320/340 ms until the queue overflows.
				for i := range 60 {
					v := 240.0 + 20*float64(i%2)
					if i >= 30 {
						v += 80
					}
					f.ack(ms(v))
				}
				n0 := len(f.recs) - 60
				reacted := 0
				for _, r := range f.recs[n0:] {
					if r.Reacted {
						reacted++
					}
				}
				want := 1
				if c == 0 {
					want = 0 // the epoch opened at the first rise is still open
				}
				if reacted != want {
					t.Errorf("cycle %d: %d reactions, want %d (once per epoch)", c, reacted, want)
				}
				// The queue overflows: the epoch ends in a loss.
				switch end {
				case "loss":
					d.OnCongestion(Congestion{Now: f.clk.now, Kind: Loss, InFlight: d.Cwnd()})
					d.OnRecoveryExit(f.clk.now, d.Cwnd())
				case "ecn":
					d.OnCongestion(Congestion{Now: f.clk.now, Kind: ECN, InFlight: d.Cwnd()})
				case "rto":
					d.OnRTO(f.clk.now, d.Cwnd())
				}
				if d.epochOpen {
					t.Fatalf("cycle %d: epoch open after a %s", c, end)
				}
			}
			_, _, reactions, epochs := d.Counts()
			if want := uint64(cycles); reactions != want || epochs != want {
				t.Errorf("reactions, epochs: got %d, %d, want %d, %d", reactions, epochs, want, want)
			}
			if got, want := d.LossEndedEpochs(), uint64(cycles); got != want {
				t.Errorf("epochs ended by %s: got %d, want %d", end, got, want)
			}
		})
	}
}

// TestDCAEpochLevelIsTrough checks an epoch's level against the definition
// (an epoch ends "when the RTT falls back to its original value"): the level
// is the smallest of the w samples when the epoch opened, the RTT the
// increase rose from. On a steady but noisy queue (10 ms ticks: the RTT
// moves between 90, 100 and 120 ms) the 2-sample mean falls below the
// windowAvg after every excursion; a level at the windowAvg would close the
// epoch there and the next excursion would react again, once every few
// samples. With the trough as level the epoch stays open through the noise
// (one reaction), closes when the RTT is back at 90 ms, and the next rise
// reacts again.
func TestDCAEpochLevelIsTrough(t *testing.T) {
	d := newTest[*DCA](t, "dca:tick=10ms")
	d.cwnd, d.ssthresh = 100*testMSS, 100*testMSS
	f := newFeeder(d)
	var fed []time.Duration
	feed := func(vs ...float64) {
		for _, v := range vs {
			f.ack(ms(v))
			fed = append(fed, ms(v))
		}
	}
	// 20 samples: a steady 100 ms with one trough of 90 ms.
	feed(100, 100, 100, 100, 90, 90, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100)
	// Noise: excursions to 120 ms separated by returns to 100 ms.
	noise := []float64{120, 120, 100, 100, 100, 100}
	feed(noise...)
	if r := f.recs[len(f.recs)-len(noise)]; !r.Reacted || r.EpochLevel != ms(90) {
		t.Fatalf("first excursion: got %+v, want a reaction opening an epoch of level 90ms", r)
	}
	dips := 0 // samples whose sampledRTT is at or below the windowAvg (the old level)
	for range 8 {
		n0 := len(fed)
		feed(noise...)
		for i := n0; i < len(fed); i++ {
			if sampled, avg, _ := refStats(fed[:i+1], 2, 20); sampled <= avg {
				dips++
			}
		}
	}
	if dips == 0 {
		t.Fatalf("the noise never brought sampledRTT(2) down to windowAvg(20): the test does not exercise the level")
	}
	_, congested, reactions, epochs := d.Counts()
	if congested < 5 {
		t.Fatalf("congested decisions: got %d, want the excursions to be congested (>= 5)", congested)
	}
	if reactions != 1 || epochs != 1 {
		t.Errorf("through the noise: reactions, epochs = %d, %d, want 1, 1 (the RTT never fell back to 90ms)", reactions, epochs)
	}
	// The RTT falls back to the trough: the epoch closes.
	feed(90, 90)
	if last := f.recs[len(f.recs)-1]; last.EpochOpen {
		t.Fatalf("epoch still open after sampledRTT fell back to 90ms: %+v", last)
	}
	// A new rise opens a new epoch and reacts.
	feed(100, 100, 100, 100, 130, 130)
	if _, _, reactions, epochs = d.Counts(); reactions != 2 || epochs != 2 {
		t.Errorf("after the fall and a new rise: reactions, epochs = %d, %d, want 2, 2", reactions, epochs)
	}
}

// TestDCAExactLevelResolution: with exact samples (tick=0) an epoch closes
// when sampledRTT(x) is within DCAExactResolution of its level (an emptied
// queue gives the base RTT back with sub-millisecond serialization jitter,
// not the trough's exact value); with tick > 0 the comparison is exact.
func TestDCAExactLevelResolution(t *testing.T) {
	for _, tc := range []struct {
		spec       string
		back       float64 // ms, the RTT after the reaction
		wantClosed bool
	}{
		{"dca", 41.9955, true},        // 7.5 µs above the 41.988 ms trough
		{"dca", 41.988 + 0.999, true}, // just within 1 ms
		{"dca", 41.988 + 1.2, false},  // above it
		{"dca:tick=10ms", 40, true},   // floored onto the trough's tick
		{"dca:tick=10ms", 50, false},  // one tick above
	} {
		t.Run(tc.spec+"/"+strconv.FormatFloat(tc.back, 'f', -1, 64), func(t *testing.T) {
			d := newTest[*DCA](t, tc.spec)
			d.cwnd, d.ssthresh = 100*testMSS, 100*testMSS
			f := newFeeder(d)
			for i := range 20 {
				f.ack(ms(41.988 + 0.004*float64(i%3)))
			}
			f.ack(ms(70)) // the rise opens an epoch at the 41.988 ms trough
			if r := f.recs[len(f.recs)-1]; !r.Reacted {
				t.Fatalf("rise: got %+v, want a reaction", r)
			}
			f.ack(ms(tc.back))
			f.ack(ms(tc.back))
			if got := !d.epochOpen; got != tc.wantClosed {
				t.Errorf("epoch closed after sampledRTT %v: got %v, want %v (level %v)", ms(tc.back), got, tc.wantClosed, f.recs[len(f.recs)-3].EpochLevel)
			}
		})
	}
}
