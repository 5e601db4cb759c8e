package traffic

import (
	"time"

	"cclab/clock"
	"cclab/internal/spec"
)

// GreedyConfig configures a greedy source.
type GreedyConfig struct {
	Bytes Size          `param:"bytes,positional" help:"bytes to send; 0 means unlimited (bulk transfer), bytes"`
	Start time.Duration `param:"start" help:"delay from the start of the run before sending"`
}

// Greedy is a single bulk transfer: unlimited, or N bytes, as fast as the
// connection allows.
type Greedy struct {
	cfg  GreedyConfig
	done bool
}

// NewGreedy returns a greedy generator.
func NewGreedy(cfg GreedyConfig) *Greedy { return &Greedy{cfg: cfg} }

// Name returns "greedy".
func (*Greedy) Name() string { return "greedy" }

// NextTransfer returns the one transfer, then ok=false.
func (g *Greedy) NextTransfer(now clock.Time) (Transfer, bool) {
	if g.done {
		return Transfer{}, false
	}
	g.done = true
	return Transfer{Start: now.Add(g.cfg.Start), Bytes: int64(g.cfg.Bytes), Idle: g.cfg.Start}, true
}

func init() {
	spec.Add(Registry, "greedy", "one bulk transfer, unlimited or N bytes",
		func() GreedyConfig { return GreedyConfig{} },
		func(c GreedyConfig, env Env) (Generator, error) { return NewGreedy(c), nil })
}
