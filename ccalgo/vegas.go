package ccalgo

import (
	"fmt"
	"math"
	"time"

	"cclab/clock"
	"cclab/internal/spec"
)

// Vegas constants. Brakmo & Peterson, "TCP Vegas: End to End Congestion
// Avoidance on a Global Internet", IEEE JSAC 13(8), 1995; the defaults are
// those of docs/controllers.md and of Linux net/ipv4/tcp_vegas.c (alpha=2, beta=4,
// gamma=1).
const (
	VegasDefaultAlpha = 2.0 // packets queued below which CA grows, packets
	VegasDefaultBeta  = 4.0 // packets queued above which CA shrinks, packets
	VegasDefaultGamma = 1.0 // packets queued above which slow start ends, packets
	// VegasSlowStartExitDivisor: on leaving slow start cwnd -= cwnd/8
	// (ns-2 tcp-vegas.cc, derived from the Arizona/USC implementation:
	// "slow-down a bit to ensure the net is not so congested").
	VegasSlowStartExitDivisor = 8
	// VegasFineGrainedKeep is the fraction of cwnd kept on a loss when the
	// fine-grained retransmission mechanism is on: the window is decreased by
	// one quarter, not halved (Brakmo & Peterson §3.1; ns-2 tcp-vegas.cc
	// "win -= (win>>2)").
	VegasFineGrainedKeep = 0.75
	// VegasMinRoundSamples: with fewer RTT samples in a round than this, the
	// round is too short to judge and Vegas behaves as Reno for it (Linux
	// tcp_vegas.c: "cntRTT <= 2").
	VegasMinRoundSamples = 3
)

// VegasRTT selects how a round's RTT is taken from its samples.
type VegasRTT uint8

// Round RTT estimators.
const (
	// RoundMin: the minimum sample of the round (Linux tcp_vegas.c, which
	// uses the minimum to filter out delayed-ACK and scheduling inflation).
	RoundMin VegasRTT = iota
	// RoundMean: the mean of the round's samples (ns-2 tcp-vegas.cc,
	// derived from the Arizona implementation).
	RoundMean
)

// String returns "min" or "mean".
func (r VegasRTT) String() string {
	if r == RoundMin {
		return "min"
	}
	return "mean"
}

// UnmarshalText parses "min" or "mean".
func (r *VegasRTT) UnmarshalText(b []byte) error {
	i, err := spec.ParseEnum(b, "round RTT estimator", "min", "mean|avg")
	if err == nil {
		*r = VegasRTT(i)
	}
	return err
}

// VegasConfig configures Vegas.
type VegasConfig struct {
	BaseConfig
	Alpha float64  `param:"alpha" help:"CA lower bound on extra packets queued: +1 packet/RTT below it, packets (default 2)"`
	Beta  float64  `param:"beta" help:"CA upper bound on extra packets queued: -1 packet/RTT above it, packets (default 4)"`
	Gamma float64  `param:"gamma" help:"slow start ends when extra packets queued exceed it, packets (default 1)"`
	RTT   VegasRTT `param:"rtt" help:"round RTT from its samples: mean (ns-2/Arizona) or min (Linux) (default mean)"`
	// FineGrained turns on Vegas' fine-grained retransmission decisions:
	// the loss reaction keeps 3/4 of cwnd instead of halving, and the
	// transport, seeing FineGrained() true, should run the fine-grained
	// timeout check described in docs/controllers.md.
	FineGrained bool `param:"finegrained" help:"Vegas fine-grained retransmission: cwnd*3/4 on loss; transport runs the per-dupACK timeout check"`
	// NS3 runs Vegas as ns-3.37's TcpVegas does (docs/compat.md, "The
	// conformance grid"): off by default.
	NS3 bool `param:"ns3" help:"as ns-3.37's TcpVegas: samples are the smoothed RTT, whole-segment diff, per-ACK slow start, NewReno's one step in a round with <= 2 samples, ssthresh = min(ssthresh, cwnd-1 segment) on a loss"`
	// NS3RTT (with NS3) takes the smoothed RTT as ns-3.37's TcpSocketBase
	// computes it with its default timestamps (docs/compat.md, "Vegas'
	// base RTT"): off by default.
	NS3RTT bool `param:"ns3rtt" help:"with ns3: the smoothed RTT as ns-3.37 computes it: samples in whole milliseconds (its TCP timestamps' clock), gain 1/8 per sample, the first the handshake's, none from the first data ACK (ns-3's receiver acknowledges the first segment at once), none in fast recovery (Karn's rule)"`
	// NS3Open (with NS3) runs TcpVegas::CongestionStateSet's Vegas on/off
	// as ns-3.37 drives it (docs/compat.md, "Vegas: ns-3's round restarts
	// and Karn's rule"): off by default.
	NS3Open bool `param:"ns3open" help:"with ns3: Vegas off in ns-3's CA_DISORDER (an ACK with newly SACKed data outside recovery: no growth, no round end) and a new round (EnableVegas) at every return to CA_OPEN: the end of recovery or of the disorder"`
}

