package ccalgo

import (
	"math"
	"strings"
	"testing"
	"time"

	"cclab/clock"
)

const tfrcS = 1000 // packet size for the tests, bytes

func near(got, want, rel float64) bool { return math.Abs(got-want) <= rel*math.Abs(want) }

// TestTFRCThroughput checks the equation of RFC 5348 §3.1 (b = 1, t_RTO =
// 4R) against values computed by hand from the formula.
func TestTFRCThroughput(t *testing.T) {
	for _, tc := range []struct {
		s    float64
		r    time.Duration
		p    float64
		want float64 // bytes/s
	}{
		{1000, 100 * time.Millisecond, 0.01, 112332.234},
		{1460, 50 * time.Millisecond, 0.001, 1120823.404},
		{1200, 200 * time.Millisecond, 0.1, 10620.612},
		{1000, 10 * time.Millisecond, 0.5, 4173.616},
	} {
		if got := TFRCThroughput(tc.s, tc.r, tc.p); !near(got, tc.want, 1e-6) {
			t.Errorf("X(s=%v, R=%v, p=%v) got %.3f, want %.3f", tc.s, tc.r, tc.p, got, tc.want)
		}
	}
	if got := TFRCThroughput(1000, time.Second, 0); !math.IsInf(got, 1) {
		t.Errorf("p = 0: got %v, want +Inf", got)
	}
}

func newCCID3(t *testing.T, spec string) *CCID3 {
	t.Helper()
	c, err := NewDgram(spec, Env{MSS: tfrcS})
	if err != nil {
		t.Fatal(err)
	}
	return c.(*CCID3)
}

// TestCCID3SenderRules walks a CCID3 sender through RFC 5348 §4.2-§4.4
// with a fake clock.
func TestCCID3SenderRules(t *testing.T) {
	c := newCCID3(t, "ccid3")
	t0 := clock.Start
	R := 100 * time.Millisecond
	if got := c.Rate(); got != tfrcS {
		t.Fatalf("initial X got %v, want 1 packet/s = %v bytes/s (§4.2)", got, tfrcS)
	}
	c.OnSent(t0, tfrcS, tfrcS)
	if got, want := c.NoFeedbackDeadline(), t0.Add(2*time.Second); got != want {
		t.Errorf("no-feedback timer got %v, want %v (2 s before any feedback)", got, want)
	}
	step := func(name string, f TFRCFeedback, want float64) {
		t.Helper()
		c.OnFeedback(f)
		if got := c.Rate(); !near(got, want, 1e-9) {
			t.Errorf("%s: X got %.3f, want %.3f", name, got, want)
		}
	}
	wInit := float64(TFRCInitialWindow(tfrcS)) // 4000 bytes
	now := t0.Add(R)
	step("first report: X = W_init/R", TFRCFeedback{Now: now, RTT: R, XRecv: 1000}, wInit/R.Seconds())
	if got, want := c.NoFeedbackDeadline(), now.Add(max(4*R, time.Duration(2*tfrcS/c.Rate()*1e9))); got != want {
		t.Errorf("no-feedback timer got %v, want max(4R, 2s/X) later: %v", got, want)
	}
	// Within R of the last doubling nothing changes.
	now = now.Add(R / 2)
	step("no doubling within R", TFRCFeedback{Now: now, RTT: R, XRecv: 40000}, 40000)
	// One R after: slow start doubles, capped by 2*max(X_recv_set); the
	// initial Infinity and the first report have aged out (older than 2R).
	now = now.Add(2 * R)
	step("doubling capped by recv_limit", TFRCFeedback{Now: now, RTT: R, XRecv: 30000}, 2*40000)
	now = now.Add(3 * R)
	step("recv_limit = 2*X_recv", TFRCFeedback{Now: now, RTT: R, XRecv: 30000}, 2*30000)
	// The RTT filter: R = 0.9 R + 0.1 sample.
	now = now.Add(3 * R)
	c.OnFeedback(TFRCFeedback{Now: now, RTT: 200 * time.Millisecond, XRecv: 1e9})
	if got, want := c.SenderRTT(), time.Duration(0.9*float64(R)+0.1*float64(200*time.Millisecond)); got != want {
		t.Errorf("R got %v, want %v (q = 0.9)", got, want)
	}
	R = c.SenderRTT()
	// Loss: X = max(min(X_Bps, recv_limit), s/t_mbi).
	now = now.Add(3 * R)
	step("equation", TFRCFeedback{Now: now, RTT: R, XRecv: 1e9, P: 0.01}, TFRCThroughput(tfrcS, R, 0.01))
	now = now.Add(3 * R)
	step("equation capped by 2*X_recv", TFRCFeedback{Now: now, RTT: R, XRecv: 20000, P: 0.01}, 40000)
	now = now.Add(3 * R)
	step("floor s/t_mbi", TFRCFeedback{Now: now, RTT: R, XRecv: 1e9, P: 1}, max(TFRCThroughput(tfrcS, R, 1), tfrcS/64.0))
	// X_recv_set keeps two RTTs: the largest recent report limits.
	now = now.Add(3 * R)
	c.OnFeedback(TFRCFeedback{Now: now, RTT: R, XRecv: 50000, P: 0.001})
	now = now.Add(R)
	step("max of the last 2R", TFRCFeedback{Now: now, RTT: R, XRecv: 10000, P: 0.001}, 100000)
}

