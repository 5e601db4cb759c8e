package ccalgo

import (
	"fmt"
	"math"
	"time"

	"cclab/clock"
	"cclab/internal/spec"
)

// TFRC constants (RFC 5348) and CCID3's use of them (RFC 4342).
const (
	// TFRCB is b of the throughput equation, the packets acknowledged by one
	// TCP acknowledgement: RFC 5348 §3.1 recommends b = 1.
	TFRCB = 1
	// TFRCMBI is t_mbi, the maximum back-off interval (RFC 5348 §4.3): the
	// allowed rate never falls below one packet per t_mbi.
	TFRCMBI = 64 * time.Second
	// TFRCRTTFilter is q of RFC 5348 §4.3 step 2, the weight of the old RTT
	// estimate in R = q*R + (1-q)*R_sample ("a value of 0.9 for q is
	// recommended").
	TFRCRTTFilter = 0.9
	// TFRCInitialNoFeedback is the no-feedback timer before any feedback
	// (RFC 5348 §4.2: the sender starts at 1 packet/s with the timer set to
	// 2 seconds).
	TFRCInitialNoFeedback = 2 * time.Second
	// MaxNFBMin bounds the nfbmin parameter: a no-feedback timer floor of
	// t_mbi, beyond which the rate could not halve before reaching its
	// floor of one packet per t_mbi anyway.
	MaxNFBMin = TFRCMBI
)

// TFRCThroughput is the TCP throughput equation of RFC 5348 §3.1 in bytes/s
// for packet size s bytes, round-trip time r and loss event rate p, with
// b = TFRCB and t_RTO = 4R:
//
//	X_Bps = s / (R*sqrt(2*b*p/3) + t_RTO*(3*sqrt(3*b*p/8)*p*(1+32*p^2)))
//
// p = 0 (no loss) gives +Inf.
func TFRCThroughput(s float64, r time.Duration, p float64) float64 {
	if p <= 0 {
		return math.Inf(1)
	}
	R := r.Seconds()
	tRTO := 4 * R
	d := R*math.Sqrt(2*TFRCB*p/3) + tRTO*(3*math.Sqrt(3*TFRCB*p/8))*p*(1+32*p*p)
	return s / d
}

// TFRCInitialWindow is W_init of RFC 5348 §4.2 (from RFC 3390), bytes:
// min(4*s, max(2*s, 4380)); the initial rate is W_init/R.
func TFRCInitialWindow(s int) int { return min(4*s, max(2*s, RFC3390IWBytes)) }

// TFRCFeedback is one receiver report as the sender sees it (RFC 5348 §3.2.2,
// carried as RFC 4342 §8 options).
type TFRCFeedback struct {
	Now clock.Time
	// RTT is the sample of RFC 5348 §4.3 step 1, (t_now - t_recvdata) -
	// t_delay; 0 if none.
	RTT time.Duration
	// XRecv is the rate at which the receiver received data since its last
	// report, bytes/s.
	XRecv float64
	// P is the loss event rate the receiver computed (0 = no loss yet).
	P float64
	// DataLimited reports that the sender was data-limited for the whole
	// interval the report covers (no data waited on the rate since the
	// previous report), RFC 5348 §4.3 step 4 and §8.2.1.
	DataLimited bool
}

// TFRCSender is implemented by the rate-based controllers of the datagram
// mode (CCID3): they have no window; the transport paces data at
// PacingRate, puts SenderRTT into every data packet for the receiver's
// loss-event grouping (RFC 5348 §3.2.1), passes each receiver report to
// OnFeedback and calls OnNoFeedback when NoFeedbackDeadline passes.
type TFRCSender interface {
	Controller
	Pacer
	// SenderRTT returns the RTT estimate R carried in data packets (0 before
	// the first sample).
	SenderRTT() time.Duration
	// OnFeedback handles a receiver report (RFC 5348 §4.3).
	OnFeedback(f TFRCFeedback)
	// NoFeedbackDeadline returns when the no-feedback timer expires.
	NoFeedbackDeadline() clock.Time
	// OnNoFeedback handles the timer's expiry (RFC 5348 §4.4); idle
	// reports whether the sender had no data to send since the timer was set.
	OnNoFeedback(now clock.Time, idle bool)
}

