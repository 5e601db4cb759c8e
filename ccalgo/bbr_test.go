package ccalgo

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"cclab/clock"
)

const bbrMSS = 1000

// bbrDriver feeds a BBR controller ACKs that each end a packet-timed round
// (the delivery-rate estimator's view of one RTT) on a fake clock.
type bbrDriver struct {
	b         *BBR
	now       clock.Time
	delivered uint64
	rtt       time.Duration
}

func newBBRDriver(t *testing.T, spec string) *bbrDriver {
	t.Helper()
	c, err := New(spec, Env{MSS: bbrMSS, Rand: rand.New(rand.NewPCG(1, 1))})
	if err != nil {
		t.Fatal(err)
	}
	return &bbrDriver{b: c.(*BBR), now: clock.Start, rtt: 100 * time.Millisecond}
}

// round advances one RTT (and 1 ms, so a phase of one RTprop is over) and
// delivers one ACK with the given delivery rate (bits/s) and data in
// flight after it (bytes); it starts a round.
func (d *bbrDriver) round(rate float64, inFlight int) {
	d.now = d.now.Add(d.rtt + time.Millisecond)
	acked := int(rate / 8 * d.rtt.Seconds())
	prior := d.delivered
	d.delivered += uint64(acked)
	d.b.OnAck(Ack{Now: d.now, Acked: acked, AckedPackets: acked / bbrMSS, RTT: d.rtt, InFlight: inFlight,
		Rate: RateSample{DeliveryRate: rate, Delivered: uint64(acked), Interval: d.rtt, PriorDelivered: prior, TotalDelivered: d.delivered}})
}

func TestBBRStartupDrainProbeBW(t *testing.T) {
	d := newBBRDriver(t, "bbr:margin=0")
	b := d.b
	if b.StateName() != BBRStartup || b.PacingGain() != BBRHighGain {
		t.Fatalf("initial state %s gain %v, want startup 2/ln2", b.StateName(), b.PacingGain())
	}
	if got, want := b.PacingRate(), BBRHighGain*float64(InitialWindow(bbrMSS))*8/1e-3; !near(got, want, 1e-9) {
		t.Errorf("initial pacing rate got %v, want 2.885*IW per 1 ms = %v (§4.2.1)", got, want)
	}
	// Doubling delivery rates: still Startup.
	for _, r := range []float64{1e6, 2e6, 4e6, 8e6} {
		d.round(r, int(r/8*0.1))
		if b.StateName() != BBRStartup {
			t.Fatalf("rate %v still growing: state %s, want startup", r, b.StateName())
		}
	}
	if got := b.PacingRate(); !near(got, BBRHighGain*8e6, 1e-9) {
		t.Errorf("startup pacing rate got %v, want 2.885*BtlBw = %v", got, BBRHighGain*8e6)
	}
	// Three rounds below 25 % growth: the pipe is full, Drain.
	bdp := int(10e6 / 8 * 0.1)
	for i, r := range []float64{9e6, 9.5e6, 9.9e6} {
		d.round(r, 3*bdp)
		want := BBRStartup
		if i == 2 {
			want = BBRDrain
		}
		if b.StateName() != want {
			t.Errorf("round %d at %v after growth stopped: state %s, want %s", i+1, r, b.StateName(), want)
		}
	}
	if b.PacingGain() != BBRDrainGain {
		t.Errorf("drain gain got %v, want ln2/2", b.PacingGain())
	}
	// Drain lasts while in flight exceeds one BDP (+ quanta).
	d.round(10e6, 2*bdp)
	if b.StateName() != BBRDrain {
		t.Errorf("in flight 2 BDP: state %s, want drain", b.StateName())
	}
	d.round(10e6, bdp)
	if b.StateName() != BBRProbeBW {
		t.Fatalf("in flight 1 BDP: state %s, want probe_bw", b.StateName())
	}
	if g := b.PacingGain(); g == 0.75 {
		t.Errorf("ProbeBW started in the 3/4 phase (the draft excludes it)")
	}
	// cwnd target: 2*BDP + 3 send quanta (2 packets each below 24 Mbit/s).
	for range 20 {
		d.round(10e6, bdp)
	}
	if got, want := b.Cwnd(), 2*bdp+3*2*bbrMSS; got != want {
		t.Errorf("ProbeBW cwnd got %d, want 2*BDP + 3 quanta = %d", got, want)
	}
}

