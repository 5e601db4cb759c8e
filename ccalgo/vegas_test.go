package ccalgo

import (
	"math"
	"testing"
	"time"

	"cclab/clock"
)

// vegasDriver feeds a Vegas controller round by round: a window is always
// full (SndNxt = CumAck + cwnd), every packet is acknowledged by its own ACK.
type vegasDriver struct {
	v      *Vegas
	clk    fakeClock
	cum    uint64
	sndNxt uint64
}

func newVegasDriver(t *testing.T, spec string) *vegasDriver {
	t.Helper()
	d := &vegasDriver{v: newTest[*Vegas](t, spec)}
	d.clk.now = clock.Start
	d.sndNxt = uint64(d.v.Cwnd())
	// Priming ACK (no data, no sample) starts the controller's first round
	// at the current SndNxt.
	d.v.OnAck(Ack{Now: d.clk.now, CumAck: 0, SndNxt: d.sndNxt})
	return d
}

// round acknowledges everything outstanding at the start of the round,
// each ACK carrying rtts[i % len(rtts)], and returns the number of ACKs.
func (d *vegasDriver) round(rtts ...time.Duration) int {
	end := d.sndNxt
	n := 0
	for d.cum < end {
		d.cum += testMSS
		d.sndNxt = max(d.sndNxt, d.cum+uint64(d.v.Cwnd()))
		d.v.OnAck(Ack{Now: d.clk.advance(time.Millisecond), Acked: testMSS, AckedPackets: 1,
			RTT: rtts[n%len(rtts)], CumAck: d.cum, SndNxt: d.sndNxt})
		n++
	}
	return n
}

// rttForDiff returns the RTT giving diff = cwnd*(1 - base/rtt) packets.
func rttForDiff(base time.Duration, cwndPkts, diff float64) time.Duration {
	return time.Duration(float64(base) / (1 - diff/cwndPkts))
}

func TestVegasBaseRTT(t *testing.T) {
	d := newVegasDriver(t, "vegas")
	for i, c := range []struct {
		rtt, want time.Duration
	}{{ms(100), ms(100)}, {ms(80), ms(80)}, {ms(90), ms(80)}, {ms(120), ms(80)}, {ms(79), ms(79)}} {
		d.v.OnAck(Ack{RTT: c.rtt, CumAck: d.cum, SndNxt: d.sndNxt})
		if got := d.v.BaseRTT(); got != c.want {
			t.Errorf("sample %d (%v): baseRTT got %v, want %v", i, c.rtt, got, c.want)
		}
	}
}

// TestVegasBand checks the CA band: +1 packet below alpha, -1 above beta,
// hold inside, once per round, with diff = (cwnd/base - cwnd/rtt)*base.
func TestVegasBand(t *testing.T) {
	base := ms(100)
	for _, tc := range []struct {
		diff  float64 // packets
		delta int     // expected cwnd change, packets
	}{
		{0, +1}, {1, +1}, {1.9, +1}, {2.1, 0}, {3, 0}, {3.9, 0}, {4.1, -1}, {6, -1}, {15, -1},
	} {
		d := newVegasDriver(t, "vegas")
		d.v.cwnd, d.v.ssthresh = 20*testMSS, 20*testMSS // congestion avoidance
		d.sndNxt = d.cum + uint64(d.v.Cwnd())
		d.v.round.end = d.sndNxt
		d.round(base) // establishes baseRTT; diff 0: +1
		if got, want := d.v.Cwnd(), 21*testMSS; got != want {
			t.Fatalf("diff 0 round: cwnd got %d, want %d", got, want)
		}
		cw := float64(d.v.Cwnd() / testMSS)
		d.round(rttForDiff(base, cw, tc.diff))
		got, ok := d.v.Diff()
		if !ok || math.Abs(got-tc.diff) > 1e-3 {
			t.Errorf("diff: got %v (ok %v), want %v", got, ok, tc.diff)
		}
		if gotC, want := d.v.Cwnd(), (21+tc.delta)*testMSS; gotC != want {
			t.Errorf("diff %v: cwnd got %d, want %d (change %+d packets)", tc.diff, gotC, want, tc.delta)
		}
	}
}

