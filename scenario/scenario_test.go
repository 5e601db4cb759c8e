package scenario

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"cclab/transport"
)

const goodScenario = `name: test
description: a small sweep
duration: 10s
seeds: [1, 2, 3]
interval: 50ms
backends: [sim, live]
topology:
  kind: dumbbell
  bottleneck:
    rate: 16Mbit
    delay: 7.5ms
    queue: droptail:20p
    loss: [0, 0.01]
  access: {delay: 0ms}
flows:
  - name: main
    cc: [reno, dca:x=6]
    traffic: greedy
baseline:
  cc: reno
`

func TestParseScenarioSweep(t *testing.T) {
	exp, err := ParseScenario("good.yaml", []byte(goodScenario))
	if err != nil {
		t.Fatalf("ParseScenario: %v", err)
	}
	if len(exp.Axes) != 2 || exp.Axes[0].Path != "topology.bottleneck.loss" || exp.Axes[1].Path != "flows[0].cc" {
		t.Fatalf("axes: got %+v, want topology.bottleneck.loss then flows[0].cc", exp.Axes)
	}
	if exp.Axes[0].Short != "loss" || exp.Axes[1].Short != "cc" {
		t.Errorf("short names: got %q %q, want loss cc", exp.Axes[0].Short, exp.Axes[1].Short)
	}
	if len(exp.Points) != 4 {
		t.Fatalf("points: got %d, want 2×2 = 4", len(exp.Points))
	}
	// First axis slowest.
	wantLoss := []string{"0", "0", "0.01", "0.01"}
	wantCC := []string{"reno", "dca:x=6", "reno", "dca:x=6"}
	for i, p := range exp.Points {
		s := p.Scenario
		if s.Topology.Hops[0].Loss != wantLoss[i] || s.Flows[0].CC != wantCC[i] {
			t.Errorf("point %d: got loss %q cc %q, want %q %q", i, s.Topology.Hops[0].Loss, s.Flows[0].CC, wantLoss[i], wantCC[i])
		}
		if v, _ := p.Get("cc"); v != wantCC[i] {
			t.Errorf("point %d Get(cc): got %q, want %q", i, v, wantCC[i])
		}
	}
	s := exp.Points[0].Scenario
	if s.Duration != 10*time.Second || s.Interval != 50*time.Millisecond || len(s.Seeds) != 3 || len(s.Backends) != 2 {
		t.Errorf("scalars: got %+v", s)
	}
	h := s.Topology.Hops[0]
	if h.Rate != 16e6 || h.Delay != 7500*time.Microsecond || h.Queue != "droptail:20p" {
		t.Errorf("bottleneck: got %+v, want 16e6 bit/s, 7.5ms, droptail:20p", h)
	}
	f := s.Flows[0]
	if f.Count != 1 || f.Mode != ModeStream || f.Recovery != transport.DefaultRecovery {
		t.Errorf("flow defaults: got %+v", f)
	}
	if len(s.Baseline) != 1 || s.Baseline[0].Axis != "cc" || s.Baseline[0].Value != "reno" {
		t.Errorf("baseline: got %+v", s.Baseline)
	}
	if exp.Points[0].Hash() == exp.Points[1].Hash() {
		t.Errorf("points 0 and 1 differ but hash the same")
	}
	p0 := exp.Points[0]
	p0.Scenario.Seeds = []uint64{9}
	if p0.Hash() != exp.Points[0].Hash() {
		t.Errorf("the hash depends on the seeds; it must not")
	}
}

