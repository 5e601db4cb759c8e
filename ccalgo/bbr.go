package ccalgo

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"cclab/clock"
	"cclab/internal/spec"
)

// BBR v1 constants (draft-cardwell-iccrg-bbr-congestion-control-00 §4, and
// the Linux tcp_bbr.c of the same design where the draft defers to it).
const (
	// BBRHighGain is 2/ln(2), the Startup pacing and cwnd gain: the smallest
	// gain that doubles the sending rate every round (draft §4.3.2.1).
	BBRHighGain = 2 / math.Ln2
	// BBRDrainGain is 1/BBRHighGain, Drain's pacing gain (§4.3.3).
	BBRDrainGain = 1 / BBRHighGain
	// BBRCwndGain is ProbeBW's cwnd gain (§4.3.4: 2 BDP absorbs delayed and
	// stretched ACKs).
	BBRCwndGain = 2
	// BBRBtlBwFilterLen is the BtlBw max filter's window, round trips (§4.1.1.2).
	BBRBtlBwFilterLen = 10
	// BBRRTpropFilterLen is the RTprop min filter's window (§4.1.2.2).
	BBRRTpropFilterLen = 10 * time.Second
	// BBRProbeRTTDuration is the least time spent in ProbeRTT (§4.3.5).
	BBRProbeRTTDuration = 200 * time.Millisecond
	// BBRMinPipeCwnd is the smallest cwnd, packets (§4.2.3.1: 4 packets keep
	// delayed ACKs and pipelining working).
	BBRMinPipeCwnd = 4
	// BBRGainCycleLen is the length of ProbeBW's pacing gain cycle (§4.3.4.3).
	BBRGainCycleLen = 8
	// BBRFullBwThresh is the growth that counts as still filling the pipe
	// (§4.3.2.2: 25 %), and BBRFullBwCount the rounds without it after
	// which the pipe is full (3).
	BBRFullBwThresh = 1.25
	BBRFullBwCount  = 3
)

// bbrPacingGainCycle is ProbeBW's pacing gain cycle (§4.3.4.3): probe at
// 5/4, drain at 3/4, cruise at 1 for six phases.
var bbrPacingGainCycle = [BBRGainCycleLen]float64{5.0 / 4, 3.0 / 4, 1, 1, 1, 1, 1, 1}

// BBR states (§4.3).
const (
	BBRStartup  = "startup"
	BBRDrain    = "drain"
	BBRProbeBW  = "probe_bw"
	BBRProbeRTT = "probe_rtt"
)

