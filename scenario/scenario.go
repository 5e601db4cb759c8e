// Package scenario is the scenario format (docs/scenarios.md): the YAML
// decoder and emitter, validation with errors that name the field and the
// allowed values, sweeps expanded into points, cclab sim's flags as Simple,
// and the identity of a point (its hash).
package scenario

import (
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"cclab/ccalgo"
	"cclab/traffic"
)

// Backends a scenario can run on.
const (
	BackendSim  = "sim"
	BackendLive = "live"
	BackendNS3  = "ns3" // the plan in ns-3 (backend/ns3, docs/ns3.md)
)

// Topology kinds.
const (
	KindDumbbell = "dumbbell"
	KindChain    = "chain"
)

// Flow modes.
const (
	ModeStream   = "stream"   // reliable, TCP-like
	ModeDatagram = "datagram" // unreliable, DCCP-like, congestion controlled (CCID2 by default)
	ModeUDP      = "udp"      // raw UDP datagrams with no transport (simulator background traffic)
)

// CCNone is the controller of an uncontrolled datagram-mode flow (it needs a
// rate: traffic cbr:rate=...).
const CCNone = "none"

// datagramOnly reports whether a controller exists only in datagram mode
// (ccalgo.DgramRegistry, e.g. ccid2, or none): a flow that does not name its
// mode then runs in datagram mode.
func datagramOnly(spec string) bool {
	name := ccName(spec)
	if name == CCNone {
		return true
	}
	_, dgram := ccalgo.DgramRegistry.Lookup(name)
	_, stream := ccalgo.Registry.Lookup(name)
	return dgram && !stream
}

// validateCC checks a controller spec against both registries (stream
// controllers also run in datagram mode, counted in packets).
func validateCC(s string) error {
	name := ccName(s)
	if name == CCNone {
		return nil
	}
	if _, ok := ccalgo.Registry.Lookup(name); ok {
		return ccalgo.Registry.Validate(s)
	}
	if _, ok := ccalgo.DgramRegistry.Lookup(name); ok {
		return ccalgo.DgramRegistry.Validate(s)
	}
	return fmt.Errorf("unknown congestion controller %q (allowed: %s; datagram mode only: %s)", name,
		strings.Join(ccalgo.Registry.Names(), ", "), strings.Join(append(ccalgo.DgramRegistry.Names(), CCNone), ", "))
}

// DatagramRate returns the sending rate of a datagram-mode flow's traffic
// spec: 0 (greedy: as fast as the controller allows) for "greedy", the rate
// of "cbr:rate=R".
func DatagramRate(spec string) (float64, error) {
	e, cfg, err := traffic.Registry.Config(spec)
	if err != nil {
		return 0, err
	}
	switch c := cfg.(type) {
	case *traffic.GreedyConfig:
		if c.Bytes != 0 {
			return 0, fmt.Errorf("datagram mode: traffic %q: a byte count is not supported (greedy or cbr:rate=R)", spec)
		}
		return 0, nil
	case *traffic.CBRConfig:
		return float64(c.Rate), nil
	}
	return 0, fmt.Errorf("datagram mode: traffic %q (%s) is not supported: use greedy or cbr:rate=R", spec, e.Name)
}

// ccName returns the name part of a controller spec.
func ccName(spec string) string {
	name, _, _ := strings.Cut(spec, ":")
	return strings.ToLower(strings.TrimSpace(name))
}