// TestBBRGainCycle: ProbeBW moves through 5/4, 3/4, 1×6, one phase per
// RTprop (the 5/4 phase also needs 5/4 BDP in flight, §4.3.4.4).
func TestBBRGainCycle(t *testing.T) {
	d := newBBRDriver(t, "bbr")
	b := d.b
	for _, r := range []float64{1e6, 2e6, 4e6, 8e6, 10e6, 10e6, 10e6} {
		d.round(r, 1)
	}
	d.round(10e6, 1) // drain ends at once: in flight is tiny
	if b.StateName() != BBRProbeBW {
		t.Fatalf("state %s, want probe_bw", b.StateName())
	}
	bdp := int(10e6 / 8 * 0.1)
	// Walk to the 5/4 phase.
	for i := 0; i < 10 && b.PacingGain() != 1.25; i++ {
		d.round(10e6, bdp)
	}
	if b.PacingGain() != 1.25 {
		t.Fatalf("never reached the 5/4 phase")
	}
	// Prior in flight (in flight + acked) is 1 BDP: a full RTprop is not
	// enough, the phase holds until 5/4 BDP are in flight.
	d.round(10e6, 0)
	if b.PacingGain() != 1.25 {
		t.Errorf("5/4 phase left with 1 BDP in flight, want it held")
	}
	d.round(10e6, bdp) // prior in flight 2 BDP
	if b.PacingGain() != 0.75 {
		t.Errorf("after 5/4 with enough in flight: gain %v, want 3/4", b.PacingGain())
	}
	d.round(10e6, bdp)
	want := []float64{1, 1, 1, 1, 1, 1, 1.25}
	for i, w := range want {
		if b.PacingGain() != w {
			t.Errorf("phase %d: gain %v, want %v", i+2, b.PacingGain(), w)
		}
		d.round(10e6, 2*bdp)
	}
}

// TestBBRProbeRTT: when RTprop has not been refreshed for 10 s, cwnd drops
// to 4 packets for at least 200 ms and one round, then ProbeBW resumes
// with the saved cwnd (§4.3.5).
func TestBBRProbeRTT(t *testing.T) {
	d := newBBRDriver(t, "bbr")
	b := d.b
	for _, r := range []float64{1e6, 2e6, 4e6, 8e6, 10e6, 10e6, 10e6, 10e6} {
		d.round(r, 1)
	}
	bdp := int(10e6 / 8 * 0.1)
	d.rtt = 120 * time.Millisecond // RTT above RTprop from now on
	for b.StateName() != BBRProbeRTT && d.now.Sub(clock.Start) < 20*time.Second {
		d.round(10e6, bdp)
	}
	if b.StateName() != BBRProbeRTT {
		t.Fatalf("no ProbeRTT after 20 s without a lower RTT")
	}
	if got := b.Cwnd(); got != BBRMinPipeCwnd*bbrMSS {
		t.Errorf("ProbeRTT cwnd got %d, want 4 packets", got)
	}
	enter := d.now
	d.round(10e6, 3*bbrMSS) // in flight down to 4 packets: the 200 ms start
	for b.StateName() == BBRProbeRTT && d.now.Sub(enter) < time.Second {
		d.round(10e6, 3*bbrMSS)
	}
	if b.StateName() != BBRProbeBW {
		t.Fatalf("state %s after ProbeRTT, want probe_bw", b.StateName())
	}
	if el := d.now.Sub(enter); el < BBRProbeRTTDuration {
		t.Errorf("ProbeRTT lasted %v, want at least 200 ms", el)
	}
	if b.Cwnd() <= BBRMinPipeCwnd*bbrMSS {
		t.Errorf("cwnd %d not restored after ProbeRTT", b.Cwnd())
	}
	if b.RTprop() != 120*time.Millisecond {
		t.Errorf("RTprop got %v, want the refreshed 120 ms", b.RTprop())
	}
}