func TestParseScenarioRunsAndOptional(t *testing.T) {
	src := `name: opt
duration: 1s
runs: 2
topology: {kind: chain, hops: [{rate: 10Mbit, delay: 5ms}, {rate: 5Mbit}]}
flows:
  - cc:
      - no-such-cc?
      - reno
      - "also-missing?"
`
	exp, err := ParseScenario("opt.yaml", []byte(src))
	if err != nil {
		t.Fatalf("ParseScenario: %v", err)
	}
	if len(exp.Points) != 1 || exp.Points[0].Scenario.Flows[0].CC != "reno" {
		t.Fatalf("points: got %+v, want one point with cc=reno", exp.Points)
	}
	if len(exp.Skipped) != 2 {
		t.Errorf("skipped: got %v, want the two missing controllers", exp.Skipped)
	}
	if got := exp.Axes[0].Values; len(got) != 1 || got[0] != "reno" {
		t.Errorf("axis values: got %v, want [reno]", got)
	}
	s := exp.Points[0].Scenario
	if len(s.Seeds) != 2 || s.Seeds[0] != 1 || s.Seeds[1] != 2 {
		t.Errorf("runs: 2 should give seeds [1 2], got %v", s.Seeds)
	}
	if len(s.Topology.Hops) != 2 || s.Topology.Hops[1].Rate != 5e6 {
		t.Errorf("chain hops: got %+v", s.Topology.Hops)
	}
}

// scenarioErrorCases are mistakes in scenario files with the line, the
// field path and the words their errors must carry.
var scenarioErrorCases = []struct {
	name    string
	src     string
	line    int
	field   string
	contain []string
}{
	{"unknown field", `name: x
duration: 1s
topology: {kind: dumbbell, bottleneck: {rate: 1Mbit}}
flows:
  - cc: reno
    colour: blue
`, 6, "flows[0].colour", []string{"unknown field", "allowed:", "cc", "traffic"}},
	{"bad rate", `name: x
duration: 1s
topology:
  kind: dumbbell
  bottleneck:
    rate: 16 furlongs
flows: [{cc: reno}]
`, 6, "topology.bottleneck.rate", []string{"16 furlongs", "16Mbit"}},
	{"unknown controller", `name: x
duration: 1s
topology: {kind: dumbbell, bottleneck: {rate: 1Mbit}}
flows:
  - cc: rneo
`, 5, "flows[0].cc", []string{"rneo", "allowed:", "reno"}},
	{"unknown controller in a sweep", `name: x
duration: 1s
topology: {kind: dumbbell, bottleneck: {rate: 1Mbit}}
flows:
  - cc:
      - reno
      - vgeas
`, 7, "flows[0].cc", []string{"vgeas", "allowed:"}},
	{"bad controller parameter", `name: x
duration: 1s
topology: {kind: dumbbell, bottleneck: {rate: 1Mbit}}
flows:
  - cc: "dca:bogus=1"
`, 5, "flows[0].cc", []string{"bogus", "allowed:"}},
	{"unknown queue", `name: x
duration: 1s
topology:
  kind: dumbbell
  bottleneck: {rate: 1Mbit, queue: "blue:3"}
flows: [{cc: reno}]
`, 5, "topology.bottleneck.queue", []string{"blue", "allowed:", "droptail"}},
	{"wrong type: mapping for a scalar", `name: x
duration: {seconds: 3}
topology: {kind: dumbbell, bottleneck: {rate: 1Mbit}}
flows: [{cc: reno}]
`, 2, "duration", []string{"got a mapping"}},
	{"wrong type: scalar for a list", `name: x
duration: 1s
topology: {kind: dumbbell, bottleneck: {rate: 1Mbit}}
flows: lots
`, 4, "flows", []string{"want a list of flows"}},
	{"wrong type: not an integer", `name: x
duration: 1s
runs: three
topology: {kind: dumbbell, bottleneck: {rate: 1Mbit}}
flows: [{cc: reno}]
`, 3, "runs", []string{`"three" is not an integer`}},
	{"unknown topology kind", `name: x
duration: 1s
topology:
  kind: star
  bottleneck: {rate: 1Mbit}
flows: [{cc: reno}]
`, 4, "topology.kind", []string{"star", "allowed: dumbbell, chain"}},
	{"bad loss", `name: x
duration: 1s
topology:
  kind: dumbbell
  bottleneck: {rate: 1Mbit, loss: 1.5}
flows: [{cc: reno}]
`, 5, "topology.bottleneck.loss", []string{"1.5"}},
	{"missing field", `name: x
topology: {kind: dumbbell, bottleneck: {rate: 1Mbit}}
flows: [{cc: reno}]
`, 1, "duration", []string{"missing required field"}},
	{"unknown backend", `name: x
duration: 1s
backends: [sim, omnet]
topology: {kind: dumbbell, bottleneck: {rate: 1Mbit}}
flows: [{cc: reno}]
`, 3, "backends", []string{"omnet", "allowed: sim, live, ns3"}},
	{"rate without a unit", `name: x
duration: 1s
topology:
  kind: dumbbell
  bottleneck:
    rate: 10
flows: [{cc: reno}]
`, 6, "topology.bottleneck.rate", []string{"without a unit", "10Mbit"}},
	{"rate in bytes per second", `name: x
duration: 1s
topology: {kind: dumbbell, bottleneck: {rate: 10MBps}}
flows: [{cc: reno}]
`, 3, "topology.bottleneck.rate", []string{"bytes per second", "80Mbit"}},
	{"size without a unit", `name: x
duration: 1s
topology: {kind: dumbbell, bottleneck: {rate: 1Mbit}, mtu: 1500}
flows: [{cc: reno}]
`, 3, "topology.mtu", []string{"without a unit", "1500B"}},
	{"RED min above max", `name: x
duration: 1s
topology:
  kind: chain
  hops:
    - {rate: 20Mbit}
    - {rate: 8Mbit, queue: "red:min=15,max=5"}
flows: [{cc: reno}]
`, 7, "topology.hops[1].queue", []string{"max=5p must exceed min=15p"}},
	{"RED min above max in a sweep", `name: x
duration: 1s
topology:
  kind: dumbbell
  bottleneck:
    rate: 8Mbit
    queue:
      - droptail:20p
      - "red:min=20,max=10"
flows: [{cc: reno}]
`, 9, "topology.bottleneck.queue", []string{"must exceed"}},
	{"bad duration", `name: x
duration: 15 seconds
topology: {kind: dumbbell, bottleneck: {rate: 1Mbit}}
flows: [{cc: reno}]
`, 2, "duration", []string{"15 seconds", "examples"}},
	{"negative duration", `name: x
duration: -1s
topology: {kind: dumbbell, bottleneck: {rate: 1Mbit}}
flows: [{cc: reno}]
`, 2, "duration", []string{`duration "-1s" must not be negative`}},
	{"udp flow with a stream generator", `name: x
duration: 1s
topology: {kind: dumbbell, bottleneck: {rate: 1Mbit}}
flows:
  - mode: udp
    traffic: greedy
`, 6, "flows[0].traffic", []string{"mode udp:", "not a datagram generator"}},
	{"udp flow with the default generator", `name: x
duration: 1s
topology: {kind: dumbbell, bottleneck: {rate: 1Mbit}}
flows:
  - mode: udp
`, 5, "flows[0].traffic", []string{"mode udp:", "greedy"}},
	{"datagram flow with a sized transfer", `name: x
duration: 1s
topology: {kind: dumbbell, bottleneck: {rate: 1Mbit}}
flows:
  - mode: datagram
    traffic: "greedy:bytes=1MB"
`, 6, "flows[0].traffic", []string{"datagram mode", "a byte count is not supported"}},
}