// Scenario is one concrete experiment configuration (one point of a sweep).
// Durations are time.Duration, rates bits/s, sizes bytes.
type Scenario struct {
	Name        string        `json:"name" scenario:"name,required" doc:"names the experiment in the database and the report (not a built-in's name: your runs would become a new version of it)"`
	Description string        `json:"description,omitempty" scenario:"text" doc:"what the experiment shows"`
	Duration    time.Duration `json:"duration" scenario:"runlength,required" doc:"length of each run"`
	Seeds       []uint64      `json:"seeds" scenario:"seeds" doc:"one run per seed, point and backend; default 1..runs (runs: N, default 1, instead of seeds)"`
	LiveRuns    int           `json:"live_runs,omitempty" scenario:"runs" doc:"live runs use only the first live_runs seeds (live takes real time); default all"`
	Interval    time.Duration `json:"interval" scenario:"interval" doc:"time-series interval"`
	Backends    []string      `json:"backends" scenario:"backends" doc:"where each point runs: the simulator, live on loopback, ns-3 3.37 (docs/ns3.md)"`
	Topology    Topology      `json:"topology" scenario:"topology,required" doc:"the network"`
	Flows       []Flow        `json:"flows" scenario:"flows,required" doc:"the traffic: groups of identical flows"`
	Baseline    []Param       `json:"baseline,omitempty" scenario:"baseline" doc:"the swept values that make a point the baseline of paired comparisons (Seeds and paired runs)"`
	// Warmup: the measurement window is [start+Warmup, start+Duration].
	Warmup         time.Duration `json:"warmup,omitempty" scenario:"duration" doc:"excluded from the metrics: the window is [warmup, duration] (docs/metrics.md)"`
	UntilDone      bool          `json:"until_done,omitempty" scenario:"bool" doc:"sim: end the run when every stream flow has finished (sized transfers), at most duration (live: a sized transfer has until the end of the run, plus a 5 s drain)"`
	EpochThreshold float64       `json:"epoch_threshold,omitempty" scenario:"fraction" doc:"the queue length that starts a congestion epoch, a fraction of each hop's queue limit (docs/metrics.md); default 0.5"`
	// Case names the case of a scenario with cases (the experiment's "case"
	// axis): the base document with that case's fields in place.
	Case      string      `json:"case,omitempty"`
	Study     string      `json:"study,omitempty" scenario:"study" doc:"a built-in study whose report sections the report adds (docs/studies/)"`
	Trace     *TraceSpec  `json:"trace,omitempty" scenario:"trace" doc:"the packet trace of one flow in a time window, kept with the run (docs/metrics.md \"Packet trace\"); both backends"`
	Published []Published `json:"-" scenario:"published,name=published" doc:"numbers of the publication a study reproduces, for the study report's \"Reproduction\" table; not part of a point's identity"`
}

// Studies with report sections of their own (Scenario.Study).
const (
	// StudyDCA is the DCA study of Martin's thesis, chapter 8
	// (docs/studies/dca.md).
	StudyDCA = "dca"
	// StudyDCCPTCP is the DCCP-vs-TCP study (SAINT 2005, CCID2 with CCID3
	// added; docs/studies/dccp-tcp.md).
	StudyDCCPTCP = "dccp-tcp"
	// StudyFairQueueing is the CSFQ paper's comparison of DRR, CSFQ, FRED,
	// RED and FIFO (docs/studies/fair-queueing.md).
	StudyFairQueueing = "fair-queueing"
	// StudyETH is the ETH bulk-transfer study, emulated
	// (docs/studies/eth-bulk.md; the analysis: ETHTransfer).
	StudyETH = "eth-bulk"
)

// CaseAxis is the axis of the cases of a scenario with cases.
const CaseAxis = "case"

// DefaultEpochThreshold is the default congestion-epoch threshold: half of
// a hop's queue limit (docs/metrics.md, total_queue_oscillations).
const DefaultEpochThreshold = 0.5

// Topology is the network: a dumbbell (one bottleneck hop) or a chain of hops.
type Topology struct {
	Kind string `json:"kind" scenario:"kind,required" doc:"a dumbbell (one bottleneck hop) or a chain of hops"`
	// Hops: a dumbbell's bottleneck (key bottleneck), or a chain's hops in
	// order.
	Hops        []Hop  `json:"hops" scenario:"hop_list" doc:"a chain's hops, in order (a dumbbell has bottleneck: one hop)"`
	Access      Access `json:"access" scenario:"access" doc:"the sender access links"`
	MTU         int    `json:"mtu" scenario:"bytes" doc:"link MTU; 0: the link default"`
	PayloadOnly bool   `json:"payload_only,omitempty" scenario:"bool" doc:"sizes on links: the UDP payload only (default: plus 28 bytes of IPv4 and UDP header, link.IPv4UDPOverhead, in both backends)"`
}

