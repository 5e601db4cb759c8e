// Package plan turns a scenario into the one description of the network
// that every backend builds from (docs/architecture.md, "The plan"): the hops
// of each direction with their link IDs and names, the numbered flows with
// their paths, the cross traffic of each hop, the bottleneck, the base RTT,
// and the name of every random stream. The simulator's runner builds its
// topology from a Plan, the live runner configures its relays from the same
// Plan, and both describe the run to metrics.Collector with Plan.RunInfo, so
// link and flow identities are decided here once and never re-derived by a
// backend. The package imports neither backend.
package plan

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"cclab/clock"
	"cclab/internal/units"
	"cclab/link"
	"cclab/metrics"
	"cclab/qdisc"
	"cclab/scenario"
	"cclab/traffic"
	"cclab/transport"
)

// Directions of a path.
const (
	Fwd = 0 // senders → receivers: the data path
	Rev = 1 // receivers → senders: the ACK path
)

// DirNames names the directions.
var DirNames = [2]string{"fwd", "rev"}

// DefaultAccessQueue is the queue of access links when the scenario names
// none: large, so that the hops, not the access, are where packets wait and
// drop.
const DefaultAccessQueue = "droptail:100000p"

// Plan is a scenario point turned into the network every backend builds.
type Plan struct {
	Scenario  string              // the scenario's name
	Seed      uint64              // the run's seed: every random stream derives from it (Rand)
	Kind      string              // scenario.KindDumbbell or scenario.KindChain
	Duration  time.Duration       // length of the run
	Warmup    time.Duration       // excluded from the metrics
	Interval  time.Duration       // time-series interval
	UntilDone bool                // a simulated run ends when every stream flow has finished
	Trace     *scenario.TraceSpec // the flow and window of the run's packet trace; nil: none

	// Routers are the nodes between hops, in forward path order:
	// Hops[Fwd][i] goes from Routers[i] to Routers[i+1].
	Routers []string
	// Hops per direction, each in its path order: Hops[Fwd][i] is physical
	// hop i forward; Hops[Rev][j] is physical hop K-1-j backward (K hops),
	// so a reverse path is walked from the receivers towards the senders.
	Hops [2][]Hop

	Access      Access // sender access links
	MTU         int    // link MTU, bytes (0: link.DefaultMTU)
	PayloadOnly bool   // datagram sizes on links count the UDP payload alone
	// Overhead is added to every datagram's UDP payload to get its size on
	// the links, bytes: link.IPv4UDPOverhead, or 0 with PayloadOnly.
	Overhead int

	Flows []Flow // numbered 1..len(Flows) in scenario order

	Bottleneck     int32         // link ID of the bottleneck: the forward hop of the lowest rate (the first of equals)
	BottleneckRate float64       // its rate, bits/s
	BaseRTT        time.Duration // round-trip propagation delay of an end-to-end path with the topology's access delay
	// EpochThreshold is the congestion-epoch threshold as a fraction of
	// each hop's queue limit (docs/metrics.md).
	EpochThreshold float64
}

// Access describes the sender access links. Every flow's sender has one of
// its own (the delay may differ per flow: Flow.AccessDelay); receivers'
// access links have no delay.
type Access struct {
	Rate  float64 // bits/s; 0 = unlimited
	Queue string  // qdisc spec
}

// Hop is one direction of one hop.
type Hop struct {
	ID    int32  // link ID: event.Event.Link of the hop's events (the simulator's link index, the relay's Links entry)
	Name  string // "From>To", e.g. "left>right" or "q0>q1"
	Dir   int    // Fwd or Rev
	Index int    // position along its direction's path
	Span  int    // physical hop: Hops[Fwd][Span] and Hops[Rev][K-1-Span] are its two directions
	From  string // router the hop leaves
	To    string // router the hop reaches
	// Link is the hop's link model: rate or trace, delay, jitter, queue,
	// loss and MTU (package link).
	Link       link.Config
	Rate       float64 // bits/s: Link.Rate, or a trace's mean rate; 0 = unlimited
	QueueLimit int     // the queue's packet limit; 0 if it has none or a byte limit
	Stream     string  // name of its random stream (loss, jitter, queue): Plan.Rand(Stream)
	Cross      []Cross // cross traffic entering before the hop and leaving after it
	Bottleneck bool    // the run's bottleneck
}

