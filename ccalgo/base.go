package ccalgo

import (
	"fmt"
	"math"

	"cclab/clock"
)

// RFC constants shared by the window-based controllers.
const (
	// RFC6928IWBytes is the byte bound of the RFC 6928 §2 initial window,
	// IW = min(10*MSS, max(2*MSS, 14600)) bytes.
	RFC6928IWBytes = 14600
	// RFC6928IWSegments is the segment bound of that rule (10*MSS).
	RFC6928IWSegments = 10
	// ABCLimit is the Appropriate Byte Counting limit L of RFC 3465 §2.2:
	// slow start grows cwnd by at most L*SMSS per ACK, and L MUST NOT exceed 2.
	ABCLimit = 2
	// LossWindowSegments is the RFC 5681 §3.1 loss window, LW = 1 SMSS,
	// cwnd after a retransmission timeout.
	LossWindowSegments = 1
	// MinSsthreshSegments is the floor of the RFC 5681 §3.1 equation (4)
	// ssthresh = max(FlightSize/2, 2*SMSS).
	MinSsthreshSegments = 2
	// MaxWindowParam is the largest window a spec may set (parameters iw,
	// ssthresh, ackratio), packets: 2^14, so that a window in bytes,
	// MaxWindowParam × MaxSegment < 2^31, fits any int (a huge iw used to
	// overflow iw*MSS into a negative window).
	MaxWindowParam = 1 << 14
	// MaxSegment is the largest segment size a driver gives a controller
	// (Env.MSS), bytes: an IPv4 packet's maximum length (RFC 791). Specs are
	// range-checked by building them with it (ProbeEnv).
	MaxSegment = 65535
)

// InfiniteSsthresh is the initial ssthresh when none is configured: RFC 5681
// §3.1 says it SHOULD be "arbitrarily high" (e.g. the size of the largest
// possible advertised window).
const InfiniteSsthresh = math.MaxInt32

// Phase names reported in State.Phase.
const (
	PhaseSlowStart = "slow_start"
	PhaseCongAvoid = "congestion_avoidance"
	PhaseRecovery  = "recovery"
	PhaseAfterRTO  = "rto" // after a timeout, before the next new ACK
)

// BaseConfig holds the parameters shared by every window-based controller
// in this package. Controller configs embed it, so "reno:iw=4,abc=1" works for
// all of them.
type BaseConfig struct {
	// IW is the initial window in packets (MSS-sized segments); 0 selects
	// RFC 6928 §2, min(10*MSS, max(2*MSS, 14600 bytes)).
	IW int `param:"iw" help:"initial window, packets; 0 = RFC 6928 min(10*MSS, max(2*MSS, 14600 B))"`
	// ABC is the Appropriate Byte Counting limit L of RFC 3465 in SMSS:
	// slow start adds min(acked, ABC*SMSS) per ACK. 1 is the strict RFC 5681
	// rule (cwnd += min(N, SMSS)); 2 is the RFC 3465 maximum and the default.
	ABC int `param:"abc" help:"slow-start byte-counting limit L per ACK, SMSS (1 = RFC 5681, 2 = RFC 3465 max)"`
	// Ssthresh is the initial slow-start threshold in packets; 0 means
	// arbitrarily high (RFC 5681 §3.1).
	Ssthresh int `param:"ssthresh" help:"initial slow-start threshold, packets; 0 = arbitrarily high (RFC 5681)"`
}

// DefaultBaseConfig returns the shared defaults: IW per RFC 6928, ABC L = 2
// (RFC 3465), initial ssthresh arbitrarily high.
func DefaultBaseConfig() BaseConfig { return BaseConfig{IW: 0, ABC: ABCLimit, Ssthresh: 0} }

// validate checks the shared parameters and names the faulty field.
func (c BaseConfig) validate(name string) error {
	if c.IW < 0 || c.IW > MaxWindowParam {
		return fmt.Errorf("%s: parameter iw=%d: must be 0..%d packets (0 = RFC 6928)", name, c.IW, MaxWindowParam)
	}
	if c.ABC < 1 || c.ABC > ABCLimit {
		return fmt.Errorf("%s: parameter abc=%d: must be 1 or 2 (RFC 3465 §2.2: L MUST NOT exceed 2*SMSS)", name, c.ABC)
	}
	if c.Ssthresh < 0 || c.Ssthresh > MaxWindowParam {
		return fmt.Errorf("%s: parameter ssthresh=%d: must be 0..%d packets (0 = arbitrarily high)", name, c.Ssthresh, MaxWindowParam)
	}
	return nil
}

// InitialWindow returns the RFC 6928 §2 initial window for mss, bytes:
// min(10*MSS, max(2*MSS, 14600)).
func InitialWindow(mss int) int {
	return min(RFC6928IWSegments*mss, max(2*mss, RFC6928IWBytes))
}

