package scenario

import (
	"cmp"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"cclab/link"
	"cclab/qdisc"
	"cclab/traffic"
	"cclab/transport"
)

// Defaults of the format: what the decoder starts each mapping from (the
// field reference's defaults; docs/scenarios.md).
func newScenario() Scenario {
	return Scenario{Interval: DefaultInterval, Backends: []string{BackendSim}}
}
func newHop() Hop     { return Hop{Queue: "droptail:100p"} }
func newCross() Cross { return Cross{Dir: DirFwd} }
func newFlow(i int) Flow {
	return Flow{Name: fmt.Sprintf("flow%d", i), Count: 1, Recovery: transport.DefaultRecovery, Traffic: "greedy"}
}

func (d *decoder) scenario(doc *yaml.Node) (Scenario, error) {
	s := newScenario()
	var runs int
	var err error
	if d.topos, err = d.topologies(doc); err != nil {
		return s, err
	}
	given, err := d.fields(doc, "", &s, map[string]fieldFn{
		"runs":       func(n *yaml.Node, p string) (err error) { runs, err = d.integerIn(n, p, 1, MaxRuns); return },
		"topologies": func(n *yaml.Node, p string) error { return nil }, // read before: d.topos
		"defs":       func(n *yaml.Node, p string) error { return nil }, // anchors for the rest of the file
		"cases":      func(n *yaml.Node, p string) error { return nil }, // expanded by ParseScenario
	})
	if err != nil {
		return s, err
	}
	return s, d.checkScenario(doc, &s, runs, given["seeds"] != nil)
}

// checkScenario completes a decoded scenario (seeds from runs) and checks
// what involves several fields.
func (d *decoder) checkScenario(doc *yaml.Node, s *Scenario, runs int, seedsGiven bool) error {
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
	return nil
}