// Cross is one source of open-loop cross traffic at a hop.
type Cross struct {
	Name    string // "cross/<hop>/<i>"
	Traffic string // datagram generator spec (docs/traffic.md)
	Stream  string // its generator's random stream: Plan.Rand(Stream)
	// Key is the flow key (qdisc.Packet.Flow) of its packets: per-flow
	// queues (DRR, FRED, CSFQ) see each source as one flow. It is never a
	// measured flow's number.
	Key uint64
}

// CrossKeyBase is the first cross-traffic flow key: source i of a run has
// key CrossKeyBase+i.
const CrossKeyBase = 0xC0000000

// Flow is one numbered flow.
type Flow struct {
	ID       uint64 // flow number, 1-based: event.Event.Flow of its events in the metrics
	Name     string // the group's name, or "name.j" for member j of a group of several
	Group    int    // index of its group in the scenario's flows
	Mode     string // scenario.ModeStream, scenario.ModeDatagram or scenario.ModeUDP
	CC       string // controller spec
	Recovery string // recovery strategy spec (stream mode)
	Traffic  string // traffic generator spec
	Datagram int    // largest datagram (UDP payload), bytes; 0 = the transport's default
	// PLPMTUMax turns datagram size discovery on (scenario.Flow.PMTUD;
	// transport.Config.PLPMTUMax): the largest datagram probed, bytes, the
	// topology's MTU (0: link.DefaultMTU) less link.IPv4UDPOverhead,
	// derived here once for every backend; 0 = the datagram size
	// throughout.
	PLPMTUMax int
	ECN       bool // negotiate ECN
	// TCPHandshake runs the stream handshake at TCP's sizes: the Initial
	// unpadded, at a SYN's size, and a pure ACK of the Accept before the
	// data (scenario.Flow.TCPHandshake, transport.Config.TCPHandshake):
	// the simulator does, ns-3's handshake is TCP's anyway, the live
	// backend refuses it.
	TCPHandshake bool
	// MinRTO is the sender's RTO floor (transport.Config.MinRTO); 0 = the
	// transport's default.
	MinRTO time.Duration
	// AckEvery, DelayedAck and RecvWindow are the receiver's delayed-ACK
	// policy and receive window (transport.Config); 0 = the transport's
	// defaults.
	AckEvery   int
	DelayedAck time.Duration
	RecvWindow int
	// AckFirst has the receiver acknowledge the first data segment at
	// once (scenario.Flow.AckFirst, transport.Config.AckFirst), as ns-3's
	// does always.
	AckFirst bool
	// Window is the flow's largest window, bytes: the cap on what its
	// sender has in flight (transport.Config.MaxWindow); 0 = the
	// transport's default.
	Window int
	// Background marks a flow of a hop's background group
	// (scenario.Hop.Background): the backends run it like any flow but measure
	// it only through the links (its packets carry no flow number, as cross
	// traffic: RunInfo and Describe leave it out).
	Background bool
	// Kernel, if set, makes the flow kernel TCP (scenario.StackKernel)
	// with these settings: the live backend runs it through the link
	// shell, the other backends refuse it.
	Kernel *scenario.KernelSettings
	// First and Last are the forward hops the flow crosses
	// (Hops[Fwd][First..Last]); its reverse path is
	// Hops[Rev][K-1-Last..K-1-First].
	First, Last int
	Path        [2][]int32    // link IDs crossed per direction, in path order
	AccessDelay time.Duration // one-way delay of its sender access link
	Start       time.Duration // offset of its start from the start of the run (its stagger drawn)
	Stop        time.Duration // offset of its stop; 0 = the end of the run
	BaseRTT     time.Duration // round-trip propagation delay of its path
	// BottleneckRate is the lowest forward rate on its path, bits/s.
	BottleneckRate float64
	Size           int64   // bytes of a sized greedy flow ("greedy:N"); 0 otherwise (no completion time)
	Rate           float64 // datagram mode: the application's rate (cbr:rate=R), bits/s; 0 = greedy
	// Random streams: its traffic generator, its payload pattern, its start
	// offset (Plan.Rand of each).
	TrafficStream, DataStream, StartStream string
}

// MetricID is the flow number its events carry to the metrics: ID, or 0
// (no flow, as cross traffic) for a background flow.
func (f *Flow) MetricID() uint64 {
	if f.Background {
		return 0
	}
	return f.ID
}

// EndToEnd reports whether the flow crosses every hop.
func (f *Flow) EndToEnd(hops int) bool { return f.First == 0 && f.Last == hops-1 }

