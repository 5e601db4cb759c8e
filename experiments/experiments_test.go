package experiments_test

import (
	"os"
	"slices"
	"strings"
	"testing"

	"cclab/eval"
	"cclab/experiments"
	"cclab/report/studies"
	"cclab/scenario"
	"cclab/transport"
)

// TestBuiltinsParse checks every built-in scenario parses and validates.
func TestBuiltinsParse(t *testing.T) {
	names := experiments.Names()
	if len(names) == 0 {
		t.Fatal("no built-in experiments")
	}
	for _, n := range names {
		src, ok := experiments.Source(n)
		if !ok {
			t.Fatalf("%s: no source", n)
		}
		exp, err := scenario.ParseScenario(n+".yaml", src)
		if err != nil {
			t.Errorf("%s: %v", n, err)
			continue
		}
		if exp.Name != n {
			t.Errorf("%s: scenario name %q differs from the file name", n, exp.Name)
		}
	}
}

// TestLossResilience checks the experiment matches its definition (docs/experiments.md).
func TestLossResilience(t *testing.T) {
	src, _ := experiments.Source("loss-resilience")
	exp, err := scenario.ParseScenario("loss-resilience.yaml", src)
	if err != nil {
		t.Fatal(err)
	}
	s := exp.Base
	h := s.Topology.Hops[0]
	if s.Topology.Kind != scenario.KindDumbbell || h.Rate != 16e6 || 2*h.Delay+2*s.Topology.Access.Delay != 15e6 || h.Queue != "droptail:20p" || s.Duration != 15e9 {
		t.Errorf("topology: got %+v %+v, want dumbbell 16 Mbit/s, 15 ms RTT, droptail:20p, 15 s", s.Topology, s.Duration)
	}
	want := []string{"0", "0.001", "0.002", "0.005", "0.01", "0.02", "0.05", "0.1"}
	if got := exp.Axes[0].Values; len(got) != len(want) {
		t.Errorf("loss values: got %v, want %v", got, want)
	}
	if got := exp.Axes[1].Values; len(got) == 0 || got[0] != "reno" {
		t.Errorf("controllers: got %v, want reno first", got)
	}
	if len(s.Flows) != 1 || s.Flows[0].Count != 1 || s.Flows[0].Traffic != "greedy" {
		t.Errorf("flows: got %+v, want one greedy flow", s.Flows)
	}
}

// TestDocExamplesOwnNames: a scenario example in docs/scenarios.md must not
// reuse a built-in experiment's name (a reader who copies it would file its
// results under the built-in experiment).
func TestDocExamplesOwnNames(t *testing.T) {
	b, err := os.ReadFile("../docs/scenarios.md")
	if err != nil {
		t.Fatal(err)
	}
	builtin := map[string]bool{}
	for _, n := range experiments.Names() {
		builtin[n] = true
	}
	found := 0
	for _, block := range strings.Split(string(b), "```yaml")[1:] {
		block, _, _ = strings.Cut(block, "```")
		for _, line := range strings.Split(block, "\n") {
			name, ok := strings.CutPrefix(line, "name:")
			if !ok {
				continue
			}
			name, _, _ = strings.Cut(name, "#")
			name = strings.TrimSpace(name)
			found++
			if builtin[name] {
				t.Errorf("docs/scenarios.md: an example is named %q, a built-in experiment's name", name)
			}
		}
	}
	if found == 0 {
		t.Errorf("docs/scenarios.md: no example with a name found")
	}
}

// TestFullFormsHaveLiveIntervals: the full form of every built-in experiment
// that runs live gives each point at least 3 live seeds, so its live results
// have confidence intervals (quick forms may run one).
func TestFullFormsHaveLiveIntervals(t *testing.T) {
	for _, n := range experiments.Names() {
		if strings.HasSuffix(n, "-quick") {
			continue
		}
		src, _ := experiments.Source(n)
		exp, err := scenario.ParseScenario(n+".yaml", src)
		if err != nil {
			t.Fatal(err)
		}
		live := 0 // points that run live (with cases, not every point does)
		for _, p := range exp.Points {
			if slices.Contains(p.Scenario.Backends, scenario.BackendLive) {
				live++
			}
		}
		if got := len(eval.Specs(exp, []string{scenario.BackendLive})); got > 0 && got < 3*live {
			t.Errorf("%s: %d live runs for %d live points, want at least 3 seeds per point", n, got, live)
		}
	}
}