// DefaultVegasConfig returns alpha=2, beta=4, gamma=1, rtt=mean.
//
// The mean is the default because the RTT samples a round collects belong
// to packets sent in the previous round: after a slow-start growth round
// the packets sent early in it saw an empty queue, so the round's minimum
// hides the queue the growth built and slow start overshoots (the path
// model in pathsim_test.go shows drops with rtt=min and none with the
// mean). Linux pairs the minimum with a check in every round.
func DefaultVegasConfig() VegasConfig {
	return VegasConfig{BaseConfig: DefaultBaseConfig(), Alpha: VegasDefaultAlpha, Beta: VegasDefaultBeta,
		Gamma: VegasDefaultGamma, RTT: RoundMean}
}

func (c VegasConfig) validate() error {
	if err := c.BaseConfig.validate("vegas"); err != nil {
		return err
	}
	if !(c.Alpha >= 0 && c.Alpha <= MaxWindowParam) {
		return fmt.Errorf("vegas: parameter alpha=%v: must be 0..%d packets", c.Alpha, MaxWindowParam)
	}
	if !(c.Beta >= c.Alpha && c.Beta <= MaxWindowParam) {
		return fmt.Errorf("vegas: parameter beta=%v: must be alpha=%v..%d packets", c.Beta, c.Alpha, MaxWindowParam)
	}
	if !(c.Gamma >= 0 && c.Gamma <= MaxWindowParam) {
		return fmt.Errorf("vegas: parameter gamma=%v: must be 0..%d packets", c.Gamma, MaxWindowParam)
	}
	if c.NS3RTT && !c.NS3 {
		return fmt.Errorf("vegas: parameter ns3rtt needs ns3=true")
	}
	if c.NS3Open && !c.NS3 {
		return fmt.Errorf("vegas: parameter ns3open needs ns3=true")
	}
	return nil
}

// Vegas is TCP Vegas with its Congestion Avoidance Mechanism (Brakmo &
// Peterson 1995):
//
//   - baseRTT is the minimum RTT sample seen on the connection;
//   - a round ends when CumAck reaches the SndNxt recorded at its start;
//     at each round's end, with RTT the round's minimum (or mean) sample,
//     Expected = cwnd/baseRTT, Actual = cwnd/RTT and
//     diff = (Expected - Actual) * baseRTT, in packets: the estimate of
//     this flow's packets sitting in queues;
//   - congestion avoidance: diff < alpha: cwnd += 1 packet; diff > beta:
//     cwnd -= 1 packet; otherwise hold (one step per round, as Linux);
//   - modified slow start: cwnd grows by the slow-start rule only every
//     other round (the round in between keeps cwnd fixed so Expected and
//     Actual compare a stable window); at the end of each fixed round, if
//     diff > gamma, slow start ends: cwnd -= cwnd/8 and ssthresh = cwnd;
//   - loss: Reno (ssthresh = max(FlightSize/2, 2 SMSS), cwnd = ssthresh at
//     recovery exit), or with finegrained ssthresh = max(cwnd*3/4, 2 SMSS);
//     RTO: Reno (1 SMSS, slow start again);
//   - no adjustment while in loss recovery; no increase when app-limited.
type Vegas struct {
	window
	cfg VegasConfig

	baseRTT time.Duration // minimum RTT seen
	round   roundTracker
	rMin    time.Duration // this round's minimum sample
	rSum    time.Duration // this round's sample sum
	rCnt    int           // this round's samples

	ssGrow bool // slow start: this round is a growth round (false: cwnd held)

	ns3SRTT  time.Duration // ns3rtt: ns-3's smoothed RTT (0: no sample yet)
	sndNxt   uint64        // ns3open: SndNxt of the latest ACK
	disorder bool          // ns3open: in ns-3's CA_DISORDER (Vegas off)

	lastRTT  time.Duration // RTT used at the last round end
	lastDiff float64       // diff at the last round end, packets
	haveDiff bool
	vars     [5]Var
}