// TestScenarioErrors checks that each kind of mistake is reported with the
// file, the line of the mistake, the field path and the allowed values.
func TestScenarioErrors(t *testing.T) {
	for _, c := range scenarioErrorCases {
		_, err := ParseScenario("bad.yaml", []byte(c.src))
		if err == nil {
			t.Errorf("%s: got no error", c.name)
			continue
		}
		msg := err.Error()
		loc := "bad.yaml:" + strconv.Itoa(c.line) + ":"
		if !strings.HasPrefix(msg, loc) {
			t.Errorf("%s: got %q, want it to start with %q", c.name, msg, loc)
		}
		if !strings.Contains(msg, "field "+c.field+":") {
			t.Errorf("%s: got %q, want field %s named", c.name, msg, c.field)
		}
		for _, s := range c.contain {
			if !strings.Contains(msg, s) {
				t.Errorf("%s: got %q, want it to contain %q", c.name, msg, s)
			}
		}
	}
}

func TestScenarioSyntaxError(t *testing.T) {
	_, err := ParseScenario("syntax.yaml", []byte("name: x\n  duration: : :\n"))
	if err == nil || !strings.Contains(err.Error(), "syntax.yaml") || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("syntax error: got %v, want the file and line 2 named", err)
	}
}

func TestScenarioTooManyPoints(t *testing.T) {
	list := "[" + strings.Repeat("1ms, ", 21) + "1ms]" // 22 values
	src := "name: x\nduration: 1s\ntopology: {kind: dumbbell, bottleneck: {rate: 1Mbit, delay: " + list + "}, access: {delay: " + list + "}}\n" +
		"flows: [{start: " + list + "}]\n" // 22³ > MaxPoints
	_, err := ParseScenario("big.yaml", []byte(src))
	if err == nil || !strings.Contains(err.Error(), "more than") {
		t.Errorf("a sweep of 22³ points: got %v, want an error about its size", err)
	}
}