// TestVegasBandSteadyState: a constant diff inside the band holds cwnd for
// many rounds; ACKs inside a round never change cwnd in CA.
func TestVegasBandSteadyState(t *testing.T) {
	d := newVegasDriver(t, "vegas")
	d.v.cwnd, d.v.ssthresh = 30*testMSS, 30*testMSS
	d.sndNxt = d.cum + uint64(d.v.Cwnd())
	d.v.round.end = d.sndNxt
	d.round(ms(50))
	want := d.v.Cwnd()
	for range 10 {
		d.round(rttForDiff(ms(50), float64(want/testMSS), 3))
		if got := d.v.Cwnd(); got != want {
			t.Fatalf("diff 3 inside [2,4]: cwnd got %d, want %d", got, want)
		}
	}
}

// TestVegasSlowStart checks growth every other round and the gamma exit
// (checked after a fixed round) with the 1/8 reduction.
func TestVegasSlowStart(t *testing.T) {
	base := ms(100)
	d := newVegasDriver(t, "vegas:iw=4")
	want := []int{8, 8, 16, 16, 32} // packets after each round: grow, hold, grow, hold, grow
	for i, w := range want {
		d.round(base)
		if got := d.v.Cwnd() / testMSS; got != w {
			t.Errorf("round %d: cwnd got %d packets, want %d", i+1, got, w)
		}
		if !d.v.inSlowStart() {
			t.Fatalf("round %d: left slow start with diff 0", i+1)
		}
	}
	// Growth round ends with diff > gamma: no exit (only fixed rounds compare).
	// (round 5 above was a growth round; now round 6 is a fixed round)
	d = newVegasDriver(t, "vegas:iw=4")
	d.round(base)                     // grow to 8
	d.round(rttForDiff(base, 8, 0.5)) // fixed round, diff 0.5 <= gamma: continue
	d.round(rttForDiff(base, 16, 5))  // growth round with a large diff: no exit
	if got := d.v.Cwnd() / testMSS; got != 16 || !d.v.inSlowStart() {
		t.Fatalf("after growth round with diff 5: cwnd %d packets, slow start %v; want 16, true", got, d.v.inSlowStart())
	}
	d.round(rttForDiff(base, 16, 1.5)) // fixed round, diff 1.5 > gamma 1: exit
	if got, want := d.v.Cwnd(), 16*testMSS-16*testMSS/8; got != want {
		t.Errorf("gamma exit: cwnd got %d, want %d (cwnd - cwnd/8)", got, want)
	}
	if d.v.inSlowStart() {
		t.Errorf("gamma exit: still in slow start (ssthresh %d)", d.v.Ssthresh())
	}
	if got, want := d.v.Ssthresh(), d.v.Cwnd(); got != want {
		t.Errorf("gamma exit: ssthresh got %d, want cwnd %d", got, want)
	}
	// gamma=3: the same diff does not end slow start.
	d = newVegasDriver(t, "vegas:iw=4,gamma=3")
	d.round(base)
	d.round(rttForDiff(base, 8, 1.5))
	if !d.v.inSlowStart() {
		t.Errorf("gamma=3, diff 1.5: left slow start")
	}
}

func TestVegasRoundRTTEstimator(t *testing.T) {
	for _, tc := range []struct {
		spec string
		want time.Duration
	}{{"vegas", ms(150)}, {"vegas:rtt=min", ms(100)}, {"vegas:rtt=mean", ms(150)}} {
		d := newVegasDriver(t, tc.spec)
		d.v.cwnd, d.v.ssthresh = 20*testMSS, 20*testMSS
		d.sndNxt = d.cum + uint64(d.v.Cwnd())
		d.v.round.end = d.sndNxt
		d.round(ms(100), ms(200)) // alternating samples: min 100, mean 150
		if d.v.lastRTT != tc.want {
			t.Errorf("%s: round RTT got %v, want %v", tc.spec, d.v.lastRTT, tc.want)
		}
	}
}