// Rand returns the random source of a named stream: the same name and seed
// give the same draws in every backend (traffic.Stream).
func (p *Plan) Rand(stream string) *rand.Rand { return traffic.Stream(p.Seed, stream) }

// New turns one scenario point (eval's scenario after defaults and sweep
// expansion) and a seed into a Plan. It is the only place where hops and
// flows get their IDs, names and random streams.
func New(sc scenario.Scenario, seed uint64) (*Plan, error) {
	t := sc.Topology
	p := &Plan{Scenario: sc.Name, Seed: seed, Kind: t.Kind, Duration: sc.Duration, Warmup: sc.Warmup,
		Interval: sc.Interval, UntilDone: sc.UntilDone, Trace: sc.Trace, MTU: t.MTU, PayloadOnly: t.PayloadOnly,
		Access: Access{Rate: t.Access.Rate, Queue: t.Access.Queue}, EpochThreshold: sc.EpochThreshold}
	if p.Access.Queue == "" {
		p.Access.Queue = DefaultAccessQueue
	}
	if p.EpochThreshold == 0 {
		p.EpochThreshold = scenario.DefaultEpochThreshold
	}
	p.Overhead = link.IPv4UDPOverhead
	if p.PayloadOnly {
		p.Overhead = 0
	}
	k := len(t.Hops)
	if k == 0 {
		return nil, fmt.Errorf("plan: topology has no hops")
	}
	switch t.Kind {
	case scenario.KindDumbbell:
		if k != 1 {
			return nil, fmt.Errorf("plan: a dumbbell has one bottleneck hop, got %d", k)
		}
		p.Routers = []string{"left", "right"}
	case scenario.KindChain:
		for i := 0; i <= k; i++ {
			p.Routers = append(p.Routers, "q"+strconv.Itoa(i))
		}
	default:
		return nil, fmt.Errorf("plan: topology kind %q (allowed: %s, %s)", t.Kind, scenario.KindDumbbell, scenario.KindChain)
	}
	if err := p.hops(t); err != nil {
		return nil, err
	}
	p.BaseRTT = 2 * t.Access.Delay
	for _, h := range t.Hops {
		p.BaseRTT += 2 * h.Delay
	}
	if err := p.flows(sc); err != nil {
		return nil, err
	}
	return p, nil
}

// hops builds both directions of every hop: physical hop i has link ID 2i
// forward and 2i+1 backward (the order the simulator's builders always
// used, so stored results keep their link IDs).
func (p *Plan) hops(t scenario.Topology) error {
	k := len(t.Hops)
	p.Hops[Rev] = make([]Hop, k)
	crossN := 0
	for i, h := range t.Hops {
		from, to := p.Routers[i], p.Routers[i+1]
		fwd := Hop{ID: int32(2 * i), Name: from + ">" + to, Dir: Fwd, Index: i, Span: i, From: from, To: to,
			Link: link.Config{Rate: h.Rate, Delay: h.Delay, Jitter: h.Jitter, Reorder: h.Reorder, Queue: h.Queue, Loss: h.Loss, MTU: t.MTU}}
		rev := Hop{ID: int32(2*i + 1), Name: to + ">" + from, Dir: Rev, Index: k - 1 - i, Span: i, From: to, To: from,
			Link: link.Config{Rate: h.Rate, Delay: h.Delay, Queue: h.Queue, Loss: h.RevLoss, MTU: t.MTU}}
		switch {
		case h.RevRate < 0:
			rev.Link.Rate = 0 // unlimited
		case h.RevRate > 0:
			rev.Link.Rate = h.RevRate
		}
		fwd.Rate, rev.Rate = h.Rate, rev.Link.Rate
		if h.Trace != "" {
			tr, err := scenario.ReadTrace(h.Trace)
			if err != nil {
				return fmt.Errorf("plan: hop %d: %v", i, err)
			}
			fwd.Link.Rate, fwd.Link.TraceData = 0, tr
			mtu := t.MTU
			if mtu == 0 {
				mtu = link.DefaultMTU
			}
			fwd.Rate = tr.Rate(mtu)
		}
		for _, hp := range []*Hop{&fwd, &rev} {
			hp.QueueLimit = QueueLimit(hp.Link.Queue)
			hp.Stream = "link/" + hp.Name
		}
		for _, c := range h.Cross {
			at := &fwd
			if c.Dir == scenario.DirRev {
				at = &rev
			}
			name := fmt.Sprintf("cross/%s/%d", at.Name, len(at.Cross))
			at.Cross = append(at.Cross, Cross{Name: name, Traffic: c.Traffic, Stream: name, Key: uint64(CrossKeyBase + crossN)})
			crossN++
		}
		p.Hops[Fwd] = append(p.Hops[Fwd], fwd)
		p.Hops[Rev][k-1-i] = rev
		if i == 0 || fwd.Rate < p.BottleneckRate {
			p.Bottleneck, p.BottleneckRate = fwd.ID, fwd.Rate
		}
	}
	for i := range p.Hops[Fwd] {
		p.Hops[Fwd][i].Bottleneck = p.Hops[Fwd][i].ID == p.Bottleneck
	}
	return nil
}

