// Package ccalgo holds cclab's congestion controllers (docs/controllers.md) behind one
// small interface, one file per algorithm, and a name registry that builds a
// controller from a spec such as "dca:x=2,w=20,reduction=0.5,decision=epoch".
//
// Controllers are sans-I/O: every call carries the current time; they own cwnd
// and ssthresh and keep no pointer back to the connection. Loss recovery
// (NewReno, SACK, FACK, Rate-Halving, PRR) is not a controller's business: the
// transport's recovery strategy governs sending while in recovery, after the
// controller has chosen ssthresh in OnCongestion, and hands control back with
// OnRecoveryExit (as Linux separates tcp_congestion_ops from recovery).
//
// Units: windows in bytes, times as time.Duration, rates in bits/s.
package ccalgo

import (
	"math/rand/v2"
	"time"

	"cclab/clock"
	"cclab/internal/spec"
)

// Ack is what a controller learns from one acknowledgement that newly
// acknowledges data (cumulatively or by SACK).
type Ack struct {
	Now          clock.Time
	Acked        int           // bytes newly acknowledged by this ACK (cumulative advance plus newly SACKed)
	AckedPackets int           // packets newly acknowledged by this ACK
	RTT          time.Duration // RTT sample from the echoed timestamp; one per ACK; 0 if none
	SRTT         time.Duration // smoothed RTT after this sample (RFC 6298)
	MinRTT       time.Duration // minimum RTT seen on the connection
	InFlight     int           // bytes in flight after processing this ACK
	CumAck       uint64        // cumulative acknowledgement point after this ACK, bytes of stream
	CumAcked     int           // bytes the cumulative acknowledgement point moved on this ACK (data SACKed before included)
	Sacked       int           // bytes newly SACKed by this ACK (the ACK carried new SACK information)
	RTOPoint     uint64        // HighData at the latest retransmission timeout if the cumulative ACK before this ACK was below it (the timeout's recovery unfinished: ns-3's CA_LOSS and m_recover), bytes of stream; 0 if none
	SndNxt       uint64        // next stream byte to be sent (end of the highest data sent), bytes
	InRecovery   bool          // the connection is in loss recovery: no window growth, no delay samples
	Lost         int           // bytes the loss detection marked lost since the previous Ack (detected on an earlier ACK: the transport detects losses after telling the controller); not those an RTO marks
	AppLimited   bool          // the sender had nothing to send and did not fill cwnd
	Rate         RateSample    // delivery-rate sample of this ACK (docs/transport.md "Delivery rate")
}

// CongestionKind says what signalled congestion.
type CongestionKind uint8

// Congestion signals.
const (
	// Loss: loss detected by duplicate ACKs or SACK; the connection enters loss recovery.
	Loss CongestionKind = iota + 1
	// ECN: an ECN-Echo (RFC 3168 §6.1.2); at most once per RTT; no recovery episode.
	ECN
	// Delay: a delay-based decision reduced the window (DCA). Controllers
	// signal it themselves (DelayReactor); it is never passed to
	// OnCongestion.
	Delay
)

// DelayReactor is a controller that reduces its window on its own
// delay-based congestion decisions (DCA). DelayReductions counts the
// reductions so far, so a connection can report each one as a congestion
// signal (event.CongestionSignal with Reason Delay).
type DelayReactor interface {
	DelayReductions() uint64
}

// String names the kind.
func (k CongestionKind) String() string {
	switch k {
	case Loss:
		return "loss"
	case ECN:
		return "ecn"
	case Delay:
		return "delay"
	}
	return "unknown"
}

// Congestion is a congestion signal.
type Congestion struct {
	Now      clock.Time
	Kind     CongestionKind
	InFlight int    // bytes in flight when the signal arrived (FlightSize of RFC 5681)
	SndNxt   uint64 // next stream byte to be sent, bytes
}

// Controller is a congestion controller.
type Controller interface {
	// Name returns the registry name ("reno", "dca", ...).
	Name() string
	// OnSent is called for every data packet sent (bytes on the wire as
	// counted against cwnd), with the bytes in flight after sending it.
	OnSent(now clock.Time, bytes, inFlight int)
	// OnAck is called for every ACK that newly acknowledges data.
	OnAck(a Ack)
	// OnCongestion is called when loss is detected (before recovery starts)
	// or an ECN-Echo arrives. The controller sets ssthresh; for ECN it also
	// reduces cwnd at once.
	OnCongestion(c Congestion)
	// OnRecoveryExit is called when loss recovery ends (the recovery point
	// is cumulatively acknowledged); the controller sets cwnd (typically to
	// ssthresh, RFC 6582 §3.2 step 3).
	OnRecoveryExit(now clock.Time, inFlight int)
	// OnRTO is called when the retransmission timer expires (RFC 5681 §3.1:
	// ssthresh = max(FlightSize/2, 2*SMSS), cwnd = loss window).
	OnRTO(now clock.Time, inFlight int)
	// Cwnd returns the congestion window, bytes.
	Cwnd() int
	// Ssthresh returns the slow-start threshold, bytes.
	Ssthresh() int
	// State returns a read-only snapshot for tracing.
	State() State
}

