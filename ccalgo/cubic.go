package ccalgo

import (
	"fmt"
	"math"

	"cclab/clock"
	"cclab/internal/spec"
)

// CUBIC constants, RFC 9438 §5 ("Constants").
const (
	// CubicC is the scaling constant C of RFC 9438 §4.2 Figure 1, in
	// segments/s^3 (RFC 9438 §5.1: C = 0.4).
	CubicC = 0.4
	// CubicBeta is the multiplicative decrease factor beta_cubic of RFC 9438
	// §4.6 (β_cubic = 0.7).
	CubicBeta = 0.7
	// MaxCubicC is the largest scaling constant a spec may set, segments/s^3
	// (250 times RFC 9438's 0.4: the window then regrows to W_max within a
	// tenth of a second even after a loss at 10^5 segments).
	MaxCubicC = 100.0
)

// CubicConfig configures CUBIC.
type CubicConfig struct {
	BaseConfig
	C        float64 `param:"c" help:"cubic scaling constant C, segments/s^3 (RFC 9438: 0.4)"`
	Beta     float64 `param:"beta" help:"multiplicative decrease factor beta_cubic, 0<beta<1 (RFC 9438: 0.7)"`
	FastConv bool    `param:"fastconv" help:"fast convergence: W_max = cwnd*(1+beta)/2 when cwnd < W_max (RFC 9438 §4.7; default true)"`
	Friendly bool    `param:"friendly" help:"Reno-friendly region with W_est (RFC 9438 §4.3; default true)"`
	// Linux selects the arithmetic of Linux's tcp_cubic.c (and ns-3's
	// TcpCubic, its port): cubic_tcpcubic.go.
	Linux bool `param:"linux" help:"Linux/ns-3 arithmetic: whole segments, a step of at least 2 acknowledged segments, target at t + min RTT, ssthresh = cwnd*beta, W_max = 0 after an RTO (default false: RFC 9438)"`
	// HyStart ends slow start as Linux's tcp_cubic.c does (hystart.go).
	HyStart bool `param:"hystart" help:"Linux's HyStart (Ha & Rhee 2011): slow start ends at an ACK train longer than half the min RTT or an RTT rise of min RTT/8 (4..16 ms), cwnd >= 16 segments (default false: RFC 5681 slow start)"`
	// RTOFlight, with Linux, takes a timeout's ssthresh during recovery
	// from the flight the transport passes, as ns-3 does (OnRTO).
	RTOFlight bool `param:"rtoflight" help:"with linux=true: a timeout during recovery sets ssthresh = beta * the flight the transport passes (whole segments; the pipe with the recovery's flight=pipe), as ns-3.37's TcpCubic::GetSsThresh on the cwnd TcpPrrRecovery set to pipe + sndcnt (default false: Linux's tcp_enter_loss keeps the recovery's ssthresh)"`
	// RTOAlways recomputes ssthresh at every timeout, backed-off repeats
	// included, as ns-3 3.37 does (OnRTO).
	RTOAlways bool `param:"rtoalways" help:"every timeout recomputes ssthresh, repeats without a new ACK in between included (ns-3.37's TcpSocketBase::ReTxTimeout: its hold test IsHeadRetransmitted runs after SetSentListLost cleared every retransmitted flag, so it never holds; default false: RFC 5681 §3.1 holds ssthresh across backed-off timeouts)"`
	// Acks selects which ACKs grow the window and by how much: "" (every
	// ACK outside recovery by the data it newly delivered, cumulatively or
	// by SACK) or AcksNS3.
	Acks string `param:"acks" help:"which ACKs grow cwnd and by how much: rfc (every ACK outside recovery, by the data it newly delivered, SACKed included; default) or ns3 (ns-3.37's TcpSocketBase::ProcessAck: by the whole segments the cumulative ACK moved over; none on an ACK with new SACK information outside a timeout's recovery (CA_DISORDER); after a timeout every ACK below its RecoveryPoint, and the ACK that reaches it by the segments beyond it only)"`
	// CA selects, with Linux, how acknowledged segments turn into
	// congestion-avoidance growth: "" (Linux's tcp_cong_avoid_ai) or CANS3.
	CA string `param:"ca" help:"with linux=true, congestion-avoidance counting: linux (tcp_cong_avoid_ai: +cnt_credit/cnt segments per ACK, the count cleared at a congestion event; default) or ns3 (ns-3.37's TcpCubic::IncreaseWindow: at most +1 segment per ACK, the count m_cWndCnt never cleared, so a large cumulative ACK gives +1 on many later ACKs)"`
	// SlowStart selects the slow-start growth: "" (RFC 5681 with RFC 3465
	// byte counting, the shared one) or SlowStartNS3.
	SlowStart string `param:"ss" help:"slow-start growth: rfc (RFC 5681/3465: cwnd += min(acked, abc*SMSS), up to ssthresh; default) or ns3 (ns-3.37's TcpCubic: cwnd += every whole segment the ACK cumulatively acknowledges, data SACKed before included, no limit per ACK and past ssthresh)"`
}