func TestVegasLossAndRTO(t *testing.T) {
	for _, tc := range []struct {
		spec         string
		cwnd, flight int // packets
		wantSsthresh int // bytes
	}{
		{"vegas", 20, 20, 10 * testMSS},
		{"vegas", 20, 12, 6 * testMSS},
		{"vegas:finegrained", 20, 12, 15 * testMSS},
		{"vegas:finegrained", 2, 2, 2 * testMSS},
	} {
		d := newVegasDriver(t, tc.spec)
		d.v.cwnd = tc.cwnd * testMSS
		d.v.OnCongestion(Congestion{Kind: Loss, InFlight: tc.flight * testMSS})
		if got := d.v.Ssthresh(); got != tc.wantSsthresh {
			t.Errorf("%s loss: ssthresh got %d, want %d", tc.spec, got, tc.wantSsthresh)
		}
		// No adjustment in recovery, however long.
		before := d.v.Cwnd()
		d.round(ms(500))
		d.round(ms(10))
		if got := d.v.Cwnd(); got != before {
			t.Errorf("%s: cwnd changed during recovery: got %d, want %d", tc.spec, got, before)
		}
		d.v.OnRecoveryExit(0, 0)
		if got := d.v.Cwnd(); got != tc.wantSsthresh {
			t.Errorf("%s recovery exit: cwnd got %d, want %d", tc.spec, got, tc.wantSsthresh)
		}
	}
	d := newVegasDriver(t, "vegas")
	d.v.cwnd = 20 * testMSS
	d.v.OnRTO(0, 20*testMSS)
	if d.v.Cwnd() != testMSS || d.v.Ssthresh() != 10*testMSS {
		t.Errorf("RTO: cwnd/ssthresh got %d/%d, want %d/%d", d.v.Cwnd(), d.v.Ssthresh(), testMSS, 10*testMSS)
	}
	if d.v.FineGrained() {
		t.Errorf("FineGrained default: got true, want false")
	}
}

func TestVegasConfigErrors(t *testing.T) {
	checkSpecErrors(t, []specError{
		{"vegas:alpha=5,beta=4", []string{"beta=4"}},
		{"vegas:gamma=-1", []string{"gamma=-1"}},
		{"vegas:alpha=x", []string{"alpha", "not a number"}},
		{"vegas:rtt=median", []string{"rtt", "min, mean"}},
		{"vegas:delta=1", []string{`unknown parameter "delta"`, "abc, alpha, beta, finegrained, gamma, iw, ns3, ns3open, ns3rtt, rtt, ssthresh"}},
		{"vegas:ns3rtt=true", []string{"ns3rtt needs ns3=true"}},
		{"vegas:ns3open=true", []string{"ns3open needs ns3=true"}},
	})
	cfg := newTest[*Vegas](t, "vegas").Config()
	if cfg.Alpha != 2 || cfg.Beta != 4 || cfg.Gamma != 1 || cfg.FineGrained || cfg.RTT != RoundMean {
		t.Errorf("defaults: got %+v, want alpha=2 beta=4 gamma=1 finegrained=false rtt=mean", cfg)
	}
}

// TestVegasNS3Round checks vegas:ns3's comparison on the ACK that ends a
// round against ns-3.37's TcpVegas::IncreaseWindow, in whole segments:
// diff = cwnd - trunc(cwnd*baseRTT/minRTT).
func TestVegasNS3Round(t *testing.T) {
	const base = 15240 * time.Microsecond
	for _, c := range []struct {
		name               string
		cwnd, ssthresh     int // segments
		srtt               time.Duration
		samples            int
		wantCwnd, wantSsth int // bytes
	}{
		// the hold of ns-3's trace at no loss: 19 segments, SRTT 16.69 ms
		// against 15.24: target 17, diff 2 = alpha
		{"hold at alpha", 19, 18, 16690 * time.Microsecond, 10, 19 * testMSS, 18 * testMSS},
		{"below alpha: +1", 19, 18, 15300 * time.Microsecond, 10, 20 * testMSS, 18 * testMSS},
		// target trunc(19*15.24/20) = 14, diff 5 > beta: -1, ssthresh min(18, 17)
		// then at least 3/4 cwnd
		{"above beta: -1", 19, 18, 20 * time.Millisecond, 10, 18 * testMSS, 17 * testMSS},
		// slow start, diff 2 > gamma: cwnd = target+1 = 18, ssthresh 17
		{"slow start exit", 19, 1000, 16690 * time.Microsecond, 10, 18 * testMSS, 17 * testMSS},
		{"slow start, diff <= gamma: +1", 19, 1000, 15300 * time.Microsecond, 10, 20 * testMSS, 1000 * testMSS},
		// two samples: TcpNewReno's one step, MSS*MSS/cwnd bytes
		{"too few samples", 5, 5, 16690 * time.Microsecond, 2, 5*testMSS + testMSS/5, 5 * testMSS},
	} {
		v := newTest[*Vegas](t, "vegas:ns3=true")
		v.cwnd, v.ssthresh = c.cwnd*testMSS, c.ssthresh*testMSS
		v.baseRTT, v.rMin, v.rCnt = base, c.srtt, c.samples
		v.endRoundNS3(2 * testMSS)
		if v.cwnd != c.wantCwnd || v.ssthresh != c.wantSsth {
			t.Errorf("%s: cwnd %d, ssthresh %d; want %d, %d", c.name, v.cwnd, v.ssthresh, c.wantCwnd, c.wantSsth)
		}
	}
}

