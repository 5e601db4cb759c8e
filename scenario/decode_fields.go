package scenario

import (
	"cmp"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"cclab/internal/units"
	"cclab/link"
	"cclab/qdisc"
	"cclab/traffic"
	"cclab/transport"
)

func (d *decoder) scenario(doc *yaml.Node) (Scenario, error) {
	s := Scenario{Interval: DefaultInterval, Backends: []string{BackendSim}}
	var runs int
	var seedsGiven bool
	var baselineNode *yaml.Node
	topos, err := d.topologies(doc)
	if err != nil {
		return s, err
	}
	err = d.mapping(doc, "", map[string]fieldFn{
		"name": func(n *yaml.Node, p string) (err error) {
			s.Name, err = d.str(n, p)
			if err == nil && s.Name == "" {
				err = d.errAt(n, p, "must not be empty")
			}
			return err
		},
		"description": func(n *yaml.Node, p string) (err error) { s.Description, err = d.str(n, p); return },
		"duration": func(n *yaml.Node, p string) (err error) {
			s.Duration, err = d.duration(n, p)
			if err == nil && (s.Duration <= 0 || s.Duration > MaxDuration) {
				err = d.errAt(n, p, "%v: must be positive (e.g. 15s) and at most %v", s.Duration, MaxDuration)
			}
			return err
		},
		"interval": func(n *yaml.Node, p string) (err error) {
			s.Interval, err = d.duration(n, p)
			if err == nil && s.Interval <= 0 {
				err = d.errAt(n, p, "must be positive (e.g. 100ms)")
			}
			return err
		},
		"runs":      func(n *yaml.Node, p string) (err error) { runs, err = d.integerIn(n, p, 1, MaxRuns); return },
		"live_runs": func(n *yaml.Node, p string) (err error) { s.LiveRuns, err = d.integerIn(n, p, 1, MaxRuns); return },
		"seeds": func(n *yaml.Node, p string) error {
			items, err := d.list(n, p, "seeds (non-negative integers)")
			if err != nil {
				return err
			}
			seedsGiven = true
			for _, it := range items {
				v, err := strconv.ParseUint(it.Value, 10, 64)
				if err != nil || it.Kind != yaml.ScalarNode {
					return d.errAt(it, p, "%q is not a seed (a non-negative integer)", it.Value)
				}
				s.Seeds = append(s.Seeds, v)
			}
			return nil
		},
		"backends": func(n *yaml.Node, p string) error {
			items, err := d.list(n, p, "backends (sim, live, ns3)")
			if err != nil {
				return err
			}
			s.Backends = nil
			for _, it := range items {
				if it.Value != BackendSim && it.Value != BackendLive && it.Value != BackendNS3 {
					return d.errAt(it, p, "unknown backend %q (allowed: sim, live, ns3)", it.Value)
				}
				s.Backends = append(s.Backends, it.Value)
			}
			return nil
		},
		"topology":   func(n *yaml.Node, p string) (err error) { s.Topology, err = d.namedTopology(n, p, topos); return },
		"topologies": func(n *yaml.Node, p string) error { return nil }, // read before: topos
		"defs":       func(n *yaml.Node, p string) error { return nil }, // anchors for the rest of the file
		"cases":      func(n *yaml.Node, p string) error { return nil }, // expanded by ParseScenario
		"study": func(n *yaml.Node, p string) (err error) {
			s.Study, err = d.enum(n, p, StudyDCA, StudyDCCPTCP, StudyFairQueueing, StudyETH)
			return err
		},
		"flows": func(n *yaml.Node, p string) (err error) {
			if s.Flows, err = listOf(d, n, p, "flows", d.flow); err != nil {
				return err
			}
			if len(s.Flows) == 0 {
				return d.errAt(n, p, "at least one flow is needed")
			}
			return nil
		},
		"baseline": func(n *yaml.Node, p string) error { baselineNode = n; return nil },
		"trace":    func(n *yaml.Node, p string) (err error) { s.Trace, err = d.traceSpec(n, p); return },
		"published": func(n *yaml.Node, p string) (err error) {
			s.Published, err = listOf(d, n, p, "published", d.published)
			return
		},
		"warmup": func(n *yaml.Node, p string) (err error) { s.Warmup, err = d.duration(n, p); return },
		"until_done": func(n *yaml.Node, p string) (err error) {
			s.UntilDone, err = d.boolean(n, p)
			return
		},
		"epoch_threshold": func(n *yaml.Node, p string) (err error) {
			s.EpochThreshold, err = d.fraction(n, p)
			return
		},
	}, "name", "duration", "topology", "flows")
	if err != nil {
		return s, err
	}
	return s, d.checkScenario(doc, &s, runs, seedsGiven, baselineNode)
}