// flows numbers the scenario's flows (groups expanded in order), then the
// hops' background groups (hop by hop, groups in order), and gives each its
// path, timing and random streams. A background group of mode udp becomes
// open-loop cross traffic of its hop (one source per member, stream
// bg/<hop>/<group>.<j>); the others become flows named <hop>/<group>.<j>
// that cross their hop only.
func (p *Plan) flows(sc scenario.Scenario) error {
	k := len(p.Hops[Fwd])
	for g, f := range sc.Flows {
		first, last := 0, k-1
		if f.Path != nil {
			first, last = f.Path[0], f.Path[1]
		}
		if err := p.group(sc, g, f, first, last, ""); err != nil {
			return err
		}
	}
	crossN, groups := 0, len(sc.Flows)
	for _, h := range p.Links() {
		crossN += len(h.Cross)
	}
	for i, h := range sc.Topology.Hops {
		hop := &p.Hops[Fwd][i]
		for _, f := range h.Background {
			if f.Mode != scenario.ModeUDP {
				if err := p.group(sc, groups, f, i, i, hop.Name+"/"); err != nil {
					return err
				}
				groups++
				continue
			}
			for j := 0; j < f.Count; j++ {
				name := fmt.Sprintf("bg/%s/%s.%d", hop.Name, f.Name, j)
				hop.Cross = append(hop.Cross, Cross{Name: name, Traffic: f.Traffic, Stream: name, Key: uint64(CrossKeyBase + crossN)})
				crossN++
			}
		}
	}
	return nil
}