// Values of CubicConfig.SlowStart.
const (
	SlowStartRFC = "rfc"
	// SlowStartNS3 is ns-3.37's TcpCubic::IncreaseWindow below ssthresh:
	// cwnd += segmentsAcked * SMSS, where TcpSocketBase::ProcessAck's
	// segmentsAcked counts the whole segments the cumulative ACK moved over
	// (also those SACKed before, e.g. after a retransmission timeout); no
	// RFC 3465 limit per ACK, no clamp at ssthresh, nothing left over for
	// congestion avoidance on that ACK.
	SlowStartNS3 = "ns3"
)

// Values of CubicConfig.Acks and CubicConfig.CA.
const (
	AcksRFC = "rfc"
	// AcksNS3 is ns-3.37's TcpSocketBase::ProcessAck: IncreaseWindow gets
	// the whole segments the cumulative ACK moved over (remainders below a
	// segment carried, m_bytesAckedNotProcessed), in CA_OPEN; an ACK with
	// new SACK information (isDupack) leaves CA_OPEN for CA_DISORDER or
	// stays there, and grows nothing; in CA_LOSS (after a timeout, below
	// m_recover) every cumulative advance counts, SACK or not; the ACK that
	// reaches m_recover counts (ack - m_recover)/SMSS segments only.
	AcksNS3 = "ns3"
	CALinux = "linux"
	// CANS3 is ns-3.37's TcpCubic::IncreaseWindow above ssthresh:
	// m_cWndCnt += segmentsAcked; if m_cWndCnt >= cnt, cwnd += 1 segment and
	// m_cWndCnt -= cnt. At most one segment per ACK; m_cWndCnt is never
	// cleared (not by GetSsThresh, not by CubicReset).
	CANS3 = "ns3"
)

// DefaultCubicConfig returns C=0.4, beta=0.7, fast convergence and the
// Reno-friendly region on.
func DefaultCubicConfig() CubicConfig {
	return CubicConfig{BaseConfig: DefaultBaseConfig(), C: CubicC, Beta: CubicBeta, FastConv: true, Friendly: true}
}

func (c CubicConfig) validate() error {
	if err := c.BaseConfig.validate("cubic"); err != nil {
		return err
	}
	if !(c.C > 0 && c.C <= MaxCubicC) {
		return fmt.Errorf("cubic: parameter c=%v: must be above 0 and at most %v segments/s^3", c.C, MaxCubicC)
	}
	if !(c.Beta > 0 && c.Beta < 1) {
		return fmt.Errorf("cubic: parameter beta=%v: must be strictly between 0 and 1", c.Beta)
	}
	switch c.SlowStart {
	case "", SlowStartRFC, SlowStartNS3:
	default:
		return fmt.Errorf("cubic: parameter ss=%q: must be %s or %s", c.SlowStart, SlowStartRFC, SlowStartNS3)
	}
	switch c.Acks {
	case "", AcksRFC, AcksNS3:
	default:
		return fmt.Errorf("cubic: parameter acks=%q: must be %s or %s", c.Acks, AcksRFC, AcksNS3)
	}
	switch c.CA {
	case "", CALinux:
	case CANS3:
		if !c.Linux {
			return fmt.Errorf("cubic: parameter ca=ns3: needs linux=true (ns-3's TcpCubic counts whole segments)")
		}
	default:
		return fmt.Errorf("cubic: parameter ca=%q: must be %s or %s", c.CA, CALinux, CANS3)
	}
	return nil
}