// checkScenario completes a decoded scenario (seeds from runs, the baseline)
// and checks what involves several fields.
func (d *decoder) checkScenario(doc *yaml.Node, s *Scenario, runs int, seedsGiven bool, baselineNode *yaml.Node) error {
	if seedsGiven && runs > 0 {
		return d.errAt(doc, "runs", "give either runs or seeds, not both")
	}
	if !seedsGiven {
		if runs == 0 {
			runs = DefaultRuns
		}
		for i := 1; i <= runs; i++ {
			s.Seeds = append(s.Seeds, uint64(i))
		}
	}
	if s.Warmup >= s.Duration {
		return d.errAt(doc, "warmup", "warm-up %v must be shorter than the run (%v)", s.Warmup, s.Duration)
	}
	if err := s.checkLimits(false); err != nil {
		return d.errAt(doc, "", "%v", err)
	}
	if err := s.checkTrace(); err != nil {
		return d.errAt(doc, "trace", "%v", err)
	}
	for i, f := range s.Flows {
		if f.Path != nil && f.Path[1] >= len(s.Topology.Hops) {
			return d.errAt(doc, fmt.Sprintf("flows[%d].path", i), "path %d-%d: the topology has %d hop(s) (0..%d)",
				f.Path[0], f.Path[1], len(s.Topology.Hops), len(s.Topology.Hops)-1)
		}
		if f.Stop != 0 && f.Stop <= f.Start {
			return d.errAt(doc, fmt.Sprintf("flows[%d].stop", i), "stop %v must be after start %v", f.Stop, f.Start)
		}
		if f.Start >= s.Duration {
			return d.errAt(doc, fmt.Sprintf("flows[%d].start", i), "start %v is not before the end of the run (%v)", f.Start, s.Duration)
		}
		if err := checkKernelFlow(s, f); err != "" {
			return d.errAt(doc, fmt.Sprintf("flows[%d].stack", i), "%s", err)
		}
	}
	if baselineNode != nil {
		bn := resolve(baselineNode)
		if bn.Kind != yaml.MappingNode {
			return d.errAt(bn, "baseline", "want a mapping of swept field to value (e.g. cc: reno), got %s", kindName(bn))
		}
		for i := 0; i+1 < len(bn.Content); i += 2 {
			s.Baseline = append(s.Baseline, Param{Axis: bn.Content[i].Value, Value: resolve(bn.Content[i+1]).Value})
		}
	}
	return nil
}

// namedTopology decodes the topology field: a topology, or the name of one
// of the scenario's topologies (a list of names sweeps them).
func (d *decoder) namedTopology(n *yaml.Node, p string, topos map[string]*yaml.Node) (Topology, error) {
	if resolve(n).Kind == yaml.MappingNode {
		return d.topology(n, p)
	}
	name, at, err := d.value(n, p)
	if err != nil {
		return Topology{}, err
	}
	tn, ok := topos[name]
	if !ok {
		var have []string
		for k := range topos {
			have = append(have, k)
		}
		sort.Strings(have)
		return Topology{}, d.errAt(at, p, "no topology named %q in topologies (defined: %s)", name, strings.Join(have, ", "))
	}
	return d.topology(tn, "topologies."+name)
}