// TestVegasNS3Samples checks that vegas:ns3 takes the smoothed RTT as every
// ACK's sample (ns-3 passes m_lastRtt to PktsAcked) and grows one segment
// per ACK in slow start within a round.
func TestVegasNS3Samples(t *testing.T) {
	d := newVegasDriver(t, "vegas:ns3=true")
	cwnd := d.v.Cwnd()
	d.cum += testMSS
	d.v.OnAck(Ack{Now: d.clk.advance(time.Millisecond), Acked: testMSS, CumAcked: testMSS, AckedPackets: 1,
		RTT: ms(10), SRTT: ms(15), CumAck: d.cum, SndNxt: d.sndNxt})
	if got := d.v.BaseRTT(); got != ms(15) {
		t.Errorf("baseRTT %v, want the smoothed 15ms", got)
	}
	if got, want := d.v.Cwnd(), cwnd+testMSS; got != want {
		t.Errorf("slow start: cwnd %d, want %d", got, want)
	}
}

// TestVegasNS3Loss checks ns-3's TcpVegas::GetSsThresh on a loss and a
// timeout: max(min(ssthresh, cwnd - 1 segment), 2 segments).
func TestVegasNS3Loss(t *testing.T) {
	for _, c := range []struct {
		cwnd, ssthresh, want int // segments
		rto                  bool
	}{
		{20, 1000, 19, false}, {20, 15, 15, false}, {2, 1000, 2, false}, {20, 1000, 19, true},
	} {
		v := newTest[*Vegas](t, "vegas:ns3=true")
		v.cwnd, v.ssthresh = c.cwnd*testMSS, c.ssthresh*testMSS
		if c.rto {
			v.OnRTO(clock.Start, c.cwnd*testMSS)
		} else {
			v.OnCongestion(Congestion{Kind: Loss, InFlight: c.cwnd * testMSS})
		}
		if got := v.Ssthresh(); got != c.want*testMSS {
			t.Errorf("cwnd %d, ssthresh %d segments, rto %v: ssthresh %d, want %d", c.cwnd, c.ssthresh, c.rto, got/testMSS, c.want)
		}
	}
}

// TestVegasNS3CALoss checks vegas:ns3 after a timeout (Ack.RTOPoint set, ns-3's
// CA_LOSS): TcpNewReno's growth on every cumulative ACK, no Vegas round;
// on the ACK that reaches the point only the segments beyond it count.
func TestVegasNS3CALoss(t *testing.T) {
	for _, c := range []struct {
		name             string
		cwnd, ssthresh   int    // segments
		cumAck, rtoPoint uint64 // segments
		cumAcked         int    // segments
		wantCwnd         int    // bytes
	}{
		{"slow start, below the point", 3, 10, 5, 20, 2, 4 * testMSS},
		{"congestion avoidance, below the point", 10, 10, 5, 20, 2, 10*testMSS + testMSS/10},
		{"the ACK that reaches the point, none beyond", 3, 10, 20, 20, 4, 3 * testMSS},
		{"the ACK that passes the point by two", 3, 10, 22, 20, 6, 4 * testMSS},
	} {
		v := newTest[*Vegas](t, "vegas:ns3=true")
		v.cwnd, v.ssthresh = c.cwnd*testMSS, c.ssthresh*testMSS
		v.rCnt = 5
		v.OnAck(Ack{Acked: c.cumAcked * testMSS, CumAcked: c.cumAcked * testMSS, SRTT: ms(15),
			CumAck: c.cumAck * testMSS, RTOPoint: c.rtoPoint * testMSS, SndNxt: (c.cumAck + 10) * testMSS})
		if v.cwnd != c.wantCwnd {
			t.Errorf("%s: cwnd %d, want %d", c.name, v.cwnd, c.wantCwnd)
		}
		if v.rCnt != 0 || v.round.end != (c.cumAck+10)*testMSS {
			t.Errorf("%s: round samples %d, end %d; want 0 and the ACK's SndNxt %d", c.name, v.rCnt, v.round.end, (c.cumAck+10)*testMSS)
		}
	}
}