// NewVegas returns a Vegas controller.
func NewVegas(cfg VegasConfig, env Env) (*Vegas, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	w, err := newWindow("vegas", cfg.BaseConfig, env.MSS)
	if err != nil {
		return nil, err
	}
	v := reuse[Vegas](env)
	*v = Vegas{window: w, cfg: cfg, ssGrow: true}
	v.resetRound()
	return v, nil
}

// Name returns "vegas".
func (v *Vegas) Name() string { return "vegas" }

// Config returns the configuration in use.
func (v *Vegas) Config() VegasConfig { return v.cfg }

// FineGrained reports whether the transport should apply Vegas'
// fine-grained retransmission check (see docs/controllers.md).
func (v *Vegas) FineGrained() bool { return v.cfg.FineGrained }

// BaseRTT returns the minimum RTT seen, 0 before the first sample.
func (v *Vegas) BaseRTT() time.Duration { return v.baseRTT }

// Diff returns diff at the last round end, packets, and whether one was computed.
func (v *Vegas) Diff() (float64, bool) { return v.lastDiff, v.haveDiff }

func (v *Vegas) resetRound() { v.rMin, v.rSum, v.rCnt = math.MaxInt64, 0, 0 }

// OnAck collects RTT samples and runs the once-per-round Vegas adjustment.
func (v *Vegas) OnAck(a Ack) {
	if v.cfg.NS3 {
		v.onAckNS3(a)
		return
	}
	v.noteAck()
	recovering := a.InRecovery || v.inRecovery
	if a.RTT > 0 {
		if v.baseRTT == 0 || a.RTT < v.baseRTT {
			v.baseRTT = a.RTT
		}
		if !recovering {
			v.rMin = min(v.rMin, a.RTT)
			v.rSum += a.RTT
			v.rCnt++
		}
	}
	// Slow start grows on every ACK of a growth round (the round-ending ACK
	// included); cwnd is held in the rounds in between.
	if v.inSlowStart() && v.ssGrow && v.mayGrow(a) {
		v.slowStart(a.Acked)
	}
	if v.round.update(a.CumAck, a.SndNxt) {
		v.endRound(a)
	}
}

// endRound runs the Vegas comparison at the end of a round.
func (v *Vegas) endRound(a Ack) {
	defer v.resetRound()
	if a.InRecovery || v.inRecovery {
		return
	}
	if v.rCnt < VegasMinRoundSamples || v.baseRTT <= 0 {
		// Too few samples to judge (Linux: behave as Reno). In slow start
		// the growth/hold alternation goes on without the gamma check; in
		// congestion avoidance the round gets Reno's +1 SMSS per RTT.
		if v.inSlowStart() {
			v.ssGrow = !v.ssGrow
		} else if v.mayGrow(a) {
			v.cwnd += v.mss
		}
		return
	}
	rtt := v.rMin
	if v.cfg.RTT == RoundMean {
		rtt = v.rSum / time.Duration(v.rCnt)
	}
	cwndPkts := float64(v.cwnd) / float64(v.mss)
	base := v.baseRTT.Seconds()
	expected := cwndPkts / base        // packets/s
	actual := cwndPkts / rtt.Seconds() // packets/s
	diff := (expected - actual) * base // packets
	v.lastRTT, v.lastDiff, v.haveDiff = rtt, diff, true
	floor := MinSsthreshSegments * v.mss

	if v.inSlowStart() {
		if v.ssGrow {
			// A growth round ended: hold cwnd for the next round.
			v.ssGrow = false
			return
		}
		// A fixed round ended: compare.
		if diff > v.cfg.Gamma {
			v.cwnd = max(v.cwnd-v.cwnd/VegasSlowStartExitDivisor, floor)
			v.ssthresh = v.cwnd
			v.bytesAcked = 0
			return
		}
		v.ssGrow = true
		return
	}
	switch {
	case diff > v.cfg.Beta:
		v.cwnd = max(v.cwnd-v.mss, floor)
		v.ssthresh = min(v.ssthresh, v.cwnd)
	case diff < v.cfg.Alpha:
		if v.mayGrow(a) {
			v.cwnd += v.mss
		}
	}
}