// topologies returns the scenario's named topologies (the mapping under
// "topologies"), each decoded only when a point selects it by name.
func (d *decoder) topologies(doc *yaml.Node) (map[string]*yaml.Node, error) {
	out := map[string]*yaml.Node{}
	doc = resolve(doc)
	for i := 0; doc.Kind == yaml.MappingNode && i+1 < len(doc.Content); i += 2 {
		if doc.Content[i].Value != "topologies" {
			continue
		}
		m := resolve(doc.Content[i+1])
		if m.Kind != yaml.MappingNode {
			return nil, d.errAt(m, "topologies", "want a mapping of name to topology, got %s", kindName(m))
		}
		for j := 0; j+1 < len(m.Content); j += 2 {
			out[m.Content[j].Value] = m.Content[j+1]
		}
	}
	return out, nil
}

func (d *decoder) hop(n *yaml.Node, path string) (Hop, error) {
	h := Hop{Queue: "droptail:100p"}
	var queueNode *yaml.Node
	err := d.mapping(n, path, map[string]fieldFn{
		"rate": func(n *yaml.Node, p string) (err error) {
			h.Rate, err = d.rate(n, p)
			if err == nil && h.Rate <= 0 {
				err = d.errAt(n, p, "a hop needs a positive rate (e.g. 16Mbit)")
			}
			return err
		},
		"delay": func(n *yaml.Node, p string) (err error) { h.Delay, err = d.duration(n, p); return },
		"queue": func(n *yaml.Node, p string) (err error) {
			queueNode = n
			h.Queue, err = d.spec(n, p, qdisc.Registry.Validate)
			return
		},
		"loss":    func(n *yaml.Node, p string) (err error) { h.Loss, err = d.spec(n, p, validateLoss); return },
		"trace":   func(n *yaml.Node, p string) (err error) { h.Trace, err = d.spec(n, p, validateTrace); return },
		"jitter":  func(n *yaml.Node, p string) (err error) { h.Jitter, err = d.duration(n, p); return },
		"reorder": func(n *yaml.Node, p string) (err error) { h.Reorder, err = d.boolean(n, p); return },
		"rev_loss": func(n *yaml.Node, p string) (err error) {
			h.RevLoss, err = d.spec(n, p, validateLoss)
			return
		},
		"rev_rate": func(n *yaml.Node, p string) error {
			v, s, err := d.value(n, p)
			if err != nil {
				return err
			}
			if v == "unlimited" {
				h.RevRate = -1
				return nil
			}
			if h.RevRate, err = d.rate(n, p); err == nil && h.RevRate <= 0 {
				return d.errAt(s, p, "want a positive rate or \"unlimited\"")
			}
			return err
		},
		"cross": func(n *yaml.Node, p string) (err error) {
			h.Cross, err = listOf(d, n, p, "cross-traffic sources (a datagram generator spec, or {traffic, dir})",
				func(n *yaml.Node, p string, _ int) (Cross, error) { return d.cross(n, p) })
			return err
		},
		"background": func(n *yaml.Node, p string) (err error) {
			h.Background, err = listOf(d, n, p, "background flow groups (each with the keys of a flow but path)", d.background)
			return err
		},
	}, "rate")
	if err == nil && queueNode != nil {
		err = d.buildQueue(queueNode, path+".queue", h.Queue, h.Rate)
	}
	return h, err
}

// background decodes one background group of a hop: a flow group without
// a path (it is the hop's), named bg<i> unless it has a name.
func (d *decoder) background(n *yaml.Node, path string, i int) (Flow, error) {
	f, err := d.flow(n, path, i)
	if err != nil {
		return f, err
	}
	if f.Path != nil {
		return f, d.errAt(resolve(n), path+".path", "a background group crosses its hop only: no path")
	}
	if !hasKey(n, "name") {
		f.Name = fmt.Sprintf("bg%d", i)
	}
	return f, nil
}

// hasKey reports whether the mapping n has the key.
func hasKey(n *yaml.Node, key string) bool {
	n = resolve(n)
	if n.Kind != yaml.MappingNode {
		return false
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return true
		}
	}
	return false
}