// namedTopology decodes the topology field: a topology, or the name of one
// of the scenario's topologies (a list of names sweeps them).
func (d *decoder) namedTopology(n *yaml.Node, p string) (Topology, error) {
	if resolve(n).Kind == yaml.MappingNode {
		return d.topology(n, p)
	}
	name, at, err := d.value(n, p)
	if err != nil {
		return Topology{}, err
	}
	tn, ok := d.topos[name]
	if !ok {
		var have []string
		for k := range d.topos {
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

func (d *decoder) hop(n *yaml.Node, path string, _ int) (Hop, error) {
	h := newHop()
	given, err := d.fields(n, path, &h, nil)
	if q := given["queue"]; err == nil && q != nil {
		err = d.buildQueue(q, path+".queue", h.Queue, h.Rate)
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
func (d *decoder) cross(n *yaml.Node, path string, _ int) (Cross, error) {
	c := newCross()
	if n.Kind != yaml.MappingNode {
		var err error
		c.Traffic, err = d.spec(n, path, ValidateCrossTraffic)
		return c, err
	}
	_, err := d.fields(n, path, &c, nil)
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
	given, err := d.fields(n, path, &t, map[string]fieldFn{
		"bottleneck": func(n *yaml.Node, p string) error { // a dumbbell's one hop
			h, err := d.hop(n, p, 0)
			t.Hops = append([]Hop{h}, t.Hops...)
			return err
		},
		"hops": func(n *yaml.Node, p string) error {
			var hops []Hop
			err := kinds["hop_list"].decode(d, n, p, reflect.ValueOf(&hops).Elem())
			t.Hops = append(t.Hops, hops...)
			return err
		},
	})
	hopsNode, bneckNode := given["hops"], given["bottleneck"]
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

// access decodes the sender access links; their queue is built at once.
func (d *decoder) access(n *yaml.Node, path string) (Access, error) {
	var a Access
	given, err := d.fields(n, path, &a, nil)
	if q := given["queue"]; err == nil && q != nil {
		err = d.buildQueue(q, path+".queue", a.Queue, 0)
	}
	return a, err
}

func (d *decoder) flow(n *yaml.Node, path string, i int) (Flow, error) {
	f := newFlow(i)
	given, err := d.fields(n, path, &f, nil)
	if err != nil {
		return f, err
	}
	return f, d.checkFlow(n, path, &f, given)
}

// checkFlow completes a decoded flow (mode, controller and recovery
// defaults) and checks what involves several of its fields.
func (d *decoder) checkFlow(n *yaml.Node, path string, f *Flow, given map[string]*yaml.Node) error {
	// receiverKey is the stream receiver's setting given last, if any.
	receiverKey := ""
	for _, key := range []string{"ack_every", "delayed_ack", "recv_window", "ack_first"} {
		if at, last := given[key], given[receiverKey]; at != nil && (last == nil || at.Line > last.Line || at.Line == last.Line && at.Column > last.Column) {
			receiverKey = key
		}
	}
	// trafficErr reports a traffic spec the flow's mode cannot use, at the
	// traffic field (or the flow, where the default was used).
	trafficErr := func(format string, args ...any) error {
		at := cmp.Or(given["traffic"], n)
		s, serr := d.scalar(at, path+".traffic")
		if serr != nil {
			s = resolve(at)
		}
		return d.errAt(s, path+".traffic", format, args...)
	}
	if given["rtt"] != nil && f.AccessDelay != nil {
		return d.errAt(resolve(given["rtt"]), path+".rtt", "give either rtt or access_delay, not both (rtt sets the access delay)")
	}
	if dg := cmp.Or(f.Datagram, transport.DefaultMaxDatagram); f.Window != 0 && f.Window < 2*dg {
		s, _ := d.scalar(given["window"], path+".window")
		return d.errAt(s, path+".window", "window %d B must hold at least two datagrams (%d B)", f.Window, 2*dg)
	}
	if dg := cmp.Or(f.Datagram, transport.DefaultMaxDatagram); given["recv_window"] != nil {
		if err := transport.CheckRecvWindow(f.RecvWindow, dg); err != nil {
			s, _ := d.scalar(given["recv_window"], path+".recv_window")
			return d.errAt(s, path+".recv_window", "%v", err)
		}
	}
	if f.AltShare > 0 && f.AltCC == "" {
		return d.errAt(resolve(n), path+".alt_cc", "alt_share needs alt_cc (the controller of that share of the group)")
	}
	if f.Mode == ModeUDP {
		// Raw datagrams: no transport, so no controller and no recovery.
		if given["cc"] != nil || given["recovery"] != nil {
			at := given["cc"]
			field := ".cc"
			if at == nil {
				at, field = given["recovery"], ".recovery"
			}
			s, _ := d.scalar(at, path+field)
			return d.errAt(s, path+field, "mode udp sends raw datagrams without a transport: no cc or recovery")
		}
		f.CC, f.Recovery = "", ""
		if f.Window != 0 || f.AltCC != "" || receiverKey != "" || f.PMTUD || f.TCPHandshake {
			return d.errAt(resolve(n), path, "mode udp sends raw datagrams without a transport: no window, alt_cc, alt_share, ack_every, delayed_ack, recv_window, ack_first, pmtud or tcp_handshake")
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
	if f.TCPHandshake && f.Mode != ModeStream {
		return d.errAt(resolve(cmp.Or(given["tcp_handshake"], n)), path+".tcp_handshake", "tcp_handshake is a stream handshake's setting: mode %s has none", f.Mode)
	}
	if f.Mode == ModeDatagram && receiverKey != "" {
		return d.errAt(resolve(n), path+"."+receiverKey, "%s is a stream receiver's setting (a datagram flow acknowledges by its Ack Ratio)", receiverKey)
	}
	if f.Mode == ModeStream && datagramOnly(f.CC) {
		at := given["cc"]
		if given["mode"] != nil {
			at = given["mode"]
		}
		s, _ := d.scalar(at, path+".cc")
		return d.errAt(s, path+".cc", "controller %q runs in datagram mode only (mode: datagram, or leave mode out)", ccName(f.CC))
	}
	if f.Stack == StackKernel {
		if _, fe := f.Kernel(); fe.Field != "" {
			return d.errAt(resolve(cmp.Or(given["stack"], n)), path+"."+fe.Field, "stack kernel: %s", fe.Msg)
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
