package sim

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"cclab/clock"
	"cclab/event"
	"cclab/internal/qlog"
	"cclab/internal/units"
	"cclab/link"
	"cclab/qdisc"
	"cclab/traffic"
	"cclab/transport"
)

// Scenario is a dumbbell or chain experiment described by a few numbers, as
// `cclab sim` takes them from flags (docs/sim.md).
type Scenario struct {
	Topology    string          // "dumbbell" (default) or "chain"
	Flows       int             // stream flows (dumbbell), or end-to-end flows (chain)
	CC          []string        // controller spec per flow, cycled (default "reno")
	Recovery    string          // recovery strategy spec ("" = transport default)
	Rate        float64         // bottleneck rate, bits/s
	RTT         time.Duration   // base round-trip time of every flow (dumbbell) or of end-to-end flows (chain)
	RTTs        []time.Duration // dumbbell only: per-flow base RTTs, cycled (overrides RTT)
	Buffer      string          // bottleneck buffer: "1bdp", "0.5bdp", "20p", "30kB"
	Queue       string          // queue discipline spec without limit (default "droptail")
	Duration    time.Duration   // simulated time
	Warmup      time.Duration   // excluded from the summary
	Seed        uint64          // scenario seed
	Hops        int             // chain: bottleneck hops
	Cross       int             // chain: cross-traffic stream flows per hop
	Traffic     string          // stream generator spec for the flows (default "greedy")
	CrossSpec   string          // chain: generator for cross flows ("" = Traffic)
	UDP         string          // datagram generator spec for background UDP flows
	UDPFlows    int             // number of background UDP flows (end to end)
	MaxDatagram int             // transport UDP payload, bytes (0 = transport default)
	AccessRate  float64         // access link rate, bits/s (0 = unlimited)
	Stagger     time.Duration   // flows start at uniform random offsets in [0, Stagger)
	Hash        bool            // hash every event (transport and links) into Summary.TraceHash
	Interval    time.Duration   // time-series interval (0 = none)
	QlogDir     string          // write one qlog per stream flow into this directory
	PayloadOnly bool            // link sizes count UDP payload only, as cmd/bottleneck -overhead 0 does (default: + link.IPv4UDPOverhead)
	ECN         bool            // flows negotiate ECN (send ECT(0), react to CE echoes)
	UntilDone   bool            // stop as soon as every stream flow has finished (bounded by Duration)
	ReverseRate float64         // dumbbell: reverse bottleneck rate, bits/s (0 = Rate; negative = unlimited, as cmd/bottleneck's default)
}

// Defaults fills unset fields.
func (sc *Scenario) Defaults() {
	if sc.Topology == "" {
		sc.Topology = "dumbbell"
	}
	if sc.Flows == 0 {
		sc.Flows = 1
	}
	if len(sc.CC) == 0 {
		sc.CC = []string{"reno"}
	}
	if sc.Rate == 0 {
		sc.Rate = 20e6
	}
	if sc.RTT == 0 {
		sc.RTT = 40 * time.Millisecond
	}
	if sc.Buffer == "" {
		sc.Buffer = "1bdp"
	}
	if sc.Queue == "" {
		sc.Queue = "droptail"
	}
	if sc.Duration == 0 {
		sc.Duration = 20 * time.Second
	}
	if sc.Hops == 0 {
		sc.Hops = 2
	}
	if sc.Traffic == "" {
		sc.Traffic = "greedy"
	}
	if sc.MaxDatagram == 0 {
		sc.MaxDatagram = transport.DefaultMaxDatagram
	}
}

