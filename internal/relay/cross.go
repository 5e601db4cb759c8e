package relay

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"cclab/clock"
	"cclab/internal/spec"
	"cclab/internal/units"
)

// Rate is a rate parameter in bits/s, parsed with units.ParseRate.
type Rate float64

// UnmarshalText parses "5Mbit", "500kbit", ...
func (r *Rate) UnmarshalText(b []byte) error {
	v, err := units.ParseRate(string(b))
	if err != nil {
		return err
	}
	*r = Rate(v)
	return nil
}

// String formats the rate.
func (r Rate) String() string { return units.FormatRate(float64(r)) }

// Size is a size parameter in bytes, parsed with units.ParseBytes.
type Size int64

// UnmarshalText parses "1000", "1.5kB", ...
func (s *Size) UnmarshalText(b []byte) error {
	v, err := units.ParseBytes(string(b))
	if err != nil {
		return err
	}
	*s = Size(v)
	return nil
}

// String formats the size.
func (s Size) String() string { return units.FormatBytes(int64(s)) }

// CrossConfig configures one synthetic cross-traffic source injected into a
// hop's queue (no sockets). Spec: "cbr:rate=5Mbit,size=1000" or
// "onoff:rate=5Mbit,size=1000,on=100ms,off=100ms" with optional
// "hop=N" (0-based) and "dir=fwd|rev".
type CrossConfig struct {
	Kind string        // "cbr" or "onoff"
	Rate Rate          `param:"rate" help:"sending rate while on, bits/s (e.g. 5Mbit)"`
	Size Size          `param:"size" help:"datagram size on the wire, bytes"`
	On   time.Duration `param:"on" help:"mean ON period (onoff), exponentially distributed"`
	Off  time.Duration `param:"off" help:"mean OFF period (onoff), exponentially distributed"`
	Hop  int           `param:"hop" help:"0-based index of the hop whose queue receives the traffic"`
	Dir  string        `param:"dir" help:"path direction: fwd or rev"`
}

const crossHelp = `allowed: "cbr:rate=5Mbit,size=1000" or "onoff:rate=5Mbit,size=1000,on=100ms,off=100ms" (each may add hop=N,dir=fwd|rev)`

// ParseCross parses a cross-traffic spec.
func ParseCross(s string) (CrossConfig, error) {
	name, params, err := spec.Split(s)
	if err != nil {
		return CrossConfig{}, fmt.Errorf("cross traffic %q: %v (%s)", s, err, crossHelp)
	}
	c := CrossConfig{Kind: name, Size: 1000, On: 100 * time.Millisecond, Off: 100 * time.Millisecond, Dir: "fwd"}
	if name != "cbr" && name != "onoff" {
		return c, fmt.Errorf("cross traffic %q: unknown generator %q (%s)", s, name, crossHelp)
	}
	if err := spec.Apply("cross "+name, &c, params); err != nil {
		return c, fmt.Errorf("cross traffic: %v", err)
	}
	c.Dir = strings.ToLower(c.Dir)
	switch {
	case c.Rate <= 0:
		return c, fmt.Errorf("cross traffic %q: rate must be > 0 (e.g. rate=5Mbit)", s)
	case c.Size < 20 || c.Size > 65535:
		return c, fmt.Errorf("cross traffic %q: size must be 20..65535 bytes", s)
	case c.Dir != "fwd" && c.Dir != "rev":
		return c, fmt.Errorf("cross traffic %q: dir must be fwd or rev", s)
	case c.Hop < 0:
		return c, fmt.Errorf("cross traffic %q: hop must be >= 0", s)
	case name == "onoff" && (c.On <= 0 || c.Off <= 0):
		return c, fmt.Errorf("cross traffic %q: on and off must be > 0", s)
	}
	return c, nil
}

// crossGen is a seeded sans-I/O cross-traffic source: it tells when its next
// datagram enters the queue.
type crossGen struct {
	cfg      CrossConfig
	rnd      *rand.Rand
	gap      time.Duration // inter-packet time while on
	next     clock.Time    // instant of the next datagram; Never before start
	onUntil  clock.Time    // end of the current ON period (onoff)
	flow     uint64        // flow key written into packets
	sent     int64         // datagrams injected
	sentByte int64
}

func newCrossGen(cfg CrossConfig, rnd *rand.Rand, flow uint64) *crossGen {
	g := &crossGen{cfg: cfg, rnd: rnd, flow: flow}
	g.gap = time.Duration(float64(cfg.Size) * 8 / float64(cfg.Rate) * 1e9)
	if g.gap <= 0 {
		g.gap = 1
	}
	return g
}

func (g *crossGen) exp(mean time.Duration) time.Duration {
	return time.Duration(g.rnd.ExpFloat64() * float64(mean))
}

// start sets the first datagram instant.
func (g *crossGen) start(now clock.Time) {
	g.next = now
	if g.cfg.Kind == "onoff" {
		g.onUntil = now.Add(g.exp(g.cfg.On))
	}
}

// advance moves next to the following datagram.
func (g *crossGen) advance() {
	g.sent++
	g.sentByte += int64(g.cfg.Size)
	g.next = g.next.Add(g.gap)
	if g.cfg.Kind == "onoff" {
		for g.next >= g.onUntil {
			offEnd := g.onUntil.Add(g.exp(g.cfg.Off))
			g.next = offEnd
			g.onUntil = offEnd.Add(g.exp(g.cfg.On))
		}
	}
}