// Hop is one bottleneck hop (both directions share delay and queue, and the
// rate unless RevRate is set; loss, jitter and a trace apply to the forward,
// data direction).
type Hop struct {
	Rate  float64       `json:"rate" scenario:"link_rate,required" doc:"the rate of both directions (but see rev_rate and trace); bits/s"`
	Delay time.Duration `json:"delay" scenario:"duration" doc:"one-way propagation delay (RTT = 2 × (delay + access delay))"`
	Queue string        `json:"queue" scenario:"queue" doc:"the queue discipline of both directions"`
	Loss  string        `json:"loss" scenario:"loss" doc:"random loss on the forward (data) direction"`
	// Trace replaces Rate on the forward direction; Rate stays the reverse
	// direction's rate and the rate used for utilization.
	Trace   string        `json:"trace,omitempty" scenario:"trace_file" doc:"delivery opportunities of the forward direction; replaces rate there"`
	Jitter  time.Duration `json:"jitter,omitempty" scenario:"duration" doc:"forward: each packet's delay is delay ± uniform(jitter), never reordering unless reorder"`
	Reorder bool          `json:"reorder,omitempty" scenario:"bool" doc:"let the jitter reorder packets (as bottleneck -reorder)"`
	RevLoss string        `json:"rev_loss,omitempty" scenario:"loss" doc:"loss on the reverse (ACK) direction (as bottleneck -rev-loss)"`
	// RevRate: 0 = Rate, negative = unlimited.
	RevRate    float64 `json:"rev_rate,omitempty" scenario:"rev_rate" doc:"the reverse (ACK-path) direction's rate; default: rate"`
	Cross      []Cross `json:"cross,omitempty" scenario:"cross" doc:"open-loop cross traffic entering before this hop and leaving after it"`
	Background []Flow  `json:"background,omitempty" scenario:"background" doc:"groups of flows attached to this hop (entering before it, leaving after it), measured only through the links (Background groups)"`
}

// Cross is one source of open-loop cross traffic at a hop: a datagram
// generator (docs/traffic.md: cbr, udponoff, layered) whose packets enter
// the hop's queue and leave the network after the hop.
type Cross struct {
	Traffic string `json:"traffic" scenario:"cross_traffic,required" doc:"the generator, e.g. cbr:rate=2Mbit,size=1000"`
	Dir     string `json:"dir,omitempty" scenario:"dir" doc:"with the data (fwd) or with the ACKs (rev)"`
}

// Cross-traffic directions.
const (
	DirFwd = "fwd"
	DirRev = "rev"
)

// Access describes the sender access links.
type Access struct {
	Rate  float64       `json:"rate" scenario:"rate" doc:"bits/s; 0: unlimited"`
	Delay time.Duration `json:"delay" scenario:"duration" doc:"one-way delay"`
	Queue string        `json:"queue" scenario:"queue" doc:"the access links' queue; default: the simulator's (large)"`
}

