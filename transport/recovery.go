package transport

import (
	"fmt"
	"math"
	"strings"
	"time"

	"cclab/ccalgo"
	"cclab/clock"
	"cclab/internal/spec"
)

// Recovery is a loss-recovery strategy: it decides when the connection is in
// loss recovery, which segments are lost, what to retransmit and how much may
// be sent, separately from the congestion controller (as Linux separates
// recovery from tcp_congestion_ops; docs/recovery.md). The controller chooses
// ssthresh when recovery starts (Ctx.EnterRecovery calls
// Controller.OnCongestion) and cwnd when it ends (Ctx.ExitRecovery calls
// Controller.OnRecoveryExit); in between the strategy governs sending.
//
// The connection calls, per ACK that carries acknowledgement information:
// scoreboard update (cumulative advance, SACK marks), Controller.OnAck (if
// data was newly acknowledged), then Recovery.OnAck. Before each data
// packet it calls Recovery.Next, sends what it says (bounded also by the
// peer's receive window, the data available and pacing) and reports it with
// Recovery.OnSent. On a retransmission timeout it marks every outstanding
// un-SACKed segment lost, calls Controller.OnRTO and then Recovery.OnRTO.
//
// One file per strategy (newreno.go, reno.go, ...), registered by name in
// Recoveries.
type Recovery interface {
	// Name returns the registry name.
	Name() string
	// OnAck handles one ACK after the scoreboard has been updated.
	OnAck(x *Ctx, a *AckInfo)
	// OnRTO is called after a retransmission timeout has marked all
	// outstanding segments lost and the controller has collapsed cwnd. A
	// strategy in recovery must leave it (without ExitRecovery: the RTO
	// already set cwnd).
	OnRTO(x *Ctx)
	// Next says what to send now. Its answer and its effects depend on the
	// connection's state (scoreboard, controller, what the strategy was
	// told), not on x.Now: a connection with nothing to send and nothing
	// outstanding does not ask again until an ACK, a timer or the
	// application changes that state (Conn.sendIdle).
	Next(x *Ctx) Action
	// OnSent reports what was sent after Next: a retransmission of the
	// segment Next named, or bytes of new data.
	OnSent(x *Ctx, retransmit bool, bytes int)
	// InRecovery reports whether a loss-recovery episode is in progress.
	InRecovery() bool
}

// RecoveryTimer is implemented by strategies that need a timer of their own
// (time-based loss detection such as RACK, tail-loss probes). The connection
// includes Deadline in its own deadline and calls OnTimer once it is reached.
type RecoveryTimer interface {
	// Deadline returns when the strategy needs OnTimer, or clock.Never.
	Deadline() clock.Time
	// OnTimer runs the strategy's timer; it may mark segments lost.
	OnTimer(x *Ctx)
}

// Action is a strategy's answer to "what may be sent now?".
type Action struct {
	// Retransmit is the scoreboard index of a segment to retransmit now, or
	// -1 for none. It takes precedence over NewData.
	Retransmit int
	// NewData is how many bytes of new data may be sent now (the connection
	// sends at most one segment per Action, and waits while this is below a
	// full segment unless nothing is in flight).
	NewData int
}

// NoSend is the Action that sends nothing.
var NoSend = Action{Retransmit: -1}

// AckInfo describes one received ACK after the scoreboard update.
type AckInfo struct {
	Now         clock.Time
	CumAck      uint64        // cumulative acknowledgement point after the ACK (acknowledgement space)
	PrevUna     uint64        // cumulative acknowledgement point before the ACK
	AckedBytes  int           // payload bytes newly acknowledged cumulatively that were not SACKed before
	SackedBytes int           // payload bytes newly SACKed
	DupAck      bool          // a duplicate ACK in the sense of RFC 5681 §2 (see docs/transport.md)
	ECE         bool          // ECN-Echo set
	RTT         time.Duration // RTT sample taken from this ACK (TSecr if cumulative, else newest newly SACKed segment), 0 if none

	// Reorder is the reordering degree this ACK revealed, packets (0:
	// none): a segment never retransmitted (or whose original arrived, by
	// its timestamp echo) was delivered that many segments below the
	// highest one delivered before (reorder.go).
	Reorder int
	// The most recently sent segment this ACK newly delivered (RFC 8985
	// RACK_update; retransmissions whose delivery may be the original's are
	// skipped): its transmission order (Segment.SendSeq; 0: none), send
	// time, end (acknowledgement space) and RTT.
	NewestSendSeq uint64
	NewestSent    clock.Time
	NewestEnd     uint64
	NewestRTT     time.Duration
	// DSACK: the ACK carried a D-SACK block [DSACKStart, DSACKEnd) (RFC
	// 2883); DSACKRetx: it reports a retransmission as duplicated (RFC 3708).
	DSACK                bool
	DSACKRetx            bool
	DSACKStart, DSACKEnd uint64
}