// TestBBRLossConservation: a loss holds cwnd at the data in flight for one
// round (packet conservation), BtlBw is untouched, recovery exit restores
// cwnd (§4.2.3.4).
func TestBBRLossConservation(t *testing.T) {
	d := newBBRDriver(t, "bbr")
	b := d.b
	for _, r := range []float64{1e6, 2e6, 4e6, 8e6, 10e6, 10e6, 10e6, 10e6, 10e6, 10e6} {
		d.round(r, int(10e6/8*0.1))
	}
	before, bw := b.Cwnd(), b.BtlBw()
	b.OnCongestion(Congestion{Now: d.now, Kind: Loss, InFlight: 50 * bbrMSS})
	if b.Cwnd() != 50*bbrMSS || b.Ssthresh() != 50*bbrMSS {
		t.Errorf("at loss: cwnd %d ssthresh %d, want the 50 packets in flight", b.Cwnd(), b.Ssthresh())
	}
	d.now = d.now.Add(time.Millisecond)
	b.OnAck(Ack{Now: d.now, Acked: 2 * bbrMSS, InFlight: 49 * bbrMSS, RTT: d.rtt,
		Rate: RateSample{TotalDelivered: d.delivered + 2*bbrMSS}})
	if got := b.Cwnd(); got != 51*bbrMSS {
		t.Errorf("conservation: cwnd got %d, want in flight + acked = 51 packets", got)
	}
	if b.BtlBw() != bw {
		t.Errorf("BtlBw changed at a loss: %v -> %v", bw, b.BtlBw())
	}
	b.OnRecoveryExit(d.now, 0)
	if b.Cwnd() != before || b.Ssthresh() != InfiniteSsthresh {
		t.Errorf("after recovery: cwnd %d ssthresh %d, want %d restored and no ssthresh", b.Cwnd(), b.Ssthresh(), before)
	}
}

func TestBBRSendQuantum(t *testing.T) {
	b := newBBRDriver(t, "bbr").b
	for _, tc := range []struct {
		rate float64
		want int
	}{
		{1e6, bbrMSS}, {10e6, 2 * bbrMSS}, {100e6, 12500}, {1e9, 64 * 1024},
	} {
		b.pacingRate = tc.rate
		if got := b.SendQuantum(); got != tc.want {
			t.Errorf("rate %v: quantum got %d, want %d (§4.2.2)", tc.rate, got, tc.want)
		}
	}
}

// TestMaxFilter: the windowed maximum forgets a maximum older than the
// window and keeps the best of what remains.
func TestMaxFilter(t *testing.T) {
	var f maxFilter
	steps := []struct {
		t    uint64
		v    float64
		want float64
	}{
		{0, 10, 10}, {1, 5, 10}, {2, 8, 10}, {5, 3, 10}, {9, 2, 10}, {10, 1, 10},
		// 10 (t=0) leaves the 10-round window; the sub-window samples kept
		// were 3 (t=5, taken after a quarter window) and 2 (t=9, after
		// half): 3 moves up. (8 at t=2 fell before the quarter mark and was
		// not kept: the filter is three samples, as win_minmax.c.)
		{11, 1, 3},
		{13, 4, 4},   // above the kept maximum: resets
		{14, 20, 20}, // a new maximum resets
	}
	for _, s := range steps {
		if got := f.update(10, s.t, s.v); got != s.want {
			t.Errorf("t=%d v=%v: max got %v, want %v", s.t, s.v, got, s.want)
		}
	}
	if math.IsNaN(f.get()) {
		t.Fatal("NaN")
	}
}

// TestBBRRTORestore: after a timeout cwnd is one segment; once the data in
// flight at the timeout is delivered, the draft (§4.2.3.4) and Linux restore
// the cwnd saved at the timeout, ns-3 3.37's TcpBbr (rtorestore=false) goes
// on from the regrown window (cwnd + acked, at most the target).
func TestBBRRTORestore(t *testing.T) {
	for _, tc := range []struct {
		spec    string
		restore bool
	}{{"bbr", true}, {"bbr:rtorestore=false", false}} {
		d := newBBRDriver(t, tc.spec)
		b := d.b
		for _, r := range []float64{1e6, 2e6, 4e6, 8e6, 10e6, 10e6, 10e6, 10e6, 10e6, 10e6} {
			d.round(r, int(10e6/8*0.1))
		}
		before := b.Cwnd()
		b.OnRTO(d.now, 20*bbrMSS)
		if got := b.Cwnd(); got != bbrMSS {
			t.Fatalf("%s: cwnd after the timeout %d, want one segment %d", tc.spec, got, bbrMSS)
		}
		d.now = d.now.Add(time.Millisecond)
		d.delivered += 21 * bbrMSS
		b.OnAck(Ack{Now: d.now, Acked: 21 * bbrMSS, InFlight: bbrMSS, RTT: d.rtt,
			Rate: RateSample{TotalDelivered: d.delivered}})
		want := 22 * bbrMSS // one segment + 21 acked
		if tc.restore {
			want = before
		}
		if got := b.Cwnd(); got != want {
			t.Errorf("%s: cwnd once the flight at the timeout is delivered: got %d, want %d (saved %d)", tc.spec, got, want, before)
		}
	}
}

