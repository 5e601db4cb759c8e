package campaign

import (
	"fmt"
	"net"
	"strconv"
	"time"

	"go.yaml.in/yaml/v3"

	"cclab/internal/units"
	"cclab/link"
	"cclab/qdisc"
	"cclab/relay"
	"cclab/scenario"
)

// Relay is a bottleneck relay (cmd/bottleneck) a campaign path crosses in
// both directions (docs/campaigns.md, "Relays"): the sending agent sends
// to Listen, the relay forwards to the receiving host's data port, and the
// replies come back through it. Link describes each direction once; the
// relay's configuration (Config), its command line (BottleneckArgs) and the
// path's known truth are all derived from it.
type Relay struct {
	Name   string
	Listen string      // host:port the relay listens on (bottleneck -listen)
	Link   link.Config // each direction: rate, delay, queue, loss
	// To is the receiving host of the pairs via this relay (the relay's
	// -target is its data address): a relay forwards to one host.
	To string
}

// Config is the relay's configuration: Link in both directions.
func (r Relay) Config(target string) relay.Config {
	return relay.Config{Listen: r.Listen, Target: target, Seed: 1, Hops: [2][]link.Config{{r.Link}, {r.Link}}}
}

// BottleneckArgs is the command line that runs the relay: `bottleneck`'s
// flags for Link in the forward (data) and the reverse (ACK) direction.
func (r Relay) BottleneckArgs(target string) []string {
	args := []string{"-listen", r.Listen, "-target", target}
	for _, pre := range []string{"-", "-rev-"} {
		if r.Link.Rate > 0 {
			args = append(args, pre+"rate", units.FormatRate(r.Link.Rate))
		}
		if r.Link.Delay > 0 {
			args = append(args, pre+"delay", r.Link.Delay.String())
		}
		if r.Link.Queue != "" {
			args = append(args, pre+"queue", r.Link.Queue)
		}
		if r.Link.Loss != "" {
			args = append(args, pre+"loss", r.Link.Loss)
		}
	}
	return args
}

// Target is the relay's -target: the data address of its receiving host
// (the agent's default data port added when the address has none).
func (s *Spec) Target(r Relay) string {
	d := s.Host(r.To).Data
	if _, _, err := net.SplitHostPort(d); err == nil {
		return d
	}
	return net.JoinHostPort(d, strconv.Itoa(DefaultDataPort))
}

// DefaultDataPort is the agents' default data port (cclab agent
// -data-port).
const DefaultDataPort = 5311

// RelayOf returns the relay a pair crosses, if any.
func (s *Spec) RelayOf(p Pair) (Relay, bool) {
	name, ok := s.Via[p]
	if !ok {
		return Relay{}, false
	}
	for _, r := range s.Relays {
		if r.Name == name {
			return r, true
		}
	}
	return Relay{}, false
}

// PathKind is the kind of path a pair is: its group (PathGroup), and
// "+relay" when it crosses a relay, so that the report never pools shaped
// and unshaped paths.
func (s *Spec) PathKind(p Pair) string {
	k := PathGroup(s.Host(p.From).Group, s.Host(p.To).Group)
	if _, ok := s.Via[p]; ok {
		k += KindRelay
	}
	return k
}

// KindRelay marks a path kind that crosses a relay.
const KindRelay = "+relay"

// relays decodes the spec's relays list.
func relays(y *scenario.YAMLDecoder, n *yaml.Node) ([]Relay, []*yaml.Node, error) {
	if n == nil {
		return nil, nil, nil
	}
	items, err := y.List(n, "relays", "relays")
	if err != nil {
		return nil, nil, err
	}
	var out []Relay
	seen := map[string]bool{}
	for i, it := range items {
		p := fmt.Sprintf("relays[%d]", i)
		var r Relay
		err := y.Mapping(it, p, map[string]scenario.FieldFunc{
			"name": func(n *yaml.Node, p string) (err error) { r.Name, err = name(y, n, p); return err },
			"listen": func(n *yaml.Node, p string) (err error) {
				r.Listen, err = hostPort(y, n, p, "a relay address", "relay.example.net:9000")
				return err
			},
			"link": func(n *yaml.Node, p string) (err error) { r.Link, err = relayLink(y, n, p); return err },
		}, "name", "listen", "link")
		if err != nil {
			return nil, nil, err
		}
		if seen[r.Name] {
			return nil, nil, y.Errorf(it, p+".name", "relay %q is given twice", r.Name)
		}
		seen[r.Name] = true
		out = append(out, r)
	}
	return out, items, nil
}

// relayLink decodes a relay's link: rate (required), delay, queue, loss.
func relayLink(y *scenario.YAMLDecoder, n *yaml.Node, p string) (link.Config, error) {
	var c link.Config
	err := y.Mapping(n, p, map[string]scenario.FieldFunc{
		"rate": func(n *yaml.Node, p string) error {
			v, err := y.Str(n, p)
			if err == nil {
				c.Rate, err = units.ParseRate(v)
			}
			if err == nil && c.Rate <= 0 {
				err = fmt.Errorf("must be positive")
			}
			if err != nil {
				return y.Errorf(n, p, "%q: %v (e.g. 10Mbit)", v, err)
			}
			return nil
		},
		"delay": func(n *yaml.Node, p string) (err error) {
			if c.Delay, err = y.Duration(n, p); err == nil && (c.Delay < 0 || c.Delay > time.Hour) {
				err = y.Errorf(n, p, "%s is outside 0..1h", c.Delay)
			}
			return err
		},
		"queue": func(n *yaml.Node, p string) (err error) {
			c.Queue, err = y.Spec(n, p, qdisc.Registry.Validate)
			return err
		},
		"loss": func(n *yaml.Node, p string) (err error) { c.Loss, err = y.Spec(n, p, link.ValidateLoss); return err },
	}, "rate")
	return c, err
}

// checkVia checks the pairs' relays: each names a relay of the spec, and
// every pair via one relay goes to one host (the relay's target); it sets
// each relay's To (relayNodes: the relays' YAML items, for errors).
func checkVia(y *scenario.YAMLDecoder, s *Spec, via map[Pair]*yaml.Node, relayNodes []*yaml.Node) error {
	for i, pr := range s.Pairs {
		n, ok := via[pr]
		if !ok {
			continue
		}
		p := fmt.Sprintf("pairs[%d].via", i)
		name, err := y.Str(n, p)
		if err != nil {
			return err
		}
		k := -1
		var names []string
		for j, r := range s.Relays {
			names = append(names, r.Name)
			if r.Name == name {
				k = j
			}
		}
		if k < 0 {
			return y.Errorf(n, p, "unknown relay %q (the spec's relays: %v)", name, names)
		}
		if to := s.Relays[k].To; to != "" && to != pr.To {
			return y.Errorf(n, p, "relay %q forwards to %s (an earlier pair's to), not %s: a relay has one target; give each receiving host its own relay", name, to, pr.To)
		}
		s.Relays[k].To = pr.To
		if s.Via == nil {
			s.Via = map[Pair]string{}
		}
		s.Via[pr] = name
	}
	for i, r := range s.Relays {
		if r.To == "" {
			return y.Errorf(relayNodes[i], fmt.Sprintf("relays[%d]", i), "relay %q: no pair goes via it (pairs: [{from: A, to: B, via: %s}])", r.Name, r.Name)
		}
	}
	return nil
}
