// Package scenario is the scenario format (docs/scenarios.md): the YAML
// decoder and emitter, validation with errors that name the field and the
// allowed values, sweeps expanded into points, cclab sim's flags as Simple,
// and the identity of a point (its hash).
package scenario

import (
	"cmp"
	"fmt"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"cclab/ccalgo"
	"cclab/internal/units"
	"cclab/link"
	"cclab/qdisc"
	"cclab/traffic"
	"cclab/transport"
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
	Name     string        `json:"name"`
	Count    int           `json:"count"`    // number of identical flows
	Mode     string        `json:"mode"`     // "stream", "datagram" or "udp"; default: datagram for ccid2 and none, else stream
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

// decoder walks a scenario's YAML tree. In collecting mode it records the
// sweep axes (lists in place of scalars) and decodes with each axis's first
// value; afterwards pick chooses the value of each axis.
type decoder struct {
	file       string
	collecting bool
	axes       []*axis
	axisOf     map[*yaml.Node]int
	pick       map[*yaml.Node]int
	optional   map[*yaml.Node]bool
	noSweep    bool // a list where a value is wanted is an error (YAMLDecoder), not a sweep
}

func (d *decoder) errAt(n *yaml.Node, path, format string, args ...any) error {
	return &Error{File: d.file, Line: n.Line, Column: n.Column, Field: path, Msg: fmt.Sprintf(format, args...), node: n}
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return fmt.Sprintf("the scalar %q", n.Value)
	}
	return "nothing"
}

func resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

// scalar returns the scalar node for a field, resolving a sweep list to the
// picked element.
func (d *decoder) scalar(n *yaml.Node, path string) (*yaml.Node, error) {
	n = resolve(n)
	switch n.Kind {
	case yaml.ScalarNode:
		return n, nil
	case yaml.SequenceNode:
		if d.noSweep {
			return nil, d.errAt(n, path, "want a value, got a list")
		}
		if len(n.Content) == 0 {
			return nil, d.errAt(n, path, "empty list: give a value or a list of values to sweep")
		}
		i, known := d.axisOf[n]
		if !known {
			a := &axis{node: n, Axis: Axis{Path: path, Short: ShortName(path), Line: n.Line}}
			for _, item := range n.Content {
				item = resolve(item)
				if item.Kind != yaml.ScalarNode {
					return nil, d.errAt(item, path, "a swept value must be a scalar, got %s", kindName(item))
				}
				v := item.Value
				if strings.HasSuffix(v, "?") {
					v = strings.TrimSuffix(v, "?")
					d.optional[item] = true
				}
				a.Values = append(a.Values, v)
			}
			d.axisOf[n] = len(d.axes)
			d.axes = append(d.axes, a)
			i = len(d.axes) - 1
		}
		item := resolve(n.Content[d.pick[d.axes[i].node]])
		return item, nil
	}
	return nil, d.errAt(n, path, "want a value (or a list of values to sweep), got %s", kindName(n))
}

func ShortName(path string) string {
	if i := strings.LastIndexAny(path, ".]"); i >= 0 && i+1 < len(path) {
		return strings.TrimPrefix(path[i+1:], ".")
	}
	return path
}

// value returns a field's text (an optional sweep value's '?' removed).
func (d *decoder) value(n *yaml.Node, path string) (string, *yaml.Node, error) {
	s, err := d.scalar(n, path)
	if err != nil {
		return "", nil, err
	}
	return strings.TrimSuffix(strings.TrimSpace(s.Value), "?"), s, nil
}

func (d *decoder) str(n *yaml.Node, path string) (string, error) {
	v, _, err := d.value(n, path)
	return v, err
}

func (d *decoder) enum(n *yaml.Node, path string, allowed ...string) (string, error) {
	v, s, err := d.value(n, path)
	if err != nil {
		return "", err
	}
	for _, a := range allowed {
		if v == a {
			return v, nil
		}
	}
	return "", d.errAt(s, path, "%q is not allowed (allowed: %s)", v, strings.Join(allowed, ", "))
}

func (d *decoder) duration(n *yaml.Node, path string) (time.Duration, error) {
	return parsed(d, n, path, func(v string) (time.Duration, error) {
		t, err := units.ParseDuration(v)
		if err == nil && t < 0 {
			err = fmt.Errorf("duration %q must not be negative", v)
		}
		return t, err
	})
}

func (d *decoder) rate(n *yaml.Node, path string) (float64, error) {
	return parsed(d, n, path, units.ParseRate)
}