// group adds the flows of one group crossing hops first..last; prefix
// names a background group's flows after their hop ("" for the scenario's
// flows, which are measured).
func (p *Plan) group(sc scenario.Scenario, g int, f scenario.Flow, first, last int, prefix string) error {
	k := len(p.Hops[Fwd])
	if first < 0 || last >= k || first > last {
		return fmt.Errorf("plan: flow %s: path %d-%d outside hops 0..%d", f.Name, first, last, k-1)
	}
	acc := sc.Topology.Access.Delay
	if f.AccessDelay != nil {
		acc = *f.AccessDelay
	}
	if f.RTT > 0 {
		var hops time.Duration
		for i := first; i <= last; i++ {
			hops += p.Hops[Fwd][i].Link.Delay + p.Hops[Rev][k-1-i].Link.Delay
		}
		if f.RTT < hops {
			return fmt.Errorf("plan: flow %s: rtt %v is below its hops' delays both ways (%v)", f.Name, f.RTT, hops)
		}
		acc = (f.RTT - hops) / 2
	}
	alt := int(math.Round(f.AltShare * float64(f.Count)))
	var size int64
	var rate float64
	if _, cfg, err := traffic.Registry.Config(f.Traffic); err != nil {
		return fmt.Errorf("plan: flow %s: %v", f.Name, err)
	} else if c, ok := cfg.(*traffic.GreedyConfig); ok {
		size = int64(c.Bytes)
	}
	if f.Mode == scenario.ModeDatagram {
		r, err := scenario.DatagramRate(f.Traffic)
		if err != nil {
			return fmt.Errorf("plan: flow %s: %v", f.Name, err)
		}
		rate, size = r, 0
	}
	if f.Mode == scenario.ModeUDP {
		size = 0
	}
	for j := 0; j < f.Count; j++ {
		name := prefix + f.Name
		if f.Count > 1 {
			name = fmt.Sprintf("%s%s.%d", prefix, f.Name, j)
		}
		cc := f.CC
		if j < alt {
			cc = f.AltCC
		}
		fl := Flow{ID: uint64(len(p.Flows) + 1), Name: name, Group: g, Mode: f.Mode, CC: cc, Recovery: f.Recovery,
			Traffic: f.Traffic, Datagram: f.Datagram, ECN: f.ECN, TCPHandshake: f.TCPHandshake, MinRTO: f.MinRTO, Window: f.Window,
			AckEvery: f.AckEvery, DelayedAck: f.DelayedAck, RecvWindow: f.RecvWindow, AckFirst: f.AckFirst, Background: prefix != "",
			First: first, Last: last, AccessDelay: acc, Start: f.Start, Stop: f.Stop, Size: size, Rate: rate,
			TrafficStream: "traffic/" + name, DataStream: "data/" + name, StartStream: "start/" + name}
		if f.PMTUD {
			fl.PLPMTUMax = PLPMTUMax(sc.Topology.MTU, f.Datagram)
		}
		if f.Stack == scenario.StackKernel {
			k, fe := f.Kernel()
			if fe.Field != "" {
				return fmt.Errorf("plan: flow %s: %s: stack kernel: %s", name, fe.Field, fe.Msg)
			}
			fl.Kernel = &k
		}
		if f.Stagger > 0 {
			fl.Start += time.Duration(p.Rand(fl.StartStream).Float64() * float64(f.Stagger))
		}
		if fl.Start >= sc.Duration {
			return fmt.Errorf("plan: flow %s starts at %v, not before the end of the run (%v)", name, fl.Start, sc.Duration)
		}
		if fl.Stop > 0 && fl.Stop <= fl.Start {
			return fmt.Errorf("plan: flow %s stops at %v, not after its start %v (stagger included)", name, fl.Stop, fl.Start)
		}
		fl.BaseRTT = 2 * acc
		for i := first; i <= last; i++ {
			h := p.Hops[Fwd][i]
			fl.Path[Fwd] = append(fl.Path[Fwd], h.ID)
			fl.BaseRTT += h.Link.Delay + p.Hops[Rev][k-1-i].Link.Delay
			if i == first || h.Rate < fl.BottleneckRate {
				fl.BottleneckRate = h.Rate
			}
		}
		for j := k - 1 - last; j <= k-1-first; j++ {
			fl.Path[Rev] = append(fl.Path[Rev], p.Hops[Rev][j].ID)
		}
		p.Flows = append(p.Flows, fl)
	}
	return nil
}

// Links returns every hop of both directions, in link ID order.
func (p *Plan) Links() []*Hop {
	out := make([]*Hop, 0, 2*len(p.Hops[Fwd]))
	for i := range p.Hops[Fwd] {
		out = append(out, &p.Hops[Fwd][i], &p.Hops[Rev][len(p.Hops[Fwd])-1-i])
	}
	return out
}

// Hop returns the hop with link ID id, or nil.
func (p *Plan) Hop(id int32) *Hop {
	for _, h := range p.Links() {
		if h.ID == id {
			return h
		}
	}
	return nil
}

// RunInfo describes the run to metrics.Collector: the measurement window
// (start+Warmup to start+Duration, start being the instant the run starts
// on the backend's clock), the interval, every hop as a link and every flow,
// with the identities of the plan. Both backends measure through it.
func (p *Plan) RunInfo(start clock.Time) metrics.RunInfo {
	info := metrics.RunInfo{Start: start.Add(p.Warmup), End: start.Add(p.Duration), Interval: p.Interval,
		Bottleneck: p.Bottleneck, BottleneckRate: p.BottleneckRate}
	if p.Trace != nil {
		info.Trace = &metrics.TraceWindow{Flow: uint64(p.Trace.Flow), Origin: start, From: start.Add(p.Trace.From), To: start.Add(p.Trace.To)}
	}
	for _, h := range p.Links() {
		info.Links = append(info.Links, metrics.LinkInfo{Index: h.ID, Name: h.Name, Rate: h.Rate, QueueLimit: h.QueueLimit,
			BaseRTT: p.BaseRTT, EpochThreshold: p.EpochThreshold})
	}
	for _, f := range p.Flows {
		if f.Background {
			continue
		}
		fi := metrics.FlowInfo{ID: f.ID, Name: f.Name, Size: f.Size, BottleneckRate: f.BottleneckRate, BaseRTT: f.BaseRTT}
		if f.Stop > 0 {
			fi.Stop = start.Add(f.Stop)
		}
		info.Flows = append(info.Flows, fi)
	}
	return info
}

