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
	if c.IW < 0 {
		return fmt.Errorf("%s: parameter iw=%d: must be >= 0 packets (0 = RFC 6928)", name, c.IW)
	}
	if c.ABC < 1 || c.ABC > ABCLimit {
		return fmt.Errorf("%s: parameter abc=%d: must be 1 or 2 (RFC 3465 §2.2: L MUST NOT exceed 2*SMSS)", name, c.ABC)
	}
	if c.Ssthresh < 0 {
		return fmt.Errorf("%s: parameter ssthresh=%d: must be >= 0 packets (0 = arbitrarily high)", name, c.Ssthresh)
	}
	return nil
}

// InitialWindow returns the RFC 6928 §2 initial window for mss, bytes:
// min(10*MSS, max(2*MSS, 14600)).
func InitialWindow(mss int) int {
	return min(RFC6928IWSegments*mss, max(2*mss, RFC6928IWBytes))
}

// Window is the shared RFC 5681 window machinery (cwnd, ssthresh, byte
// counting) that the controllers of this package embed. Its methods
// implement one RFC rule each so a controller composes the rules it keeps
// and replaces the ones it changes. All sizes are bytes.
type Window struct {
	MSS        int  // sender maximum segment size (SMSS), bytes
	CwndBytes  int  // congestion window, bytes
	SsthreshB  int  // slow-start threshold, bytes
	BytesAcked int  // RFC 3465 §2.1 bytes_acked counter for congestion avoidance, bytes
	L          int  // ABC limit, SMSS
	InRecovery bool // between OnCongestion(Loss) and OnRecoveryExit
	AfterRTO   bool // an RTO fired and no new ACK has arrived since (RFC 5681 §3.1 backoff note)
}

// newWindow builds the shared window from the base config and the MSS.
func newWindow(name string, c BaseConfig, mss int) (Window, error) {
	if mss <= 0 {
		return Window{}, fmt.Errorf("%s: Env.MSS=%d: must be a positive segment size in bytes", name, mss)
	}
	if err := c.validate(name); err != nil {
		return Window{}, err
	}
	w := Window{MSS: mss, L: c.ABC, SsthreshB: InfiniteSsthresh}
	if c.IW > 0 {
		w.CwndBytes = c.IW * mss
	} else {
		w.CwndBytes = InitialWindow(mss)
	}
	if c.Ssthresh > 0 {
		w.SsthreshB = c.Ssthresh * mss
	}
	return w, nil
}

// InSlowStart reports cwnd < ssthresh (RFC 5681 §3.1: slow start is used when
// cwnd < ssthresh; this package uses congestion avoidance when they are equal).
func (w *Window) InSlowStart() bool { return w.CwndBytes < w.SsthreshB }

// SlowStart applies RFC 5681 §3.1 slow start with RFC 3465 §2.2 byte
// counting: cwnd += min(acked, L*SMSS), not beyond ssthresh. It returns the
// acknowledged bytes left over once cwnd reached ssthresh (to be fed to
// congestion avoidance, as Linux's tcp_slow_start does), 0 otherwise.
func (w *Window) SlowStart(acked int) int {
	inc := min(acked, w.L*w.MSS)
	if w.CwndBytes+inc <= w.SsthreshB {
		w.CwndBytes += inc
		return 0
	}
	used := max(0, w.SsthreshB-w.CwndBytes)
	w.CwndBytes = max(w.CwndBytes, w.SsthreshB)
	return acked - used
}

// CongestionAvoidance applies RFC 5681 §3.1 congestion avoidance with
// RFC 3465 §2.1 byte counting: bytes_acked accumulates the acknowledged
// bytes; whenever it reaches cwnd, cwnd grows by one SMSS and bytes_acked
// drops by the old cwnd. This gives +1 SMSS per RTT whatever the ACK pattern.
func (w *Window) CongestionAvoidance(acked int) {
	w.BytesAcked += acked
	for w.BytesAcked >= w.CwndBytes && w.CwndBytes > 0 {
		w.BytesAcked -= w.CwndBytes
		w.CwndBytes += w.MSS
	}
}

