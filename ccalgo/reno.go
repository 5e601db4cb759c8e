package ccalgo

import (
	"fmt"

	"cclab/internal/spec"
)

// CAGrowth says how congestion avoidance grows cwnd.
type CAGrowth uint8

// Congestion-avoidance growth rules.
const (
	// CAByteCounting: RFC 3465 §2.1 byte counting, one SMSS per cwnd of
	// acknowledged bytes (+1 SMSS per RTT whatever the ACK pattern).
	CAByteCounting CAGrowth = iota
	// CAPerAck: RFC 5681 §3.1 equation (3), cwnd += SMSS*SMSS/cwnd (at
	// least 1 byte) per ACK that acknowledges new data, as ns-3's
	// TcpNewReno::CongestionAvoidance and Linux before byte counting: with
	// delayed ACKs (one ACK per two segments) it grows about half as fast.
	CAPerAck
)

// String returns the spec spelling: "bytes" or "acks".
func (g CAGrowth) String() string {
	if g == CAPerAck {
		return "acks"
	}
	return "bytes"
}

// UnmarshalText parses "bytes" or "acks".
func (g *CAGrowth) UnmarshalText(b []byte) error {
	i, err := spec.ParseEnum(b, "growth rule", "bytes", "acks")
	if err == nil {
		*g = CAGrowth(i)
	}
	return err
}

// RenoConfig configures Reno (and its alias NewReno): the shared parameters
// and the congestion-avoidance growth rule.
type RenoConfig struct {
	BaseConfig
	CA CAGrowth `param:"ca" help:"congestion avoidance growth: bytes (RFC 3465 byte counting, default) or acks (RFC 5681 eq. (3) per ACK, as ns-3 TcpNewReno)"`
	// Halve says what ssthresh is halved from on a loss (HalveFlight, HalveCwnd).
	Halve SsthreshBase `param:"halve" help:"what ssthresh = max(X/2, 2*SMSS) takes X from on a loss, an ECN echo or a timeout: flight (RFC 5681 eq. (4): the FlightSize the transport passes; default) or cwnd (Linux tcp_reno_ssthresh and ns-3.37 TcpLinuxReno::GetSsThresh: the congestion window, whatever is in flight; in recovery the flight the transport passes, as ns-3's TcpPrrRecovery sets cwnd to pipe + sndcnt)"`
	// Grow says which ACKs grow the window (GrowDelivered, GrowCum).
	Grow AckGrowth `param:"grow" help:"which ACKs grow cwnd, and by how much: delivered (every ACK outside recovery, by the data it newly delivered, SACKed included; default) or cum (RFC 5681 §3.1: only an ACK that cumulatively acknowledges new data, by the cumulative advance, data SACKed before included; a SACK-only duplicate ACK grows nothing, as ns-3 3.37's TcpSocketBase::ProcessAck and Linux's tcp_may_raise_cwnd)"`
}

// AckGrowth says which ACKs grow the window (RenoConfig.Grow).
type AckGrowth uint8

// Values of RenoConfig.Grow.
const (
	// GrowDelivered: every ACK outside recovery grows cwnd by the data it
	// newly delivered, cumulatively or by SACK (Ack.Acked).
	GrowDelivered AckGrowth = iota
	// GrowCum: RFC 5681 §3.1 ("each ACK received that cumulatively
	// acknowledges new data"): only an ACK that moves the cumulative point
	// grows cwnd, by the bytes it moved over (Ack.CumAcked, data SACKed
	// before included); SACK-only duplicate ACKs grow nothing. ns-3 3.37's
	// TcpSocketBase::ProcessAck calls IncreaseWindow only for ackNumber >
	// oldHeadSequence, with the segments between them.
	GrowCum
)

// String returns the spec spelling: "delivered" or "cum".
func (g AckGrowth) String() string {
	if g == GrowCum {
		return "cum"
	}
	return "delivered"
}

// UnmarshalText parses "delivered" or "cum".
func (g *AckGrowth) UnmarshalText(b []byte) error {
	i, err := spec.ParseEnum(b, "growth rule", "delivered", "cum")
	if err == nil {
		*g = AckGrowth(i)
	}
	return err
}