// Flow is one group of identical flows.
type Flow struct {
	Name  string `json:"name" scenario:"text" doc:"names the group's flows (name.0, name.1, ...) and their random streams; default flow0, flow1, ... by position (a background group: bg0, bg1, ...)"`
	Count int    `json:"count" scenario:"count" doc:"identical flows in the group"`
	Mode  string `json:"mode" scenario:"mode" doc:"default: datagram for ccid2 and none, else stream (Flow modes)"`
	// Stack: "" is StackCclab.
	Stack    string        `json:"stack,omitempty" scenario:"stack" doc:"the transport that runs the flow: cclab's, or the host's TCP through the link shell (live only; Kernel TCP flows)"`
	CC       string        `json:"cc" scenario:"cc" doc:"congestion controller; default reno (datagram mode: ccid2)"`
	Recovery string        `json:"recovery" scenario:"recovery" doc:"loss recovery strategy; auto: reno for cc reno, newreno otherwise"`
	Traffic  string        `json:"traffic" scenario:"traffic" doc:"what the application sends"`
	Start    time.Duration `json:"start" scenario:"duration" doc:"offset from the start of the run"`
	Stop     time.Duration `json:"stop" scenario:"duration" doc:"offset from the start of the run; 0: its end"`
	Datagram int           `json:"datagram" scenario:"bytes" doc:"largest datagram (UDP payload); 0: the transport's"`
	// PMTUD turns datagram size discovery on (DPLPMTUD, RFC 8899), as a
	// live sender without -size runs it: the flow starts at its datagram
	// size and probes up to the topology's MTU less the IPv4 and UDP
	// headers (plan.Flow.PLPMTUMax).
	PMTUD bool `json:"pmtud,omitempty" scenario:"bool" doc:"discover the datagram size (DPLPMTUD, RFC 8899) as live senders without -size do: start at datagram, probe up to the topology's mtu less 28 bytes of IPv4 and UDP header; default off (the datagram size throughout)"`
	// TCPHandshake is transport.Config.TCPHandshake: the stream
	// handshake at TCP's sizes, for the simulators only.
	TCPHandshake bool `json:"tcp_handshake,omitempty" scenario:"bool" doc:"simulation only (sim, ns3; live refuses it): run the stream handshake at TCP's sizes, as ns-3 does: the Initial unpadded (59 bytes on the wire; ns-3's SYN 58) and the client's pure ACK of the Accept (54 bytes, TCP's third packet) before its data, so that flows starting together reach the bottleneck as TCP's do (docs/compat.md \"Handshake timing\"); default off: the Initial padded to the datagram size, the amplification rule of RFC 9000 §8.1 and §14.1"`
	// Path: nil is every hop (an end-to-end flow).
	Path []int `json:"path,omitempty" scenario:"hops" doc:"the hops crossed (a flow of path i enters before hop i and leaves after it); default every hop"`
	// AccessDelay: nil is the topology's access delay.
	AccessDelay *time.Duration `json:"access_delay,omitempty" scenario:"duration" doc:"one-way delay of its senders' access link; default topology.access.delay"`
	Stagger     time.Duration  `json:"stagger,omitempty" scenario:"duration" doc:"start at a uniform random offset in [start, start+stagger), drawn from the flow's own stream"`
	ECN         bool           `json:"ecn,omitempty" scenario:"bool" doc:"negotiate ECN (RFC 3168; with a marking queue, e.g. red:...,ecn)"`
	// MinRTO is transport.Config.MinRTO; 0: transport.DefaultMinRTO.
	MinRTO time.Duration `json:"min_rto,omitempty" scenario:"min_rto" doc:"stream sender's minimum RTO; default 200ms (Linux); RFC 6298 §2.4 says 1s"`
	// AckEvery, DelayedAck and RecvWindow are the stream receiver's
	// transport.Config; 0: the transport's defaults.
	AckEvery   int           `json:"ack_every,omitempty" scenario:"ack_every" doc:"stream receiver: ACK at once after this many full-sized segments (RFC 5681 §4.2; above 2: stretch ACKs); default 2"`
	DelayedAck time.Duration `json:"delayed_ack,omitempty" scenario:"delayed_ack" doc:"stream receiver: longest ACK delay (RFC 1122 §4.2.3.2); 0: ACK every segment at once; default 40ms (Linux), ns-3 200ms"`
	RecvWindow int           `json:"recv_window,omitempty" scenario:"bytes" doc:"stream receiver's advertised window (flow control), two datagrams .. 1GiB (RFC 7323 §2.3); default 8MiB"`
	// AckFirst is transport.Config.AckFirst.
	AckFirst bool `json:"ack_first,omitempty" scenario:"bool" doc:"stream receiver: acknowledge the first data segment at once instead of holding it for its pair, as ns-3's TcpSocketBase always does (docs/compat.md \"ns-3's first ACK\"); later segments follow ack_every and delayed_ack; default off"`
	// Window is transport.Config.MaxWindow.
	Window int `json:"window,omitempty" scenario:"bytes" doc:"the sender's largest window: at most this much data beyond snd.una, whatever cwnd (ns-2's window_), at least two datagrams; 0: no cap"`
	// RTT sets the sender's access delay to (RTT − the hops' delays both
	// ways)/2.
	RTT      time.Duration `json:"rtt,omitempty" scenario:"rtt" doc:"round-trip propagation delay of its path: sets its access delay to (rtt − its hops' delays both ways)/2 (not with access_delay)"`
	AltCC    string        `json:"alt_cc,omitempty" scenario:"cc" doc:"with alt_share: the first round(alt_share × count) members run alt_cc instead of cc"`
	AltShare float64       `json:"alt_share,omitempty" scenario:"share" doc:"sweeping it changes members' controllers, never their traffic draws"`
}