// cross decodes one cross-traffic source: a generator spec, or a mapping
// with traffic and dir.
func (d *decoder) cross(n *yaml.Node, path string) (Cross, error) {
	c := Cross{Dir: DirFwd}
	if n.Kind != yaml.MappingNode {
		var err error
		c.Traffic, err = d.spec(n, path, ValidateCrossTraffic)
		return c, err
	}
	err := d.mapping(n, path, map[string]fieldFn{
		"traffic": func(n *yaml.Node, p string) (err error) { c.Traffic, err = d.spec(n, p, ValidateCrossTraffic); return },
		"dir":     func(n *yaml.Node, p string) (err error) { c.Dir, err = d.enum(n, p, DirFwd, DirRev); return },
	}, "traffic")
	return c, err
}

// ValidateCrossTraffic checks that spec is a datagram generator (cross
// traffic is open-loop: cbr, udponoff, layered).
func ValidateCrossTraffic(spec string) error {
	g, err := traffic.New(spec, traffic.Env{})
	if err != nil {
		return err
	}
	if _, ok := g.(traffic.DatagramGen); !ok {
		return fmt.Errorf("traffic %q is not a datagram generator (cross traffic: cbr, udponoff, layered)", spec)
	}
	return nil
}

// buildQueue builds the queue of spec for a link of rate bits/s, so that
// errors only a built queue finds (RED's min ≥ max, thresholds in mixed
// units) are reported at the field's line, not when a run starts.
func (d *decoder) buildQueue(n *yaml.Node, path, spec string, rate float64) error {
	if _, err := qdisc.New(spec, qdisc.Env{Rate: rate}); err != nil {
		s, serr := d.scalar(n, path)
		if serr != nil {
			s = resolve(n)
		}
		return d.errAt(s, path, "%v", err)
	}
	return nil
}

// validateTrace checks a Mahimahi trace file by reading and parsing it.
func validateTrace(file string) error {
	_, err := ReadTrace(file)
	return err
}

// ReadTrace reads and parses a Mahimahi trace file (docs/link.md).
func ReadTrace(file string) (*link.Trace, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("trace: %v (a Mahimahi trace file: one millisecond timestamp per line)", err)
	}
	defer f.Close()
	tr, err := link.TraceFromReader(f)
	if err != nil {
		return nil, fmt.Errorf("trace %s: %v", file, err)
	}
	return tr, nil
}

// validateLoss checks a link loss spec by building a link with it.
func validateLoss(s string) error {
	_, err := link.New(link.Config{Loss: s}, link.Env{})
	return err
}

func (d *decoder) topology(n *yaml.Node, path string) (Topology, error) {
	t := Topology{}
	var hopsNode, bneckNode *yaml.Node
	err := d.mapping(n, path, map[string]fieldFn{
		"kind": func(n *yaml.Node, p string) (err error) {
			t.Kind, err = d.enum(n, p, KindDumbbell, KindChain)
			return
		},
		"bottleneck": func(n *yaml.Node, p string) error {
			bneckNode = n
			h, err := d.hop(n, p)
			t.Hops = append([]Hop{h}, t.Hops...)
			return err
		},
		"hops": func(n *yaml.Node, p string) error {
			hopsNode = n
			hops, err := listOf(d, n, p, "hops (each with rate, delay, queue, loss)",
				func(n *yaml.Node, p string, _ int) (Hop, error) { return d.hop(n, p) })
			t.Hops = append(t.Hops, hops...)
			return err
		},
		"access": func(n *yaml.Node, p string) error {
			return d.mapping(n, p, map[string]fieldFn{
				"rate":  func(n *yaml.Node, p string) (err error) { t.Access.Rate, err = d.rate(n, p); return },
				"delay": func(n *yaml.Node, p string) (err error) { t.Access.Delay, err = d.duration(n, p); return },
				"queue": func(n *yaml.Node, p string) (err error) {
					if t.Access.Queue, err = d.spec(n, p, qdisc.Registry.Validate); err == nil {
						err = d.buildQueue(n, p, t.Access.Queue, 0)
					}
					return
				},
			})
		},
		"mtu": func(n *yaml.Node, p string) (err error) { t.MTU, err = d.size(n, p); return },
		"payload_only": func(n *yaml.Node, p string) (err error) {
			t.PayloadOnly, err = d.boolean(n, p)
			return
		},
	}, "kind")
	if err != nil {
		return t, err
	}
	switch t.Kind {
	case KindDumbbell:
		if bneckNode == nil {
			return t, d.errAt(n, path+".bottleneck", "a dumbbell needs a bottleneck (rate, delay, queue, loss)")
		}
		if hopsNode != nil {
			return t, d.errAt(hopsNode, path+".hops", "a dumbbell has one bottleneck: use bottleneck, not hops")
		}
	case KindChain:
		if bneckNode != nil {
			return t, d.errAt(bneckNode, path+".bottleneck", "a chain lists its hops: use hops, not bottleneck")
		}
		if len(t.Hops) == 0 {
			return t, d.errAt(n, path+".hops", "a chain needs at least one hop")
		}
	}
	return t, nil
}

