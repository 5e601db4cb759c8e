package scenario

import (
	"cmp"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"cclab/internal/units"
	"cclab/link"
	"cclab/qdisc"
	"cclab/traffic"
	"cclab/transport"
)

// Simple is a dumbbell or chain experiment described by a few numbers, as
// `cclab sim` takes them from its flags (docs/sim.md). It is only another
// way to write a scenario: Scenario turns it into one, which then runs like
// any scenario file (the same plan, the same metrics).
type Simple struct {
	Name        string          // scenario name (default "cclab-sim")
	Topology    string          // "dumbbell" (default) or "chain"
	Flows       int             // stream flows (dumbbell), or end-to-end flows (chain); default 1
	CC          []string        // controller spec per flow, cycled (default transport.DefaultCC)
	Recovery    string          // recovery strategy spec ("" = the scenario default, newreno)
	Rate        float64         // bottleneck rate, bits/s (default 20 Mbit/s)
	RTT         time.Duration   // base round-trip time of every flow (dumbbell) or of end-to-end flows (chain); default 40 ms
	RTTs        []time.Duration // dumbbell only: per-flow base RTTs, cycled (overrides RTT)
	Buffer      string          // bottleneck buffer: "1bdp" (default), "0.5bdp", "20p", "30kB"
	Queue       string          // queue discipline spec without limit (default "droptail")
	Duration    time.Duration   // simulated time (default 20 s)
	Warmup      time.Duration   // excluded from the metrics
	Seed        uint64          // scenario seed
	Hops        int             // chain: bottleneck hops (default 2)
	Cross       int             // chain: cross-traffic stream flows per hop
	Traffic     string          // stream generator spec for the flows (default "greedy")
	CrossSpec   string          // chain: generator for cross flows ("" = Traffic)
	UDP         string          // datagram generator spec for background UDP flows
	UDPFlows    int             // number of background UDP flows (end to end)
	MaxDatagram int             // transport UDP payload, bytes (0 = transport default)
	AccessRate  float64         // access link rate, bits/s (0 = unlimited)
	Stagger     time.Duration   // flows start at uniform random offsets in [0, Stagger)
	Interval    time.Duration   // time-series interval (0 = DefaultInterval)
	PayloadOnly bool            // link sizes count UDP payload only (default: + link.IPv4UDPOverhead)
	ECN         bool            // flows negotiate ECN
	MinRTO      time.Duration   // stream flows' RTO floor (0 = transport default, 200 ms)
	AckEvery    int             // stream receivers ACK after this many full-sized segments (0 = transport default, 2)
	DelayedAck  time.Duration   // stream receivers' delayed-ACK time (0 = transport default, 40 ms; transport.NoDelayedAck: none)
	RecvWindow  int             // stream receivers' receive window, bytes (0 = transport default, 8 MiB)
	UntilDone   bool            // stop as soon as every stream flow has finished (bounded by Duration)
	ReverseRate float64         // dumbbell: reverse bottleneck rate, bits/s (0 = Rate; negative = unlimited)
}

// defaults fills unset fields.
func (s *Simple) defaults() {
	if s.Name == "" {
		s.Name = "cclab-sim"
	}
	if s.Topology == "" {
		s.Topology = KindDumbbell
	}
	if s.Flows == 0 {
		s.Flows = 1
	}
	if len(s.CC) == 0 {
		s.CC = []string{transport.DefaultCC}
	}
	if s.Rate == 0 {
		s.Rate = 20e6
	}
	if s.RTT == 0 {
		s.RTT = 40 * time.Millisecond
	}
	if s.Buffer == "" {
		s.Buffer = "1bdp"
	}
	if s.Queue == "" {
		s.Queue = "droptail"
	}
	if s.Duration == 0 {
		s.Duration = 20 * time.Second
	}
	if s.Hops == 0 {
		s.Hops = 2
	}
	if s.Traffic == "" {
		s.Traffic = "greedy"
	}
	if s.MaxDatagram == 0 {
		s.MaxDatagram = transport.DefaultMaxDatagram
	}
	if s.Interval == 0 {
		s.Interval = DefaultInterval
	}
}