func (d *decoder) integer(n *yaml.Node, path string, min int) (int, error) {
	v, s, err := d.value(n, path)
	if err != nil {
		return 0, err
	}
	i, err := strconv.Atoi(v)
	if err != nil {
		return 0, d.errAt(s, path, "%q is not an integer", v)
	}
	if i < min {
		return 0, d.errAt(s, path, "%d is below the minimum %d", i, min)
	}
	return i, nil
}

// integerIn is integer with an upper bound as well.
func (d *decoder) integerIn(n *yaml.Node, path string, min, max int) (int, error) {
	i, err := d.integer(n, path, min)
	if err == nil && i > max {
		_, s, _ := d.value(n, path)
		return 0, d.errAt(s, path, "%d is above the maximum %d (allowed %d..%d)", i, max, min, max)
	}
	return i, err
}

// parsed parses n's scalar with parse, whose error (it names the value)
// is reported at n; on error the result is T's zero value.
func parsed[T any](d *decoder, n *yaml.Node, path string, parse func(string) (T, error)) (T, error) {
	var zero T
	v, s, err := d.value(n, path)
	if err != nil {
		return zero, err
	}
	x, err := parse(v)
	if err != nil {
		return zero, d.errAt(s, path, "%v", err)
	}
	return x, nil
}

// checked parses n's scalar with parse, whose error (a range check that
// does not name the value) is reported at n after the value.
func checked[T any](d *decoder, n *yaml.Node, path string, parse func(string) (T, error)) (T, error) {
	return parsed(d, n, path, func(v string) (T, error) {
		x, err := parse(v)
		if err != nil {
			err = fmt.Errorf("%q: %v", v, err)
		}
		return x, err
	})
}

func (d *decoder) size(n *yaml.Node, path string) (int, error) {
	b, err := d.bytes(n, path)
	return int(b), err
}

// bytes decodes a byte count; a unit is required: "1500B".
func (d *decoder) bytes(n *yaml.Node, path string) (int64, error) {
	return parsed(d, n, path, units.ParseSize)
}

func (d *decoder) boolean(n *yaml.Node, path string) (bool, error) {
	v, s, err := d.value(n, path)
	if err != nil {
		return false, err
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, d.errAt(s, path, "%q is not a boolean (allowed: true, false)", v)
	}
	return b, nil
}

// fraction decodes a number in (0, 1], or a percentage ("50%").
func (d *decoder) fraction(n *yaml.Node, path string) (float64, error) {
	v, s, err := d.value(n, path)
	if err != nil {
		return 0, err
	}
	scale := 1.0
	num := v
	if strings.HasSuffix(v, "%") {
		scale, num = 100, strings.TrimSuffix(v, "%")
	}
	x, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil || !(x/scale > 0 && x/scale <= 1) {
		return 0, d.errAt(s, path, "%q is not a fraction in (0, 1] (e.g. 0.5 or 50%%)", v)
	}
	return x / scale, nil
}

// path decodes a flow's hop range: "i" (one hop) or "i-j" (hops i to j,
// 0-based, inclusive).
func (d *decoder) path(n *yaml.Node, path string) ([]int, error) {
	v, s, err := d.value(n, path)
	if err != nil {
		return nil, err
	}
	a, b, ok := strings.Cut(v, "-")
	if !ok {
		b = a
	}
	first, err1 := strconv.Atoi(strings.TrimSpace(a))
	last, err2 := strconv.Atoi(strings.TrimSpace(b))
	if err1 != nil || err2 != nil || first < 0 || last < first {
		return nil, d.errAt(s, path, "%q is not a hop range (\"i\" or \"i-j\", 0-based, i <= j)", v)
	}
	return []int{first, last}, nil
}

// spec validates a component spec with validate (a registry's Validate).
func (d *decoder) spec(n *yaml.Node, path string, validate func(string) error) (string, error) {
	return parsed(d, n, path, func(v string) (string, error) { return v, validate(v) })
}

// list returns the items of a list field (no sweep: the list is the value).
func (d *decoder) list(n *yaml.Node, path, what string) ([]*yaml.Node, error) {
	n = resolve(n)
	if n.Kind != yaml.SequenceNode {
		return nil, d.errAt(n, path, "want a list of %s, got %s", what, kindName(n))
	}
	var out []*yaml.Node
	for _, c := range n.Content {
		out = append(out, resolve(c))
	}
	return out, nil
}