// Param is one swept parameter's value at a point.
type Param struct {
	Axis  string `json:"axis"`  // field path, e.g. "topology.bottleneck.loss"
	Value string `json:"value"` // the value as written
}

// Axis is one swept field: a list of values in place of a scalar.
type Axis struct {
	Path   string   // field path, e.g. "flows[0].cc"
	Short  string   // last path element, e.g. "cc"
	Values []string // as written (an optional value's trailing '?' removed)
	Line   int      // line of the list in the file
}

// Point is one combination of swept values with its concrete scenario.
type Point struct {
	Index    int
	Params   []Param
	Scenario Scenario
}

// Label returns "short=value ..." for the point's parameters.
func (p Point) Label(axes []Axis) string {
	var parts []string
	for _, pr := range p.Params {
		parts = append(parts, AxisShort(axes, pr.Axis)+"="+pr.Value)
	}
	if len(parts) == 0 {
		return "default"
	}
	return strings.Join(parts, " ")
}

// axisShort returns the short name of the axis with the given path among
// axes, or path itself if none has it.
func AxisShort(axes []Axis, path string) string {
	short := path
	for _, a := range axes {
		if a.Path == path {
			short = a.Short
		}
	}
	return short
}

// Get returns the value of the named axis (path or short name) at p.
func (p Point) Get(axis string) (string, bool) {
	for _, pr := range p.Params {
		if pr.Axis == axis || strings.HasSuffix(pr.Axis, "."+axis) {
			return pr.Value, true
		}
	}
	return "", false
}

// Experiment is a parsed scenario file: its sweep axes and grid points.
type Experiment struct {
	File    string    // where it was read from
	Source  []byte    // the YAML text
	Name    string    // scenario name
	Axes    []Axis    // swept fields, in file order
	Points  []Point   // the grid, first axis varying slowest
	Skipped []string  // optional values dropped because no component of that name exists
	Base    *Scenario // the first point's scenario (seeds, backends, duration are the same at every point)
}

// Error is a scenario error located in its file.
type Error struct {
	File   string
	Line   int
	Column int
	Field  string // field path, e.g. "topology.bottleneck.rate"
	Msg    string
	node   *yaml.Node
}

func (e *Error) Error() string {
	loc := e.File
	if e.Line > 0 {
		loc = fmt.Sprintf("%s:%d:%d", e.File, e.Line, e.Column)
	}
	if e.Field != "" {
		return fmt.Sprintf("%s: field %s: %s", loc, e.Field, e.Msg)
	}
	return loc + ": " + e.Msg
}

// LoadScenarioFile reads and parses a scenario file.
func LoadScenarioFile(path string) (*Experiment, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseScenario(path, b)
}