// Advanced reports whether the ACK moved the cumulative acknowledgement point.
func (a *AckInfo) Advanced() bool { return a.CumAck > a.PrevUna }

// Ctx is what a strategy sees and acts through. It is owned by the
// connection and valid only during the call.
type Ctx struct {
	Now clock.Time
	SB  *Scoreboard       // outstanding segments with SACK and loss marks
	CC  ccalgo.Controller // the congestion controller (read cwnd/ssthresh; do not call its event methods)
	MSS int               // sender maximum segment size, bytes
	// RestartRTO is true during OnAck when the ACK acknowledged new data and
	// the connection will restart the retransmission timer (RFC 6298 §5.3).
	// A strategy may clear it (RFC 6582 §4.1 "Impatient" variant).
	RestartRTO bool

	// growOnExit: ExitRecoveryGrow ended the episode on this ACK, so the
	// connection gives the ACK to the controller again, outside recovery.
	growOnExit bool

	c *Conn
}

// EnterRecovery starts a loss-recovery episode: the controller is told of the
// loss (Controller.OnCongestion, which sets ssthresh) and a RecoveryStart
// event is emitted. The recovery point (RFC 6582 "recover") is Ctx.SB.Nxt().
func (x *Ctx) EnterRecovery() { x.c.enterRecovery(x.Now, x.c.congestionFlight()) }

// EnterRecoveryFlight is EnterRecovery with the controller told flight
// bytes in flight instead of FlightSize bounded by cwnd (SACKConfig.Flight).
func (x *Ctx) EnterRecoveryFlight(flight int) { x.c.enterRecovery(x.Now, flight) }

// ExitRecovery ends the episode: Controller.OnRecoveryExit sets cwnd and a
// RecoveryEnd event is emitted.
func (x *Ctx) ExitRecovery() { x.c.exitRecovery(x.Now) }

// ExitRecoveryGrow is ExitRecovery on an ACK after which the window also
// grows for that ACK: once the strategy returns, the connection gives the
// controller the ACK's cumulative advance as an ACK outside recovery
// (without an RTT sample: the controller already had this ACK's). ns-3
// 3.37 does this (TcpSocketBase::ProcessAck sets cwnd = ssthresh and then
// calls IncreaseWindow with the segments the ACK acknowledged); RFC 5681
// §3.2 step 6, RFC 6582 §3.2 step 3 and RFC 6675 leave cwnd at ssthresh
// on that ACK (ExitRecovery).
func (x *Ctx) ExitRecoveryGrow() {
	x.c.exitRecovery(x.Now)
	x.growOnExit = true
}

// rtoFlighter is a strategy that may choose the flight a timeout's
// ssthresh is computed from (SACKConfig.Flight pipe); ok false leaves the
// connection's FlightSize bounded by cwnd.
type rtoFlighter interface {
	rtoFlight(x *Ctx) (flight int, ok bool)
}

// rtoHolder is a strategy that may find a timeout a repeat within an
// earlier timeout's recovery (SACKConfig.RTOHold): the connection then has
// a controller that implements ccalgo.SsthreshHolder keep ssthresh.
type rtoHolder interface {
	holdsSsthresh(x *Ctx) bool
}

// ExitGrowConfig is the option exitgrow of the strategies that can match
// ns-3's exit from recovery (newreno and the SACK strategies).
type ExitGrowConfig struct {
	// ExitGrow: the ACK that ends recovery also grows the window
	// (Ctx.ExitRecoveryGrow). Off by default.
	ExitGrow bool `param:"exitgrow" help:"the ACK that ends recovery also grows the window from ssthresh, as an ACK outside recovery (ns-3 3.37's TcpSocketBase::ProcessAck; not RFC 5681 §3.2 step 6 / RFC 6582 §3.2 step 3)"`
}

