package link

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"strconv"
	"strings"

	"cclab/clock"
	"cclab/internal/mix"
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

// HashedConfig configures hashed loss: independent loss with probability P
// like bernoulli, but decided by a fixed integer hash of the packet's
// position instead of a random stream, so that another simulator that
// implements the same rule (the ns-3 backend, backend/ns3/cxx/cclab-ns3.cc)
// drops exactly the same packets of the same run.
//
// The n-th packet (n = 0, 1, 2, ...) that reaches the loss stage of a link is
// lost iff HashedLost(key, n, P): with u = SplitMix64(key + n·0x9e3779b97f4a7c15)
// (Steele, Lea & Flood, OOPSLA 2014; mix.SplitMix64, which adds the golden
// gamma itself, so u is the (n+1)-th output of a SplitMix64 generator started
// at state key), the packet is lost iff (u >> 11) · 2⁻⁵³ < P. The key is
// Env.LossKey (the simulator sets HashedKey(seed, stream)).
type HashedConfig struct {
	P float64 `param:"p,positional" help:"loss probability per packet, 0..1"`
}

// HashedLost reports whether the n-th packet (from 0) at a hashed loss
// stage with the given key and probability p is lost (HashedConfig).
func HashedLost(key, n uint64, p float64) bool {
	u := mix.SplitMix64(key + n*mix.Golden)
	return float64(u>>11)*(1.0/(1<<53)) < p
}

// HashedKey is the key of a hashed loss stage in a run with this seed on the
// link whose random stream is called stream (the simulator's link stream
// name, "link/<from>><to>" for a plan's hop): SplitMix64 of the 64-bit
// FNV-1a hash of the seed's eight little-endian bytes followed by the bytes
// of "loss/" + stream.
func HashedKey(seed uint64, stream string) uint64 {
	h := fnv.New64a()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], seed)
	h.Write(b[:])
	h.Write([]byte("loss/" + stream))
	return mix.SplitMix64(h.Sum64())
}

type hashed struct {
	p   float64
	key uint64
	n   uint64 // packets seen so far
}

func (h *hashed) lose(*rand.Rand, clock.Time) bool {
	n := h.n
	h.n++
	return HashedLost(h.key, n, h.p)
}

const lossHelp = `allowed: "" or "none", a probability such as "0.02", "bernoulli:p=0.02", "hashed:p=0.02", "ge:p=0.01,r=0.3,h=0,k=1", "getime:good=1s,bad=20ms,h=0,k=1"`

// parseLoss parses a loss spec; key is the hashed model's key (Env.LossKey).
// A nil model means no loss.
func parseLoss(s string, key uint64) (lossModel, error) {
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
	case "hashed":
		var c HashedConfig
		if err := spec.Apply("loss hashed", &c, params); err != nil {
			return nil, fmt.Errorf("link: Loss: %v", err)
		}
		if err := check("p", c.P); err != nil {
			return nil, err
		}
		return &hashed{p: c.P, key: key}, nil
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
	_, err := parseLoss(s, 0)
	return err
}