// window is the shared RFC 5681 window machinery (cwnd, ssthresh, byte
// counting) that the controllers of this package embed. Its methods
// implement one RFC rule each so a controller composes the rules it keeps
// and replaces the ones it changes. All sizes are bytes.
type window struct {
	mss        int  // sender maximum segment size (SMSS), bytes
	cwnd       int  // congestion window, bytes
	ssthresh   int  // slow-start threshold, bytes
	bytesAcked int  // RFC 3465 §2.1 bytes_acked counter for congestion avoidance, bytes
	abcL       int  // ABC limit, SMSS
	inRecovery bool // between OnCongestion(Loss) and OnRecoveryExit
	afterRTO   bool // an RTO fired and no new ACK has arrived since (RFC 5681 §3.1 backoff note)
	perAckCA   bool // congestion avoidance per ACK (RFC 5681 eq. (3)) instead of byte counting
	halveCwnd  bool // ssthresh halves cwnd, not FlightSize, outside recovery (RenoConfig.Halve HalveCwnd)
}

// newWindow builds the shared window from the base config and the MSS.
func newWindow(name string, c BaseConfig, mss int) (window, error) {
	if mss <= 0 || mss > MaxSegment {
		return window{}, fmt.Errorf("%s: Env.MSS=%d: must be a segment size of 1..%d bytes", name, mss, MaxSegment)
	}
	if err := c.validate(name); err != nil {
		return window{}, err
	}
	w := window{mss: mss, abcL: c.ABC, ssthresh: InfiniteSsthresh}
	if c.IW > 0 {
		w.cwnd = c.IW * mss
	} else {
		w.cwnd = InitialWindow(mss)
	}
	if c.Ssthresh > 0 {
		w.ssthresh = c.Ssthresh * mss
	}
	return w, nil
}

// SetMSS changes the SMSS (SegmentSizer); cwnd and ssthresh stay in bytes.
func (w *window) SetMSS(mss int) bool {
	if mss <= 0 || mss > MaxSegment {
		return false
	}
	w.mss = mss
	return true
}

// inSlowStart reports cwnd < ssthresh (RFC 5681 §3.1: slow start is used when
// cwnd < ssthresh; this package uses congestion avoidance when they are equal).
func (w *window) inSlowStart() bool { return w.cwnd < w.ssthresh }

// slowStart applies RFC 5681 §3.1 slow start with RFC 3465 §2.2 byte
// counting: cwnd += min(acked, L*SMSS), not beyond ssthresh. It returns the
// acknowledged bytes left over once cwnd reached ssthresh (to be fed to
// congestion avoidance, as Linux's tcp_slow_start does), 0 otherwise.
func (w *window) slowStart(acked int) int {
	inc := min(acked, w.abcL*w.mss)
	if w.cwnd+inc <= w.ssthresh {
		w.cwnd += inc
		return 0
	}
	used := max(0, w.ssthresh-w.cwnd)
	w.cwnd = max(w.cwnd, w.ssthresh)
	return acked - used
}

// congestionAvoidance applies RFC 5681 §3.1 congestion avoidance with
// RFC 3465 §2.1 byte counting: bytes_acked accumulates the acknowledged
// bytes; whenever it reaches cwnd, cwnd grows by one SMSS and bytes_acked
// drops by the old cwnd. This gives +1 SMSS per RTT whatever the ACK pattern.
//
// With perAckCA it applies RFC 5681 §3.1 equation (3) instead: cwnd +=
// SMSS*SMSS/cwnd, at least 1 byte, once per ACK.
func (w *window) congestionAvoidance(acked int) {
	if w.perAckCA {
		w.cwnd += max(1, w.mss*w.mss/max(w.cwnd, 1))
		return
	}
	w.bytesAcked += acked
	for w.bytesAcked >= w.cwnd && w.cwnd > 0 {
		w.bytesAcked -= w.cwnd
		w.cwnd += w.mss
	}
}

// renoGrowth is the RFC 5681 growth rule for one ACK of acked bytes: slow
// start below ssthresh, congestion avoidance at or above it.
func (w *window) renoGrowth(acked int) {
	if acked <= 0 {
		return
	}
	if w.inSlowStart() {
		acked = w.slowStart(acked)
		if acked == 0 {
			return
		}
	}
	w.congestionAvoidance(acked)
}

// mayGrow reports whether an ACK may grow the window: not during loss
// recovery (the recovery strategy governs sending then) and not when the
// sender was application-limited (RFC 7661 spirit: a window not used is not
// validated and must not grow).
func (w *window) mayGrow(a Ack) bool { return !a.InRecovery && !w.inRecovery && !a.AppLimited }

// noteAck records that a new ACK arrived (ends the RTO backoff state).
func (w *window) noteAck() { w.afterRTO = false }