// TestCCID3DataLimited: after a data-limited interval the X_recv_set is
// maximized, and halved with X_recv*0.85 on a new loss event (§4.3 step 4).
func TestCCID3DataLimited(t *testing.T) {
	c := newCCID3(t, "ccid3")
	now := clock.Start
	R := 100 * time.Millisecond
	c.OnSent(now, tfrcS, tfrcS)
	now = now.Add(R)
	c.OnFeedback(TFRCFeedback{Now: now, RTT: R, XRecv: 1000})
	now = now.Add(R)
	c.OnFeedback(TFRCFeedback{Now: now, RTT: R, XRecv: 60000, P: 0.001}) // loss: set {.., 60000}
	now = now.Add(R)
	c.OnFeedback(TFRCFeedback{Now: now, RTT: R, XRecv: 20000, P: 0.001, DataLimited: true})
	if got, want := c.Rate(), min(TFRCThroughput(tfrcS, R, 0.001), 2*60000.0); !near(got, want, 1e-9) {
		t.Errorf("data-limited, no new loss: X got %.1f, want %.1f (2*max of the maximized set)", got, want)
	}
	now = now.Add(R)
	c.OnFeedback(TFRCFeedback{Now: now, RTT: R, XRecv: 20000, P: 0.01, DataLimited: true})
	// Set {60000} halved to {30000}, X_recv*0.85 = 17000, maximized: {30000}; recv_limit = 30000.
	if got, want := c.Rate(), min(TFRCThroughput(tfrcS, R, 0.01), 30000.0); !near(got, want, 1e-9) {
		t.Errorf("data-limited with a new loss event: X got %.1f, want %.1f", got, want)
	}
}

// TestCCID3NoFeedback: the no-feedback timer halves the rate (§4.4).
func TestCCID3NoFeedback(t *testing.T) {
	R := 100 * time.Millisecond
	t.Run("before feedback", func(t *testing.T) {
		c := newCCID3(t, "ccid3")
		c.OnSent(clock.Start, tfrcS, tfrcS)
		c.OnNoFeedback(clock.Start.Add(2*time.Second), false)
		if got, want := c.Rate(), tfrcS/2.0; got != want {
			t.Errorf("X got %v, want %v (halved)", got, want)
		}
	})
	setup := func(xRecv, p float64) (*CCID3, clock.Time) {
		c := newCCID3(t, "ccid3")
		now := clock.Start
		c.OnSent(now, tfrcS, tfrcS)
		now = now.Add(R)
		c.OnFeedback(TFRCFeedback{Now: now, RTT: R, XRecv: 1000})
		now = now.Add(R)
		c.OnFeedback(TFRCFeedback{Now: now, RTT: R, XRecv: xRecv, P: p})
		return c, now
	}
	t.Run("limited by X_calc", func(t *testing.T) {
		c, now := setup(1e6, 0.01)
		xCal := TFRCThroughput(tfrcS, R, 0.01)
		c.OnNoFeedback(now.Add(time.Second), false)
		if got, want := c.Rate(), xCal/2; !near(got, want, 1e-9) {
			t.Errorf("X got %.1f, want X_calc/2 = %.1f", got, want)
		}
	})
	t.Run("limited by X_recv", func(t *testing.T) {
		c, now := setup(20000, 0.001) // X_calc > 2*X_recv
		c.OnNoFeedback(now.Add(time.Second), false)
		if got, want := c.Rate(), 20000.0; !near(got, want, 1e-9) {
			t.Errorf("X got %.1f, want X_recv = %.1f (set {X_recv/2}, limit 2*that)", got, want)
		}
	})
	t.Run("no loss yet", func(t *testing.T) {
		c, now := setup(1e6, 0)
		x := c.Rate()
		c.OnNoFeedback(now.Add(time.Second), false)
		if got := c.Rate(); got != x/2 {
			t.Errorf("X got %.1f, want %.1f", got, x/2)
		}
	})
	t.Run("minimum rate", func(t *testing.T) {
		c, now := setup(1e6, 0.01)
		for i := range 40 {
			c.OnNoFeedback(now.Add(time.Duration(i+1)*time.Minute), false)
		}
		if got, want := c.Rate(), tfrcS/TFRCMBI.Seconds(); !near(got, want, 1e-9) {
			t.Errorf("X got %v, want s/t_mbi = %v", got, want)
		}
	})
	t.Run("nfbmin", func(t *testing.T) {
		c := newCCID3(t, "ccid3:nfbmin=5s")
		c.OnSent(clock.Start, tfrcS, tfrcS)
		if got, want := c.NoFeedbackDeadline(), clock.Start.Add(5*time.Second); got != want {
			t.Errorf("timer got %v, want %v", got, want)
		}
	})
}