func (d *decoder) flow(n *yaml.Node, path string, i int) (Flow, error) {
	f := Flow{Name: fmt.Sprintf("flow%d", i), Count: 1, Recovery: transport.DefaultRecovery, Traffic: "greedy"}
	var k flowKeys
	err := d.mapping(n, path, map[string]fieldFn{
		"name":  func(n *yaml.Node, p string) (err error) { f.Name, err = d.str(n, p); return },
		"count": func(n *yaml.Node, p string) (err error) { f.Count, err = d.integerIn(n, p, 1, MaxFlows); return },
		"mode": func(n *yaml.Node, p string) (err error) {
			k.modeNode = n
			f.Mode, err = d.enum(n, p, ModeStream, ModeDatagram, ModeUDP)
			return
		},
		"stack": func(n *yaml.Node, p string) (err error) {
			k.stackNode = n
			if f.Stack, err = d.enum(n, p, StackCclab, StackKernel); f.Stack == StackCclab {
				f.Stack = ""
			}
			return
		},
		"cc": func(n *yaml.Node, p string) (err error) {
			k.ccNode = n
			f.CC, err = d.spec(n, p, validateCC)
			return
		},
		"recovery": func(n *yaml.Node, p string) (err error) {
			k.recoveryNode = n
			f.Recovery, err = d.spec(n, p, validateRecovery)
			return
		},
		"traffic": func(n *yaml.Node, p string) (err error) {
			k.trafficNode = n
			f.Traffic, err = d.spec(n, p, traffic.Registry.Validate)
			return
		},
		"start":    func(n *yaml.Node, p string) (err error) { f.Start, err = d.duration(n, p); return },
		"stop":     func(n *yaml.Node, p string) (err error) { f.Stop, err = d.duration(n, p); return },
		"datagram": func(n *yaml.Node, p string) (err error) { f.Datagram, err = d.size(n, p); return },
		"path":     func(n *yaml.Node, p string) (err error) { f.Path, err = d.path(n, p); return },
		"access_delay": func(n *yaml.Node, p string) error {
			v, err := d.duration(n, p)
			f.AccessDelay = &v
			return err
		},
		"stagger": func(n *yaml.Node, p string) (err error) { f.Stagger, err = d.duration(n, p); return },
		"ecn":     func(n *yaml.Node, p string) (err error) { f.ECN, err = d.boolean(n, p); return },
		"min_rto": func(n *yaml.Node, p string) (err error) {
			if f.MinRTO, err = d.duration(n, p); err == nil && (f.MinRTO <= 0 || f.MinRTO > MaxMinRTO) {
				err = d.errAt(resolve(n), p, "must be above 0 and at most %v (RFC 6298 §2.4: 1s; Linux: 200ms)", MaxMinRTO)
			}
			return
		},
		"ack_every": func(n *yaml.Node, p string) (err error) {
			k.receiverKey = "ack_every"
			f.AckEvery, err = checked(d, n, p, func(v string) (int, error) {
				i, err := strconv.Atoi(v)
				if err != nil {
					return 0, fmt.Errorf("%q is not an integer", v)
				}
				return i, transport.CheckAckEvery(i)
			})
			return
		},
		"delayed_ack": func(n *yaml.Node, p string) (err error) {
			k.receiverKey = "delayed_ack"
			f.DelayedAck, err = checked(d, n, p, func(v string) (time.Duration, error) {
				t, err := units.ParseDuration(v)
				if err == nil {
					err = transport.CheckDelayedAck(t)
				}
				return transport.UserDelayedAck(t), err
			})
			return
		},
		"recv_window": func(n *yaml.Node, p string) (err error) {
			k.receiverKey, k.recvWindowNode = "recv_window", n
			f.RecvWindow, err = d.size(n, p)
			return
		},
		"window": func(n *yaml.Node, p string) (err error) {
			k.windowNode = n
			f.Window, err = d.size(n, p)
			return
		},
		"rtt": func(n *yaml.Node, p string) (err error) {
			k.rttNode = n
			if f.RTT, err = d.duration(n, p); err == nil && f.RTT <= 0 {
				err = d.errAt(resolve(n), p, "must be positive (the round-trip propagation delay, e.g. 80ms)")
			}
			return
		},
		"alt_cc": func(n *yaml.Node, p string) (err error) { f.AltCC, err = d.spec(n, p, validateCC); return },
		"alt_share": func(n *yaml.Node, p string) error {
			v, s, err := d.value(n, p)
			if err != nil {
				return err
			}
			x, perr := strconv.ParseFloat(v, 64)
			if perr != nil || x < 0 || x > 1 {
				return d.errAt(s, p, "%q is not a share in [0, 1]", v)
			}
			f.AltShare = x
			return nil
		},
	})
	if err != nil {
		return f, err
	}
	return f, d.checkFlow(n, path, &f, k)
}