func TestScenarioFlowModes(t *testing.T) {
	exp, err := ParseScenario("m.yaml", []byte(`name: m
duration: 1s
topology: {kind: dumbbell, bottleneck: {rate: 1Mbit}}
flows:
  - {cc: [reno, ccid2]}
  - {mode: datagram}
  - {mode: datagram, cc: none, traffic: "cbr:rate=1Mbit"}
  - {mode: udp, traffic: "cbr:rate=1Mbit"}
`))
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{ModeStream + "/reno", ModeDatagram + "/ccid2", ModeDatagram + "/none", ModeUDP + "/"},
		{ModeDatagram + "/ccid2", ModeDatagram + "/ccid2", ModeDatagram + "/none", ModeUDP + "/"},
	}
	for i, p := range exp.Points {
		for j, f := range p.Scenario.Flows {
			if got := f.Mode + "/" + f.CC; got != want[i][j] {
				t.Errorf("point %d flow %d: got %s, want %s", i, j, got, want[i][j])
			}
		}
	}
	_, err = ParseScenario("m.yaml", []byte(`name: m
duration: 1s
topology: {kind: dumbbell, bottleneck: {rate: 1Mbit}}
flows:
  - mode: stream
    cc: ccid2
`))
	if err == nil || !strings.Contains(err.Error(), "m.yaml:5:") || !strings.Contains(err.Error(), "datagram mode only") {
		t.Errorf("ccid2 in stream mode: got %v, want an error at line 5 saying it is datagram-only", err)
	}
}

func TestDatagramRate(t *testing.T) {
	cases := []struct {
		spec string
		want float64
		ok   bool
	}{
		{"greedy", 0, true},
		{"cbr:rate=4Mbit", 4e6, true},
		{"greedy:10M", 0, false},
		{"onoff", 0, false},
	}
	for _, c := range cases {
		got, err := DatagramRate(c.spec)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("DatagramRate(%q): got %v, %v; want %v, ok %v", c.spec, got, err, c.want, c.ok)
		}
	}
}

// TestRecoveryAuto: recovery "auto" gives Reno its own fast recovery and
// every other controller NewReno's, at every point of a controller sweep.
func TestRecoveryAuto(t *testing.T) {
	src := `name: t
duration: 1s
topology:
  kind: dumbbell
  bottleneck: {rate: 10Mbit, delay: 5ms}
flows:
  - cc: [reno, "reno:iw=4", newreno, "dca:x=6", cubic]
    recovery: auto
`
	exp, err := ParseScenario("auto.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"reno": "reno", "reno:iw=4": "reno", "newreno": "newreno", "dca:x=6": "newreno", "cubic": "newreno"}
	if len(exp.Points) != len(want) {
		t.Fatalf("points: got %d, want %d", len(exp.Points), len(want))
	}
	for _, p := range exp.Points {
		f := p.Scenario.Flows[0]
		if f.Recovery != want[f.CC] {
			t.Errorf("cc %s, recovery auto: got %q, want %q", f.CC, f.Recovery, want[f.CC])
		}
	}
	if _, err := ParseScenario("bad.yaml", []byte(strings.Replace(src, "recovery: auto", "recovery: autox", 1))); err == nil || !strings.Contains(err.Error(), `"auto"`) {
		t.Errorf("unknown recovery: got %v, want an error that also offers \"auto\"", err)
	}
}