// OnCongestion: loss as Reno (or keep 3/4 of cwnd with finegrained, or
// ns-3's one segment less with ns3); ECN as Reno.
func (v *Vegas) OnCongestion(c Congestion) {
	switch c.Kind {
	case Loss:
		ns3 := v.ssthreshNS3()
		v.enterLoss(c.InFlight)
		if v.cfg.FineGrained {
			v.ssthresh = max(int(float64(v.cwnd)*VegasFineGrainedKeep), MinSsthreshSegments*v.mss)
		}
		if v.cfg.NS3 {
			v.ssthresh = ns3
		}
		v.disorder = false
	case ECN:
		v.ecnReduce(c.InFlight)
	}
	v.resetRound()
}

// OnRecoveryExit sets cwnd = ssthresh and restarts the round measurement;
// with ns3open a new round starts at the exit ACK's SND.NXT: ns-3.37's
// ProcessAck returns to CA_OPEN on the ACK that ends recovery
// (tcp-socket-base.cc:2170), whose CongestionStateSet calls
// EnableVegas (tcp-vegas.cc:146-149, 124-132). The transport gives the
// controller that ACK (OnAck) before it ends recovery.
func (v *Vegas) OnRecoveryExit(clock.Time, int) {
	v.exitRecovery()
	v.resetRound()
	if v.cfg.NS3Open {
		v.enableNS3()
	}
}

// OnRTO applies the RFC 5681 timeout rules; the next slow start begins with
// a growth round.
func (v *Vegas) OnRTO(_ clock.Time, inFlight int) {
	ns3 := v.ssthreshNS3()
	v.rto(inFlight)
	if v.cfg.NS3 {
		v.ssthresh = ns3
	}
	v.ssGrow = true
	v.disorder = false
	v.resetRound()
}

// onAckNS3 is OnAck as ns-3.37's TcpVegas runs it (tcp-vegas.cc):
// TcpSocketBase passes every PktsAcked its smoothed RTT estimate
// (m_lastRtt, tcp-socket-base.cc:3671), so the samples of baseRTT and of a
// round's minimum are Ack.SRTT; on the ACK that ends a round the comparison
// (endRoundNS3), on the others slow start by one segment (TcpNewReno's).
// Growth only on ACKs that move the cumulative point, outside recovery.
func (v *Vegas) onAckNS3(a Ack) {
	v.noteAck()
	srtt := a.SRTT
	if v.cfg.NS3RTT {
		srtt = v.ns3Estimate(a)
	}
	if srtt > 0 {
		if v.baseRTT == 0 || srtt < v.baseRTT {
			v.baseRTT = srtt
		}
		if !a.InRecovery && !v.inRecovery {
			v.rMin = min(v.rMin, srtt)
			v.rCnt++
		}
	}
	v.sndNxt = a.SndNxt
	grow := v.mayGrow(a) && a.CumAcked > 0
	if v.cfg.NS3Open && a.RTOPoint == 0 && !a.InRecovery && !v.inRecovery && v.openNS3(a) {
		return
	}
	if a.RTOPoint != 0 {
		// ns-3's CA_LOSS, until the cumulative ACK reaches the timeout's
		// recovery point: TcpVegas is off (CongestionStateSet) and grows as
		// TcpNewReno per cumulative ACK, on the ACK that ends it by the
		// segments beyond that point only (tcp-socket-base.cc:2185); the
		// next round starts when it ends (EnableVegas: m_begSndNxt).
		if grow {
			segs := a.CumAcked / v.mss
			if a.CumAck >= a.RTOPoint {
				segs = int(min(a.CumAck-a.RTOPoint, math.MaxInt32/2)) / v.mss
			}
			v.newRenoStepNS3(segs)
		}
		v.round.end = a.SndNxt
		v.resetRound()
		return
	}
	if v.round.update(a.CumAck, a.SndNxt) {
		if grow {
			v.endRoundNS3(a.CumAcked)
		}
		v.resetRound()
		return
	}
	if grow && v.inSlowStart() {
		v.cwnd += v.mss
	}
}

// openNS3 runs ns-3.37's CA_OPEN / CA_DISORDER switch of TcpVegas for an
// ACK outside recovery and reports whether Vegas is off for it. An ACK
// that SACKs new data is a duplicate ACK to ns-3 with SACK on (ProcessAck's
// isDupack = scoreboardUpdated, tcp-socket-base.cc:1965-1966), which takes
// CA_OPEN to CA_DISORDER (DupAck, :1728-1736), where CongestionStateSet
// disables Vegas (tcp-vegas.cc:150-153) and ProcessAck calls no
// IncreaseWindow (tcp-socket-base.cc:2211-2213: only in CA_OPEN): no
// growth, no round end. The first cumulative ACK without new SACK
// information returns to CA_OPEN (:2125-2140), whose EnableVegas starts a
// new round at SND.NXT and drops the round's samples (tcp-vegas.cc:124-132,
// 146-149); IncreaseWindow then runs for that ACK (tcp-socket-base.cc:2213).
func (v *Vegas) openNS3(a Ack) bool {
	if a.Sacked > 0 {
		v.disorder = true
		return true
	}
	if v.disorder && a.CumAcked > 0 {
		v.disorder = false
		v.enableNS3()
	}
	return v.disorder
}