// BBRConfig configures BBR.
type BBRConfig struct {
	// Margin is the percentage the pacing rate is set below gain*BtlBw (Linux
	// bbr_pacing_margin_percent = 1, to drain queues that other flows or
	// measurement noise build); 0 is the draft's rate exactly.
	Margin float64 `param:"margin" help:"pacing rate margin below gain*BtlBw, percent (Linux: 1; 0 = the draft)"`
	// IW is the initial window in packets; 0 selects RFC 6928.
	IW int `param:"iw" help:"initial window, packets; 0 = RFC 6928 min(10*MSS, max(2*MSS, 14600 B))"`
	// RTORestore restores the cwnd saved at a timeout once the data in
	// flight then has been delivered (the draft's §4.2.3.4 "upon exiting
	// loss recovery (RTO recovery or fast recovery)", Linux's
	// bbr_set_cwnd_to_recover_or_restore on leaving TCP_CA_Loss); false is
	// ns-3 3.37's TcpBbr, which restores only on CA_EVENT_COMPLETE_CWR (the
	// end of fast recovery) and after a timeout regrows cwnd from one
	// segment by the data delivered.
	RTORestore bool `param:"rtorestore" help:"restore the saved cwnd after RTO recovery (draft §4.2.3.4, Linux; default true); false as ns-3 3.37's TcpBbr"`
	// NS3Exit sets cwnd at the end of fast recovery to the in-flight
	// target of one BDP (BBRInflight(1): BDP plus three send quanta) taken
	// when Startup ended, or leaves it unbounded if Startup has not ended,
	// instead of restoring the cwnd saved at the start of recovery (draft
	// §4.2.3.4): ns-3 3.37's TcpSocketBase::ProcessAck sets cwnd = ssthresh
	// on leaving CA_RECOVERY after TcpBbr's CwndEvent(COMPLETE_CWR)
	// restored it, and TcpBbr's ssthresh is InFlight(1) from CheckDrain (the
	// initial ssthresh before).
	// NS3ProbeRTT leaves ProbeRTT's rate samples not application-limited,
	// so they enter the BtlBw filter (ns-3.37's TcpBbr::HandleProbeRTT sets
	// its own m_appLimited, which its TcpRateOps never reads); the draft
	// (§4.3.5) marks them application-limited (MarkAppLimited). With
	// ProbeRTT longer than ten rounds (200 ms at an RTprop below 20 ms)
	// BtlBw falls to ProbeRTT's 4-packet rate.
	NS3ProbeRTT bool `param:"ns3probertt" help:"ProbeRTT's rate samples enter the BtlBw filter (ns-3.37 TcpBbr: its app-limited mark never reaches TcpRateOps); default false (draft §4.3.5 marks them app-limited)"`
	NS3Exit     bool `param:"ns3exit" help:"cwnd at the end of fast recovery = the one-BDP target taken when Startup ended (ns-3.37 TcpSocketBase sets cwnd = ssthresh over TcpBbr's restore); default false (draft §4.2.3.4 restore)"`
}

// DefaultBBRConfig returns Linux's margin, the RFC 6928 initial window and
// the cwnd restored after RTO recovery.
func DefaultBBRConfig() BBRConfig { return BBRConfig{Margin: 1, RTORestore: true} }

// BBR is BBR v1 (draft-cardwell-iccrg-bbr-congestion-control-00): a model of
// the path from its bottleneck bandwidth BtlBw (windowed maximum of the
// delivery-rate samples over 10 round trips) and round-trip propagation
// time RTprop (minimum RTT over 10 s), and a state machine over it:
// Startup (pacing and cwnd gain 2/ln 2) until the bandwidth grows less
// than 25 % in three rounds, Drain (gain ln2/2) until the data in flight is
// one BDP, ProbeBW (cwnd gain 2, pacing gains 5/4, 3/4, 1×6 cycled once
// per RTprop from a random phase), ProbeRTT (cwnd 4 packets for at least
// 200 ms and a round) when RTprop has not been refreshed for 10 s. It
// paces at pacing_gain*BtlBw and caps the data in flight at
// cwnd_gain*BtlBw*RTprop + 3 send quanta. Loss does not reduce the model:
// at the start of loss recovery cwnd is held at the data in flight
// (packet conservation for one round) and restored at its end (§4.2.3.4);
// Ssthresh reports the cwnd recovery must keep, for the transport's
// recovery strategy. It needs the transport's delivery-rate samples
// (Ack.Rate) and pacing (it implements Pacer and SendQuantum).
type BBR struct {
	cfg  BBRConfig
	mss  int
	rand *rand.Rand

	state      string
	pacingGain float64
	cwndGain   float64
	cwnd       int     // bytes
	pacingRate float64 // bits/s
	iw         int     // bytes

	btlBw     maxFilter // bits/s over round counts
	rtProp    time.Duration
	rtStamp   clock.Time
	rtExpired bool

	// rounds (§4.1.1.3)
	nextRoundDelivered uint64
	roundCount         uint64
	roundStart         bool
	delivered          uint64

	// full pipe (§4.3.2.2)
	filledPipe bool
	fullBw     float64
	fullBwCnt  int

	// ProbeBW (§4.3.4)
	cycleIndex int
	cycleStamp clock.Time
	lossInRnd  bool // a loss since the phase began

	// ProbeRTT (§4.3.5)
	probeRTTDone      clock.Time
	probeRTTRoundDone bool
	priorCwnd         int

	// recovery (§4.2.3.4)
	inRecovery   bool
	conservation bool
	conservEnd   uint64 // the round of packet conservation ends when this much is delivered
	afterRTO     bool
	rtoEnd       uint64
	exitCwnd     int // NS3Exit: cwnd at the end of fast recovery, bytes (ns-3's ssthresh)

	sawRTT bool
}