// QueueSpec returns the bottleneck queue spec with its limit from Buffer,
// for a path whose bandwidth-delay product is rate × rtt.
func (sc *Scenario) QueueSpec(rtt time.Duration) (string, error) {
	b := strings.TrimSpace(strings.ToLower(sc.Buffer))
	pkt := sc.MaxDatagram + link.IPv4UDPOverhead
	if sc.PayloadOnly {
		pkt = sc.MaxDatagram
	}
	var limit string
	switch {
	case strings.HasSuffix(b, "bdp"):
		f, err := strconv.ParseFloat(strings.TrimSuffix(b, "bdp"), 64)
		if err != nil || f <= 0 {
			return "", fmt.Errorf("buffer %q: want e.g. 1bdp, 0.5bdp, 20p or 30kB", sc.Buffer)
		}
		n := int(math.Ceil(f * float64(BDP(sc.Rate, rtt)) / float64(pkt)))
		limit = strconv.Itoa(max(n, 1)) + "p"
	case strings.HasSuffix(b, "p"):
		n, err := strconv.Atoi(strings.TrimSuffix(b, "p"))
		if err != nil || n <= 0 {
			return "", fmt.Errorf("buffer %q: want e.g. 20p", sc.Buffer)
		}
		limit = strconv.Itoa(n) + "p"
	default:
		n, err := units.ParseBytes(sc.Buffer)
		if err != nil || n <= 0 {
			return "", fmt.Errorf("buffer %q: want e.g. 1bdp, 20p or 30kB", sc.Buffer)
		}
		limit = strconv.FormatInt(n, 10) + "b"
	}
	name, params, err := splitSpec(sc.Queue)
	if err != nil {
		return "", err
	}
	if name == "fred" { // FRED's limit is a plain packet count
		limit = strings.TrimSuffix(limit, "p")
	}
	q := name + ":limit=" + limit
	if params != "" {
		q += "," + params
	}
	if err := qdisc.Registry.Validate(q); err != nil {
		return "", err
	}
	return q, nil
}

func splitSpec(s string) (name, params string, err error) {
	name, params, _ = strings.Cut(strings.TrimSpace(s), ":")
	if name == "" {
		return "", "", fmt.Errorf("empty queue spec")
	}
	for _, kv := range strings.Split(params, ",") {
		if strings.HasPrefix(strings.TrimSpace(kv), "limit=") {
			return "", "", fmt.Errorf("queue %q: set the limit with the buffer, not limit=", s)
		}
	}
	return name, params, nil
}