// halfFlight is RFC 5681 §3.1 equation (4): max(FlightSize/2, 2*SMSS), bytes.
// With halveCwnd it halves cwnd instead (Linux's tcp_reno_ssthresh) unless in
// recovery, where the recovery strategy, not cwnd, governs sending.
func (w *window) halfFlight(flight int) int {
	if w.halveCwnd && !w.inRecovery {
		flight = w.cwnd
	}
	return max(flight/2, MinSsthreshSegments*w.mss)
}

// enterLoss applies RFC 5681 §3.2 step 2 for a loss detected by duplicate
// ACKs or SACK: ssthresh = max(FlightSize/2, 2*SMSS). cwnd is left to the
// recovery strategy until OnRecoveryExit.
func (w *window) enterLoss(flight int) {
	w.ssthresh = w.halfFlight(flight)
	w.bytesAcked = 0
	w.inRecovery = true
}

// exitRecovery applies RFC 6582 §3.2 step 3, option (2): cwnd = ssthresh,
// "deflating" the window. (Option (1), min(ssthresh, max(FlightSize, SMSS) +
// SMSS), is not used; RFC 6582 asks implementations of option (2) to avoid
// a burst when little data is outstanding, which is the transport's pacing
// or burst limit.)
func (w *window) exitRecovery() {
	w.cwnd = w.ssthresh
	w.bytesAcked = 0
	w.inRecovery = false
}

// ecnReduce applies RFC 3168 §6.1.2: on ECN-Echo, ssthresh = max(FlightSize/2,
// 2*SMSS) and cwnd = ssthresh at once, with no recovery episode.
func (w *window) ecnReduce(flight int) {
	w.ssthresh = w.halfFlight(flight)
	w.cwnd = w.ssthresh
	w.bytesAcked = 0
}

// rto applies RFC 5681 §3.1 equation (4) and the loss window: ssthresh =
// max(FlightSize/2, 2*SMSS), cwnd = 1 SMSS. When the timer fires again for
// the same data (no new ACK since the previous timeout), ssthresh is held
// constant, as the implementation note under equation (4) asks, so that
// exponential backoff does not collapse ssthresh to 2 SMSS.
func (w *window) rto(flight int) {
	if !w.afterRTO {
		w.ssthresh = w.halfFlight(flight)
	}
	w.cwnd = LossWindowSegments * w.mss
	w.bytesAcked = 0
	w.inRecovery = false
	w.afterRTO = true
}

// Cwnd returns the congestion window, bytes.
func (w *window) Cwnd() int { return w.cwnd }

// Ssthresh returns the slow-start threshold, bytes.
func (w *window) Ssthresh() int { return w.ssthresh }

// phase names the current phase for State.
func (w *window) phase() string {
	switch {
	case w.afterRTO:
		return PhaseAfterRTO
	case w.inRecovery:
		return PhaseRecovery
	case w.inSlowStart():
		return PhaseSlowStart
	}
	return PhaseCongAvoid
}

// state returns the shared part of a snapshot.
func (w *window) state() State {
	return State{Cwnd: w.cwnd, Ssthresh: w.ssthresh, Phase: w.phase()}
}

// OnSent is a no-op for the window-based controllers (they learn from ACKs).
func (w *window) OnSent(clock.Time, int, int) {}

// OnCongestion is Reno's reaction, kept by Reno and DCA: ssthresh =
// max(FlightSize/2, 2*SMSS); for ECN it also sets cwnd = ssthresh at once
// (RFC 3168 §6.1.2).
func (w *window) OnCongestion(c Congestion) {
	switch c.Kind {
	case Loss:
		w.enterLoss(c.InFlight)
	case ECN:
		w.ecnReduce(c.InFlight)
	}
}

// OnRecoveryExit sets cwnd = ssthresh (RFC 6582 §3.2 step 3, option (2)).
func (w *window) OnRecoveryExit(clock.Time, int) { w.exitRecovery() }

// OnRTO applies the RFC 5681 timeout rules: ssthresh = max(FlightSize/2,
// 2*SMSS) and cwnd = 1 SMSS.
func (w *window) OnRTO(_ clock.Time, inFlight int) { w.rto(inFlight) }

// roundTracker detects round trips from the cumulative ACK and SndNxt: a
// round that starts when SndNxt is s ends when CumAck >= s, i.e. when every
// byte that was outstanding at the start of the round has been acknowledged
// (the beg_snd_nxt technique of Linux tcp_vegas.c).
type roundTracker struct {
	end     uint64 // the round ends when CumAck reaches this, bytes of stream
	started bool
	count   uint64 // rounds completed
}

// update reports whether the ACK ends the current round; if so it starts the
// next one at the ACK's SndNxt.
func (r *roundTracker) update(cumAck, sndNxt uint64) bool {
	if !r.started {
		r.started = true
		r.end = sndNxt
		return false
	}
	if cumAck >= r.end {
		r.end = sndNxt
		r.count++
		return true
	}
	return false
}