// MarkAppLimited reports, after each Ack, whether the transport is to mark
// its delivery-rate samples application-limited (ccalgo.AppLimitMarker):
// in ProbeRTT, unless NS3ProbeRTT (draft §4.3.5).
func (b *BBR) MarkAppLimited() bool { return b.state == BBRProbeRTT && !b.cfg.NS3ProbeRTT }

// NewBBR returns a BBR controller.
func NewBBR(cfg BBRConfig, env Env) (*BBR, error) {
	if env.MSS <= 0 || env.MSS > MaxSegment {
		return nil, fmt.Errorf("bbr: Env.MSS=%d: must be a segment size of 1..%d bytes", env.MSS, MaxSegment)
	}
	if cfg.Margin < 0 || cfg.Margin >= 100 {
		return nil, fmt.Errorf("bbr: parameter margin=%v: must be at least 0 and below 100 percent", cfg.Margin)
	}
	if cfg.IW < 0 || cfg.IW > MaxWindowParam {
		return nil, fmt.Errorf("bbr: parameter iw=%d: must be 0..%d packets (0 = RFC 6928)", cfg.IW, MaxWindowParam)
	}
	b := reuse[BBR](env)
	*b = BBR{cfg: cfg, mss: env.MSS, rand: env.Rand, rtStamp: clock.Never, probeRTTDone: clock.Never}
	b.iw = InitialWindow(env.MSS)
	if cfg.IW > 0 {
		b.iw = cfg.IW * env.MSS
	}
	if b.rand == nil {
		b.rand = rand.New(rand.NewPCG(1, 2))
	}
	b.cwnd = b.iw
	b.exitCwnd = InfiniteSsthresh
	b.enterStartup()
	// §4.2.1: before an RTT sample, pace as if the RTT were 1 ms.
	b.pacingRate = b.pacingGain * float64(b.iw) * 8 / time.Millisecond.Seconds()
	return b, nil
}

// Name returns "bbr".
func (b *BBR) Name() string { return "bbr" }

// StateName returns the state: startup, drain, probe_bw or probe_rtt.
func (b *BBR) StateName() string { return b.state }

// BtlBw returns the bottleneck bandwidth estimate, bits/s.
func (b *BBR) BtlBw() float64 { return b.btlBw.get() }

// RTprop returns the propagation RTT estimate (0 before a sample).
func (b *BBR) RTprop() time.Duration { return b.rtProp }

// PacingGain returns the current pacing gain.
func (b *BBR) PacingGain() float64 { return b.pacingGain }

// PacingRate returns the pacing rate, bits/s.
func (b *BBR) PacingRate() float64 { return b.pacingRate }

// SendQuantum returns the send quantum of §4.2.2, bytes: 1 packet below
// 1.2 Mbit/s, 2 below 24 Mbit/s, else 1 ms at the pacing rate up to 64 KB.
func (b *BBR) SendQuantum() int {
	switch {
	case b.pacingRate < 1.2e6:
		return b.mss
	case b.pacingRate < 24e6:
		return 2 * b.mss
	}
	return min(int(b.pacingRate/8*time.Millisecond.Seconds()), 64*1024)
}

func (b *BBR) enterStartup() {
	b.state = BBRStartup
	b.pacingGain, b.cwndGain = BBRHighGain, BBRHighGain
}

func (b *BBR) enterDrain() {
	b.state = BBRDrain
	b.pacingGain, b.cwndGain = BBRDrainGain, BBRHighGain
}