// QueueSpec returns the bottleneck queue spec with its limit from Buffer,
// for a path whose bandwidth-delay product is Rate × rtt: a limit of
// ⌈Xbdp × BDP / packet⌉ packets (packet = MaxDatagram + the link overhead),
// Np packets, or a size in bytes.
func (s Simple) QueueSpec(rtt time.Duration) (string, error) {
	s.defaults()
	b := strings.TrimSpace(strings.ToLower(s.Buffer))
	pkt := s.MaxDatagram + link.IPv4UDPOverhead
	if s.PayloadOnly {
		pkt = s.MaxDatagram
	}
	var limit string
	switch {
	case strings.HasSuffix(b, "bdp"):
		f, err := strconv.ParseFloat(strings.TrimSuffix(b, "bdp"), 64)
		if err != nil || f <= 0 {
			return "", fmt.Errorf("buffer %q: want e.g. 1bdp, 0.5bdp, 20p or 30kB", s.Buffer)
		}
		bdp := int(s.Rate / 8 * rtt.Seconds()) // bytes
		n := int(math.Ceil(f * float64(bdp) / float64(pkt)))
		limit = strconv.Itoa(max(n, 1)) + "p"
	case strings.HasSuffix(b, "p"):
		n, err := strconv.Atoi(strings.TrimSuffix(b, "p"))
		if err != nil || n <= 0 {
			return "", fmt.Errorf("buffer %q: want e.g. 20p", s.Buffer)
		}
		limit = strconv.Itoa(n) + "p"
	default:
		n, err := units.ParseBytes(s.Buffer)
		if err != nil || n <= 0 {
			return "", fmt.Errorf("buffer %q: want e.g. 1bdp, 20p or 30kB", s.Buffer)
		}
		limit = strconv.FormatInt(n, 10) + "b"
	}
	name, params, _ := strings.Cut(strings.TrimSpace(s.Queue), ":")
	if name == "" {
		return "", fmt.Errorf("queue: empty spec")
	}
	for _, kv := range strings.Split(params, ",") {
		if strings.HasPrefix(strings.TrimSpace(kv), "limit=") {
			return "", fmt.Errorf("queue %q: set the limit with the buffer, not limit=", s.Queue)
		}
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

// Scenario returns the scenario s describes: one seed, the simulator as its
// backend, one flow group per flow (named flow<i>, cross<i>, udp<i>, in that
// order), controllers cycled over the flows and cross flows.
func (s Simple) Scenario() (Scenario, error) {
	s.defaults()
	if err := s.checkFlags(); err != nil {
		return Scenario{}, err
	}
	sc := Scenario{Name: s.Name, Duration: s.Duration, Seeds: []uint64{s.Seed}, Interval: s.Interval,
		Backends: []string{BackendSim}, Warmup: s.Warmup, UntilDone: s.UntilDone}
	t := &sc.Topology
	t.PayloadOnly = s.PayloadOnly
	t.Access = Access{Rate: s.AccessRate}
	if err := s.checkSettings(); err != nil {
		return sc, err
	}
	recovery := s.Recovery
	if recovery == "" {
		recovery = transport.DefaultRecovery
	}
	stream := func(name, cc, traffic string) (Flow, error) {
		f := Flow{Name: name, Count: 1, Mode: ModeStream, CC: cc, Recovery: recovery, Traffic: traffic,
			Datagram: s.MaxDatagram, Stagger: s.Stagger, ECN: s.ECN, MinRTO: s.MinRTO,
			AckEvery: s.AckEvery, DelayedAck: s.DelayedAck, RecvWindow: s.RecvWindow}
		if recovery == RecoveryAuto {
			f.Recovery = AutoRecovery(cc)
		}
		if datagramOnly(cc) {
			return f, fmt.Errorf("controller %q runs in datagram mode only; cclab sim runs stream flows", ccName(cc))
		}
		return f, validateStreamTraffic(traffic)
	}
	var rtts []time.Duration // per stream flow (dumbbell)
	switch s.Topology {
	case KindDumbbell:
		rtts = s.RTTs
		if len(rtts) == 0 {
			rtts = []time.Duration{s.RTT}
		}
		minRTT := rtts[0]
		for _, r := range rtts {
			if r <= 0 {
				return sc, fmt.Errorf("rtt %v: must be positive", r)
			}
			minRTT = min(minRTT, r)
		}
		q, err := s.QueueSpec(minRTT)
		if err != nil {
			return sc, err
		}
		t.Kind = KindDumbbell
		t.Hops = []Hop{{Rate: s.Rate, Delay: minRTT / 2, Queue: q, RevRate: s.ReverseRate}}
		for i := range s.Flows {
			f, err := stream(fmt.Sprintf("flow%d", i), s.CC[i%len(s.CC)], s.Traffic)
			if err != nil {
				return sc, err
			}
			if len(s.RTTs) > 0 {
				d := (rtts[i%len(rtts)] - minRTT) / 2
				f.AccessDelay = &d
			}
			sc.Flows = append(sc.Flows, f)
		}
	case KindChain:
		if s.Hops < 1 {
			return sc, fmt.Errorf("hops %d: a chain needs at least one", s.Hops)
		}
		if len(s.RTTs) > 0 {
			return sc, fmt.Errorf("per-flow RTTs apply to a dumbbell only")
		}
		q, err := s.QueueSpec(s.RTT)
		if err != nil {
			return sc, err
		}
		t.Kind = KindChain
		for range s.Hops {
			t.Hops = append(t.Hops, Hop{Rate: s.Rate, Delay: s.RTT / time.Duration(2*s.Hops), Queue: q})
		}
		for i := range s.Flows {
			f, err := stream(fmt.Sprintf("flow%d", i), s.CC[i%len(s.CC)], s.Traffic)
			if err != nil {
				return sc, err
			}
			sc.Flows = append(sc.Flows, f)
		}
		cspec := s.CrossSpec
		if cspec == "" {
			cspec = s.Traffic
		}
		n := 0
		for h := range s.Hops {
			for range s.Cross {
				f, err := stream(fmt.Sprintf("cross%d", n), s.CC[(s.Flows+n)%len(s.CC)], cspec)
				if err != nil {
					return sc, err
				}
				f.Path = []int{h, h}
				sc.Flows = append(sc.Flows, f)
				n++
			}
		}
	default:
		return sc, fmt.Errorf("topology %q: want dumbbell or chain", s.Topology)
	}
	if s.UDPFlows > 0 {
		if err := ValidateCrossTraffic(s.UDP); err != nil {
			return sc, fmt.Errorf("udp traffic: %v", err)
		}
	}
	for i := range s.UDPFlows {
		sc.Flows = append(sc.Flows, Flow{Name: fmt.Sprintf("udp%d", i), Count: 1, Mode: ModeUDP, Traffic: s.UDP,
			Stagger: s.Stagger})
	}
	return sc, sc.checkLimits(true)
}

// checkSettings checks the warm-up, the minimum RTO, the receiver's
// settings, the controllers and the recovery of s.
func (s Simple) checkSettings() error {
	if s.Warmup < 0 || s.Warmup >= s.Duration {
		return fmt.Errorf("warm-up %v: must be at least 0 and shorter than the duration %v", s.Warmup, s.Duration)
	}
	if s.MinRTO < 0 || s.MinRTO > MaxMinRTO {
		return fmt.Errorf("-min-rto %v: must be above 0 and at most %v (RFC 6298 §2.4: 1s; Linux: 200ms)", s.MinRTO, MaxMinRTO)
	}
	if err := s.checkReceiver(); err != nil {
		return err
	}
	for _, cc := range s.CC {
		if err := validateCC(cc); err != nil {
			return err
		}
	}
	if s.Recovery != "" {
		if err := validateRecovery(s.Recovery); err != nil {
			return err
		}
	}
	return nil
}

// checkFlags checks the counts, duration and rates of s (after defaults)
// against the limits (limits.go, link's bounds) before anything is built;
// errors name cclab sim's flags.
func (s Simple) checkFlags() error {
	for _, c := range []struct {
		flag      string
		v, lo, hi int
	}{
		{"-flows", s.Flows, 1, MaxFlows},
		{"-hops", s.Hops, 1, MaxHops},
		{"-cross", s.Cross, 0, MaxFlows},
		{"-udp-flows", s.UDPFlows, 0, MaxFlows},
	} {
		if c.v < c.lo || c.v > c.hi {
			return fmt.Errorf("%s %d: must be between %d and %d", c.flag, c.v, c.lo, c.hi)
		}
	}
	cross := 0
	if s.Topology == KindChain {
		cross = s.Hops * s.Cross
	}
	if n := s.Flows + cross + s.UDPFlows; n > MaxFlows {
		return fmt.Errorf("-flows, -cross, -udp-flows: %d flows in all, at most %d", n, MaxFlows)
	}
	if s.Stagger < 0 {
		return fmt.Errorf("-stagger %v: must not be negative", s.Stagger)
	}
	if s.Duration <= 0 || s.Duration > MaxDuration {
		return fmt.Errorf("-duration %v: must be positive and at most %v", s.Duration, MaxDuration)
	}
	for _, r := range []struct {
		flag string
		bps  float64
	}{{"-rate", s.Rate}, {"-access-rate", s.AccessRate}, {"-rev-rate", s.ReverseRate}} {
		if r.bps != 0 && !(r.bps < 0 && r.flag == "-rev-rate") && (r.bps < link.MinRate || r.bps > link.MaxRate) {
			return fmt.Errorf("%s %g bit/s: must be between %s and %s", r.flag, r.bps, units.FormatRate(link.MinRate), units.FormatRate(link.MaxRate))
		}
	}
	return nil
}

// validateStreamTraffic checks that spec is a stream generator.
func validateStreamTraffic(spec string) error {
	g, err := traffic.New(spec, traffic.Env{})
	if err != nil {
		return err
	}
	if _, ok := g.(traffic.StreamGen); !ok {
		return fmt.Errorf("traffic %q is a datagram generator; use it for UDP flows", spec)
	}
	return nil
}

// checkReceiver checks the stream receivers' settings, naming cclab sim's
// flags.
func (s Simple) checkReceiver() error {
	if s.AckEvery != 0 {
		if err := transport.CheckAckEvery(s.AckEvery); err != nil {
			return fmt.Errorf("-ack-every %d: %v", s.AckEvery, err)
		}
	}
	if s.DelayedAck != 0 && s.DelayedAck != transport.NoDelayedAck {
		if err := transport.CheckDelayedAck(s.DelayedAck); err != nil {
			return fmt.Errorf("-delayed-ack %v: %v", s.DelayedAck, err)
		}
	}
	if s.RecvWindow != 0 {
		if err := transport.CheckRecvWindow(s.RecvWindow, cmp.Or(s.MaxDatagram, transport.DefaultMaxDatagram)); err != nil {
			return fmt.Errorf("-recv-window %d: %v", s.RecvWindow, err)
		}
	}
	return nil
}