// enableNS3 is TcpVegas::EnableVegas (tcp-vegas.cc:124-132): a new round
// from the latest ACK's SND.NXT, its samples dropped.
func (v *Vegas) enableNS3() {
	v.round.started, v.round.end = true, v.sndNxt
	v.resetRound()
}

// NS3TimestampTick is the clock of ns-3.37's TCP timestamps:
// TcpOptionTS::NowToTsValue sends Simulator::Now().GetMilliSeconds() and
// ElapsedTimeFromTsValue returns the difference in whole milliseconds
// (tcp-option-ts.cc:134-156), so with its default Timestamp=true every RTT
// sample of TcpSocketBase::EstimateRtt is a whole number of milliseconds.
const NS3TimestampTick = time.Millisecond

// ns3Estimate returns the smoothed RTT ns-3.37's TcpSocketBase would pass to
// PktsAcked after this ACK (m_lastRtt = RttMeanDeviation's estimate,
// tcp-socket-base.cc:3671). Its first sample is the SYN's (EstimateRtt on
// the SYN-ACK, :1386), before any PktsAcked: here the connection's minimum
// RTT at the first ACK, truncated to the tick as a handshake that starts on
// a whole millisecond (time 0 in ns-3 and in cclab's simulator) measures
// it. The first data ACK adds no sample: ns-3's receiver acknowledges the
// first data segment at once (ProcessSynRcvd sets m_delAckCount to
// m_delAckMaxCount, :2404-2406, "Always respond to first data packet"), so
// ns-3's first PktsAcked sees the sample of a lone segment, which has no
// delayed-ACK wait (15 ms on the grid's path, 30 - 15, as the handshake's
// 15: baseRtt 15.000), while cclab's default receiver holds that segment
// for its pair like any other (its sample 17 ms there, baseRtt 15.250 if
// taken). With the receiver's ack_first (ns-3's rule, in ns3cmp's matched
// settings) and tcp_handshake the sample is the handshake's 15 ms and the
// drop changes nothing; with the padded handshake the first segment leaves
// 0.786 ms into a millisecond and reads 16 ms (baseRtt 15.125), so the
// drop stays (docs/compat.md "ns-3's first ACK").
// Each later sample is the ACK's own RTT as the tick clock measures it,
// floor(now) - floor(now - RTT), and moves the estimate by 1/8 as
// RttMeanDeviation::IntegerUpdate (rtt-estimator.cc:220-227). A zero
// sample counts as 1 µs (EstimateRtt, tcp-socket-base.cc:3640-3645: "is
// zero, approximating to 1us"; the handshake's too). No sample is taken
// from an ACK that does not move the cumulative point (EstimateRtt needs
// it to cover the oldest transmission in its history, :3633), nor from any
// after a timeout until its recovery point (Ack.RTOPoint: ReTxTimeout
// empties the history, :3822, and retransmissions add nothing to it), nor
// from an ACK in fast recovery: EstimateRtt takes no sample while that
// oldest transmission is a retransmission (!h.retx, :3633; SendDataPacket
// marks a retransmission in the history, :3243, 3276-3283), timestamps or
// not (Karn's rule), and in fast recovery every cumulative advance fills a
// hole by a retransmission (Ack.InRecovery is still true on the ACK that
// ends it).
func (v *Vegas) ns3Estimate(a Ack) time.Duration {
	tick := func(t clock.Time) int64 { return int64(t) / int64(NS3TimestampTick) }
	if v.ns3SRTT == 0 {
		if a.MinRTT <= 0 {
			return 0
		}
		v.ns3SRTT = max(a.MinRTT.Truncate(NS3TimestampTick), ns3ZeroRTT)
		return v.ns3SRTT
	}
	if a.RTT > 0 && a.CumAcked > 0 && a.RTOPoint == 0 && !a.InRecovery {
		m := time.Duration(tick(a.Now)-tick(a.Now.Add(-a.RTT))) * NS3TimestampTick
		m = max(m, ns3ZeroRTT)
		v.ns3SRTT = time.Duration((int64(v.ns3SRTT)<<rttGainShiftNS3 + int64(m-v.ns3SRTT)) >> rttGainShiftNS3)
	}
	return v.ns3SRTT
}