func (b *BBR) enterProbeBW(now clock.Time) {
	b.state = BBRProbeBW
	b.pacingGain, b.cwndGain = 1, BBRCwndGain
	// §4.3.4.3: start at a random phase other than the 3/4 one.
	b.cycleIndex = BBRGainCycleLen - 1 - b.rand.IntN(BBRGainCycleLen-1)
	b.advanceCycle(now)
}

func (b *BBR) advanceCycle(now clock.Time) {
	b.cycleStamp = now
	b.cycleIndex = (b.cycleIndex + 1) % BBRGainCycleLen
	b.pacingGain = bbrPacingGainCycle[b.cycleIndex]
	b.lossInRnd = false
}

// inflight is BBRInflight(gain) of §4.2.3.2: gain*BDP plus three send
// quanta, bytes; the initial window before a model exists.
func (b *BBR) inflight(gain float64) int {
	if b.rtProp == 0 || b.btlBw.get() == 0 {
		return b.iw
	}
	bdp := b.btlBw.get() / 8 * b.rtProp.Seconds()
	return int(gain*bdp) + 3*b.SendQuantum()
}

// OnSent does nothing: the transport's delivery-rate samples carry what BBR needs.
func (b *BBR) OnSent(clock.Time, int, int) {}

// OnAck runs BBR's update on an ACK (§4.2, §4.3: BBRUpdateOnACK).
func (b *BBR) OnAck(a Ack) {
	rs := a.Rate
	b.delivered = rs.TotalDelivered
	// Model: the round, BtlBw (§4.1.1).
	b.roundStart = false
	if rs.Delivered > 0 && rs.PriorDelivered >= b.nextRoundDelivered {
		b.nextRoundDelivered = b.delivered
		b.roundCount++
		b.roundStart = true
	}
	if rs.DeliveryRate > 0 && (!rs.AppLimited || rs.DeliveryRate >= b.btlBw.get()) {
		b.btlBw.update(BBRBtlBwFilterLen, b.roundCount, rs.DeliveryRate)
	}
	priorInflight := a.InFlight + a.Acked
	// ProbeBW phase (§4.3.4.4).
	if b.state == BBRProbeBW && b.nextPhase(a.Now, priorInflight) {
		b.advanceCycle(a.Now)
	}
	b.checkFullPipe(rs)
	// Drain (§4.3.3).
	if b.state == BBRStartup && b.filledPipe {
		b.enterDrain()
		b.exitCwnd = b.inflight(1) // ns-3's TcpBbr::CheckDrain: ssthresh = InFlight(1)
	}
	if b.state == BBRDrain && a.InFlight <= b.inflight(1) {
		b.enterProbeBW(a.Now)
	}
	// RTprop and ProbeRTT (§4.1.2, §4.3.5).
	rtt := a.RTT // the transport's sample (timestamps, Karn for SACKed data); not rs.RTT, which a retransmission can shorten
	b.rtExpired = b.rtStamp != clock.Never && a.Now.Sub(b.rtStamp) > BBRRTpropFilterLen
	if rtt > 0 && (b.rtProp == 0 || rtt <= b.rtProp || b.rtExpired) {
		b.rtProp = rtt
		b.rtStamp = a.Now
	}
	if b.state != BBRProbeRTT && b.rtExpired && !a.AppLimited {
		b.state = BBRProbeRTT
		b.pacingGain, b.cwndGain = 1, 1
		b.saveCwnd()
		b.probeRTTDone = clock.Never
	}
	if b.state == BBRProbeRTT {
		b.handleProbeRTT(a)
	}
	// Control: pacing rate (§4.2.1) and cwnd (§4.2.3).
	if rtt > 0 && !b.sawRTT {
		// §4.2.1 (Linux bbr_init_pacing_rate_from_rtt): the first RTT
		// sample replaces the nominal 1 ms.
		b.sawRTT = true
		b.pacingRate = b.pacingGain * float64(b.cwnd) * 8 / rtt.Seconds()
	}
	b.setPacingRate(b.pacingGain)
	b.setCwnd(a)
}