// CCID3Config configures CCID3.
type CCID3Config struct {
	// NFBMin is a lower bound on the no-feedback timer (RFC 5348 §4.4 sets
	// it to max(4R, 2s/X)); 0 keeps the RFC's timer. On a live host with
	// sub-millisecond RTTs the receiver's once-per-RTT report is delayed by
	// scheduling longer than 4R and the timer fires spuriously; a bound of
	// a few milliseconds removes that artefact.
	NFBMin time.Duration `param:"nfbmin" help:"lower bound on the no-feedback timer; 0 = RFC 5348 max(4R, 2s/X)"`
	// TGran is t_gran of RFC 5348 §4.6, the sender's scheduling
	// granularity: the transport may send up to X*t_gran bytes back to back
	// (the send quantum) instead of one packet per t_ipi. 0 paces packet by
	// packet (the simulator's exact schedule); on a live host whose timer
	// wakes late, 1 ms lets the rate exceed one packet per wake-up.
	TGran time.Duration `param:"tgran" help:"scheduling granularity t_gran (RFC 5348 §4.6): bursts of up to X*t_gran bytes; 0 = one packet per t_ipi"`
}

// DefaultCCID3Config returns the RFC's behaviour (no bound on the timer).
func DefaultCCID3Config() CCID3Config { return CCID3Config{} }

// CCID3 is DCCP's TCP-Friendly Rate Control (RFC 4342 on RFC 5348) for the
// datagram mode: an equation-based sender whose allowed rate X (bytes/s)
// follows the TCP throughput equation for the loss event rate p and the
// receive rate X_recv the receiver reports once per RTT (the receiver's
// side is TFRCReceiver). Rules, RFC 5348 §4:
//   - start at 1 packet/s with a 2 s no-feedback timer; on feedback without
//     loss, slow start: X = max(min(2X, recv_limit), W_init/R) at most once
//     per R (the first report sets X = W_init/R);
//   - recv_limit = 2*max(X_recv_set) where X_recv_set keeps the receive
//     rates of the last two RTTs; after a data-limited interval the set is
//     maximized (and halved on a new loss event);
//   - with loss: X = max(min(X_Bps, recv_limit), s/t_mbi);
//   - the no-feedback timer max(4R, 2s/X) halves the rate (§4.4).
//
// Not implemented: the optional oscillation prevention of §4.5 (the
// instantaneous rate scaled by sqrt(R_0)/R_sqmean) and the history
// discounting of §5.5. The window of Controller is reported as X*R bytes,
// the rate's equivalent window (the transport does not limit by it).
type CCID3 struct {
	cfg  CCID3Config
	s    float64 // packet size, bytes
	x    float64 // allowed sending rate X, bytes/s
	r    time.Duration
	p    float64 // last reported loss event rate
	xCal float64 // X_Bps for the last p, bytes/s
	// xRecvSet holds (rate bytes/s, time) pairs; an entry with rate +Inf is
	// the initial "Infinity" member.
	xRecvSet   [8]rateEntry
	nSet       int
	tld        clock.Time // time last doubled in slow start (Never: -1 of the RFC)
	nfbAt      clock.Time
	feedbacks  int
	nfbExpired int
	lastXRecv  float64
}

type rateEntry struct {
	rate float64 // bytes/s
	at   clock.Time
}

// NewCCID3 returns a CCID3 sender for packets of env.MSS bytes.
func NewCCID3(cfg CCID3Config, env Env) (*CCID3, error) {
	if env.MSS <= 0 {
		return nil, fmt.Errorf("ccid3: packet size %d: must be > 0 bytes", env.MSS)
	}
	if cfg.NFBMin < 0 || cfg.NFBMin > MaxNFBMin {
		return nil, fmt.Errorf("ccid3: parameter nfbmin=%v: must be 0..%v", cfg.NFBMin, MaxNFBMin)
	}
	if cfg.TGran < 0 || cfg.TGran > time.Second {
		return nil, fmt.Errorf("ccid3: parameter tgran=%v: must be 0..1s", cfg.TGran)
	}
	c := &CCID3{cfg: cfg, s: float64(env.MSS), tld: clock.Never, nfbAt: clock.Never}
	c.x = c.s // RFC 5348 §4.2: 1 packet per second
	c.xRecvSet[0] = rateEntry{rate: math.Inf(1), at: clock.Never}
	c.nSet = 1
	return c, nil
}

// Name returns "ccid3".
func (c *CCID3) Name() string { return "ccid3" }

// Rate returns the allowed sending rate X, bytes/s.
func (c *CCID3) Rate() float64 { return c.x }

// PacingRate returns X in bits/s.
func (c *CCID3) PacingRate() float64 { return c.x * 8 }

