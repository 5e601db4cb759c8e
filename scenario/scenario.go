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
	Name        string        `json:"name"`
	Description string        `json:"description,omitempty"`
	Duration    time.Duration `json:"duration"`            // length of each run
	Seeds       []uint64      `json:"seeds"`               // one run per seed (per point and backend)
	LiveRuns    int           `json:"live_runs,omitempty"` // live runs use only the first LiveRuns seeds; 0: all
	Interval    time.Duration `json:"interval"`            // time-series interval
	Backends    []string      `json:"backends"`            // "sim", "live"
	Topology    Topology      `json:"topology"`            // the network
	Flows       []Flow        `json:"flows"`               // the traffic
	Baseline    []Param       `json:"baseline,omitempty"`  // axis values that make a point a baseline
	// Warmup is excluded from the metrics: the measurement window is
	// [start+Warmup, start+Duration] (docs/metrics.md).
	Warmup time.Duration `json:"warmup,omitempty"`
	// UntilDone ends a simulated run as soon as every stream flow's
	// generator is exhausted and its last transfer finished (sized flows),
	// at most Duration.
	UntilDone bool `json:"until_done,omitempty"`
	// EpochThreshold is the queue length that starts a congestion epoch,
	// as a fraction of each hop's packet limit (docs/metrics.md); 0 means
	// DefaultEpochThreshold.
	EpochThreshold float64 `json:"epoch_threshold,omitempty"`
	// Case names the case of a scenario with cases (the experiment's "case"
	// axis): the base document with that case's fields in place.
	Case string `json:"case,omitempty"`
	// Study names a built-in study whose report sections the report adds
	// (StudyDCA).
	Study string `json:"study,omitempty"`
	// Trace records the packet trace of one flow in a time window
	// (TraceSpec; docs/scenarios.md "trace"); nil: none.
	Trace *TraceSpec `json:"trace,omitempty"`
	// Published lists the numbers of the publication a study reproduces,
	// with their sources (Published; docs/scenarios.md "published"). Not
	// part of a point's identity: citing a number does not change the runs.
	Published []Published `json:"-"`
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
	Kind   string `json:"kind"`   // "dumbbell" or "chain"
	Hops   []Hop  `json:"hops"`   // dumbbell: the bottleneck; chain: every hop, in order
	Access Access `json:"access"` // sender access links
	MTU    int    `json:"mtu"`    // link MTU, bytes; 0 = the link default
	// PayloadOnly counts a datagram's UDP payload alone as its size on the
	// links; by default the IPv4 and UDP headers (link.IPv4UDPOverhead,
	// 28 bytes) are added, in both backends.
	PayloadOnly bool `json:"payload_only,omitempty"`
}

// Hop is one bottleneck hop (both directions share delay and queue, and the
// rate unless RevRate is set; loss, jitter and a trace apply to the forward,
// data direction).
type Hop struct {
	Rate  float64       `json:"rate"`  // bits/s
	Delay time.Duration `json:"delay"` // one-way propagation delay
	Queue string        `json:"queue"` // qdisc spec, e.g. "droptail:20p"
	Loss  string        `json:"loss"`  // "" or "0.01" or a link loss spec ("ge:p=..")
	// Trace is a Mahimahi trace file of delivery opportunities for the
	// forward direction (docs/link.md); it replaces Rate there, and Rate
	// stays the reverse direction's rate and the rate used for utilization.
	Trace  string        `json:"trace,omitempty"`
	Jitter time.Duration `json:"jitter,omitempty"` // forward: each packet's delay is Delay ± uniform(Jitter), never reordering unless Reorder
	// Reorder lets the forward direction's jitter reorder packets (a
	// packet may overtake its predecessor), as bottleneck -reorder.
	Reorder bool `json:"reorder,omitempty"`
	// RevLoss is the reverse (ACK-path) direction's loss spec (as Loss), as
	// bottleneck -rev-loss.
	RevLoss string `json:"rev_loss,omitempty"`
	// RevRate is the reverse (ACK-path) direction's rate, bits/s: 0 = Rate,
	// negative = unlimited.
	RevRate float64 `json:"rev_rate,omitempty"`
	Cross   []Cross `json:"cross,omitempty"` // cross traffic entering before this hop and leaving after it
	// Background lists groups of background flows attached to this hop:
	// they enter before it and leave after it (Path is this hop). Their
	// flows are numbered after the scenario's flows and are not measured
	// one by one: their packets count in the links' metrics only.
	Background []Flow `json:"background,omitempty"`
}