// nextPhase is BBRIsNextCyclePhase (§4.3.4.4).
func (b *BBR) nextPhase(now clock.Time, priorInflight int) bool {
	full := now.Sub(b.cycleStamp) > b.rtProp
	switch {
	case b.pacingGain == 1:
		return full
	case b.pacingGain > 1:
		return full && (b.lossInRnd || priorInflight >= b.inflight(b.pacingGain))
	}
	return full || priorInflight <= b.inflight(1)
}

// checkFullPipe is BBRCheckFullPipe (§4.3.2.2).
func (b *BBR) checkFullPipe(rs RateSample) {
	if b.filledPipe || !b.roundStart || rs.AppLimited {
		return
	}
	if bw := b.btlBw.get(); bw >= b.fullBw*BBRFullBwThresh {
		b.fullBw = bw
		b.fullBwCnt = 0
		return
	}
	b.fullBwCnt++
	if b.fullBwCnt >= BBRFullBwCount {
		b.filledPipe = true
	}
}

// handleProbeRTT is BBRHandleProbeRTT (§4.3.5).
func (b *BBR) handleProbeRTT(a Ack) {
	switch {
	case b.probeRTTDone == clock.Never && a.InFlight <= BBRMinPipeCwnd*b.mss:
		b.probeRTTDone = a.Now.Add(BBRProbeRTTDuration)
		b.probeRTTRoundDone = false
		b.nextRoundDelivered = b.delivered
	case b.probeRTTDone != clock.Never:
		if b.roundStart {
			b.probeRTTRoundDone = true
		}
		if b.probeRTTRoundDone && a.Now.After(b.probeRTTDone) {
			b.rtStamp = a.Now
			b.cwnd = max(b.cwnd, b.priorCwnd)
			if b.filledPipe {
				b.enterProbeBW(a.Now)
			} else {
				b.enterStartup()
			}
		}
	}
}

// setPacingRate is BBRSetPacingRateWithGain (§4.2.1): in Startup the rate
// only rises.
func (b *BBR) setPacingRate(gain float64) {
	bw := b.btlBw.get()
	if bw == 0 {
		return
	}
	rate := gain * bw * (100 - b.cfg.Margin) / 100
	if b.filledPipe || rate > b.pacingRate {
		b.pacingRate = rate
	}
}

// setCwnd is BBRSetCwnd (§4.2.3) with the recovery and ProbeRTT modulation.
func (b *BBR) setCwnd(a Ack) {
	acked := a.Acked
	if b.conservation && b.delivered >= b.conservEnd {
		b.conservation = false // one round of packet conservation
	}
	if b.afterRTO && b.delivered >= b.rtoEnd {
		b.afterRTO = false
		if b.cfg.RTORestore {
			b.cwnd = max(b.cwnd, b.priorCwnd) // the loss episode ended: restore
		}
	}
	if b.inRecovery && a.Lost > 0 {
		b.cwnd = max(b.cwnd-a.Lost, b.mss) // §4.2.3.4 BBRModulateCwndForRecovery
	}
	target := b.inflight(b.cwndGain)
	switch {
	case b.conservation:
		b.cwnd = max(b.cwnd, a.InFlight+acked)
	case b.filledPipe:
		b.cwnd = min(b.cwnd+acked, target)
	case b.cwnd < target || int(b.delivered) < b.iw:
		b.cwnd += acked
	}
	b.cwnd = max(b.cwnd, BBRMinPipeCwnd*b.mss)
	if b.state == BBRProbeRTT {
		b.cwnd = min(b.cwnd, BBRMinPipeCwnd*b.mss)
	}
}

// saveCwnd is BBRSaveCwnd: the cwnd to restore after recovery or ProbeRTT.
func (b *BBR) saveCwnd() {
	if !b.inRecovery && b.state != BBRProbeRTT {
		b.priorCwnd = b.cwnd
	} else {
		b.priorCwnd = max(b.priorCwnd, b.cwnd)
	}
}