// TestVegasNS3RTT checks vegas:ns3rtt's estimate against ns-3.37's
// TcpSocketBase with timestamps: the handshake's sample in whole
// milliseconds first, no sample from the first data ACK (ns-3's receiver
// acknowledges the first segment at once, tcp-socket-base.cc:2404-2406),
// then per ACK floor(now) - floor(now - RTT) in milliseconds with gain 1/8
// (RttMeanDeviation::IntegerUpdate), a zero sample as 1 µs (:3640-3645),
// none without a cumulative advance, after a timeout or in fast recovery
// (EstimateRtt's history, :3633, :3822).
func TestVegasNS3RTT(t *testing.T) {
	at := func(us int) clock.Time { return clock.Start.Add(time.Duration(us) * time.Microsecond) }
	us := func(n int) time.Duration { return time.Duration(n) * time.Microsecond }
	v := newTest[*Vegas](t, "vegas:ns3=true,ns3rtt=true")
	const afterZero = 13959109 * time.Nanosecond // (8*15953125 + 1000 - 15953125) >> 3 ns
	for _, c := range []struct {
		name        string
		now         clock.Time
		rtt, minRTT time.Duration
		want        time.Duration
	}{
		// the handshake's 15.786 ms is 15 ms; the first data ACK (16.525
		// ms, its segment held for its pair) adds no sample
		{"first data ACK", at(32311), us(16525), us(15786), ms(15)},
		// sent at 15.786 ms, back at 33.809: 33 - 15 = 18 ms: 15 + 3/8
		{"second ACK", at(33809), us(18023), us(15786), us(15375)},
		// 35 - 15 = 20 ms: 15.375 + 4.625/8
		{"third ACK", at(35307), us(19521), us(15786), 15953125 * time.Nanosecond},
		// sent at 40.2 ms, back at 40.5: 0 ms, taken as 1 µs
		{"zero sample", at(40500), us(300), us(300), afterZero},
		// no cumulative advance (a SACK-only sample): EstimateRtt needs the
		// ACK to cover the oldest transmission
		{"no cumulative advance", at(50000), us(30000), us(300), afterZero},
		// after a timeout (ReTxTimeout empties the RTT history)
		{"CA_LOSS", at(60000), us(30000), us(300), afterZero},
		// fast recovery: the oldest transmission is a retransmission
		{"fast recovery", at(70000), us(30000), us(300), afterZero},
		{"after fast recovery", at(80500), us(16000), us(300), afterZero + (ms(16)-afterZero)/8},
	} {
		a := Ack{Now: c.now, RTT: c.rtt, MinRTT: c.minRTT, CumAcked: testMSS}
		switch c.name {
		case "no cumulative advance":
			a.CumAcked = 0
		case "CA_LOSS":
			a.RTOPoint = 1 << 20
		case "fast recovery":
			a.InRecovery = true
		}
		if got := v.ns3Estimate(a); got != c.want {
			t.Errorf("%s: estimate %v, want %v", c.name, got, c.want)
		}
	}
	if got := newTest[*Vegas](t, "vegas:ns3=true,ns3rtt=true").ns3Estimate(Ack{Now: at(1000), RTT: us(500), MinRTT: us(500)}); got != ns3ZeroRTT {
		t.Errorf("handshake below 1 ms: estimate %v, want %v (ns-3 takes a zero measurement as 1 µs)", got, ns3ZeroRTT)
	}
	if got := newTest[*Vegas](t, "vegas:ns3=true,ns3rtt=true").ns3Estimate(Ack{Now: at(1000)}); got != 0 {
		t.Errorf("no RTT measured yet: estimate %v, want 0", got)
	}
	d := newVegasDriver(t, "vegas:ns3=true,ns3rtt=true")
	d.cum += 2 * testMSS
	d.v.OnAck(Ack{Now: at(32311), Acked: 2 * testMSS, CumAcked: 2 * testMSS, AckedPackets: 2,
		RTT: us(16525), SRTT: us(15804), MinRTT: us(15786), CumAck: d.cum, SndNxt: d.sndNxt})
	if got, want := d.v.BaseRTT(), ms(15); got != want {
		t.Errorf("baseRTT %v, want ns-3's %v (its first data ACK's sample, a lone segment's, is the handshake's 15 ms)", got, want)
	}
}

