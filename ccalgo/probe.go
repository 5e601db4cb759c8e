package ccalgo

import (
	"fmt"

	"cclab/clock"
	"cclab/internal/spec"
	"cclab/internal/units"
)

// ProbeName is the path probe's registry name. The probe is not a
// congestion controller: it ignores loss, so it is for measuring a path
// (cclab campaign's probe phase, docs/campaigns.md "Probing"), never for
// sharing one. Sweeps over "every controller" leave it out (IsProbe).
const ProbeName = "probe"

// IsProbe reports whether a registry name is the path probe's.
func IsProbe(name string) bool { return name == ProbeName }

// Probe bounds.
const (
	// MaxProbeRate bounds the probe's rate parameter, bits/s.
	MaxProbeRate = 10e9
	// MaxProbeGain bounds its gain.
	MaxProbeGain = 4
)

// ProbeConfig configures the path probe.
type ProbeConfig struct {
	// Rate is the pacing rate while the first Start packets are
	// delivered, and the most it ever paces at, bits/s (as the transport
	// paces: the bytes it counts against the window).
	Rate units.Rate `param:"rate" help:"start pacing rate and the most it paces at, bits/s (e.g. 50Mbit)"`
	// Gain: after the start it paces at Gain times the largest delivery
	// rate sampled (at most Rate), so the bottleneck's queue grows by
	// 1 − 1/Gain packets per packet sent until it overflows.
	Gain float64 `param:"gain" help:"pace at gain × the largest delivery rate sampled after the start (1..4)"`
	// Start is the window, packets, sent at Rate and delivered before
	// pacing at the gain.
	Start int `param:"start" help:"packets delivered at the start rate before pacing at gain × the delivery rate"`
}

// DefaultProbeConfig returns the defaults: 10 Mbit/s, gain 1.5, 64
// packets at the start rate.
func DefaultProbeConfig() ProbeConfig { return ProbeConfig{Rate: 10e6, Gain: 1.5, Start: 64} }

// Probe paces at a rate of its own and ignores loss: first one window of
// Start packets at Rate, acknowledgement-clocked until they are
// delivered, then at Gain times the largest of the start train's
// dispersion rate (its ACKs after the first: bytes over their span) and
// the delivery rates sampled (draft-cheng-iccrg-delivery-rate-estimation, as BBR's
// BtlBw but never forgotten), at most Rate. Sent faster than the
// bottleneck drains, its packets keep the bottleneck's queue busy (the
// ACKs come back at the bottleneck's rate, packet-train dispersion) and,
// with a gain above one, fill it to overflow (its queueing delay at loss
// is the buffer). After the start its window is MaxWindowParam packets
// whatever happens: the pacing rate alone governs sending, in loss
// recovery too.
type Probe struct {
	cfg       ProbeConfig
	mss       int
	delivered int     // bytes acknowledged
	maxRate   float64 // largest delivery-rate sample (or the start train's dispersion), bits/s
	pace      float64 // pacing rate, bits/s
	// The start train's ACKs: the first one's instant, and the bytes the
	// later ones acknowledged up to the last one's instant.
	trainFirst, trainLast clock.Time
	trainBytes            int
}

// NewProbe returns a probe.
func NewProbe(cfg ProbeConfig, env Env) (*Probe, error) {
	switch {
	case !(cfg.Rate > 0 && cfg.Rate <= MaxProbeRate):
		return nil, fmt.Errorf("probe: parameter rate=%v: must be above 0 and at most %s", cfg.Rate, units.FormatRate(MaxProbeRate))
	case !(cfg.Gain >= 1 && cfg.Gain <= MaxProbeGain):
		return nil, fmt.Errorf("probe: parameter gain=%g: must be 1..%d", cfg.Gain, MaxProbeGain)
	case cfg.Start < 1 || cfg.Start > MaxWindowParam:
		return nil, fmt.Errorf("probe: parameter start=%d: must be 1..%d packets", cfg.Start, MaxWindowParam)
	case env.MSS <= 0:
		return nil, fmt.Errorf("probe: MSS %d", env.MSS)
	}
	p := reuse[Probe](env)
	*p = Probe{cfg: cfg, mss: env.MSS, pace: float64(cfg.Rate)}
	return p, nil
}

func init() {
	spec.Add(Registry, ProbeName, "path probe, not congestion control: paces at a rate, then at gain × the delivery rate, ignoring loss (campaign probing)",
		DefaultProbeConfig, func(c ProbeConfig, env Env) (Controller, error) { return NewProbe(c, env) })
}

// Name returns "probe".
func (p *Probe) Name() string { return ProbeName }

// OnSent does nothing: the window does not depend on what is in flight.
func (p *Probe) OnSent(clock.Time, int, int) {}

// OnAck takes the delivery-rate sample and, after the start, paces at the
// gain times the largest.
func (p *Probe) OnAck(a Ack) {
	if !p.started() {
		// Packet-train dispersion of the start (its window, sent at
		// Rate back to back, comes back spaced by the bottleneck): the
		// delivery-rate samples of one window a round trip are that
		// window over the round trip, on a long path far below the
		// bottleneck.
		if p.trainFirst == 0 {
			p.trainFirst = a.Now
		} else {
			p.trainBytes += a.Acked
			p.trainLast = a.Now
		}
	}
	p.delivered += a.Acked
	p.maxRate = max(p.maxRate, a.Rate.DeliveryRate)
	if p.started() && p.trainLast > p.trainFirst {
		p.maxRate = max(p.maxRate, float64(p.trainBytes)*8/p.trainLast.Sub(p.trainFirst).Seconds())
		p.trainFirst, p.trainLast = 0, 0
	}
	if p.started() && p.maxRate > 0 {
		p.pace = min(float64(p.cfg.Rate), p.cfg.Gain*p.maxRate)
	}
}

// started reports whether the start's packets have been delivered.
func (p *Probe) started() bool { return p.delivered >= p.cfg.Start*p.mss }

// OnCongestion ignores the signal.
func (p *Probe) OnCongestion(Congestion) {}

// OnRecoveryExit does nothing.
func (p *Probe) OnRecoveryExit(clock.Time, int) {}

// OnRTO does nothing: the probe keeps pacing.
func (p *Probe) OnRTO(clock.Time, int) {}

// Cwnd returns Start packets until they are delivered (the start is one
// train at Rate: at a rate above the path's, a start paced until Start
// packets are delivered would send Rate × one RTT, on a long path enough to
// overflow every queue on the way before the first delivery-rate sample
// came back), then MaxWindowParam packets.
func (p *Probe) Cwnd() int {
	if !p.started() {
		return p.cfg.Start * p.mss
	}
	return MaxWindowParam * p.mss
}

// Ssthresh returns InfiniteSsthresh.
func (p *Probe) Ssthresh() int { return InfiniteSsthresh }

// PacingRate returns the rate it paces at, bits/s.
func (p *Probe) PacingRate() float64 { return p.pace }

// GovernsRecovery marks the probe as a RecoveryGovernor: its window
// applies during loss recovery.
func (p *Probe) GovernsRecovery() {}

// State returns a snapshot: phase "start" or "paced", the largest delivery
// rate sampled.
func (p *Probe) State() State {
	phase := "start"
	if p.started() {
		phase = "paced"
	}
	return State{Cwnd: p.Cwnd(), Ssthresh: p.Ssthresh(), PacingRate: p.pace, Phase: phase,
		Vars: []Var{{Name: "max_delivery_rate", Value: p.maxRate, Unit: "bit/s"}}}
}
