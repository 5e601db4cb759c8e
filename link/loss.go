package link

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"cclab/clock"
	"cclab/internal/spec"
)

// lossModel decides, packet by packet, whether the loss stage discards a
// packet arriving at now.
type lossModel interface {
	lose(r *rand.Rand, now clock.Time) bool
}

// BernoulliConfig configures independent random loss.
type BernoulliConfig struct {
	P float64 `param:"p,positional" help:"loss probability per packet, 0..1"`
}

type bernoulli struct{ p float64 }

func (b *bernoulli) lose(r *rand.Rand, _ clock.Time) bool { return b.p > 0 && r.Float64() < b.p }

// GEConfig configures a Gilbert-Elliott two-state loss model with the four
// parameters of Hasslinger & Hohlfeld, "The Gilbert-Elliott Model for Packet
// Loss in Real Time Services on the Internet" (MMB 2008), the same convention
// as Linux netem's "loss gemodel p r 1-h 1-k": in state Good a packet is lost
// with probability 1-k, in state Bad with probability 1-h; after each packet
// the state moves Good→Bad with probability p and Bad→Good with probability r.
// The stationary loss rate is (r(1-k) + p(1-h)) / (p + r).
type GEConfig struct {
	P float64 `param:"p" help:"probability of moving Good→Bad after a packet, 0..1"`
	R float64 `param:"r" help:"probability of moving Bad→Good after a packet, 0..1 (default 1-p, as netem)"`
	H float64 `param:"h" help:"probability a packet is delivered in state Bad, 0..1 (default 0)"`
	K float64 `param:"k" help:"probability a packet is delivered in state Good, 0..1 (default 1)"`
}

type gilbertElliott struct {
	cfg GEConfig
	bad bool
}

func (g *gilbertElliott) lose(r *rand.Rand, _ clock.Time) bool {
	// As netem's loss_gilb_ell: the loss draw uses the state the packet
	// finds, and the transition applies to the next packet.
	var lost bool
	if g.bad {
		lost = r.Float64() >= g.cfg.H
		if r.Float64() < g.cfg.R {
			g.bad = false
		}
	} else {
		lost = r.Float64() >= g.cfg.K
		if r.Float64() < g.cfg.P {
			g.bad = true
		}
	}
	return lost
}

const lossHelp = `allowed: "" or "none", a probability such as "0.02", "bernoulli:p=0.02", "ge:p=0.01,r=0.3,h=0,k=1", "getime:good=1s,bad=20ms,h=0,k=1"`

// parseLoss parses a loss spec. A nil model means no loss.
func parseLoss(s string) (lossModel, error) {
	s = strings.TrimSpace(s)
	if s == "" || strings.EqualFold(s, "none") {
		return nil, nil
	}
	if p, err := strconv.ParseFloat(s, 64); err == nil {
		if !(p >= 0 && p <= 1) { // also rejects NaN
			return nil, fmt.Errorf("link: Loss %q: probability must be in 0..1 (%s)", s, lossHelp)
		}
		return &bernoulli{p: p}, nil
	}
	name, params, err := spec.Split(s)
	if err != nil {
		return nil, fmt.Errorf("link: Loss %q: %v (%s)", s, err, lossHelp)
	}
	check := func(key string, v float64) error {
		if !(v >= 0 && v <= 1) { // also rejects NaN
			return fmt.Errorf("link: Loss %q: %s=%v must be in 0..1", s, key, v)
		}
		return nil
	}
	switch name {
	case "bernoulli":
		var c BernoulliConfig
		if err := spec.Apply("loss bernoulli", &c, params); err != nil {
			return nil, fmt.Errorf("link: Loss: %v", err)
		}
		if err := check("p", c.P); err != nil {
			return nil, err
		}
		return &bernoulli{p: c.P}, nil
	case "ge", "gilbert-elliott", "gemodel":
		c := GEConfig{R: -1, H: 0, K: 1}
		if err := spec.Apply("loss ge", &c, params); err != nil {
			return nil, fmt.Errorf("link: Loss: %v", err)
		}
		if c.R < 0 {
			c.R = 1 - c.P
		}
		for _, kv := range []struct {
			k string
			v float64
		}{{"p", c.P}, {"r", c.R}, {"h", c.H}, {"k", c.K}} {
			if err := check(kv.k, kv.v); err != nil {
				return nil, err
			}
		}
		return &gilbertElliott{cfg: c}, nil
	case "getime", "ge-time":
		c := GETimeConfig{H: 0, K: 1}
		if err := spec.Apply("loss getime", &c, params); err != nil {
			return nil, fmt.Errorf("link: Loss: %v", err)
		}
		if c.Good <= 0 || c.Bad <= 0 {
			return nil, fmt.Errorf("link: Loss %q: good=%v and bad=%v must be positive durations (mean sojourn in each state, e.g. good=1s,bad=20ms)", s, c.Good, c.Bad)
		}
		for _, kv := range []struct {
			k string
			v float64
		}{{"h", c.H}, {"k", c.K}} {
			if err := check(kv.k, kv.v); err != nil {
				return nil, err
			}
		}
		return &geTime{cfg: c, next: clock.Never}, nil
	}
	return nil, fmt.Errorf("link: Loss %q: unknown loss model %q (%s)", s, name, lossHelp)
}

// ValidateLoss checks a loss spec without building a link.
func ValidateLoss(s string) error {
	_, err := parseLoss(s)
	return err
}
