package link

import (
	"math/rand/v2"
	"time"

	"cclab/clock"
)

// GETimeConfig configures the time-based Gilbert-Elliott loss model: the
// two states Good and Bad alternate in time, each sojourn exponentially
// distributed with the given mean (a continuous-time two-state Markov chain,
// Gilbert 1960 / Elliott 1963 in time rather than per packet); a packet
// arriving in Good is lost with probability 1-k, in Bad with 1-h, as in the
// per-packet model (GEConfig). The state changes whether or not packets
// are sent, so an outage lasts as long in time however few packets probe it
// (a sender in RTO backoff is not held in a Bad state for seconds), and the
// long-run fraction of time in Bad is bad/(good+bad). Sojourns are drawn
// from the link's loss stream.
type GETimeConfig struct {
	Good time.Duration `param:"good" help:"mean sojourn in state Good, a duration (exponential)"`
	Bad  time.Duration `param:"bad" help:"mean sojourn in state Bad, a duration (exponential)"`
	H    float64       `param:"h" help:"probability a packet is delivered in state Bad, 0..1 (default 0)"`
	K    float64       `param:"k" help:"probability a packet is delivered in state Good, 0..1 (default 1)"`
}

// geTimeRestart is how many mean cycles (good + bad) of idle time make the
// model draw its state afresh from the stationary distribution.
const geTimeRestart = 64

// geTime is the time-based Gilbert-Elliott loss model.
type geTime struct {
	cfg  GETimeConfig
	bad  bool
	next clock.Time // the next state change; Never before the first packet
}

// sojourn draws the length of a stay in the current state.
func (g *geTime) sojourn(r *rand.Rand) time.Duration {
	mean := g.cfg.Good
	if g.bad {
		mean = g.cfg.Bad
	}
	return max(time.Duration(r.ExpFloat64()*float64(mean)), 1)
}

func (g *geTime) lose(r *rand.Rand, now clock.Time) bool {
	if g.next == clock.Never {
		// The chain starts in Good at the first packet (a link's clock has
		// no earlier origin the model could use).
		g.next = now.Add(g.sojourn(r))
	}
	if cycle := g.cfg.Good + g.cfg.Bad; now.Sub(g.next) > geTimeRestart*cycle {
		// After many mean cycles the state is independent of the past
		// (the chain mixes at rate 1/good + 1/bad): draw it from the
		// stationary distribution instead of walking every sojourn, and
		// start a fresh one (exponential sojourns are memoryless).
		g.bad = r.Float64()*float64(cycle) < float64(g.cfg.Bad)
		g.next = now.Add(g.sojourn(r))
	}
	for !now.Before(g.next) {
		g.bad = !g.bad
		g.next = g.next.Add(g.sojourn(r))
	}
	if g.bad {
		return r.Float64() >= g.cfg.H
	}
	return r.Float64() >= g.cfg.K
}