// exitRecovery ends the episode with ExitRecovery, or with
// ExitRecoveryGrow if grow (ExitGrowConfig).
func (x *Ctx) exitRecovery(grow bool) {
	if grow {
		x.ExitRecoveryGrow()
		return
	}
	x.ExitRecovery()
}

// MarkLost marks segment i lost (it will count out of Pipe and be offered for
// retransmission) and emits PacketLost with reason.
func (x *Ctx) MarkLost(i int, reason LossReason) { x.c.markLost(x.Now, i, reason) }

// CwndAllowance returns cwnd - pipe, bytes (RFC 6675 §5 send rule), at least 0.
func (x *Ctx) CwndAllowance() int { return max(0, x.CC.Cwnd()-x.SB.Pipe()) }

// Normal is the send rule outside recovery shared by the strategies:
// retransmit segments marked lost (after an RTO) first, then new data, both
// within cwnd - pipe.
func (x *Ctx) Normal() Action {
	allow := x.CwndAllowance()
	if allow <= 0 {
		return NoSend
	}
	if i := x.SB.NextLost(); i >= 0 {
		return Action{Retransmit: i}
	}
	return Action{Retransmit: -1, NewData: allow}
}

// SACKBlind is implemented by strategies that, like an RFC 5681/6582 sender
// without SACK, ignore SACK information (Reno, NewReno). For them the
// connection does not apply the peer's SACK blocks to the scoreboard, so
// pipe is FlightSize less the segments marked lost for retransmission, only
// cumulatively acknowledged bytes reach the controller, and a duplicate ACK
// is one with an unchanged window (RFC 5681 §2): the receiver's SACK blocks
// cannot change their behaviour (a sender that counted SACKed bytes out of
// flight would keep sending new data past a window of holes it only repairs
// one per episode).
type SACKBlind interface {
	Recovery
	// SACKBlind is a marker.
	SACKBlind()
}

// Departer is implemented by SACK-blind strategies (Reno, NewReno) that
// count the data their duplicate ACKs report as having left the network
// during recovery (fastRecovery.Departed). Their own sending rule inflates
// the window by it; for a controller that governs recovery
// (ccalgo.RecoveryGovernor: BBR) the connection subtracts it from pipe
// instead, so that its cwnd - pipe and the data in flight it is told count
// each duplicate ACK as a segment delivered, as Linux's in-flight estimate
// does for a sender without SACK (tcp_packets_in_flight less sacked_out).
type Departer interface {
	Departed() int
}

// NewDataAvailable returns how many bytes of new data the connection could
// send now if the congestion window allowed: ready in the send buffer or
// source and admitted by the peer's receive window (RFC 6675 NextSeg rule 2,
// "available unsent data that the receiver's advertised window allows"). A
// pending bare FIN counts as 1.
func (x *Ctx) NewDataAvailable() int {
	c := x.c
	room := 0
	if c.peerRight > c.sb.nxt {
		room = int(min(c.peerRight-c.sb.nxt, math.MaxInt32))
	}
	if n := min(c.avail(), room); n > 0 {
		return n
	}
	if c.finPending && !c.finSent && c.sb.nxt == c.finOff {
		return 1
	}
	return 0
}

// LossReason says why a segment was declared lost (event.PacketLost Reason;
// the values match qlog's packet_lost triggers).
type LossReason uint8

// Loss reasons.
const (
	LossUnspecified LossReason = iota
	LossDupAck                 // duplicate-ACK / reordering threshold (fast retransmit)
	LossTime                   // time threshold (RACK-like strategies)
	LossRTO                    // retransmission timeout
)

// RTOCause classifies a retransmission timeout (event.RTO Reason; docs/metrics.md).
type RTOCause uint8

// RTO causes.
const (
	RTOUnknown RTOCause = iota
	// RTOLostRetransmission: the oldest outstanding segment had already been
	// retransmitted (the retransmission was lost).
	RTOLostRetransmission
	// RTOTooFewDupAcks: fewer segments were outstanding than the duplicate-ACK
	// threshold needs (a small window or a tail loss).
	RTOTooFewDupAcks
	// RTOBurstLoss: enough segments were outstanding for fast retransmit but
	// too few duplicate ACKs came back (several losses in one window).
	RTOBurstLoss
	// RTOHandshake: the Initial went unanswered.
	RTOHandshake
	// RTOSpurious: the timeout was found unnecessary after the fact (the
	// original transmission or its ACK was only late: RFC 3522 Eifel
	// detection, or a D-SACK of the timeout's retransmission); the RTO was
	// first counted under one of the causes above and moved here.
	RTOSpurious
	// NumRTOCauses is the number of causes (size of ConnStats.RTOCauses).
	NumRTOCauses
)