// TestTFRCLossEventRate checks I_mean = max(I_tot0, I_tot1)/W_tot with the
// weights 1,1,1,1,0.8,0.6,0.4,0.2 (RFC 5348 §5.4).
func TestTFRCLossEventRate(t *testing.T) {
	for _, tc := range []struct {
		name   string
		hist   []float64 // I_1.. newest first
		i0     uint64
		wantP  float64
		reason string
	}{
		{"full history, I_tot1 larger", []float64{100, 200, 300, 400, 500, 600, 700, 800}, 50, 6.0 / 2200,
			"I_tot1 = 100+200+300+400+0.8*500+0.6*600+0.4*700+0.2*800 = 2200, W_tot = 6"},
		{"full history, I_0 long", []float64{100, 200, 300, 400, 500, 600, 700, 800}, 5000, 6.0 / 6600,
			"I_tot0 = 5000+100+200+300+0.8*400+0.6*500+0.4*600+0.2*700 = 6600"},
		{"three intervals", []float64{100, 200, 300}, 10, 3.0 / 600, "I_tot1 = 600, W_tot = 3"},
		{"one interval", []float64{40}, 90, 1.0 / 90, "max(I_0, I_1)"},
	} {
		r := NewTFRCReceiver()
		r.evAny, r.evSeq, r.hi = true, 1000, 1000+tc.i0-1
		r.nHist = copy(r.hist[:], tc.hist)
		if got := r.lossEventRate(); !near(got, tc.wantP, 1e-12) {
			t.Errorf("%s: p got %.6g, want %.6g (%s)", tc.name, got, tc.wantP, tc.reason)
		}
	}
}

// rx feeds the TFRC receiver packets; t is in ms.
type rxFeed struct {
	r   *TFRCReceiver
	rtt time.Duration
}

func (f rxFeed) at(ms float64, seq uint64, ce bool) bool {
	return f.r.OnData(clock.Start.Add(time.Duration(ms*float64(time.Millisecond))), seq, tfrcS, ce, f.rtt)
}

// TestTFRCLossEvents: a packet is lost once three later ones arrived; losses
// within one RTT of an event's start belong to it; loss times are
// interpolated (RFC 5348 §5.1-§5.3); reports go out at once on a new event.
func TestTFRCLossEvents(t *testing.T) {
	f := rxFeed{NewTFRCReceiver(), 50 * time.Millisecond}
	if !f.at(0, 0, false) {
		t.Errorf("first packet: want an immediate report (§6.3)")
	}
	for s := uint64(1); s < 100; s++ {
		f.at(float64(s), s, false)
	}
	// 100 and 101 lost (within one RTT: one event), detected at 104.
	for s := uint64(102); s <= 104; s++ {
		got := f.at(float64(s), s, false)
		if want := s == 104; got != want {
			t.Errorf("arrival of %d: immediate report got %v, want %v", s, got, want)
		}
	}
	if got := f.r.LossEvents(); got != 1 {
		t.Errorf("after 100, 101 lost: %d loss events, want 1", got)
	}
	// A reordered packet fills a gap before three later ones arrive: no loss.
	f.at(105, 106, false)
	f.at(106, 105, false)
	f.at(107, 107, false)
	f.at(108, 108, false)
	if got := f.r.LossEvents(); got != 1 {
		t.Errorf("after reordering: %d loss events, want 1", got)
	}
	for s := uint64(109); s < 301; s++ {
		f.at(float64(s), s, false)
	}
	// 301 lost ~200 ms after the first event (> R): a second event.
	for s := uint64(302); s <= 304; s++ {
		f.at(float64(s), s, false)
	}
	if got := f.r.LossEvents(); got != 2 {
		t.Fatalf("%d loss events, want 2", got)
	}
	if got := f.r.Intervals()[0]; got != 301-100 {
		t.Errorf("loss interval got %v, want 201 (first lost packets 100 and 301)", got)
	}
	// A CE mark is a loss at its arrival.
	f.at(500, 305, true)
	if got := f.r.LossEvents(); got != 3 {
		t.Errorf("after a CE mark: %d loss events, want 3", got)
	}
}