// flowKeys are the nodes of a flow's fields that its checks report at, and
// the receiver setting given (ack_every, delayed_ack or recv_window).
type flowKeys struct {
	ccNode, modeNode, trafficNode, recoveryNode *yaml.Node
	windowNode, rttNode, recvWindowNode         *yaml.Node
	stackNode                                   *yaml.Node
	receiverKey                                 string
}

// checkFlow completes a decoded flow (mode, controller and recovery
// defaults) and checks what involves several of its fields.
func (d *decoder) checkFlow(n *yaml.Node, path string, f *Flow, k flowKeys) error {
	// trafficErr reports a traffic spec the flow's mode cannot use, at the
	// traffic field (or the flow, where the default was used).
	trafficErr := func(format string, args ...any) error {
		at := cmp.Or(k.trafficNode, n)
		s, serr := d.scalar(at, path+".traffic")
		if serr != nil {
			s = resolve(at)
		}
		return d.errAt(s, path+".traffic", format, args...)
	}
	if k.rttNode != nil && f.AccessDelay != nil {
		return d.errAt(resolve(k.rttNode), path+".rtt", "give either rtt or access_delay, not both (rtt sets the access delay)")
	}
	if dg := cmp.Or(f.Datagram, transport.DefaultMaxDatagram); f.Window != 0 && f.Window < 2*dg {
		s, _ := d.scalar(k.windowNode, path+".window")
		return d.errAt(s, path+".window", "window %d B must hold at least two datagrams (%d B)", f.Window, 2*dg)
	}
	if dg := cmp.Or(f.Datagram, transport.DefaultMaxDatagram); k.recvWindowNode != nil {
		if err := transport.CheckRecvWindow(f.RecvWindow, dg); err != nil {
			s, _ := d.scalar(k.recvWindowNode, path+".recv_window")
			return d.errAt(s, path+".recv_window", "%v", err)
		}
	}
	if f.AltShare > 0 && f.AltCC == "" {
		return d.errAt(resolve(n), path+".alt_cc", "alt_share needs alt_cc (the controller of that share of the group)")
	}
	if f.Mode == ModeUDP {
		// Raw datagrams: no transport, so no controller and no recovery.
		if k.ccNode != nil || k.recoveryNode != nil {
			at := k.ccNode
			field := ".cc"
			if at == nil {
				at, field = k.recoveryNode, ".recovery"
			}
			s, _ := d.scalar(at, path+field)
			return d.errAt(s, path+field, "mode udp sends raw datagrams without a transport: no cc or recovery")
		}
		f.CC, f.Recovery = "", ""
		if f.Window != 0 || f.AltCC != "" || k.receiverKey != "" {
			return d.errAt(resolve(n), path, "mode udp sends raw datagrams without a transport: no window, alt_cc, alt_share, ack_every, delayed_ack or recv_window")
		}
		if err := ValidateCrossTraffic(f.Traffic); err != nil {
			return trafficErr("mode udp: %v", err)
		}
		return nil
	}
	if f.Recovery == RecoveryAuto {
		f.Recovery = AutoRecovery(f.CC)
	}
	switch {
	case f.Mode == "" && datagramOnly(f.CC):
		f.Mode = ModeDatagram
	case f.Mode == "":
		f.Mode = ModeStream
	}
	if f.CC == "" {
		f.CC = transport.DefaultCC
		if f.Mode == ModeDatagram {
			f.CC = transport.DefaultDgramCC
		}
	}
	if f.Mode == ModeDatagram {
		if _, err := DatagramRate(f.Traffic); err != nil {
			return trafficErr("%v", err)
		}
		if ccName(f.CC) == CCNone {
			if r, _ := DatagramRate(f.Traffic); r <= 0 {
				return d.errAt(resolve(n), path+".traffic", "cc none (uncontrolled) needs a rate: traffic cbr:rate=R")
			}
		}
	}
	if f.Mode == ModeDatagram && k.receiverKey != "" {
		return d.errAt(resolve(n), path+"."+k.receiverKey, "%s is a stream receiver's setting (a datagram flow acknowledges by its Ack Ratio)", k.receiverKey)
	}
	if f.Mode == ModeStream && datagramOnly(f.CC) {
		at := k.ccNode
		if k.modeNode != nil {
			at = k.modeNode
		}
		s, _ := d.scalar(at, path+".cc")
		return d.errAt(s, path+".cc", "controller %q runs in datagram mode only (mode: datagram, or leave mode out)", ccName(f.CC))
	}
	if f.Stack == StackKernel {
		if _, fe := f.Kernel(); fe.Field != "" {
			return d.errAt(resolve(cmp.Or(k.stackNode, n)), path+"."+fe.Field, "stack kernel: %s", fe.Msg)
		}
	}
	return nil
}

