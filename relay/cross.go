package relay

import (
	"fmt"
	"strconv"
	"strings"

	"cclab/clock"
	"cclab/internal/spec"
	"cclab/traffic"
)

// CrossConfig configures one synthetic cross-traffic source injected into a
// hop's queue (no sockets). The datagrams come from a datagram generator of
// package traffic (docs/traffic.md), the same code the simulator runs; each
// occupies its UDP payload plus the relay's per-datagram overhead
// (Config.Overhead) on the link.
type CrossConfig struct {
	Gen string // traffic datagram generator spec, e.g. "cbr:rate=5Mbit,size=1000" (rate and size of UDP payload)
	Hop int    // 0-based index of the hop whose queue receives the traffic
	Dir string // path direction: "fwd" or "rev"
	// Stream names the generator's random stream (traffic.Stream(Seed,
	// Stream)); "" means "cross/<i>" for the i-th source.
	Stream string
	// Flow is the flow key of its packets (qdisc.Packet.Flow, Event.Flow);
	// 0 means 0xC0000000+i for the i-th source.
	Flow uint64
}

const crossHelp = `allowed: a datagram generator of docs/traffic.md such as "cbr:rate=5Mbit,size=1000" or ` +
	`"udponoff:rate=5Mbit,size=1000,on=exp(100ms),off=exp(100ms)", or the older "onoff:rate=5Mbit,size=1000,on=100ms,off=100ms" ` +
	`(exponential periods with those means); each may add hop=N,dir=fwd|rev`

// legacyOnOffPeriod is the mean ON and OFF period of the older
// "onoff:rate=...,size=..." cross-traffic syntax when on= or off= is
// omitted: 100 ms (the default the relay always had).
const legacyOnOffPeriod = "100ms"

// ParseCross parses a cross-traffic spec: a traffic datagram generator spec
// (cbr, udponoff, layered) with the extra keys hop=N and dir=fwd|rev. The
// older syntax "onoff:rate=R,size=S,on=D,off=D" is accepted and means
// "udponoff:rate=R,size=S,on=exp(D),off=exp(D)" (a bare duration is the mean
// of an exponential period; on and off default to 100 ms).
func ParseCross(s string) (CrossConfig, error) {
	c := CrossConfig{Dir: "fwd"}
	name, params, err := spec.Split(s)
	if err != nil {
		return c, fmt.Errorf("cross traffic %q: %v (%s)", s, err, crossHelp)
	}
	legacy := name == "onoff" // traffic's onoff drives reliable connections; as cross traffic it is the old UDP ON/OFF
	if legacy {
		name = "udponoff"
	}
	var toks []string
	seen := map[string]bool{}
	for _, kv := range params {
		switch {
		case kv.Key == "hop" && !kv.Bare:
			n, err := strconv.Atoi(kv.Value)
			if err != nil || n < 0 {
				return c, fmt.Errorf("cross traffic %q: hop must be an integer >= 0", s)
			}
			c.Hop = n
			continue
		case kv.Key == "dir" && !kv.Bare:
			c.Dir = strings.ToLower(kv.Value)
			if c.Dir != "fwd" && c.Dir != "rev" {
				return c, fmt.Errorf("cross traffic %q: dir must be fwd or rev", s)
			}
			continue
		case legacy && (kv.Key == "on" || kv.Key == "off") && !strings.Contains(kv.Value, "("):
			kv.Value = "exp(" + kv.Value + ")"
		}
		seen[kv.Key] = true
		if kv.Bare {
			toks = append(toks, kv.Key)
		} else {
			toks = append(toks, kv.Key+"="+kv.Value)
		}
	}
	if legacy {
		for _, k := range []string{"on", "off"} {
			if !seen[k] {
				toks = append(toks, k+"=exp("+legacyOnOffPeriod+")")
			}
		}
	}
	c.Gen = name
	if len(toks) > 0 {
		c.Gen += ":" + strings.Join(toks, ",")
	}
	if _, err := newCrossGen(c.Gen, 0, "validate"); err != nil {
		return c, fmt.Errorf("cross traffic %q: %v (%s)", s, err, crossHelp)
	}
	return c, nil
}

// newCrossGen builds the datagram generator of a cross-traffic spec with its
// own random stream traffic.Stream(seed, name).
func newCrossGen(gen string, seed uint64, name string) (traffic.DatagramGen, error) {
	g, err := traffic.New(gen, traffic.Env{Rand: traffic.Stream(seed, name)})
	if err != nil {
		return nil, err
	}
	dg, ok := g.(traffic.DatagramGen)
	if !ok {
		return nil, fmt.Errorf("%q is not a datagram generator (cbr, udponoff, layered)", gen)
	}
	return dg, nil
}

// crossStreamName is the name of cross-traffic source i's random stream
// (traffic.Stream(Config.Seed, crossStreamName(i))).
func crossStreamName(i int) string { return "cross/" + strconv.Itoa(i) }

// crossSource feeds one traffic.DatagramGen into a hop's queue. It holds the
// generator's next datagram so that the relay can ask for its instant
// (deadline) without drawing it.
type crossSource struct {
	gen  traffic.DatagramGen
	next clock.Time // instant of the next datagram; clock.Never before start and when the generator is done
	size int        // the next datagram's UDP payload, bytes
	flow uint64     // flow key written into its packets
}

// start draws the first datagram of a run starting at now.
func (c *crossSource) start(now clock.Time) { c.next, c.size = c.gen.NextDatagram(now) }

// advance draws the datagram after the one due at next.
func (c *crossSource) advance() { c.next, c.size = c.gen.NextDatagram(c.next) }