// TestDCAStudy checks dca-vs-reno against its definition (docs/experiments.md): Table 8-1
// with 20 seeds of 500 s on both path models (every TCP flow ACKed per
// segment, as ns-2's TCPSink), Tables 8-2/8-3 with 5 seeds,
// the variants, the Fig. 8-4 share sweep at a link of 2,200 flows, 200-packet
// buffers, and a live case; the quick form has the same cases.
func TestDCAStudy(t *testing.T) {
	for _, name := range []string{"dca-vs-reno", "dca-vs-reno-quick"} {
		src, _ := experiments.Source(name)
		exp, err := scenario.ParseScenario(name+".yaml", src)
		if err != nil {
			t.Fatal(err)
		}
		full := name == "dca-vs-reno"
		points := map[string]int{}
		seeds := map[string]int{}
		ccs := map[string]bool{}
		for _, p := range exp.Points {
			c, _ := p.Get(scenario.CaseAxis)
			points[c]++
			seeds[c] = len(p.Scenario.Seeds)
			if cc, ok := p.Get("cc"); ok {
				ccs[cc] = true
			}
			s := p.Scenario
			if s.Study != scenario.StudyDCA {
				t.Errorf("%s %s: study %q, want dca", name, p.Label(exp.Axes), s.Study)
			}
			if c == studies.DCACaseShare {
				n := len(s.Flows)
				for _, g := range s.Topology.Hops[0].Background {
					if g.Mode != scenario.ModeUDP {
						n += g.Count
					}
				}
				if want := map[bool]int{true: 2200, false: 440}[full]; n != want {
					t.Errorf("%s: the share link has %d TCP flows, want %d", name, n, want)
				}
				continue
			}
			// Table 8-1's models (cases single, pair, variants): every TCP
			// flow is ACKed per segment, as ns-2's Agent/TCPSink.
			if c == studies.DCACaseSingle || c == studies.DCACasePair || c == studies.DCACaseVariants {
				fl := slices.Clone(s.Flows)
				for _, h := range s.Topology.Hops {
					fl = append(fl, h.Background...)
				}
				for _, f := range fl {
					if f.Mode != scenario.ModeUDP && (f.AckEvery != 1 || f.DelayedAck != transport.NoDelayedAck) {
						t.Errorf("%s %s flow %s: ack_every %d, delayed_ack %v; want 1 and 0s (ns-2's TCPSink)", name, p.Label(exp.Axes), f.Name, f.AckEvery, f.DelayedAck)
					}
				}
			}
			for i, h := range s.Topology.Hops {
				if h.Queue != "droptail:200p" || len(h.Background) == 0 {
					t.Errorf("%s %s hop %d: queue %s, %d background groups; want droptail:200p and a background", name, p.Label(exp.Axes), i, h.Queue, len(h.Background))
				}
			}
			if full && c != studies.DCACaseLive && s.Duration != 500e9 {
				t.Errorf("%s %s: duration %v, want 500s", name, p.Label(exp.Axes), s.Duration)
			}
		}
		want := map[string]int{studies.DCACaseSingle: 4, studies.DCACasePair: 4, studies.DCACaseVariants: 14, studies.DCACaseShare: 5, studies.DCACaseLive: 2}
		for c, n := range want {
			if points[c] != n {
				t.Errorf("%s case %s: %d points, want %d", name, c, points[c], n)
			}
		}
		// Table 8-1 runs 20 seeds; the variants pair with its first 10.
		if full && (seeds[studies.DCACaseSingle] != 20 || seeds[studies.DCACasePair] != 5 || seeds[studies.DCACaseVariants] != 10) {
			t.Errorf("%s: seeds %v, want 20 for single, 10 for variants, 5 for pair", name, seeds)
		}
		for _, cc := range []string{"reno", "dca:tick=10ms", "dca:tick=10ms,reduction=0.25", "dca:tick=10ms,reduction=0.125",
			"dca:tick=10ms,decision=rtt", "dca:tick=10ms,decision=2rtt", "dca:tick=10ms,x=6,w=20", "dca:tick=10ms,x=2,w=200"} {
			if !ccs[cc] {
				t.Errorf("%s: no point with cc %s", name, cc)
			}
		}
	}
}

// TestDCCPTCP checks the dccp-tcp study against the SAINT 2005 setup: its
// cases, the 10 Mbit/s bottleneck, 60 s runs with the last
// 55 s measured, and CCID3 next to CCID2 in every comparison.
func TestDCCPTCP(t *testing.T) {
	for _, name := range []string{"dccp-tcp", "dccp-tcp-quick"} {
		src, ok := experiments.Source(name)
		if !ok {
			t.Fatalf("%s: not embedded", name)
		}
		exp, err := scenario.ParseScenario(name+".yaml", src)
		if err != nil {
			t.Fatal(err)
		}
		cases := map[string]int{}
		for _, p := range exp.Points {
			s := p.Scenario
			cases[s.Case]++
			if s.Study != scenario.StudyDCCPTCP || s.Duration != 60e9 || s.Warmup != 5e9 || s.Topology.Hops[0].Rate != 10e6 {
				t.Errorf("%s %s: study %q duration %v warmup %v rate %v, want dccp-tcp, 60 s, 5 s, 10 Mbit/s",
					name, p.Label(exp.Axes), s.Study, s.Duration, s.Warmup, s.Topology.Hops[0].Rate)
			}
		}
		want := map[string]int{"udp-vs-dccp": 3, "tcp-first": 6, "dccp-first": 6, "ack-ratio": 1, "delay": 8, "buffer": 8}
		for c, n := range want {
			if cases[c] != n {
				t.Errorf("%s: case %s has %d points, want %d", name, c, cases[c], n)
			}
		}
		if len(cases) != len(want) {
			t.Errorf("%s: cases %v, want %v", name, cases, want)
		}
	}
}