// OnCongestion starts packet conservation for one round on a loss (§4.2.3.4:
// cwnd = the data in flight, grown by what each ACK delivers); ECN is not
// part of BBR v1 and is ignored. BtlBw and RTprop are not touched.
func (b *BBR) OnCongestion(c Congestion) {
	if c.Kind != Loss {
		return
	}
	b.saveCwnd()
	b.inRecovery = true
	b.conservation = true
	b.conservEnd = b.delivered + uint64(max(c.InFlight, b.mss))
	b.cwnd = max(c.InFlight, BBRMinPipeCwnd*b.mss)
	b.lossInRnd = true
}

// OnRecoveryExit restores the cwnd saved at the start of recovery (§4.2.3.4).
func (b *BBR) OnRecoveryExit(clock.Time, int) {
	b.inRecovery = false
	b.conservation = false
	if b.cfg.NS3Exit {
		b.cwnd = b.exitCwnd
		return
	}
	b.cwnd = max(b.cwnd, b.priorCwnd)
}

// OnRTO saves cwnd and sets it to one packet (the transport's timeout,
// RFC 5681 loss window, as Linux's TCP_CA_Loss); BBR then regrows it by
// the data delivered, and restores the saved cwnd when what was in flight
// at the timeout has been delivered. The full-pipe test restarts its
// baseline (Linux bbr_set_state on TCP_CA_Loss).
func (b *BBR) OnRTO(_ clock.Time, inFlight int) {
	b.saveCwnd()
	b.cwnd = b.mss
	b.afterRTO = true
	b.rtoEnd = b.delivered + uint64(max(inFlight, b.mss))
	b.inRecovery, b.conservation = false, false
	b.fullBw, b.fullBwCnt = 0, 0
	b.lossInRnd = true
}

// Cwnd returns cwnd, bytes.
func (b *BBR) Cwnd() int { return b.cwnd }

// Ssthresh returns, during loss recovery, the cwnd recovery must keep (the
// transport's recovery strategies send up to it); otherwise the
// arbitrarily high initial value (BBR has no slow-start threshold).
func (b *BBR) Ssthresh() int {
	if b.inRecovery {
		return b.cwnd
	}
	return InfiniteSsthresh
}

// State returns a snapshot: the state, BtlBw, RTprop and the gains.
func (b *BBR) State() State {
	ph := b.state
	if b.inRecovery {
		ph = PhaseRecovery
	}
	return State{Cwnd: b.cwnd, Ssthresh: b.Ssthresh(), PacingRate: b.pacingRate, Phase: ph, Vars: []Var{
		{Name: "btlbw", Value: b.btlBw.get(), Unit: "bits/s"},
		{Name: "rtprop", Value: b.rtProp.Seconds(), Unit: "s"},
		{Name: "pacing_gain", Value: b.pacingGain, Unit: "ratio"},
		{Name: "cwnd_gain", Value: b.cwndGain, Unit: "ratio"},
		{Name: "round", Value: float64(b.roundCount), Unit: "count"},
	}}
}

func init() {
	spec.Add(Registry, "bbr", "BBR v1 (draft-cardwell-iccrg-bbr-congestion-control-00): model-based, paced",
		DefaultBBRConfig, func(c BBRConfig, env Env) (Controller, error) { return NewBBR(c, env) })
}

// GovernsRecovery marks BBR as a ccalgo.RecoveryGovernor: its cwnd
// (packet conservation, then the model) applies during loss recovery.
func (b *BBR) GovernsRecovery() {}

// SetMSS changes the segment size (SegmentSizer): BBR's windows are bytes
// from its model; the size enters only its minimum windows.
func (b *BBR) SetMSS(mss int) bool {
	if mss <= 0 || mss > MaxSegment {
		return false
	}
	b.mss = mss
	return true
}