// Describe returns the run's flow and link descriptions for the result
// store (metrics.RunResult.Flows and Links), the same text in every backend.
func (p *Plan) Describe() (flows, links []metrics.ScopeRecord) {
	for _, f := range p.Flows {
		if f.Background {
			continue
		}
		flows = append(flows, metrics.ScopeRecord{ID: int64(f.ID), Name: f.Name, Info: f.Describe(len(p.Hops[Fwd]))})
	}
	for _, h := range p.Links() {
		links = append(links, metrics.ScopeRecord{ID: int64(h.ID), Name: h.Name, Info: h.Describe()})
	}
	return flows, links
}

// Describe returns "mode=... cc=... recovery=... traffic=..." and, for a
// flow that does not cross every hop of a topology of hops hops, its path.
func (f *Flow) Describe(hops int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "mode=%s", f.Mode)
	if f.Mode != scenario.ModeUDP {
		fmt.Fprintf(&b, " cc=%s", f.CC)
	}
	if f.Mode == scenario.ModeStream {
		fmt.Fprintf(&b, " recovery=%s", f.Recovery)
	}
	fmt.Fprintf(&b, " traffic=%s", f.Traffic)
	if !f.EndToEnd(hops) {
		fmt.Fprintf(&b, " path=%d-%d", f.First, f.Last)
	}
	return b.String()
}

// Describe returns "rate=... delay=... queue=... loss=..." (and the cross
// traffic), prefixed with "bottleneck " for the bottleneck.
func (h *Hop) Describe() string {
	rate := "unlimited"
	switch {
	case h.Link.TraceData != nil:
		rate = "trace(mean " + units.FormatRate(h.Rate) + ")"
	case h.Rate > 0:
		rate = units.FormatRate(h.Rate)
	}
	loss := h.Link.Loss
	if loss == "" {
		loss = "none"
	}
	s := fmt.Sprintf("rate=%s delay=%v queue=%s loss=%s", rate, h.Link.Delay, h.Link.Queue, loss)
	if h.Link.Jitter > 0 {
		s += fmt.Sprintf(" jitter=%v", h.Link.Jitter)
		if h.Link.Reorder {
			s += " reorder"
		}
	}
	for _, c := range h.Cross {
		s += " cross=" + c.Traffic
	}
	if h.Bottleneck {
		s = "bottleneck " + s
	}
	return s
}

// QueueLimit returns a queue spec's packet limit, or 0 if it has none (or is
// limited in bytes).
func QueueLimit(spec string) int {
	_, cfg, err := qdisc.Registry.Config(spec)
	if err != nil {
		return 0
	}
	if b, ok := cfg.(qdisc.Bounded); ok {
		return b.Capacity().Packets
	}
	return 0
}

// MaxDatagram returns the largest datagram any flow sends (UDP payload,
// bytes): the packet buffers a backend needs.
func (p *Plan) MaxDatagram() int {
	n := transport.DefaultMaxDatagram
	for _, f := range p.Flows {
		n = max(n, f.Datagram, f.PLPMTUMax)
	}
	return n
}

// PLPMTUMax is the largest datagram a flow of datagram size datagram (0:
// transport.DefaultMaxDatagram) discovers over links of MTU mtu (0:
// link.DefaultMTU): the MTU less link.IPv4UDPOverhead, as a live sender
// takes its route's (udp.Endpoint.PathMaxPayload); 0 when that is no
// larger than the datagram (nothing to discover).
func PLPMTUMax(mtu, datagram int) int {
	limit := min(cmp.Or(mtu, link.DefaultMTU)-link.IPv4UDPOverhead, transport.MaxUDPPayload)
	if limit <= cmp.Or(datagram, transport.DefaultMaxDatagram) {
		return 0
	}
	return limit
}

// SetsReceiving reports whether the flow sets its receiver's delayed-ACK
// policy or receive window (the fields Receive applies).
func (f *Flow) SetsReceiving() bool {
	return f.AckEvery != 0 || f.DelayedAck != 0 || f.RecvWindow != 0 || f.AckFirst
}

// Receive sets cfg's receiving-side settings from the flow (those it
// sets: zero fields leave cfg's).
func (f *Flow) Receive(cfg *transport.Config) {
	cfg.SetReceiving(transport.Config{AckEvery: f.AckEvery, DelayedAck: f.DelayedAck, RecvWindow: f.RecvWindow, AckFirst: f.AckFirst})
}