// listOf decodes a list field (no sweep: the list is the value) with one,
// which gets each item, its path ("path[i]") and its index.
func listOf[T any](d *decoder, n *yaml.Node, path, what string, one func(n *yaml.Node, path string, i int) (T, error)) ([]T, error) {
	items, err := d.list(n, path, what)
	if err != nil {
		return nil, err
	}
	var out []T
	for i, it := range items {
		v, err := one(it, fmt.Sprintf("%s[%d]", path, i), i)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

type fieldFn func(n *yaml.Node, path string) error

// mapping decodes a mapping's fields; unknown and duplicate keys are errors
// that list the allowed ones, and missing required fields are reported.
func (d *decoder) mapping(n *yaml.Node, path string, fields map[string]fieldFn, required ...string) error {
	n = resolve(n)
	if n.Kind != yaml.MappingNode {
		what := path
		if what == "" {
			what = "the scenario"
		}
		return d.errAt(n, path, "want a mapping with fields for %s, got %s", what, kindName(n))
	}
	var allowed []string
	for k := range fields {
		allowed = append(allowed, k)
	}
	sort.Strings(allowed)
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		sub := k.Value
		if path != "" {
			sub = path + "." + k.Value
		}
		f, ok := fields[k.Value]
		if !ok {
			return d.errAt(k, sub, "unknown field %q (allowed: %s)", k.Value, strings.Join(allowed, ", "))
		}
		if seen[k.Value] {
			return d.errAt(k, sub, "field given twice")
		}
		seen[k.Value] = true
		if err := f(v, sub); err != nil {
			return err
		}
	}
	for _, r := range required {
		if !seen[r] {
			sub := r
			if path != "" {
				sub = path + "." + r
			}
			return d.errAt(n, sub, "missing required field %q", r)
		}
	}
	return nil
}

// MaxPoints bounds the number of points of a sweep's grid.
const MaxPoints = 10000

// Defaults of a scenario's optional fields.
const (
	DefaultInterval = 100 * time.Millisecond
	DefaultRuns     = 1
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
		"topology": func(n *yaml.Node, p string) (err error) {
			if resolve(n).Kind == yaml.MappingNode {
				s.Topology, err = d.topology(n, p)
				return err
			}
			// A name of the scenario's topologies (a list of names sweeps them).
			name, at, err := d.value(n, p)
			if err != nil {
				return err
			}
			tn, ok := topos[name]
			if !ok {
				var have []string
				for k := range topos {
					have = append(have, k)
				}
				sort.Strings(have)
				return d.errAt(at, p, "no topology named %q in topologies (defined: %s)", name, strings.Join(have, ", "))
			}
			s.Topology, err = d.topology(tn, "topologies."+name)
			return err
		},
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
	if seedsGiven && runs > 0 {
		return s, d.errAt(doc, "runs", "give either runs or seeds, not both")
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
		return s, d.errAt(doc, "warmup", "warm-up %v must be shorter than the run (%v)", s.Warmup, s.Duration)
	}
	if err := s.checkLimits(false); err != nil {
		return s, d.errAt(doc, "", "%v", err)
	}
	if err := s.checkTrace(); err != nil {
		return s, d.errAt(doc, "trace", "%v", err)
	}
	for i, f := range s.Flows {
		if f.Path != nil && f.Path[1] >= len(s.Topology.Hops) {
			return s, d.errAt(doc, fmt.Sprintf("flows[%d].path", i), "path %d-%d: the topology has %d hop(s) (0..%d)",
				f.Path[0], f.Path[1], len(s.Topology.Hops), len(s.Topology.Hops)-1)
		}
		if f.Stop != 0 && f.Stop <= f.Start {
			return s, d.errAt(doc, fmt.Sprintf("flows[%d].stop", i), "stop %v must be after start %v", f.Stop, f.Start)
		}
		if f.Start >= s.Duration {
			return s, d.errAt(doc, fmt.Sprintf("flows[%d].start", i), "start %v is not before the end of the run (%v)", f.Start, s.Duration)
		}
	}
	if baselineNode != nil {
		bn := resolve(baselineNode)
		if bn.Kind != yaml.MappingNode {
			return s, d.errAt(bn, "baseline", "want a mapping of swept field to value (e.g. cc: reno), got %s", kindName(bn))
		}
		for i := 0; i+1 < len(bn.Content); i += 2 {
			s.Baseline = append(s.Baseline, Param{Axis: bn.Content[i].Value, Value: resolve(bn.Content[i+1]).Value})
		}
	}
	return s, nil
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
	var ccNode, modeNode, trafficNode, recoveryNode, windowNode, rttNode, recvWindowNode *yaml.Node
	var receiverKey string // a receiver setting given (ack_every, delayed_ack, recv_window)
	err := d.mapping(n, path, map[string]fieldFn{
		"name":  func(n *yaml.Node, p string) (err error) { f.Name, err = d.str(n, p); return },
		"count": func(n *yaml.Node, p string) (err error) { f.Count, err = d.integerIn(n, p, 1, MaxFlows); return },
		"mode": func(n *yaml.Node, p string) (err error) {
			modeNode = n
			f.Mode, err = d.enum(n, p, ModeStream, ModeDatagram, ModeUDP)
			return
		},
		"cc": func(n *yaml.Node, p string) (err error) {
			ccNode = n
			f.CC, err = d.spec(n, p, validateCC)
			return
		},
		"recovery": func(n *yaml.Node, p string) (err error) {
			recoveryNode = n
			f.Recovery, err = d.spec(n, p, validateRecovery)
			return
		},
		"traffic": func(n *yaml.Node, p string) (err error) {
			trafficNode = n
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
			receiverKey = "ack_every"
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
			receiverKey = "delayed_ack"
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
			receiverKey, recvWindowNode = "recv_window", n
			f.RecvWindow, err = d.size(n, p)
			return
		},
		"window": func(n *yaml.Node, p string) (err error) {
			windowNode = n
			f.Window, err = d.size(n, p)
			return
		},
		"rtt": func(n *yaml.Node, p string) (err error) {
			rttNode = n
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
	// trafficErr reports a traffic spec the flow's mode cannot use, at the
	// traffic field (or the flow, where the default was used).
	trafficErr := func(format string, args ...any) error {
		at := cmp.Or(trafficNode, n)
		s, serr := d.scalar(at, path+".traffic")
		if serr != nil {
			s = resolve(at)
		}
		return d.errAt(s, path+".traffic", format, args...)
	}
	if rttNode != nil && f.AccessDelay != nil {
		return f, d.errAt(resolve(rttNode), path+".rtt", "give either rtt or access_delay, not both (rtt sets the access delay)")
	}
	if dg := cmp.Or(f.Datagram, transport.DefaultMaxDatagram); f.Window != 0 && f.Window < 2*dg {
		s, _ := d.scalar(windowNode, path+".window")
		return f, d.errAt(s, path+".window", "window %d B must hold at least two datagrams (%d B)", f.Window, 2*dg)
	}
	if dg := cmp.Or(f.Datagram, transport.DefaultMaxDatagram); recvWindowNode != nil {
		if err := transport.CheckRecvWindow(f.RecvWindow, dg); err != nil {
			s, _ := d.scalar(recvWindowNode, path+".recv_window")
			return f, d.errAt(s, path+".recv_window", "%v", err)
		}
	}
	if f.AltShare > 0 && f.AltCC == "" {
		return f, d.errAt(resolve(n), path+".alt_cc", "alt_share needs alt_cc (the controller of that share of the group)")
	}
	if f.Mode == ModeUDP {
		// Raw datagrams: no transport, so no controller and no recovery.
		if ccNode != nil || recoveryNode != nil {
			at := ccNode
			field := ".cc"
			if at == nil {
				at, field = recoveryNode, ".recovery"
			}
			s, _ := d.scalar(at, path+field)
			return f, d.errAt(s, path+field, "mode udp sends raw datagrams without a transport: no cc or recovery")
		}
		f.CC, f.Recovery = "", ""
		if f.Window != 0 || f.AltCC != "" || receiverKey != "" {
			return f, d.errAt(resolve(n), path, "mode udp sends raw datagrams without a transport: no window, alt_cc, alt_share, ack_every, delayed_ack or recv_window")
		}
		if err := ValidateCrossTraffic(f.Traffic); err != nil {
			return f, trafficErr("mode udp: %v", err)
		}
		return f, nil
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
			return f, trafficErr("%v", err)
		}
		if ccName(f.CC) == CCNone {
			if r, _ := DatagramRate(f.Traffic); r <= 0 {
				return f, d.errAt(resolve(n), path+".traffic", "cc none (uncontrolled) needs a rate: traffic cbr:rate=R")
			}
		}
	}
	if f.Mode == ModeDatagram && receiverKey != "" {
		return f, d.errAt(resolve(n), path+"."+receiverKey, "%s is a stream receiver's setting (a datagram flow acknowledges by its Ack Ratio)", receiverKey)
	}
	if f.Mode == ModeStream && datagramOnly(f.CC) {
		at := ccNode
		if modeNode != nil {
			at = modeNode
		}
		s, _ := d.scalar(at, path+".cc")
		return f, d.errAt(s, path+".cc", "controller %q runs in datagram mode only (mode: datagram, or leave mode out)", ccName(f.CC))
	}
	return f, nil
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