// Cubic is CUBIC congestion control as RFC 9438 specifies it (without
// HyStart++, which RFC 9438 §4.10 allows but does not require: slow start is
// the shared RFC 5681/3465 one).
//
// Windows in the cubic formulas are in segments (cwnd/MSS) and times in
// seconds, as in the RFC; cwnd itself stays in bytes.
//
//   - W_cubic(t) = C*(t-K)^3 + W_max, K = cbrt((W_max - cwnd_epoch)/C)
//     (§4.2), t from the start of the current congestion-avoidance stage,
//     taken from Ack.Now;
//   - per ACK in congestion avoidance: target = W_cubic(t+RTT) clamped to
//     [cwnd, 1.5*cwnd] with RTT the smoothed RTT, cwnd += (target-cwnd)/cwnd
//     per acknowledged segment (§4.2, §4.4, §4.5);
//   - Reno-friendly region (§4.3): W_est starts at cwnd_epoch and grows by
//     alpha_cubic*segments_acked/cwnd with alpha_cubic = 3(1-beta)/(1+beta),
//     becoming 1 once W_est >= cwnd_prior; when W_cubic(t) < W_est,
//     cwnd = W_est;
//   - congestion event (§4.6, §4.7): W_max = cwnd, or cwnd*(1+beta)/2 with
//     fast convergence when cwnd < the previous W_max; cwnd_prior = cwnd;
//     ssthresh = max(FlightSize*beta, 2 SMSS); cwnd = ssthresh at recovery
//     exit (loss) or at once (ECN);
//   - timeout (§4.8): ssthresh as above, cwnd = 1 SMSS; the first CA stage
//     afterwards uses K = 0 and W_max = cwnd at its start.
type Cubic struct {
	window
	cfg CubicConfig

	wMax       float64    // W_max, segments
	cwndPrior  float64    // cwnd at the last congestion event, segments
	cwndEpoch  float64    // cwnd at the start of the CA stage, segments
	k          float64    // K, seconds
	wEst       float64    // W_est, segments
	epochStart clock.Time // start of the current CA stage; Never if none
	resetWMax  bool       // next CA stage starts with K=0, W_max = cwnd_epoch (after RTO or before any event)
	frac       float64    // fractional cwnd increase not yet applied, bytes
	alpha      float64    // 3(1-beta)/(1+beta)

	appLimitedSince clock.Time // first app-limited ACK of the current idle stretch
	cumAck          uint64     // the cumulative ACK point of the previous OnAck, bytes (ss=ns3)
	cumRem          int        // cumulative advance not yet a whole segment, bytes (ss=ns3)
	ns3Rem          int        // cumulative advance not yet a whole segment, bytes (acks=ns3: m_bytesAckedNotProcessed)
	lx              linuxCubic // Linux arithmetic state (cfg.Linux)
	hs              hyStart    // HyStart state (cfg.HyStart)
	vars            [5]Var
}

// NewCubic returns a CUBIC controller.
func NewCubic(cfg CubicConfig, env Env) (*Cubic, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	w, err := newWindow("cubic", cfg.BaseConfig, env.MSS)
	if err != nil {
		return nil, err
	}
	c := reuse[Cubic](env)
	*c = Cubic{window: w, cfg: cfg, resetWMax: true,
		alpha: 3 * (1 - cfg.Beta) / (1 + cfg.Beta)}
	return c, nil
}

// Name returns "cubic".
func (c *Cubic) Name() string { return "cubic" }

// Config returns the configuration in use.
func (c *Cubic) Config() CubicConfig { return c.cfg }

// K returns the current K, seconds.
func (c *Cubic) K() float64 { return c.k }

// WMax returns W_max, segments.
func (c *Cubic) WMax() float64 { return c.wMax }

// WEst returns the Reno-friendly estimate W_est, segments.
func (c *Cubic) WEst() float64 { return c.wEst }

// WCubic returns W_cubic(t) = C*(t-K)^3 + W_max in segments, t seconds after
// the start of the congestion-avoidance stage.
func (c *Cubic) WCubic(t float64) float64 {
	d := t - c.k
	return c.cfg.C*d*d*d + c.wMax
}

func (c *Cubic) segs() float64 { return float64(c.cwnd) / float64(c.mss) }

// startEpoch begins a congestion-avoidance stage at now.
func (c *Cubic) startEpoch(now clock.Time) {
	c.epochStart = now
	c.cwndEpoch = c.segs()
	if c.resetWMax || c.wMax < c.cwndEpoch {
		c.wMax = c.cwndEpoch
		c.resetWMax = false
	}
	c.k = math.Cbrt((c.wMax - c.cwndEpoch) / c.cfg.C)
	c.wEst = c.cwndEpoch
	c.frac = 0
}