// TestVegasNS3Open checks vegas:ns3open against ns-3.37's CA_OPEN /
// CA_DISORDER switch: an ACK that SACKs new data (a duplicate ACK with SACK,
// tcp-socket-base.cc:1965) puts TcpVegas off (CongestionStateSet,
// tcp-vegas.cc:150-153) and gets no IncreaseWindow (tcp-socket-base.cc:
// 2211-2213); the return to CA_OPEN, at the next cumulative ACK without
// new SACK information (:2138) or at the end of recovery (:2170), starts a
// new round at SND.NXT with no samples (EnableVegas, tcp-vegas.cc:124-132).
func TestVegasNS3Open(t *testing.T) {
	const seg = testMSS
	type step struct {
		recoveryExit       bool // OnRecoveryExit instead of an ACK
		cum, sacked, sndNx int  // segments; cum is the ACK's cumulative advance
		inRecovery         bool
	}
	for _, c := range []struct {
		name           string
		spec           string
		cwnd, ssthresh int // segments
		steps          []step
		wantCwnd       int    // segments
		wantEnd        uint64 // the round's end, segments
		wantSamples    int
	}{
		{"disorder: no slow-start growth", "vegas:ns3=true,ns3open=true", 10, 100,
			[]step{{cum: 1, sacked: 1, sndNx: 30}}, 10, 20, 1},
		{"without ns3open: slow-start growth", "vegas:ns3=true", 10, 100,
			[]step{{cum: 1, sacked: 1, sndNx: 30}}, 11, 20, 1},
		// the ACK at the round's end (20) SACKs new data: no round end
		{"disorder: no round end", "vegas:ns3=true,ns3open=true", 10, 5,
			[]step{{cum: 10, sacked: 1, sndNx: 30}}, 10, 20, 1},
		// back to CA_OPEN: the round restarts at SND.NXT 32, its samples
		// dropped, then slow start grows by one segment
		{"disorder ends: new round", "vegas:ns3=true,ns3open=true", 10, 100,
			[]step{{cum: 1, sacked: 1, sndNx: 30}, {cum: 1, sndNx: 32}}, 11, 32, 0},
		// the end of recovery: cwnd = ssthresh 7, the round from the exit
		// ACK's SND.NXT 40
		{"recovery exit: new round", "vegas:ns3=true,ns3open=true", 10, 7,
			[]step{{cum: 2, sndNx: 40, inRecovery: true}, {recoveryExit: true}}, 7, 40, 0},
		{"recovery exit without ns3open: the round goes on", "vegas:ns3=true", 10, 7,
			[]step{{cum: 2, sndNx: 40, inRecovery: true}, {recoveryExit: true}}, 7, 20, 0},
	} {
		v := newTest[*Vegas](t, c.spec)
		var clk fakeClock
		clk.now = clock.Start
		v.cwnd, v.ssthresh = c.cwnd*seg, c.ssthresh*seg
		v.round.started, v.round.end = true, 20*seg
		cum := 10
		for _, s := range c.steps {
			if s.recoveryExit {
				v.inRecovery = true
				v.OnRecoveryExit(clk.advance(time.Millisecond), 0)
				continue
			}
			cum += s.cum
			v.OnAck(Ack{Now: clk.advance(time.Millisecond), Acked: (s.cum + s.sacked) * seg, CumAcked: s.cum * seg,
				Sacked: s.sacked * seg, SRTT: ms(16), RTT: ms(16), MinRTT: ms(15), CumAck: uint64(cum * seg),
				SndNxt: uint64(s.sndNx * seg), InRecovery: s.inRecovery})
		}
		if v.cwnd != c.wantCwnd*seg || v.round.end != c.wantEnd*seg || v.rCnt != c.wantSamples {
			t.Errorf("%s: cwnd %d, round end %d, samples %d; want %d, %d, %d", c.name,
				v.cwnd/seg, v.round.end/seg, v.rCnt, c.wantCwnd, c.wantEnd, c.wantSamples)
		}
	}
}