// TestFairQueueing checks the fair-queueing study against the CSFQ paper's
// setup: every case run with the five disciplines (a 64-packet
// buffer, CSFQ's K = K_alpha = K_c = 100 ms), 1 UDP or ON/OFF source with 19
// TCP flows, 60 short transfers, 1-5 congested links, 3 layered flows.
func TestFairQueueing(t *testing.T) {
	for _, name := range []string{"fair-queueing", "fair-queueing-quick"} {
		src, _ := experiments.Source(name)
		exp, err := scenario.ParseScenario(name+".yaml", src)
		if err != nil {
			t.Fatal(err)
		}
		cases := map[string]int{}
		queues := map[string]bool{}
		for _, p := range exp.Points {
			s := p.Scenario
			cases[s.Case]++
			if s.Study != scenario.StudyFairQueueing {
				t.Errorf("%s: study %q", name, s.Study)
			}
			for _, h := range s.Topology.Hops {
				queues[h.Queue] = true
			}
			n := 0
			for _, f := range s.Flows {
				n += f.Count
			}
			want := map[string]int{"udp-tcp": 20, "onoff": 20, "short-tcp": 61, "layered": 4}[s.Case]
			if want > 0 && n != want {
				t.Errorf("%s %s: %d flows, want %d", name, s.Case, n, want)
			}
		}
		for _, c := range []string{"udp-tcp", "onoff", "short-tcp", "layered"} {
			if cases[c] != 5 {
				t.Errorf("%s: case %s has %d points, want 5 (one per discipline)", name, c, cases[c])
			}
		}
		for _, kind := range []string{"udp", "tcp"} {
			for _, q := range []string{"fifo", "red", "fred", "drr", "csfq"} {
				if c := "multihop-" + kind + "-" + q; cases[c] != 5 {
					t.Errorf("%s: case %s has %d points, want 5 (K = 1..5)", name, c, cases[c])
				}
			}
		}
		for _, q := range []string{"droptail:64p", "red:min=16,max=32,maxp=0.1,wq=0.002,limit=64p", "fred:min=16,max=32,maxp=0.1,wq=0.002,limit=64p",
			"drr:quantum=1000,limit=64p", "csfq:k=100ms,kalpha=100ms,kc=100ms,limit=64p"} {
			if !queues[q] {
				t.Errorf("%s: discipline %s not used", name, q)
			}
		}
	}
}

// TestETHBulk checks eth-bulk against its definition (docs/experiments.md): every ETH
// variant (studies.ETHVariants) on every profile of both path groups (intra,
// inter) as sized bulk transfers, the variants' specs valid, the main cases
// in the simulator until done, and live cases through the relay beside
// their simulator twins.
func TestETHBulk(t *testing.T) {
	for _, name := range []string{"eth-bulk", "eth-bulk-quick"} {
		src, _ := experiments.Source(name)
		exp, err := scenario.ParseScenario(name+".yaml", src)
		if err != nil {
			t.Fatal(err)
		}
		variants := map[bool]map[string]map[string]bool{false: {}, true: {}} // live case → variant → profiles
		groups := map[string]bool{}
		for _, p := range exp.Points {
			s := p.Scenario
			live := strings.HasPrefix(s.Case, studies.ETHLiveCasePrefix)
			if s.Study != scenario.StudyETH {
				t.Errorf("%s %s: study %q, want %s", name, p.Label(exp.Axes), s.Study, scenario.StudyETH)
			}
			if len(s.Flows) != 1 || !strings.HasPrefix(s.Flows[0].Traffic, "greedy:bytes=") || s.Flows[0].Count != 1 {
				t.Fatalf("%s %s: flows %+v, want one sized bulk transfer", name, p.Label(exp.Axes), s.Flows)
			}
			if live != slices.Contains(s.Backends, scenario.BackendLive) || s.UntilDone == live {
				t.Errorf("%s %s: backends %v until_done %v: want live only in the live cases, until_done elsewhere", name, p.Label(exp.Axes),
					s.Backends, s.UntilDone)
			}
			topo, _ := p.Get("topology")
			group, _, _ := strings.Cut(topo, "-")
			groups[group] = true
			v := studies.ETHVariant(s.Flows[0].CC, s.Flows[0].Recovery)
			if variants[live][v] == nil {
				variants[live][v] = map[string]bool{}
			}
			variants[live][v][topo] = true
		}
		if !groups["intra"] || !groups["inter"] || len(groups) != 2 {
			t.Errorf("%s: path groups %v, want intra and inter", name, groups)
		}
		for _, live := range []bool{false, true} {
			for _, v := range studies.ETHVariants {
				want := map[bool]int{false: 4, true: 2}[live]
				if got := len(variants[live][v]); got != want {
					t.Errorf("%s (live cases %v): variant %s on %d profiles, want %d", name, live, v, got, want)
				}
			}
			if len(variants[live]) != len(studies.ETHVariants) {
				t.Errorf("%s (live cases %v): variants %v, want exactly %v", name, live, variants[live], studies.ETHVariants)
			}
		}
	}
}