// cumAdvance returns how far the cumulative ACK point moved since the
// previous OnAck, bytes, with the part below a whole segment of earlier
// ACKs added (ns-3's m_bytesAckedNotProcessed); the remainder below a
// whole segment is kept for the next ACK.
func (c *Cubic) cumAdvance(cum uint64) int {
	if cum <= c.cumAck {
		return 0
	}
	adv := int(min(cum-c.cumAck, math.MaxInt32/2)) + c.cumRem
	c.cumAck = cum
	c.cumRem = adv % c.mss
	return adv - c.cumRem
}

// OnAck grows cwnd: slow start below ssthresh, CUBIC above.
func (c *Cubic) OnAck(a Ack) {
	c.noteAck()
	adv := c.cumAdvance(a.CumAck)
	if c.cfg.HyStart && c.inSlowStart() && !a.InRecovery && !c.inRecovery && c.hs.onAck(a, c.cwnd, c.mss, c.epochStart) {
		c.ssthresh = c.cwnd // tcp_cubic.c: snd_ssthresh = snd_cwnd
	}
	if a.AppLimited {
		// Do not let the time spent app-limited count as growth time
		// (RFC 9438 §5.8; Linux shifts epoch_start after idle).
		if c.appLimitedSince == clock.Never {
			c.appLimitedSince = a.Now
		}
		return
	}
	if c.appLimitedSince != clock.Never {
		if c.epochStart != clock.Never {
			c.epochStart = c.epochStart.Add(a.Now.Sub(c.appLimitedSince))
		}
		c.appLimitedSince = clock.Never
	}
	if !c.mayGrow(a) || a.Acked <= 0 {
		return
	}
	if c.cfg.Acks == AcksNS3 {
		c.ns3Grow(a)
		return
	}
	acked := a.Acked
	if c.inSlowStart() && c.cfg.SlowStart == SlowStartNS3 {
		c.cwnd += adv / c.mss * c.mss
		return
	}
	if c.inSlowStart() {
		acked = c.slowStart(acked)
		if acked == 0 {
			return
		}
	}
	if c.cfg.Linux {
		c.linuxUpdate(a, acked)
		return
	}
	c.rfcGrow(a, acked)
}

// rfcGrow is RFC 9438's congestion-avoidance growth for one ACK of acked
// bytes.
func (c *Cubic) rfcGrow(a Ack, acked int) {
	if c.epochStart == clock.Never {
		c.startEpoch(a.Now)
	}
	rtt := a.SRTT
	if rtt <= 0 {
		rtt = a.RTT
	}
	t := a.Now.Sub(c.epochStart).Seconds()
	cwnd := c.segs()
	ackedSegs := float64(acked) / float64(c.mss)

	// Reno-friendly estimate (§4.3).
	alpha := c.alpha
	if c.wEst >= c.cwndPrior {
		alpha = 1
	}
	c.wEst += alpha * ackedSegs / cwnd

	if c.cfg.Friendly && c.WCubic(t) < c.wEst {
		if want := int(c.wEst * float64(c.mss)); want > c.cwnd {
			c.cwnd = want
		}
		c.frac = 0
		return
	}
	target := min(max(c.WCubic(t+rtt.Seconds()), cwnd), 1.5*cwnd)
	c.frac += (target - cwnd) / cwnd * ackedSegs * float64(c.mss)
	if c.frac >= 1 {
		n := int(c.frac)
		c.cwnd += n
		c.frac -= float64(n)
	}
}

// ns3Grow grows cwnd for one ACK with acks=ns3 (AcksNS3): the whole
// segments ns-3.37's TcpSocketBase::ProcessAck passes to IncreaseWindow.
func (c *Cubic) ns3Grow(a Ack) {
	adv := a.CumAcked + c.ns3Rem
	c.ns3Rem = adv % c.mss
	segs := adv / c.mss
	switch {
	case a.RTOPoint != 0 && a.CumAck >= a.RTOPoint:
		// CA_LOSS -> CA_OPEN: "segsAcked = (ackNumber - m_recover) /
		// m_tcb->m_segmentSize".
		segs = int(min(a.CumAck-a.RTOPoint, math.MaxInt32/2)) / c.mss
	case a.RTOPoint != 0:
		// CA_LOSS below m_recover: PktsAcked and IncreaseWindow with every
		// segment the ACK moved over, SACK information or not.
	case a.Sacked > 0:
		// isDupack (new SACK information): DupAck moves CA_OPEN to
		// CA_DISORDER (or stays there), and no IncreaseWindow follows.
		segs = 0
	}
	if segs <= 0 {
		return
	}
	if c.inSlowStart() {
		if c.cfg.SlowStart == SlowStartNS3 {
			c.cwnd += segs * c.mss
			return
		}
		acked := c.slowStart(segs * c.mss)
		if segs = acked / c.mss; segs <= 0 {
			return
		}
	}
	if c.cfg.Linux {
		c.linuxSegs(a, segs)
		return
	}
	c.rfcGrow(a, segs*c.mss)
}