// TestBBRRecoveryLosses: in fast recovery each ACK's newly marked losses
// come off cwnd before packet conservation raises it to the data in flight
// plus what the ACK delivered (draft §4.2.3.4 BBRModulateCwndForRecovery);
// after the first round only the losses act, and cwnd then grows by the
// data delivered up to the model's target.
func TestBBRRecoveryLosses(t *testing.T) {
	d := newBBRDriver(t, "bbr")
	b := d.b
	for _, r := range []float64{1e6, 2e6, 4e6, 8e6, 10e6, 10e6, 10e6, 10e6, 10e6, 10e6} {
		d.round(r, int(10e6/8*0.1))
	}
	b.OnCongestion(Congestion{Now: d.now, Kind: Loss, InFlight: 50 * bbrMSS})
	ack := func(acked, lost, inFlight int) int {
		d.now = d.now.Add(time.Millisecond)
		d.delivered += uint64(acked)
		b.OnAck(Ack{Now: d.now, Acked: acked, InFlight: inFlight, Lost: lost, RTT: d.rtt, InRecovery: true,
			Rate: RateSample{TotalDelivered: d.delivered}})
		return b.Cwnd()
	}
	// conservation: max(50 - 3, 40 + 2) packets
	if got, want := ack(2*bbrMSS, 3*bbrMSS, 40*bbrMSS), 47*bbrMSS; got != want {
		t.Errorf("first ACK with 3 losses: cwnd %d, want %d", got, want)
	}
	if got, want := ack(2*bbrMSS, 0, 46*bbrMSS), 48*bbrMSS; got != want {
		t.Errorf("conservation: cwnd %d, want in flight + acked %d", got, want)
	}
	// the round of conservation ends once the 50 packets are delivered
	ack(46*bbrMSS, 0, 20*bbrMSS)
	before := b.Cwnd()
	if got, want := ack(bbrMSS, 5*bbrMSS, 20*bbrMSS), before-5*bbrMSS+bbrMSS; got != want {
		t.Errorf("after conservation, 5 losses and 1 delivered: cwnd %d, want %d", got, want)
	}
	b.OnRecoveryExit(d.now, 0)
	// outside recovery losses are not subtracted
	c := b.Cwnd()
	if got := ack(0, 4*bbrMSS, 20*bbrMSS); got != c {
		t.Errorf("losses outside recovery changed cwnd %d -> %d", c, got)
	}
}

// TestBBRNS3Exit: with ns3exit the end of fast recovery sets cwnd to the
// one-BDP target taken when Startup ended (ns-3.37's ssthresh), not the
// cwnd saved at its start; before Startup ends it leaves cwnd unbounded.
func TestBBRNS3Exit(t *testing.T) {
	for _, tc := range []struct {
		spec    string
		rounds  []float64
		wantBDP bool // cwnd = BDP + 3 quanta at the exit
		wantInf bool // cwnd unbounded
	}{
		{"bbr", []float64{1e6, 2e6, 4e6, 8e6, 10e6, 10e6, 10e6, 10e6, 10e6, 10e6}, false, false},
		{"bbr:ns3exit=true", []float64{1e6, 2e6, 4e6, 8e6, 10e6, 10e6, 10e6, 10e6, 10e6, 10e6}, true, false},
		{"bbr:ns3exit=true", []float64{1e6, 2e6}, false, true},
	} {
		d := newBBRDriver(t, tc.spec)
		b := d.b
		for _, r := range tc.rounds {
			d.round(r, int(10e6/8*0.1))
		}
		saved := b.Cwnd()
		b.OnCongestion(Congestion{Now: d.now, Kind: Loss, InFlight: 5 * bbrMSS})
		b.OnRecoveryExit(d.now, 0)
		got := b.Cwnd()
		switch {
		case tc.wantInf:
			if got != InfiniteSsthresh {
				t.Errorf("%s before Startup ended: cwnd %d, want unbounded %d", tc.spec, got, InfiniteSsthresh)
			}
		case tc.wantBDP:
			// BtlBw 10 Mbit/s (the filter's maximum), RTprop 100 ms; the
			// send quantum is 1 ms at Startup's pacing rate (2/ln2 × BtlBw
			// less the 1 % margin)
			want := int(10e6/8*0.1) + 3*int(BBRHighGain*10e6*0.99/8*time.Millisecond.Seconds())
			if got != want {
				t.Errorf("%s: cwnd %d, want BDP + 3 quanta %d (saved %d)", tc.spec, got, want, saved)
			}
		default:
			if got != saved {
				t.Errorf("%s: cwnd %d, want the saved %d", tc.spec, got, saved)
			}
		}
	}
}