// RenoGrowth is the RFC 5681 growth rule for one ACK of acked bytes: slow
// start below ssthresh, congestion avoidance at or above it.
func (w *Window) RenoGrowth(acked int) {
	if acked <= 0 {
		return
	}
	if w.InSlowStart() {
		acked = w.SlowStart(acked)
		if acked == 0 {
			return
		}
	}
	w.CongestionAvoidance(acked)
}

// MayGrow reports whether an ACK may grow the window: not during loss
// recovery (the recovery strategy governs sending then) and not when the
// sender was application-limited (RFC 7661 spirit: a window not used is not
// validated and must not grow).
func (w *Window) MayGrow(a Ack) bool { return !a.InRecovery && !w.InRecovery && !a.AppLimited }

// NoteAck records that a new ACK arrived (ends the RTO backoff state).
func (w *Window) NoteAck() { w.AfterRTO = false }

// HalfFlight is RFC 5681 §3.1 equation (4): max(FlightSize/2, 2*SMSS), bytes.
func (w *Window) HalfFlight(flight int) int {
	return max(flight/2, MinSsthreshSegments*w.MSS)
}

// EnterLoss applies RFC 5681 §3.2 step 2 for a loss detected by duplicate
// ACKs or SACK: ssthresh = max(FlightSize/2, 2*SMSS). cwnd is left to the
// recovery strategy until OnRecoveryExit.
func (w *Window) EnterLoss(flight int) {
	w.SsthreshB = w.HalfFlight(flight)
	w.BytesAcked = 0
	w.InRecovery = true
}

// ExitRecovery applies RFC 6582 §3.2 step 3 (the first option): cwnd =
// ssthresh, "deflating" the window.
func (w *Window) ExitRecovery() {
	w.CwndBytes = w.SsthreshB
	w.BytesAcked = 0
	w.InRecovery = false
}

// ECNReduce applies RFC 3168 §6.1.2: on ECN-Echo, ssthresh = max(FlightSize/2,
// 2*SMSS) and cwnd = ssthresh at once, with no recovery episode.
func (w *Window) ECNReduce(flight int) {
	w.SsthreshB = w.HalfFlight(flight)
	w.CwndBytes = w.SsthreshB
	w.BytesAcked = 0
}

// RTO applies RFC 5681 §3.1 equation (4) and the loss window: ssthresh =
// max(FlightSize/2, 2*SMSS), cwnd = 1 SMSS. When the timer fires again for
// the same data (no new ACK since the previous timeout), ssthresh is held
// constant, as the implementation note under equation (4) asks, so that
// exponential backoff does not collapse ssthresh to 2 SMSS.
func (w *Window) RTO(flight int) {
	if !w.AfterRTO {
		w.SsthreshB = w.HalfFlight(flight)
	}
	w.CwndBytes = LossWindowSegments * w.MSS
	w.BytesAcked = 0
	w.InRecovery = false
	w.AfterRTO = true
}

// Cwnd returns the congestion window, bytes.
func (w *Window) Cwnd() int { return w.CwndBytes }

// Ssthresh returns the slow-start threshold, bytes.
func (w *Window) Ssthresh() int { return w.SsthreshB }

// Phase names the current phase for State.
func (w *Window) Phase() string {
	switch {
	case w.AfterRTO:
		return PhaseAfterRTO
	case w.InRecovery:
		return PhaseRecovery
	case w.InSlowStart():
		return PhaseSlowStart
	}
	return PhaseCongAvoid
}

// State returns the shared part of a snapshot.
func (w *Window) State() State {
	return State{Cwnd: w.CwndBytes, Ssthresh: w.SsthreshB, Phase: w.Phase()}
}

// OnSent is a no-op for the window-based controllers (they learn from ACKs).
func (w *Window) OnSent(clock.Time, int, int) {}

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