// SendQuantum returns max(s, X*t_gran), bytes (RFC 5348 §4.6; one packet
// when t_gran is 0).
func (c *CCID3) SendQuantum() int {
	return max(int(c.s), int(c.x*c.cfg.TGran.Seconds()))
}

// SetMSS changes the segment size s, bytes (SegmentSizer: datagram size
// discovery, RFC 8899). The allowed rate X stays in bytes/s (RFC 8899 §4.4:
// a PLPMTU update does not raise it); s enters the throughput equation,
// the minimum rate s/t_mbi and the no-feedback timer from now on (RFC 5348
// §4.1: s is the segment size the sender uses).
func (c *CCID3) SetMSS(mss int) bool {
	if mss <= 0 || mss > MaxSegment {
		return false
	}
	c.s = float64(mss)
	return true
}

// SenderRTT returns R (0 before the first feedback).
func (c *CCID3) SenderRTT() time.Duration { return c.r }

// LossEventRate returns the last p the receiver reported.
func (c *CCID3) LossEventRate() float64 { return c.p }

// NoFeedbackDeadline returns the no-feedback timer's expiry.
func (c *CCID3) NoFeedbackDeadline() clock.Time { return c.nfbAt }

func (c *CCID3) minRate() float64 { return c.s / TFRCMBI.Seconds() }

func (c *CCID3) initialRate() float64 { return float64(TFRCInitialWindow(int(c.s))) / c.r.Seconds() }

// OnSent arms the no-feedback timer at the first packet (RFC 5348 §4.2);
// the initial Infinity of X_recv_set is stamped then, so it ages out two
// RTTs later like any entry.
func (c *CCID3) OnSent(now clock.Time, _, _ int) {
	if c.feedbacks == 0 && c.nSet == 1 && math.IsInf(c.xRecvSet[0].rate, 1) && c.xRecvSet[0].at == clock.Never {
		c.xRecvSet[0].at = now
	}
	if c.nfbAt == clock.Never {
		c.nfbAt = now.Add(max(TFRCInitialNoFeedback, c.cfg.NFBMin))
	}
}

// maxSet returns max(X_recv_set), bytes/s.
func (c *CCID3) maxSet() float64 {
	m := 0.0
	for _, e := range c.xRecvSet[:c.nSet] {
		m = max(m, e.rate)
	}
	return m
}

// updateSet is Update X_recv_set() of RFC 5348 §4.3: add X_recv, drop
// entries older than two round-trip times.
func (c *CCID3) updateSet(now clock.Time, xRecv float64) {
	k := 0
	for _, e := range c.xRecvSet[:c.nSet] {
		if e.at != clock.Never && now.Sub(e.at) > 2*c.r {
			continue
		}
		c.xRecvSet[k] = e
		k++
	}
	if k == len(c.xRecvSet) { // bounded: forget the oldest finite entry
		copy(c.xRecvSet[:], c.xRecvSet[1:])
		k--
	}
	c.xRecvSet[k] = rateEntry{rate: xRecv, at: now}
	c.nSet = k + 1
}

// maximizeSet is Maximize X_recv_set() of RFC 5348 §4.3: add X_recv, drop
// Infinity, keep only the largest item, stamped now.
func (c *CCID3) maximizeSet(now clock.Time, xRecv float64) {
	m := xRecv
	for _, e := range c.xRecvSet[:c.nSet] {
		if !math.IsInf(e.rate, 1) {
			m = max(m, e.rate)
		}
	}
	c.xRecvSet[0] = rateEntry{rate: m, at: now}
	c.nSet = 1
}

// OnFeedback applies RFC 5348 §4.3.
func (c *CCID3) OnFeedback(f TFRCFeedback) {
	now := f.Now
	c.feedbacks++
	// Steps 1-2: the RTT estimate.
	if f.RTT > 0 {
		if c.r == 0 {
			c.r = f.RTT
		} else {
			c.r = time.Duration(TFRCRTTFilter*float64(c.r) + (1-TFRCRTTFilter)*float64(f.RTT))
		}
	}
	if c.r == 0 {
		return // no RTT yet: nothing can be computed
	}
	// Step 4: the allowed rate.
	lossUp := f.P > c.p
	c.p = f.P
	xRecv := f.XRecv
	c.lastXRecv = xRecv
	var recvLimit float64
	switch {
	case f.DataLimited && lossUp:
		for i := range c.xRecvSet[:c.nSet] {
			c.xRecvSet[i].rate /= 2
		}
		xRecv *= 0.85
		c.maximizeSet(now, xRecv)
		recvLimit = c.maxSet()
	case f.DataLimited:
		c.maximizeSet(now, xRecv)
		recvLimit = 2 * c.maxSet()
	default:
		c.updateSet(now, xRecv)
		recvLimit = 2 * c.maxSet()
	}
	c.setRate(now, recvLimit)
	// Step 5: restart the no-feedback timer.
	c.armNoFeedback(now)
}

