package traffic

import (
	"fmt"
	"math/rand/v2"
	"time"

	"cclab/clock"
	"cclab/internal/spec"
)

// CBRConfig configures a constant-bit-rate UDP source.
type CBRConfig struct {
	Rate  Rate          `param:"rate,positional" help:"sending rate, bits/s (of UDP payload)"`
	Size  Size          `param:"size" help:"datagram payload size, bytes"`
	Start time.Duration `param:"start" help:"delay from the start of the run before the first datagram"`
	Stop  time.Duration `param:"stop" help:"stop sending this long after the start of the run; 0 means never"`
	Phase bool          `param:"phase" help:"start at a random offset within one inter-packet interval (desynchronises many sources)"`
	// Random is ns-2's CBR random_ (Application/Traffic/CBR, cbr_traffic.cc):
	// each inter-packet gap is interval·(1 + U(−0.5, 0.5)), uniform in
	// [RandomLow, RandomHigh) intervals, so the mean rate is unchanged. The
	// CSFQ paper's UDP sources (Stoica, Shenker & Zhang, SIGCOMM 1998, §3,
	// footnote 4) send this way.
	Random bool `param:"random" help:"ns-2's random_: each inter-packet gap uniform in [0.5, 1.5) intervals (mean rate unchanged)"`
}

// The range of a Random CBR gap in intervals: ns-2's
// interval_·(1 + Random::uniform(−0.5, 0.5)).
const (
	RandomLow  = 0.5
	RandomHigh = 1.5
)

// CBR sends Size-byte datagrams every Size·8/Rate seconds. Send times are
// computed as start + k·interval so rounding never drifts; with Random each
// gap is drawn and the send times are their running sum.
type CBR struct {
	cfg      CBRConfig
	r        *rand.Rand
	interval float64 // ns
	t0, stop clock.Time
	k        int64
	offset   float64 // ns after t0 of the next datagram (Random only)
}

// NewCBR returns a CBR generator; r is used only with Phase or Random.
func NewCBR(cfg CBRConfig, r *rand.Rand) (*CBR, error) {
	if err := checkRate("cbr", cfg.Rate, cfg.Size); err != nil {
		return nil, err
	}
	return &CBR{cfg: cfg, r: r, interval: float64(cfg.Size) * 8 / float64(cfg.Rate) * 1e9}, nil
}

// Name returns "cbr".
func (*CBR) Name() string { return "cbr" }

// NextDatagram returns the next send time.
func (c *CBR) NextDatagram(now clock.Time) (clock.Time, int) {
	if c.t0 == clock.Never {
		c.t0 = now.Add(c.cfg.Start)
		if c.cfg.Phase {
			c.t0 = c.t0.Add(time.Duration(c.r.Float64() * c.interval))
		}
		if c.cfg.Stop > 0 {
			c.stop = now.Add(c.cfg.Stop)
		}
	}
	at := c.t0.Add(time.Duration(float64(c.k) * c.interval))
	if c.cfg.Random {
		at = c.t0.Add(time.Duration(c.offset))
	}
	if c.stop != clock.Never && at >= c.stop {
		return clock.Never, 0
	}
	c.k++
	if c.cfg.Random {
		c.offset += c.interval * (RandomLow + (RandomHigh-RandomLow)*c.r.Float64())
	}
	return at, int(c.cfg.Size)
}

// UDPOnOffConfig configures a UDP ON/OFF source.
type UDPOnOffConfig struct {
	Rate Rate         `param:"rate,positional" help:"sending rate during ON periods, bits/s"`
	Size Size         `param:"size" help:"datagram payload size, bytes"`
	On   DurationDist `param:"on" help:"ON period distribution, e.g. exp(1s), pareto(1s/1.5)"`
	Off  DurationDist `param:"off" help:"OFF period distribution"`
}

// UDPOnOff sends at Rate during ON periods and is silent during OFF periods
// (the ns-2 Exponential/Pareto ON/OFF application). It starts with an OFF
// period; each period pair draws one OFF and then one ON length.
type UDPOnOff struct {
	cfg      UDPOnOffConfig
	r        *rand.Rand
	interval float64 // ns
	onStart  clock.Time
	onEnd    clock.Time
	k        int64
	started  bool
}

// NewUDPOnOff returns a UDP ON/OFF generator drawing from r.
func NewUDPOnOff(cfg UDPOnOffConfig, r *rand.Rand) (*UDPOnOff, error) {
	if err := checkRate("udponoff", cfg.Rate, cfg.Size); err != nil {
		return nil, err
	}
	if cfg.On.IsZero() || cfg.Off.IsZero() {
		return nil, fmt.Errorf("udponoff: on= and off= are required")
	}
	return &UDPOnOff{cfg: cfg, r: r, interval: float64(cfg.Size) * 8 / float64(cfg.Rate) * 1e9}, nil
}

// Name returns "udponoff".
func (*UDPOnOff) Name() string { return "udponoff" }

// NextDatagram returns the next send time.
func (u *UDPOnOff) NextDatagram(now clock.Time) (clock.Time, int) {
	if !u.started {
		u.started = true
		u.onEnd = now // the run starts with an OFF period
		u.k = -1
	}
	for {
		if u.k >= 0 {
			at := u.onStart.Add(time.Duration(float64(u.k) * u.interval))
			if at < u.onEnd {
				u.k++
				return at, int(u.cfg.Size)
			}
		}
		off := u.cfg.Off.Sample(u.r)
		on := max(1, u.cfg.On.Sample(u.r))
		u.onStart = u.onEnd.Add(off)
		u.onEnd = u.onStart.Add(on)
		u.k = 0
	}
}

func init() {
	spec.Add(Registry, "cbr", "UDP constant bit rate",
		func() CBRConfig { return CBRConfig{Rate: 1e6, Size: 1000} },
		func(c CBRConfig, env Env) (Generator, error) { return NewCBR(c, env.rand()) })
	spec.Add(Registry, "udponoff", "UDP ON/OFF: a given rate during ON periods, silent during OFF periods",
		func() UDPOnOffConfig {
			c := UDPOnOffConfig{Rate: 1e6, Size: 1000}
			_ = c.On.UnmarshalText([]byte("exp(1s)"))
			_ = c.Off.UnmarshalText([]byte("exp(1s)"))
			return c
		},
		func(c UDPOnOffConfig, env Env) (Generator, error) { return NewUDPOnOff(c, env.rand()) })
}
