package plan

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"cclab/clock"
	"cclab/qdisc"
	"cclab/scenario"
)

func parse(t *testing.T, src string) scenario.Scenario {
	t.Helper()
	exp, err := scenario.ParseScenario("test.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return exp.Points[0].Scenario
}

const chain = `name: plan-test
duration: 10s
warmup: 2s
topology:
  kind: chain
  hops:
    - {rate: 20Mbit, delay: 2ms, queue: droptail:50p, cross: ["cbr:rate=2Mbit"]}
    - {rate: 8Mbit, delay: 3ms, queue: droptail:30kB, rev_rate: unlimited,
       cross: ["cbr:rate=1Mbit", {traffic: "cbr:rate=500kbit", dir: rev}]}
    - {rate: 8Mbit, delay: 5ms, queue: "red:min=5,max=15,maxp=0.1,limit=60p", loss: 0.01}
  access: {delay: 1ms}
flows:
  - {name: e2e, count: 2, cc: reno}
  - {name: mid, cc: cubic, path: 1-2, access_delay: 0ms, stop: 8s}
  - {name: d, cc: ccid2, traffic: "cbr:rate=1Mbit", path: 0}
`

// TestPlanChain checks every identity and derived number of a chain's plan
// against the scenario: link IDs, names and directions, the reverse path
// order, queue limits, cross traffic, flow numbers and paths, base RTTs,
// bottleneck and random stream names.
func TestPlanChain(t *testing.T) {
	p, err := New(parse(t, chain), 42)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(p.Routers, " "); got != "q0 q1 q2 q3" {
		t.Errorf("routers %q, want q0 q1 q2 q3", got)
	}
	type hopWant struct {
		id         int32
		name       string
		rate       float64
		delay      time.Duration
		limit      int
		cross      int
		bottleneck bool
	}
	want := [2][]hopWant{
		{{0, "q0>q1", 20e6, 2 * time.Millisecond, 50, 1, false}, {2, "q1>q2", 8e6, 3 * time.Millisecond, 0, 1, true},
			{4, "q2>q3", 8e6, 5 * time.Millisecond, 60, 0, false}},
		{{5, "q3>q2", 8e6, 5 * time.Millisecond, 60, 0, false}, {3, "q2>q1", 0, 3 * time.Millisecond, 0, 1, false},
			{1, "q1>q0", 20e6, 2 * time.Millisecond, 50, 0, false}},
	}
	for dir := range want {
		if len(p.Hops[dir]) != len(want[dir]) {
			t.Fatalf("%s hops: got %d, want %d", DirNames[dir], len(p.Hops[dir]), len(want[dir]))
		}
		for i, w := range want[dir] {
			h := p.Hops[dir][i]
			got := hopWant{h.ID, h.Name, h.Rate, h.Link.Delay, h.QueueLimit, len(h.Cross), h.Bottleneck}
			if got != w || h.Dir != dir || h.Index != i || h.Stream != "link/"+w.name {
				t.Errorf("%s hop %d: got %+v (dir %d index %d stream %q), want %+v", DirNames[dir], i, got, h.Dir, h.Index, h.Stream, w)
			}
		}
	}
	if p.Hops[Fwd][2].Link.Loss != "0.01" || p.Hops[Rev][0].Link.Loss != "" {
		t.Errorf("loss: forward %q reverse %q, want the forward direction only", p.Hops[Fwd][2].Link.Loss, p.Hops[Rev][0].Link.Loss)
	}
	if p.Bottleneck != 2 || p.BottleneckRate != 8e6 {
		t.Errorf("bottleneck %d at %v bit/s, want link 2 (the first 8 Mbit/s hop)", p.Bottleneck, p.BottleneckRate)
	}
	if want := 2*time.Millisecond + 2*(2+3+5)*time.Millisecond; p.BaseRTT != want {
		t.Errorf("base RTT %v, want %v", p.BaseRTT, want)
	}
	cr := []Cross{p.Hops[Fwd][0].Cross[0], p.Hops[Fwd][1].Cross[0], p.Hops[Rev][1].Cross[0]}
	for i, c := range cr {
		if c.Key != CrossKeyBase+uint64(i) || c.Stream != c.Name || !strings.HasPrefix(c.Name, "cross/") {
			t.Errorf("cross %d: %+v, want key %#x and a stream named after it", i, c, CrossKeyBase+i)
		}
	}
	if cr[2].Traffic != "cbr:rate=500kbit" || cr[2].Name != "cross/q2>q1/0" {
		t.Errorf("reverse cross traffic: %+v", cr[2])
	}
	type flowWant struct {
		id          uint64
		name        string
		first, last int
		rtt         time.Duration
		rate        float64
		fwd, rev    string
	}
	fw := []flowWant{
		{1, "e2e.0", 0, 2, 22 * time.Millisecond, 8e6, "[0 2 4]", "[5 3 1]"},
		{2, "e2e.1", 0, 2, 22 * time.Millisecond, 8e6, "[0 2 4]", "[5 3 1]"},
		{3, "mid", 1, 2, 16 * time.Millisecond, 8e6, "[2 4]", "[5 3]"},
		{4, "d", 0, 0, 6 * time.Millisecond, 20e6, "[0]", "[1]"},
	}
	if len(p.Flows) != len(fw) {
		t.Fatalf("flows: got %d, want %d", len(p.Flows), len(fw))
	}
	for i, w := range fw {
		f := p.Flows[i]
		got := flowWant{f.ID, f.Name, f.First, f.Last, f.BaseRTT, f.BottleneckRate, fmt.Sprint(f.Path[Fwd]), fmt.Sprint(f.Path[Rev])}
		if got != w {
			t.Errorf("flow %d: got %+v, want %+v", i, got, w)
		}
		if f.TrafficStream != "traffic/"+w.name || f.DataStream != "data/"+w.name {
			t.Errorf("flow %s streams %q %q", w.name, f.TrafficStream, f.DataStream)
		}
	}
	if p.Flows[3].Mode != scenario.ModeDatagram || p.Flows[3].Rate != 1e6 || p.Flows[2].Stop != 8*time.Second {
		t.Errorf("flow details: %+v, %+v", p.Flows[3], p.Flows[2])
	}

	info := p.RunInfo(clock.Start)
	if info.Start != clock.Start.Add(2*time.Second) || info.End != clock.Start.Add(10*time.Second) || info.Bottleneck != 2 {
		t.Errorf("run info window %v..%v bottleneck %d", info.Start, info.End, info.Bottleneck)
	}
	for i, l := range info.Links {
		if l.Index != int32(i) || l.Name != p.Hop(l.Index).Name || l.EpochThreshold != scenario.DefaultEpochThreshold {
			t.Errorf("link info %d: %+v", i, l)
		}
	}
	if f := info.Flows[2]; f.ID != 3 || f.Stop != clock.Start.Add(8*time.Second) || f.BaseRTT != 16*time.Millisecond {
		t.Errorf("flow info: %+v", f)
	}
	_, links := p.Describe()
	if !strings.HasPrefix(links[2].Info, "bottleneck rate=8Mbit") || !strings.Contains(links[0].Info, "cross=cbr:rate=2Mbit") {
		t.Errorf("link descriptions: %+v", links)
	}
}

// TestPlanDumbbell: the dumbbell keeps the link IDs and names every stored
// result has (0 left>right, 1 right>left); staggered starts come from each
// flow's own stream, so they depend on the seed and the flow's name only.
func TestPlanDumbbell(t *testing.T) {
	sc := parse(t, `name: d
duration: 5s
topology: {kind: dumbbell, bottleneck: {rate: 10Mbit, delay: 10ms}}
flows: [{name: a, stagger: 1s}, {name: b, stagger: 1s}]
`)
	p, err := New(sc, 1)
	if err != nil {
		t.Fatal(err)
	}
	if h := p.Hops[Fwd][0]; h.ID != 0 || h.Name != "left>right" || !h.Bottleneck || h.QueueLimit != 100 {
		t.Errorf("forward hop %+v", h)
	}
	if h := p.Hops[Rev][0]; h.ID != 1 || h.Name != "right>left" {
		t.Errorf("reverse hop %+v", h)
	}
	a, b := p.Flows[0].Start, p.Flows[1].Start
	if a <= 0 || a >= time.Second || b <= 0 || b >= time.Second || a == b {
		t.Errorf("staggered starts %v and %v, want two different offsets in (0, 1s)", a, b)
	}
	sc.Flows[1].CC = "cubic" // another flow's change leaves a's draw alone
	q, _ := New(sc, 1)
	r, _ := New(sc, 2)
	if q.Flows[0].Start != a || r.Flows[0].Start == a {
		t.Errorf("flow a's start: %v (b changed), %v (seed 2); want %v and another", q.Flows[0].Start, r.Flows[0].Start, a)
	}
}

func TestQueueLimit(t *testing.T) {
	cases := []struct {
		spec string
		want int
	}{
		{"droptail:20p", 20},
		{"droptail:30kb", 0},
		{"red:min=5,max=15,maxp=0.1,limit=60p", 60},
		{"nonsense", 0},
	}
	for _, c := range cases {
		if got := QueueLimit(c.spec); got != c.want {
			t.Errorf("QueueLimit(%q): got %d, want %d", c.spec, got, c.want)
		}
	}
}

const background = `name: bg-test
duration: 10s
topologies:
  two:
    kind: chain
    hops:
      - rate: 10Mbit
        delay: 5ms
        queue: droptail:200p
        background:
          - {name: big, count: 3, cc: reno, traffic: greedy, window: 64KiB, rtt: 60ms}
          - {name: u, count: 2, mode: udp, traffic: "udponoff:rate=1Mbit"}
      - rate: 20Mbit
        delay: 10ms
        background:
          - {count: 4, cc: reno, alt_cc: dca, alt_share: [0, 0.5], traffic: "onoff:size=pareto(scale=7200/1.5),off=uniform(2s/6s)", rtt: 100ms}
topology: two
flows:
  - {name: m, cc: [reno, dca], rtt: 80ms, window: 12000B}
`

// TestPlanBackground checks a hop's background groups: stream groups become
// flows numbered after the scenario's, crossing their hop only, named after
// it, with the access delay their rtt asks for, the alternative controller
// on the first alt_share of the members, and no place in RunInfo or
// Describe; a udp group becomes one cross-traffic source per member.
func TestPlanBackground(t *testing.T) {
	exp, err := scenario.ParseScenario("bg.yaml", []byte(background))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(exp.Points), 4; got != want {
		t.Fatalf("points: got %d, want %d (cc × alt_share)", got, want)
	}
	sc := exp.Points[3].Scenario // cc dca, alt_share 0.5
	p, err := New(sc, 1)
	if err != nil {
		t.Fatal(err)
	}
	type fl struct {
		name, cc   string
		first      int
		acc, rtt   time.Duration
		window     int
		background bool
		metricID   uint64
	}
	want := []fl{
		{"m", "dca", 0, 25 * time.Millisecond, 80 * time.Millisecond, 12000, false, 1},
		{"q0>q1/big.0", "reno", 0, 25 * time.Millisecond, 60 * time.Millisecond, 64 << 10, true, 0},
		{"q0>q1/big.1", "reno", 0, 25 * time.Millisecond, 60 * time.Millisecond, 64 << 10, true, 0},
		{"q0>q1/big.2", "reno", 0, 25 * time.Millisecond, 60 * time.Millisecond, 64 << 10, true, 0},
		{"q1>q2/bg0.0", "dca", 1, 40 * time.Millisecond, 100 * time.Millisecond, 0, true, 0},
		{"q1>q2/bg0.1", "dca", 1, 40 * time.Millisecond, 100 * time.Millisecond, 0, true, 0},
		{"q1>q2/bg0.2", "reno", 1, 40 * time.Millisecond, 100 * time.Millisecond, 0, true, 0},
		{"q1>q2/bg0.3", "reno", 1, 40 * time.Millisecond, 100 * time.Millisecond, 0, true, 0},
	}
	if len(p.Flows) != len(want) {
		t.Fatalf("flows: got %d, want %d", len(p.Flows), len(want))
	}
	for i, w := range want {
		f := p.Flows[i]
		got := fl{f.Name, f.CC, f.First, f.AccessDelay, f.BaseRTT, f.Window, f.Background, f.MetricID()}
		if got != w || f.ID != uint64(i+1) || f.Last != f.First && f.Background {
			t.Errorf("flow %d: got %+v (ID %d, last %d), want %+v", i, got, f.ID, f.Last, w)
		}
	}
	cross := p.Hops[Fwd][0].Cross
	if len(cross) != 2 || cross[0].Name != "bg/q0>q1/u.0" || cross[1].Stream != "bg/q0>q1/u.1" ||
		cross[0].Key != CrossKeyBase || cross[1].Key != CrossKeyBase+1 {
		t.Errorf("hop 0 cross: got %+v, want two sources bg/q0>q1/u.0 and .1 with keys base, base+1", cross)
	}
	if info := p.RunInfo(clock.Start); len(info.Flows) != 1 || info.Flows[0].ID != 1 {
		t.Errorf("RunInfo flows: got %+v, want the measured flow 1 only", info.Flows)
	}
	if flows, _ := p.Describe(); len(flows) != 1 {
		t.Errorf("Describe: got %d flows, want 1", len(flows))
	}
	// Common random numbers: the members' traffic streams do not depend on
	// their controller.
	p0, _ := New(exp.Points[1].Scenario, 1) // alt_share 0, cc dca
	for i := range p.Flows {
		if p.Flows[i].TrafficStream != p0.Flows[i].TrafficStream || p.Flows[i].Start != p0.Flows[i].Start {
			t.Errorf("flow %d: streams differ between alt_share 0 and 0.5", i)
		}
	}
	if p0.Flows[4].CC != "reno" {
		t.Errorf("alt_share 0: got cc %s, want reno", p0.Flows[4].CC)
	}
}

// TestPlanBackgroundErrors checks the refusals of an rtt below the hops'
// delays.
func TestPlanBackgroundErrors(t *testing.T) {
	src := strings.Replace(background, "rtt: 60ms", "rtt: 5ms", 1)
	if _, err := New(parse(t, src), 1); err == nil || !strings.Contains(err.Error(), "rtt 5ms is below") {
		t.Errorf("got %v, want an error naming rtt 5ms below the hops' delays", err)
	}
}

// TestQueueLimitEveryDiscipline: every registered discipline's packet limit
// reaches the plan.
func TestQueueLimitEveryDiscipline(t *testing.T) {
	for _, name := range qdisc.Registry.Names() {
		if got := QueueLimit(name + ":limit=41p"); got != 41 {
			t.Errorf("QueueLimit(%q): got %d, want 41", name+":limit=41p", got)
		}
	}
}

// TestPLPMTUMax: a flow that discovers its datagram size probes up to the
// topology's MTU (the link default without one) less the IPv4 and UDP
// headers, and not at all when nothing larger than its datagram fits.
func TestPLPMTUMax(t *testing.T) {
	for _, c := range []struct{ mtu, datagram, want int }{
		{0, 0, 1472},
		{1500, 0, 1472},
		{9000, 1400, 8972},
		{1400, 0, 1372},
		{1228, 0, 0},
		{1500, 1472, 0},
		{1 << 16, 0, 65508},
	} {
		if got := PLPMTUMax(c.mtu, c.datagram); got != c.want {
			t.Errorf("PLPMTUMax(mtu %d, datagram %d) = %d, want %d", c.mtu, c.datagram, got, c.want)
		}
	}
}