// ParseScenario parses a scenario's YAML text; file names it in errors. Every
// grid point is decoded and validated, so an error in any swept value is found.
func ParseScenario(file string, src []byte) (*Experiment, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(src, &root); err != nil {
		return nil, &Error{File: file, Msg: strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	if root.Kind != yaml.DocumentNode || len(root.Content) == 0 {
		return nil, &Error{File: file, Msg: "empty scenario"}
	}
	doc := resolve(root.Content[0])
	if cases := caseNodes(doc); cases != nil {
		return parseCases(file, src, doc, cases)
	}
	return parseDoc(file, src, doc, true)
}

// parseDoc parses one scenario document into its grid; checkBaseline checks
// that the baseline names swept fields.
func parseDoc(file string, src []byte, doc *yaml.Node, checkBaseline bool) (*Experiment, error) {
	d := &decoder{file: file, pick: map[*yaml.Node]int{}, axisOf: map[*yaml.Node]int{}, optional: map[*yaml.Node]bool{}, collecting: true}
	// Collect the axes. A first point whose optional value is not available
	// is retried with that axis's next value.
	for {
		_, err := d.scenario(doc)
		if err == nil {
			break
		}
		var e *Error
		if !asError(err, &e) || e.node == nil || !d.optional[e.node] {
			return nil, err
		}
		advanced := false
		for _, a := range d.axes {
			for j, item := range a.node.Content {
				if resolve(item) == e.node && j+1 < len(a.node.Content) && d.pick[a.node] == j {
					d.pick[a.node] = j + 1
					advanced = true
				}
			}
		}
		if !advanced {
			return nil, err
		}
	}
	d.collecting = false
	points := 1
	for _, a := range d.axes {
		points *= len(a.Values)
		if points > MaxPoints {
			return nil, &Error{File: file, Line: a.Line, Column: a.node.Column, Field: a.Path,
				Msg: fmt.Sprintf("the sweep has more than %d points; split the experiment", MaxPoints)}
		}
	}
	exp := &Experiment{File: file, Source: src}
	for _, a := range d.axes {
		exp.Axes = append(exp.Axes, a.Axis)
	}
	// Walk the grid, first axis slowest.
	idx := make([]int, len(d.axes))
	skipped := map[string]bool{}
	for {
		for i, a := range d.axes {
			d.pick[a.node] = idx[i]
		}
		s, err := d.scenario(doc)
		if err != nil {
			var e *Error
			if asError(err, &e) && e.node != nil && d.optional[e.node] {
				skipped[e.Field+"="+e.node.Value] = true
			} else {
				return nil, err
			}
		} else {
			p := Point{Index: len(exp.Points), Scenario: s}
			for i, a := range d.axes {
				p.Params = append(p.Params, Param{Axis: a.Path, Value: a.Values[idx[i]]})
			}
			exp.Points = append(exp.Points, p)
		}
		// Next combination.
		i := len(idx) - 1
		for ; i >= 0; i-- {
			idx[i]++
			if idx[i] < len(d.axes[i].Values) {
				break
			}
			idx[i] = 0
		}
		if i < 0 {
			break
		}
	}
	for k := range skipped {
		exp.Skipped = append(exp.Skipped, strings.TrimSuffix(k, "?"))
	}
	sort.Strings(exp.Skipped)
	if len(exp.Points) == 0 {
		return nil, &Error{File: file, Line: doc.Line, Column: doc.Column, Msg: "no point of the sweep is valid"}
	}
	// Drop optional values that produced no point from the axes.
	for ai := range exp.Axes {
		var keep []string
		for _, v := range exp.Axes[ai].Values {
			for _, p := range exp.Points {
				if p.Params[ai].Value == v {
					keep = append(keep, v)
					break
				}
			}
		}
		exp.Axes[ai].Values = keep
	}
	exp.Name = exp.Points[0].Scenario.Name
	base := exp.Points[0].Scenario
	exp.Base = &base
	if !checkBaseline {
		return exp, nil
	}
	return exp, checkBaselineAxes(exp)
}

// checkBaselineAxes checks that every field of the baseline is swept.
func checkBaselineAxes(exp *Experiment) error {
	for _, b := range exp.Base.Baseline {
		found := false
		for _, a := range exp.Axes {
			if a.Path == b.Axis || a.Short == b.Axis {
				found = true
			}
		}
		if !found {
			return &Error{File: exp.File, Field: "baseline", Msg: fmt.Sprintf("%q is not a swept field (swept: %s)", b.Axis, axisNames(exp.Axes))}
		}
	}
	return nil
}

// caseNodes returns the items of the document's "cases" list, or nil.
func caseNodes(doc *yaml.Node) *yaml.Node {
	for i := 0; doc.Kind == yaml.MappingNode && i+1 < len(doc.Content); i += 2 {
		if doc.Content[i].Value == "cases" {
			return doc.Content[i+1]
		}
	}
	return nil
}

// parseCases parses a scenario with cases: each case is the document with
// the case's fields in place of the document's (a field the case does not
// name keeps the document's value), parsed as a scenario of its own; the
// experiment's points are every case's grid in case order, each with the
// parameter case=<name> first (axis CaseAxis), and its axes are CaseAxis
// and the union of the cases' axes.
func parseCases(file string, src []byte, doc, casesNode *yaml.Node) (*Experiment, error) {
	d := &decoder{file: file}
	items, err := d.list(casesNode, "cases", "cases (each a mapping with a name and the fields it sets)")
	if err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return nil, d.errAt(resolve(casesNode), "cases", "empty list: give at least one case")
	}
	exp := &Experiment{File: file, Source: src}
	caseAxis := Axis{Path: CaseAxis, Short: CaseAxis, Line: resolve(casesNode).Line}
	skipped := map[string]bool{}
	for ci, it := range items {
		path := fmt.Sprintf("cases[%d]", ci)
		if it.Kind != yaml.MappingNode {
			return nil, d.errAt(it, path, "want a mapping with a name and the fields the case sets, got %s", kindName(it))
		}
		name := ""
		merged := &yaml.Node{Kind: yaml.MappingNode, Line: it.Line, Column: it.Column}
		set := map[string]*yaml.Node{}
		for j := 0; j+1 < len(it.Content); j += 2 {
			k, v := it.Content[j], it.Content[j+1]
			switch k.Value {
			case "name":
				if v = resolve(v); v.Kind != yaml.ScalarNode || v.Value == "" {
					return nil, d.errAt(v, path+".name", "want the case's name")
				}
				name = v.Value
			case "cases", "topologies", "defs":
				return nil, d.errAt(k, path+"."+k.Value, "a case cannot set %s (it belongs to the whole file)", k.Value)
			default:
				set[k.Value] = v
			}
		}
		if name == "" {
			return nil, d.errAt(it, path+".name", "missing required field \"name\"")
		}
		if slices.Contains(caseAxis.Values, name) {
			return nil, d.errAt(it, path+".name", "case %q given twice", name)
		}
		caseAxis.Values = append(caseAxis.Values, name)
		for j := 0; j+1 < len(doc.Content); j += 2 {
			k := doc.Content[j]
			if k.Value == "cases" {
				continue
			}
			v := doc.Content[j+1]
			if cv, ok := set[k.Value]; ok {
				v = cv
				delete(set, k.Value)
			}
			merged.Content = append(merged.Content, k, v)
		}
		for j := 0; j+1 < len(it.Content); j += 2 { // fields the document does not have, in the case's order
			if v, ok := set[it.Content[j].Value]; ok {
				merged.Content = append(merged.Content, it.Content[j], v)
			}
		}
		sub, err := parseDoc(file, src, merged, false)
		if err != nil {
			return nil, err
		}
		for _, k := range sub.Skipped {
			skipped[k] = true
		}
		for _, a := range sub.Axes {
			i := slices.IndexFunc(exp.Axes, func(b Axis) bool { return b.Path == a.Path })
			if i < 0 {
				exp.Axes = append(exp.Axes, a)
				continue
			}
			for _, v := range a.Values {
				if !slices.Contains(exp.Axes[i].Values, v) {
					exp.Axes[i].Values = append(exp.Axes[i].Values, v)
				}
			}
		}
		for _, p := range sub.Points {
			p.Index = len(exp.Points)
			p.Scenario.Case = name
			p.Params = append([]Param{{Axis: CaseAxis, Value: name}}, p.Params...)
			exp.Points = append(exp.Points, p)
		}
		if len(exp.Points) > MaxPoints {
			return nil, d.errAt(it, path, "the cases have more than %d points; split the experiment", MaxPoints)
		}
	}
	exp.Axes = append([]Axis{caseAxis}, exp.Axes...)
	for k := range skipped {
		exp.Skipped = append(exp.Skipped, k)
	}
	sort.Strings(exp.Skipped)
	exp.Name = exp.Points[0].Scenario.Name
	base := exp.Points[0].Scenario
	exp.Base = &base
	return exp, checkBaselineAxes(exp)
}

func axisNames(axes []Axis) string {
	var ns []string
	for _, a := range axes {
		ns = append(ns, a.Path)
	}
	if len(ns) == 0 {
		return "none"
	}
	return strings.Join(ns, ", ")
}

func asError(err error, target **Error) bool {
	e, ok := err.(*Error)
	if ok {
		*target = e
	}
	return ok
}

type axis struct {
	Axis
	node *yaml.Node
}

// Defaults of a scenario's optional fields.
const (
	DefaultInterval = 100 * time.Millisecond
	DefaultRuns     = 1
)
