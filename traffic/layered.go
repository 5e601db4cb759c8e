package traffic

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"cclab/clock"
	"cclab/internal/spec"
)

// MaxLayers bounds LayeredConfig.Layers.
const MaxLayers = 32

// LayeredConfig configures a layered (RLM-like) source.
type LayeredConfig struct {
	Layers    int           `param:"layers" help:"number of layers"`
	Base      Rate          `param:"base" help:"rate of the first layer, bits/s"`
	Factor    float64       `param:"factor" help:"each layer's rate is the previous one times factor (2: cumulative rates double)"`
	Size      Size          `param:"size" help:"datagram payload size, bytes"`
	Threshold float64       `param:"threshold" help:"loss fraction in a feedback report that counts as congestion"`
	JoinMin   time.Duration `param:"join" help:"initial join timer: time between join experiments"`
	JoinMax   time.Duration `param:"joinmax" help:"largest join timer after backoffs"`
	Backoff   float64       `param:"backoff" help:"join timer multiplier after a failed join experiment"`
	Detect    time.Duration `param:"detect" help:"detection time: a join experiment that sees congestion within it failed; losses are ignored this long after dropping a layer"`
}

// Layered models receiver-driven layered multicast (RLM, McCanne, Jacobson &
// Vetterli, SIGCOMM 1996) as seen by one receiver: CBR layers with rates
// base·factor^i are joined one at a time by periodic join experiments and the
// top layer is dropped on congestion. A join experiment that meets
// congestion within the detection time fails and doubles (backoff) that
// layer's join timer; join timers are randomised by a factor uniform in
// [1, 2) so that receivers do not join in step. It sends the sum of the
// joined layers as one CBR stream. The driver reports loss with Feedback.
type Layered struct {
	cfg      LayeredConfig
	r        *rand.Rand
	level    int             // layers joined (1..Layers)
	timers   []time.Duration // join timer per target level
	nextJoin clock.Time
	expStart clock.Time // start of the running join experiment; Never if none
	hold     clock.Time // ignore congestion until then
	next     float64    // next send time, ns
	started  bool
}

// NewLayered returns a layered generator drawing from r.
func NewLayered(cfg LayeredConfig, r *rand.Rand) (*Layered, error) {
	if cfg.Layers < 1 || cfg.Layers > MaxLayers || !(cfg.Factor > 0) || cfg.Factor > 16 || !(cfg.Backoff >= 1) ||
		cfg.JoinMin < 0 || cfg.JoinMax < cfg.JoinMin || cfg.Detect < 0 {
		return nil, fmt.Errorf("layered: need 1 <= layers <= %d, 0 < factor <= 16, backoff >= 1, 0 <= join <= joinmax, detect >= 0", MaxLayers)
	}
	if err := checkRate("layered", cfg.Base, cfg.Size); err != nil {
		return nil, err
	}
	top := LayeredConfig{Layers: cfg.Layers, Base: cfg.Base, Factor: cfg.Factor}
	if err := checkRate("layered (all layers)", Rate((&Layered{cfg: top, level: cfg.Layers}).Rate()), cfg.Size); err != nil {
		return nil, err
	}
	l := &Layered{cfg: cfg, r: r, level: 1, timers: make([]time.Duration, cfg.Layers+1)}
	for i := range l.timers {
		l.timers[i] = cfg.JoinMin
	}
	return l, nil
}

// Name returns "layered".
func (*Layered) Name() string { return "layered" }

// Level returns the number of layers currently joined.
func (l *Layered) Level() int { return l.level }

// Rate returns the current sending rate (sum of joined layers), bits/s.
func (l *Layered) Rate() float64 {
	f := l.cfg.Factor
	if f == 1 {
		return float64(l.cfg.Base) * float64(l.level)
	}
	return float64(l.cfg.Base) * (math.Pow(f, float64(l.level)) - 1) / (f - 1)
}

// NextDatagram returns the next send time at the current aggregate rate.
func (l *Layered) NextDatagram(now clock.Time) (clock.Time, int) {
	if !l.started {
		l.started = true
		l.next = float64(now)
		l.scheduleJoin(now)
	}
	at := clock.Time(l.next)
	l.next += float64(l.cfg.Size) * 8 / l.Rate() * 1e9
	return at, int(l.cfg.Size)
}

func (l *Layered) scheduleJoin(now clock.Time) {
	if l.level >= l.cfg.Layers {
		l.nextJoin = clock.Never
		return
	}
	l.nextJoin = now.Add(time.Duration(float64(l.timers[l.level+1]) * (1 + l.r.Float64())))
}

// Feedback reports datagrams received and lost since the previous report.
func (l *Layered) Feedback(now clock.Time, received, lost int) {
	if !l.started {
		return
	}
	total := received + lost
	congested := total > 0 && float64(lost) > l.cfg.Threshold*float64(total)
	if congested && now >= l.hold {
		if l.expStart != clock.Never && now.Sub(l.expStart) <= l.cfg.Detect {
			// failed join experiment: back off this layer's join timer
			t := time.Duration(float64(l.timers[l.level]) * l.cfg.Backoff)
			l.timers[l.level] = min(t, l.cfg.JoinMax)
		}
		l.expStart = clock.Never
		if l.level > 1 {
			l.level--
		}
		l.hold = now.Add(l.cfg.Detect)
		l.scheduleJoin(now)
		return
	}
	if l.expStart != clock.Never && now.Sub(l.expStart) > l.cfg.Detect {
		l.expStart = clock.Never // successful experiment
	}
	if !congested && l.expStart == clock.Never && l.nextJoin != clock.Never && now >= l.nextJoin {
		l.level++
		l.expStart = now
		l.scheduleJoin(now)
	}
}

func init() {
	spec.Add(Registry, "layered", "RLM-like layered source: CBR layers joined by experiments and dropped on loss",
		func() LayeredConfig {
			return LayeredConfig{Layers: 6, Base: 32e3, Factor: 2, Size: 1000, Threshold: 0.1,
				JoinMin: 5 * time.Second, JoinMax: 600 * time.Second, Backoff: 2, Detect: 2 * time.Second}
		},
		func(c LayeredConfig, env Env) (Generator, error) { return NewLayered(c, env.rand()) })
}