// Cross is one source of open-loop cross traffic at a hop: a datagram
// generator (docs/traffic.md: cbr, udponoff, layered) whose packets enter
// the hop's queue and leave the network after the hop.
type Cross struct {
	Traffic string `json:"traffic"`       // datagram generator spec, e.g. "cbr:rate=2Mbit,size=1000"
	Dir     string `json:"dir,omitempty"` // "fwd" (default, with the data) or "rev" (with the ACKs)
}

// Cross-traffic directions.
const (
	DirFwd = "fwd"
	DirRev = "rev"
)

// Access describes the sender access links.
type Access struct {
	Rate  float64       `json:"rate"`  // bits/s; 0 = unlimited
	Delay time.Duration `json:"delay"` // one-way delay
	Queue string        `json:"queue"` // qdisc spec; "" = the simulator's default (large)
}

// Flow is one group of identical flows.
type Flow struct {
	Name  string `json:"name"`
	Count int    `json:"count"` // number of identical flows
	Mode  string `json:"mode"`  // "stream", "datagram" or "udp"; default: datagram for ccid2 and none, else stream
	// Stack is the transport that runs the flow: StackCclab ("" is the
	// same) or StackKernel, the host's TCP through the link shell (live
	// only; docs/scenarios.md "Kernel TCP flows").
	Stack    string        `json:"stack,omitempty"`
	CC       string        `json:"cc"`       // congestion controller spec
	Recovery string        `json:"recovery"` // loss recovery strategy spec
	Traffic  string        `json:"traffic"`  // traffic generator spec
	Start    time.Duration `json:"start"`    // offset from the run's start
	Stop     time.Duration `json:"stop"`     // offset from the run's start; 0 = the end of the run
	Datagram int           `json:"datagram"` // maximum datagram (UDP payload) size, bytes; 0 = transport default
	// Path lists the first and the last hop (0-based, inclusive) the flow
	// crosses; nil: every hop (an end-to-end flow). A flow of path [i, i]
	// enters before hop i and leaves after it.
	Path []int `json:"path,omitempty"`
	// AccessDelay is the one-way delay of the flow's sender access link;
	// nil: the topology's access delay.
	AccessDelay *time.Duration `json:"access_delay,omitempty"`
	// Stagger delays the flow's start by a uniform random offset in
	// [0, Stagger), drawn from the flow's own random stream.
	Stagger time.Duration `json:"stagger,omitempty"`
	ECN     bool          `json:"ecn,omitempty"` // negotiate ECN (RFC 3168)
	// MinRTO is the sender's lower bound of the retransmission timeout
	// (transport.Config.MinRTO; RFC 6298 §2.4 says 1 s, Linux uses 200 ms);
	// 0: the transport's default (transport.DefaultMinRTO).
	MinRTO time.Duration `json:"min_rto,omitempty"`
	// AckEvery, DelayedAck and RecvWindow are the stream receiver's
	// settings (transport.Config): acknowledge at once after AckEvery
	// full-sized segments (RFC 5681 §4.2), delay an ACK at most DelayedAck
	// (transport.NoDelayedAck: never), advertise a receive window of
	// RecvWindow bytes; 0: the transport's defaults (2, 40 ms, 8 MiB).
	AckEvery   int           `json:"ack_every,omitempty"`
	DelayedAck time.Duration `json:"delayed_ack,omitempty"`
	RecvWindow int           `json:"recv_window,omitempty"`
	// Window is the flow's largest window, bytes: the sender's own cap on
	// what it has in flight whatever its cwnd (transport.Config.MaxWindow,
	// as ns-2's window_); the receiver's advertised window is RecvWindow;
	// 0: no cap.
	Window int `json:"window,omitempty"`
	// RTT, if set, is the round-trip propagation delay of the flow's path:
	// its sender's access delay is chosen to make it so
	// ((RTT − the hops' delays both ways)/2); AccessDelay must then be
	// unset.
	RTT time.Duration `json:"rtt,omitempty"`
	// AltCC and AltShare split a group between two controllers: the first
	// round(AltShare × Count) members run AltCC, the others CC (a sweep over
	// AltShare changes each member's controller, never its traffic draws).
	AltCC    string  `json:"alt_cc,omitempty"`
	AltShare float64 `json:"alt_share,omitempty"`
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