// ns3ZeroRTT is what ns-3.37's EstimateRtt takes for a timestamp sample of
// zero (tcp-socket-base.cc:3640-3645).
const ns3ZeroRTT = time.Microsecond

// rttGainShiftNS3 is ns-3's RttMeanDeviation gain alpha = 1/8 (its default,
// RFC 6298 §2.3) as a shift, applied to every sample.
const rttGainShiftNS3 = 3

// endRoundNS3 is TcpVegas::IncreaseWindow on the ACK that ends a round, with
// the window in whole segments: with too few samples TcpNewReno's one step;
// otherwise diff = cwnd - trunc(cwnd*baseRTT/minRTT) segments; in slow
// start diff > gamma leaves it (cwnd = min(cwnd, target+1)), else one more
// segment; in congestion avoidance -1 above beta, +1 below alpha; ssthresh
// at least 3/4 cwnd after every comparison.
func (v *Vegas) endRoundNS3(cumAcked int) {
	if v.rCnt < VegasMinRoundSamples || v.baseRTT <= 0 {
		v.newRenoStepNS3(cumAcked / v.mss)
		return
	}
	seg := v.cwnd / v.mss
	target := int(float64(seg) * v.baseRTT.Seconds() / v.rMin.Seconds())
	diff := seg - target
	v.lastRTT, v.lastDiff, v.haveDiff = v.rMin, float64(diff), true
	switch {
	case diff > int(v.cfg.Gamma) && v.inSlowStart():
		v.cwnd = min(seg, target+1) * v.mss
		v.ssthresh = v.ssthreshNS3()
	case v.inSlowStart():
		v.cwnd += v.mss
	case diff > int(v.cfg.Beta):
		v.cwnd = max(seg-1, 1) * v.mss
		v.ssthresh = v.ssthreshNS3()
	case diff < int(v.cfg.Alpha):
		v.cwnd = (seg + 1) * v.mss
	}
	v.ssthresh = max(v.ssthresh, 3*v.cwnd/4)
}

// newRenoStepNS3 is TcpNewReno::IncreaseWindow (tcp-congestion-ops.cc) for
// one ACK of segs segments: one segment in slow start, then MSS*MSS/cwnd
// bytes (at least 1) if segments are left.
func (v *Vegas) newRenoStepNS3(segs int) {
	if v.inSlowStart() && segs >= 1 {
		v.cwnd += v.mss
		segs--
	}
	if !v.inSlowStart() && segs > 0 {
		v.cwnd += max(1, v.mss*v.mss/v.cwnd)
	}
}

// ssthreshNS3 is TcpVegas::GetSsThresh: max(min(ssthresh, cwnd - 1
// segment), 2 segments).
func (v *Vegas) ssthreshNS3() int {
	return max(min(v.ssthresh, v.cwnd-v.mss), MinSsthreshSegments*v.mss)
}

// State returns a snapshot; Vars hold base_rtt, round_rtt, diff, expected
// and actual. Vars uses controller-owned storage valid until the next call.
func (v *Vegas) State() State {
	s := v.window.state()
	var exp, act float64
	if v.baseRTT > 0 && v.lastRTT > 0 {
		c := float64(v.cwnd) / float64(v.mss)
		exp, act = c/v.baseRTT.Seconds(), c/v.lastRTT.Seconds()
	}
	v.vars = [...]Var{
		{Name: "base_rtt", Value: v.baseRTT.Seconds() * 1e3, Unit: "ms"},
		{Name: "round_rtt", Value: v.lastRTT.Seconds() * 1e3, Unit: "ms"},
		{Name: "diff", Value: v.lastDiff, Unit: "packets"},
		{Name: "expected", Value: exp, Unit: "packets/s"},
		{Name: "actual", Value: act, Unit: "packets/s"},
	}
	s.Vars = v.vars[:]
	return s
}

func init() {
	spec.Add(Registry, "vegas", "TCP Vegas with CAM (Brakmo & Peterson 1995): alpha/beta band, gamma slow-start exit",
		DefaultVegasConfig, func(c VegasConfig, env Env) (Controller, error) { return NewVegas(c, env) })
}