// SsthreshBase says what ssthresh is halved from (RenoConfig.Halve).
type SsthreshBase uint8

// Values of RenoConfig.Halve.
const (
	// HalveFlight: RFC 5681 §3.1 equation (4), ssthresh = max(FlightSize/2,
	// 2*SMSS), FlightSize as the transport passes it.
	HalveFlight SsthreshBase = iota
	// HalveCwnd: ssthresh = max(cwnd/2, 2*SMSS), Linux's tcp_reno_ssthresh
	// ("max(tp->snd_cwnd >> 1U, 2U)") as ns-3.37 ports it in
	// TcpLinuxReno::GetSsThresh (tcp-linux-reno.cc:148–153), which ignores
	// the bytesInFlight argument. During a recovery episode cclab's
	// controller still holds the window from before it while ns-3's
	// TcpPrrRecovery has set cwnd to pipe + sndcnt, so a timeout there
	// halves the flight the transport passes (the pipe with flight=pipe).
	HalveCwnd
)

// String returns the spec spelling: "flight" or "cwnd".
func (h SsthreshBase) String() string {
	if h == HalveCwnd {
		return "cwnd"
	}
	return "flight"
}

// UnmarshalText parses "flight" or "cwnd".
func (h *SsthreshBase) UnmarshalText(b []byte) error {
	i, err := spec.ParseEnum(b, "ssthresh base", "flight", "cwnd")
	if err == nil {
		*h = SsthreshBase(i)
	}
	return err
}

// Reno is the RFC 5681 congestion controller: slow start and congestion
// avoidance with byte counting (RFC 3465), ssthresh = max(FlightSize/2,
// 2*SMSS) on loss, cwnd = ssthresh when recovery ends (RFC 6582 §3.2 step 3),
// cwnd = 1 SMSS after a timeout, and the RFC 3168 §6.1.2 reaction to ECN.
//
// "newreno" builds the same controller under another name: NewReno
// (RFC 6582) differs from Reno only in how the transport recovers from
// several losses in one window (partial ACKs), which is the transport's
// recovery strategy, not the window rules.
type Reno struct {
	window
	name    string
	growCum bool // RenoConfig.Grow is GrowCum
}

// NewReno returns a Reno controller called name ("reno" or "newreno").
func NewReno(name string, cfg RenoConfig, env Env) (*Reno, error) {
	w, err := newWindow(name, cfg.BaseConfig, env.MSS)
	if err != nil {
		return nil, err
	}
	if cfg.CA > CAPerAck {
		return nil, fmt.Errorf("%s: parameter ca=%v: allowed: bytes, acks", name, cfg.CA)
	}
	w.perAckCA = cfg.CA == CAPerAck
	w.halveCwnd = cfg.Halve == HalveCwnd
	r := reuse[Reno](env)
	*r = Reno{window: w, name: name, growCum: cfg.Grow == GrowCum}
	return r, nil
}

// Name returns "reno" or "newreno".
func (r *Reno) Name() string { return r.name }

// OnAck grows cwnd by the RFC 5681 rules unless in recovery or app-limited:
// by the data the ACK newly delivered, or with grow=cum by its cumulative
// advance only.
func (r *Reno) OnAck(a Ack) {
	r.noteAck()
	if !r.mayGrow(a) {
		return
	}
	acked := a.Acked
	if r.growCum {
		acked = a.CumAcked
	}
	r.renoGrowth(acked)
}

// State returns a snapshot.
func (r *Reno) State() State { return r.window.state() }

func init() {
	for _, n := range []struct{ name, doc string }{
		{"reno", "RFC 5681 slow start / congestion avoidance, halve on loss, 1 SMSS after RTO"},
		{"newreno", "alias of reno (window rules identical; NewReno's partial-ACK handling is the transport's -recovery newreno)"},
	} {
		name := n.name
		spec.Add(Registry, name, n.doc,
			func() RenoConfig { return RenoConfig{BaseConfig: DefaultBaseConfig()} },
			func(c RenoConfig, env Env) (Controller, error) { return NewReno(name, c, env) })
	}
}