// MaxMinRTO bounds a flow's min_rto (as the sender's -min-rto).
const MaxMinRTO = time.Minute

// RecoveryAuto is the flow recovery value that picks each controller's
// classic loss recovery (AutoRecovery), so a sweep over controllers compares
// TCP Reno (Reno window, Reno fast recovery, RFC 5681) with NewReno (same
// window, RFC 6582 recovery) rather than two names for one configuration.
const RecoveryAuto = "auto"

// AutoRecovery returns the classic recovery strategy of a controller spec:
// "reno" for Reno, "newreno" for every other controller.
func AutoRecovery(cc string) string {
	name, _, _ := strings.Cut(cc, ":")
	if strings.TrimSpace(strings.ToLower(name)) == "reno" {
		return "reno"
	}
	return "newreno"
}

func validateRecovery(s string) error {
	if s == RecoveryAuto {
		return nil
	}
	if err := transport.Recoveries.Validate(s); err != nil {
		return fmt.Errorf("%v (or %q: Reno's own recovery for reno, newreno for the others)", err, RecoveryAuto)
	}
	return nil
}

// paramsString formats params as "axis=value;axis=value".
func ParamsString(ps []Param) string {
	var parts []string
	for _, p := range ps {
		parts = append(parts, p.Axis+"="+p.Value)
	}
	return strings.Join(parts, ";")
}