// TestTFRCInterpolation: a burst of losses longer than R splits into one
// event per RTT of interpolated loss time (§5.2).
func TestTFRCInterpolation(t *testing.T) {
	f := rxFeed{NewTFRCReceiver(), 5 * time.Millisecond}
	for s := uint64(0); s < 10; s++ {
		f.at(float64(s), s, false)
	}
	// 10..29 lost; 30 arrives at 30 ms: loss times 10..29 ms; events at
	// 10, 16, 22 and 28 (each more than 5 ms after the previous start).
	for s := uint64(30); s <= 32; s++ {
		f.at(float64(s), s, false)
	}
	if got := f.r.LossEvents(); got != 4 {
		t.Fatalf("%d loss events, want 4", got)
	}
	if got := f.r.Intervals()[:3]; got[0] != 6 || got[1] != 6 || got[2] != 6 {
		t.Errorf("intervals got %v, want [6 6 6]", got)
	}
}

// TestTFRCFirstInterval: the first loss interval is 1/p for the p at which
// the equation gives the receive rate (§6.3.1).
func TestTFRCFirstInterval(t *testing.T) {
	R := 40 * time.Millisecond
	f := rxFeed{NewTFRCReceiver(), R}
	f.at(0, 0, false)
	f.r.Feedback(clock.Start)
	// 1000-byte packets every 1 ms for 200 ms: 1 Mbyte/s.
	for s := uint64(1); s <= 200; s++ {
		f.at(float64(s), s, false)
	}
	for s := uint64(202); s <= 204; s++ {
		f.at(float64(s), s, false)
	}
	x := 203 * tfrcS / 0.204 // bytes/s since the report: 203 packets (201 lost) in 204 ms
	i1 := f.r.Intervals()[0]
	if got := TFRCThroughput(tfrcS, R, 1/i1); !near(got, x, 1e-3) {
		t.Errorf("X(p = 1/I_1) got %.0f, want the receive rate %.0f", got, x)
	}
}

// TestTFRCFeedbackTimer: reports once per RTT with X_recv over the interval.
func TestTFRCFeedbackTimer(t *testing.T) {
	R := 20 * time.Millisecond
	f := rxFeed{NewTFRCReceiver(), R}
	f.at(0, 0, false)
	t0 := clock.Start
	if !f.r.FeedbackDue(t0) {
		t.Fatal("first packet: report not due")
	}
	f.r.Feedback(t0)
	for s := uint64(1); s <= 10; s++ {
		f.at(float64(s), s, false)
	}
	if got, want := f.r.Deadline(), t0.Add(R); got != want {
		t.Errorf("deadline got %v, want one RTT after the last report %v", got, want)
	}
	if f.r.FeedbackDue(t0.Add(R - time.Millisecond)) {
		t.Errorf("report due before one RTT")
	}
	x, p := f.r.Feedback(t0.Add(R))
	if want := 10 * tfrcS / R.Seconds(); !near(x, want, 1e-9) || p != 0 {
		t.Errorf("report got X_recv %.0f p %v, want %.0f and 0", x, p, want)
	}
	if got := f.r.Deadline(); got != clock.Never {
		t.Errorf("no data since the report: deadline got %v, want none", got)
	}
}

// TestCCID3SendQuantum: one packet without t_gran, X*t_gran with it.
func TestCCID3SendQuantum(t *testing.T) {
	c := newCCID3(t, "ccid3")
	c.x = 5e6
	if got := c.SendQuantum(); got != tfrcS {
		t.Errorf("tgran 0: quantum got %d, want one packet %d", got, tfrcS)
	}
	c = newCCID3(t, "ccid3:tgran=1ms")
	c.x = 5e6 // bytes/s
	if got, want := c.SendQuantum(), 5000; got != want {
		t.Errorf("tgran 1ms at 5 MB/s: quantum got %d, want %d", got, want)
	}
	if _, err := NewDgram("ccid3:tgran=-1ms", Env{MSS: tfrcS}); err == nil || !strings.Contains(err.Error(), "tgran") {
		t.Errorf("tgran=-1ms: got %v, want an error naming tgran", err)
	}
}
