package ccalgo

import "cclab/internal/spec"

// RenoConfig configures Reno (and its alias NewReno). It has only the shared
// parameters.
type RenoConfig struct {
	BaseConfig
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
	name string
}

// NewReno returns a Reno controller called name ("reno" or "newreno").
func NewReno(name string, cfg RenoConfig, env Env) (*Reno, error) {
	w, err := newWindow(name, cfg.BaseConfig, env.MSS)
	if err != nil {
		return nil, err
	}
	return &Reno{window: w, name: name}, nil
}

// Name returns "reno" or "newreno".
func (r *Reno) Name() string { return r.name }

// OnAck grows cwnd by the RFC 5681 rules unless in recovery or app-limited.
func (r *Reno) OnAck(a Ack) {
	r.noteAck()
	if !r.mayGrow(a) {
		return
	}
	r.renoGrowth(a.Acked)
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