// congestionEvent applies §4.7 (W_max, fast convergence) and §4.6
// (cwnd_prior, ssthresh).
func (c *Cubic) congestionEvent(flight int) {
	cwnd := c.segs()
	if c.cfg.FastConv && cwnd < c.wMax {
		c.wMax = cwnd * (1 + c.cfg.Beta) / 2
	} else {
		c.wMax = cwnd
	}
	c.resetWMax = false
	c.cwndPrior = cwnd
	c.ssthresh = max(int(float64(flight)*c.cfg.Beta), MinSsthreshSegments*c.mss)
	c.bytesAcked = 0
	c.epochStart = clock.Never
}

// OnCongestion applies the CUBIC decrease; for ECN cwnd = ssthresh at once.
func (c *Cubic) OnCongestion(e Congestion) {
	if c.cfg.Linux {
		c.linuxEvent()
	} else {
		c.congestionEvent(e.InFlight)
	}
	switch e.Kind {
	case Loss:
		c.inRecovery = true
	case ECN:
		c.cwnd = c.ssthresh
	}
}

// OnRecoveryExit sets cwnd = ssthresh.
func (c *Cubic) OnRecoveryExit(clock.Time, int) {
	c.exitRecovery()
	c.epochStart = clock.Never
}

// OnRTO applies §4.8: ssthresh = max(FlightSize*beta, 2 SMSS) (held across
// backed-off timeouts), cwnd = 1 SMSS, and the next CA stage restarts the
// cubic curve at its own cwnd with K = 0.
func (c *Cubic) OnRTO(now clock.Time, inFlight int) {
	if !c.afterRTO || c.cfg.RTOAlways {
		if c.cfg.Linux {
			// tcp_enter_loss keeps the ssthresh of a recovery in progress
			// (cwnd is not the reduced window here: the recovery strategy
			// held it); bictcp_reset clears W_max either way.
			if !c.inRecovery {
				c.linuxEvent()
			} else if c.cfg.RTOFlight {
				c.ssthresh = max(int(float64(inFlight/c.mss)*c.cfg.Beta), MinSsthreshSegments) * c.mss
			}
			c.lx.lastMax, c.wMax = 0, 0
		} else {
			c.ssthresh = max(int(float64(inFlight)*c.cfg.Beta), MinSsthreshSegments*c.mss)
		}
	}
	c.cwnd = LossWindowSegments * c.mss
	c.bytesAcked = 0
	c.inRecovery = false
	c.afterRTO = true
	c.hs.restart(now, 0) // the next ACK starts a round
	c.epochStart = clock.Never
	c.resetWMax = true
}

// State returns a snapshot; Vars hold W_max, K, W_est, cwnd_epoch and
// cwnd_prior. Vars uses controller-owned storage valid until the next call.
func (c *Cubic) State() State {
	s := c.window.state()
	c.vars = [...]Var{
		{Name: "w_max", Value: c.wMax, Unit: "segments"},
		{Name: "k", Value: c.k, Unit: "s"},
		{Name: "w_est", Value: c.wEst, Unit: "segments"},
		{Name: "cwnd_epoch", Value: c.cwndEpoch, Unit: "segments"},
		{Name: "cwnd_prior", Value: c.cwndPrior, Unit: "segments"},
	}
	s.Vars = c.vars[:]
	return s
}

func init() {
	spec.Add(Registry, "cubic", "CUBIC (RFC 9438) with fast convergence and the Reno-friendly region; no HyStart++ (Linux's HyStart: hystart=true)",
		DefaultCubicConfig, func(c CubicConfig, env Env) (Controller, error) { return NewCubic(c, env) })
}

// SetMSS changes the segment size (SegmentSizer): W_max, the epoch's
// windows and W_est, in segments, are rescaled so that they stand for the
// same bytes. With Linux arithmetic (whole segments) it declines.
func (c *Cubic) SetMSS(mss int) bool {
	if c.cfg.Linux || mss <= 0 || mss > MaxSegment {
		return false
	}
	f := float64(c.mss) / float64(mss)
	c.wMax, c.cwndPrior, c.cwndEpoch, c.wEst = c.wMax*f, c.cwndPrior*f, c.cwndEpoch*f, c.wEst*f
	c.mss = mss
	return true
}