// Build constructs the network, flows and collector; run it with Run.Run.
func (sc Scenario) Build() (*Run, error) {
	sc.Defaults()
	e := NewEngine()
	col := NewCollector(0, clock.Start.Add(sc.Warmup))
	if sc.Hash {
		col.EnableHash()
	}
	opt := Options{Seed: sc.Seed, Sink: event.Discard, PayloadOnly: sc.PayloadOnly, BufSize: max(2048, sc.MaxDatagram)}
	if sc.Hash {
		opt.Sink = col.Links()
	}
	var (
		net                *Network
		senders, receivers []*Node
		crossS, crossR     []*Node
		crossRTT           time.Duration
		baseRTT            []time.Duration
		links              []*Link
		udpS, udpR         []*Node
	)
	switch sc.Topology {
	case "dumbbell":
		rtts := sc.RTTs
		if len(rtts) == 0 {
			rtts = []time.Duration{sc.RTT}
		}
		minRTT := rtts[0]
		for _, r := range rtts {
			minRTT = min(minRTT, r)
		}
		q, err := sc.QueueSpec(minRTT)
		if err != nil {
			return nil, err
		}
		n := sc.Flows + sc.UDPFlows
		acc := make([]time.Duration, n)
		for i := range n {
			acc[i] = (rtts[i%len(rtts)] - minRTT) / 2
		}
		db, err := NewDumbbell(e, DumbbellConfig{Flows: n, Rate: sc.Rate, Delay: minRTT / 2, Queue: q,
			ReverseRate: sc.ReverseRate, AccessDelays: acc, AccessRate: sc.AccessRate}, opt)
		if err != nil {
			return nil, err
		}
		net, links = db.Net, []*Link{db.Forward, db.Reverse}
		senders, receivers = db.Senders[:sc.Flows], db.Receivers[:sc.Flows]
		udpS, udpR = db.Senders[sc.Flows:], db.Receivers[sc.Flows:]
		for i := range sc.Flows {
			baseRTT = append(baseRTT, db.Config.BaseRTT(i))
		}
	case "chain":
		hop := sc.RTT / time.Duration(2*sc.Hops)
		q, err := sc.QueueSpec(sc.RTT)
		if err != nil {
			return nil, err
		}
		ch, err := NewChain(e, ChainConfig{Hops: sc.Hops, Rate: sc.Rate, Delay: hop, Queue: q,
			Flows: sc.Flows + sc.UDPFlows, Cross: sc.Cross, AccessRate: sc.AccessRate}, opt)
		if err != nil {
			return nil, err
		}
		net = ch.Net
		links = append(append(links, ch.Hops...), ch.Reverse...)
		senders, receivers = ch.Senders[:sc.Flows], ch.Receivers[:sc.Flows]
		udpS, udpR = ch.Senders[sc.Flows:], ch.Receivers[sc.Flows:]
		for range sc.Flows {
			baseRTT = append(baseRTT, sc.RTT)
		}
		for i := range sc.Hops {
			crossS = append(crossS, ch.CrossSenders[i]...)
			crossR = append(crossR, ch.CrossReceivers[i]...)
		}
		crossRTT = 2 * hop
	default:
		return nil, fmt.Errorf("topology %q: want dumbbell or chain", sc.Topology)
	}
	s := New(net, nil)
	s.Transport.MaxDatagram = sc.MaxDatagram
	s.Transport.ECN = sc.ECN
	if sc.Recovery != "" {
		s.Transport.Recovery = sc.Recovery
	}
	r := NewRun(s, col, sc.Warmup, links)
	stagger := func(name string) clock.Time {
		if sc.Stagger <= 0 {
			return clock.Start
		}
		return clock.Start.Add(time.Duration(traffic.Stream(sc.Seed, "start/"+name).Float64() * float64(sc.Stagger)))
	}
	addTCP := func(name, spec string, src, dst *Node, cc string, rtt time.Duration) error {
		g, err := traffic.New(spec, traffic.Env{Rand: traffic.Stream(sc.Seed, "traffic/"+name), MSS: sc.MaxDatagram})
		if err != nil {
			return err
		}
		sg, ok := g.(traffic.StreamGen)
		if !ok {
			return fmt.Errorf("traffic %q is a datagram generator; use it for UDP flows", spec)
		}
		cfg := transport.Config{CC: cc}
		full := s.Transport
		full.CC = cc
		if err := full.Validate(); err != nil {
			return err
		}
		if sc.QlogDir != "" {
			f, err := os.Create(filepath.Join(sc.QlogDir, name+".qlog"))
			if err != nil {
				return err
			}
			w := qlog.NewWriter(f, qlog.Header{Title: "cclab sim " + name, VantagePoint: "client", GroupID: name, CC: cc,
				Reference: clock.Start})
			r.closers = append(r.closers, w)
			cfg.Sink = event.Tee{col.FlowSink(len(s.TCP)), w}
		}
		s.AddTCPFlow(name, src, dst, sg, cfg, stagger(name))
		r.BaseRTT = append(r.BaseRTT, rtt)
		return nil
	}
	for i := range sc.Flows {
		if err := addTCP(fmt.Sprintf("flow%d", i), sc.Traffic, senders[i], receivers[i], sc.CC[i%len(sc.CC)], baseRTT[i]); err != nil {
			return nil, err
		}
	}
	cspec := sc.CrossSpec
	if cspec == "" {
		cspec = sc.Traffic
	}
	for i := range crossS {
		if err := addTCP(fmt.Sprintf("cross%d", i), cspec, crossS[i], crossR[i], sc.CC[(sc.Flows+i)%len(sc.CC)], crossRTT); err != nil {
			return nil, err
		}
	}
	for i := range sc.UDPFlows {
		name := fmt.Sprintf("udp%d", i)
		g, err := traffic.New(sc.UDP, traffic.Env{Rand: traffic.Stream(sc.Seed, "traffic/"+name)})
		if err != nil {
			return nil, err
		}
		dg, ok := g.(traffic.DatagramGen)
		if !ok {
			return nil, fmt.Errorf("udp traffic %q is not a datagram generator (cbr, udponoff, layered)", sc.UDP)
		}
		s.AddUDPFlow(name, udpS[i], udpR[i], uint16(10000+i%50000), dg, stagger(name))
	}
	if sc.Interval > 0 {
		r.Sample(sc.Interval)
	}
	r.end = clock.Start.Add(sc.Duration)
	r.untilDone = sc.UntilDone
	return r, nil
}

// Run runs the scenario to its end and closes any qlog writers.
func (r *Run) Run() error {
	if r.untilDone {
		r.Sim.E.RunUntilOrTimeout(r.Sim.AllFinished, r.end)
	} else {
		r.Sim.E.RunUntilTime(r.end)
	}
	var first error
	for _, c := range r.closers {
		if err := c.Close(); err != nil && first == nil {
			first = err
		}
	}
	r.closers = nil
	return first
}