// setRate is the rate rule of RFC 5348 §4.3 step 4 for recv_limit.
func (c *CCID3) setRate(now clock.Time, recvLimit float64) {
	if c.p > 0 {
		c.xCal = TFRCThroughput(c.s, c.r, c.p)
		c.x = max(min(c.xCal, recvLimit), c.minRate())
		return
	}
	if c.tld == clock.Never || now.Sub(c.tld) >= c.r {
		c.x = max(min(2*c.x, recvLimit), c.initialRate())
		c.tld = now
	}
}

func (c *CCID3) armNoFeedback(now clock.Time) {
	d := max(4*c.r, time.Duration(2*c.s/c.x*float64(time.Second)), c.cfg.NFBMin)
	c.nfbAt = now.Add(d)
}

// OnNoFeedback applies RFC 5348 §4.4 when the no-feedback timer expires.
func (c *CCID3) OnNoFeedback(now clock.Time, idle bool) {
	c.nfbExpired++
	switch {
	case c.r == 0 || c.feedbacks == 0:
		if !idle {
			c.x = max(c.x/2, c.minRate())
		}
	case idle && ((c.p > 0 && c.lastXRecv < c.initialRate()) || (c.p == 0 && c.x < 2*c.initialRate())):
		// Idle and already at or below the recover rate: do nothing.
	case c.p == 0:
		c.x = max(c.x/2, c.minRate())
	case c.xCal > 2*c.lastXRecv:
		c.updateLimits(now, c.lastXRecv)
	default:
		c.updateLimits(now, c.xCal/2)
	}
	if c.r == 0 {
		c.nfbAt = now.Add(max(TFRCInitialNoFeedback, c.cfg.NFBMin))
		return
	}
	c.armNoFeedback(now)
}

// updateLimits is Update_Limits(timer_limit) of RFC 5348 §4.4.
func (c *CCID3) updateLimits(now clock.Time, limit float64) {
	limit = max(limit, c.minRate())
	c.xRecvSet[0] = rateEntry{rate: limit / 2, at: now}
	c.nSet = 1
	c.lastXRecv = limit / 2
	c.setRate(now, 2*c.maxSet())
}

// OnAck does nothing: the receiver's reports drive CCID3 (OnFeedback).
func (c *CCID3) OnAck(Ack) {}

// OnCongestion does nothing: losses reach CCID3 as the receiver's loss event rate.
func (c *CCID3) OnCongestion(Congestion) {}

// OnRecoveryExit does nothing.
func (c *CCID3) OnRecoveryExit(clock.Time, int) {}

// OnRTO does nothing: the no-feedback timer is CCID3's timeout.
func (c *CCID3) OnRTO(clock.Time, int) {}

// Cwnd returns the rate's equivalent window X*R, bytes (at least one
// packet); the transport does not limit CCID3 by it.
func (c *CCID3) Cwnd() int {
	return max(int(c.s), int(c.x*c.r.Seconds()))
}

// Ssthresh returns 0: CCID3 has no slow-start threshold.
func (c *CCID3) Ssthresh() int { return 0 }

// State returns a snapshot: the rate, R, p and the equation's rate.
func (c *CCID3) State() State {
	ph := PhaseCongAvoid
	if c.p == 0 {
		ph = PhaseSlowStart
	}
	return State{Cwnd: c.Cwnd(), PacingRate: c.PacingRate(), Phase: ph, Vars: []Var{
		{Name: "x", Value: c.x * 8, Unit: "bits/s"},
		{Name: "x_recv", Value: c.lastXRecv * 8, Unit: "bits/s"},
		{Name: "p", Value: c.p, Unit: "ratio"},
		{Name: "r", Value: c.r.Seconds(), Unit: "s"},
		{Name: "nofeedback_expiries", Value: float64(c.nfbExpired), Unit: "count"},
	}}
}

func init() {
	spec.Add(DgramRegistry, "ccid3", "DCCP CCID3 (RFC 4342, TFRC RFC 5348): equation-based rate control; for -mode datagram",
		DefaultCCID3Config, func(c CCID3Config, env Env) (Controller, error) { return NewCCID3(c, env) })
}