// Pacer is implemented by controllers that also set a pacing rate.
type Pacer interface {
	// PacingRate returns the rate to pace at, bits/s; 0 means no pacing.
	PacingRate() float64
}

// State is a snapshot of a controller's state for traces and metrics.
type State struct {
	Cwnd       int     // bytes
	Ssthresh   int     // bytes
	PacingRate float64 // bits/s; 0 if not pacing
	Phase      string  // "slow_start", "congestion_avoidance", or controller-specific
	Vars       []Var   // controller-specific values (e.g. DCA's sampledRTT); may be nil
}

// Var is one named controller variable in a State snapshot.
type Var struct {
	Name  string
	Value float64
	Unit  string
}

// Env is what a controller needs from the connection when built.
type Env struct {
	MSS  int        // sender maximum segment size (payload bytes per packet), bytes
	Rand *rand.Rand // seeded random source owned by this controller, if it needs one

	// Reuse, if not nil, is a controller its owner no longer uses (a
	// recycled connection's former one): a constructor of the same type
	// may build the new controller in it instead of allocating, with
	// exactly a fresh controller's state. Nothing else may hold it.
	Reuse Controller
}

// Registry holds the controllers by name.
var Registry = spec.NewRegistry[Controller, Env]("congestion controller")

// New builds a controller from a spec such as "reno" or "dca:x=6,w=20".
func New(s string, env Env) (Controller, error) { return Registry.New(s, env) }

// ProbeEnv is the environment specs are range-checked with where they are
// parsed (Registry.Validate): the largest segment size, so that
// a spec that passes builds for every datagram size.
func ProbeEnv() Env { return Env{MSS: MaxSegment, Rand: rand.New(rand.NewPCG(1, 2))} }

func init() {
	Registry.SetProbe(ProbeEnv)
	DgramRegistry.SetProbe(ProbeEnv)
}

// SendQuantum is implemented by pacing controllers that let the transport
// send a burst of back-to-back packets per pacing step (BBR's send quantum,
// as Linux's TSO autosizing): the paced schedule may run ahead of the clock
// by at most the quantum.
type SendQuantum interface {
	// SendQuantum returns the largest burst, bytes.
	SendQuantum() int
}

// RateSample is one delivery-rate sample (draft-cheng-iccrg-delivery-rate-
// estimation §3.3) that the transport computes per ACK for the rate-based
// controllers (BBR). A zero DeliveryRate means no valid sample on this ACK.
type RateSample struct {
	DeliveryRate   float64       // bytes delivered over the interval, as bits/s; 0: none
	Delivered      uint64        // bytes delivered over the interval
	Interval       time.Duration // max(send elapsed, ACK elapsed) of the sample
	PriorDelivered uint64        // C.delivered when the most recently acknowledged packet was sent, bytes
	TotalDelivered uint64        // C.delivered after this ACK, bytes
	AppLimited     bool          // the most recently acknowledged packet was sent in an application-limited period
	RTT            time.Duration // now minus the send time of the most recently sent acknowledged packet
}

// SegmentSizer is implemented by controllers whose segment size can change
// during a connection (datagram size discovery, RFC 8899). SetMSS takes the
// new SMSS, bytes, for what the controller counts in segments from now on;
// the congestion window in bytes is not increased (RFC 8899 §4.4). It
// reports false, changing nothing, if the controller cannot take it.
type SegmentSizer interface {
	SetMSS(mss int) bool
}

// AppLimitMarker is implemented by controllers that, after an Ack, may ask
// the transport's delivery-rate estimator to treat the data sent from now
// until what is in flight is delivered as application-limited (BBR's
// ProbeRTT, draft-cardwell-iccrg-bbr-congestion-control-00 §4.3.5
// BBRHandleProbeRTT: C.app_limited = BBR.delivered + packets_in_flight, so
// that the low rate samples of a 4-packet window do not enter the BtlBw
// filter). The transport asks after every Controller.OnAck.
type AppLimitMarker interface {
	MarkAppLimited() bool
}

// RecoveryGovernor is implemented by controllers that keep setting cwnd
// during loss recovery (BBR, as Linux's cong_control hook overrides the
// window the recovery code computes): the transport's recovery strategy
// still detects losses and picks retransmissions, but the connection also
// sends, retransmissions first, within cwnd - pipe.
type RecoveryGovernor interface {
	// GovernsRecovery is a marker.
	GovernsRecovery()
}