// String names the cause.
func (c RTOCause) String() string {
	switch c {
	case RTOLostRetransmission:
		return "lost_retransmission"
	case RTOTooFewDupAcks:
		return "too_few_dupacks"
	case RTOBurstLoss:
		return "burst_loss"
	case RTOHandshake:
		return "handshake"
	case RTOSpurious:
		return "spurious"
	}
	return "unknown"
}

// RecoveryEnv is what a strategy is built with.
type RecoveryEnv struct {
	MSS int // sender maximum segment size, bytes

	// reuse is the strategy of a recycled connection (Conn.Release), or
	// nil: a strategy of the same type may clear it and build in it
	// instead of allocating (newStrategy).
	reuse Recovery
}

// newStrategy returns a zero *T for a strategy's Build: env's reusable
// strategy cleared if it is a *T, else a new one.
func newStrategy[T any, PT interface {
	*T
	Recovery
}](env RecoveryEnv) PT {
	if r, ok := env.reuse.(PT); ok {
		var zero T
		*r = zero
		return r
	}
	return new(T)
}

// Recoveries is the registry of loss-recovery strategies by name.
var Recoveries = spec.NewRegistry[Recovery, RecoveryEnv]("loss recovery strategy")

// newRecovery builds a strategy from a spec such as "newreno" or
// "reno:dupthresh=3".
func newRecovery(s string, env RecoveryEnv) (Recovery, error) { return Recoveries.New(s, env) }

func init() {
	// Specs are range-checked where they are parsed, with the largest
	// segment size (as controllers are, ccalgo.ProbeEnv).
	Recoveries.SetProbe(func() RecoveryEnv { return RecoveryEnv{MSS: ccalgo.MaxSegment} })
}

// RecoverySpec is a loss-recovery specification ("sack:lostretx") that has
// been parsed and range-checked (ParseRecoverySpec): its name is
// registered and its parameters exist and lie in their documented ranges
// (docs/recovery.md). It is a flag.Value and an encoding.TextUnmarshaler.
type RecoverySpec struct{ s string }

// ParseRecoverySpec parses and range-checks s against Recoveries.
func ParseRecoverySpec(s string) (RecoverySpec, error) {
	if err := Recoveries.Validate(s); err != nil {
		return RecoverySpec{}, err
	}
	return RecoverySpec{strings.TrimSpace(s)}, nil
}

// String returns the spec as written ("" for the zero RecoverySpec).
func (s RecoverySpec) String() string { return s.s }

// Set parses v (flag.Value).
func (s *RecoverySpec) Set(v string) error {
	sp, err := ParseRecoverySpec(v)
	if err != nil {
		return err
	}
	*s = sp
	return nil
}

// UnmarshalText parses b (encoding.TextUnmarshaler).
func (s *RecoverySpec) UnmarshalText(b []byte) error { return s.Set(string(b)) }

// MarshalText returns the spec as written.
func (s RecoverySpec) MarshalText() ([]byte, error) { return []byte(s.s), nil }

// DupThresh is the duplicate-ACK threshold of RFC 5681 §3.2 (DupThresh = 3).
const DupThresh = 3

// MaxDupThresh bounds the dupthresh parameter, packets (a threshold above
// the largest window a spec may set, ccalgo.MaxWindowParam, could never be
// reached).
const MaxDupThresh = ccalgo.MaxWindowParam

// checkDupThresh range-checks a strategy's dupthresh parameter.
func checkDupThresh(name string, n int) error {
	if n < 1 || n > MaxDupThresh {
		return fmt.Errorf("%s: parameter dupthresh=%d: must be 1..%d packets", name, n, MaxDupThresh)
	}
	return nil
}

// DupAckConfig is the parameter shared by the duplicate-ACK strategies.
type DupAckConfig struct {
	DupThresh int `param:"dupthresh" help:"duplicate ACKs that trigger fast retransmit, packets (RFC 5681: 3)"`
}
