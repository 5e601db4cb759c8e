package plan_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	liverun "cclab/backend/live"
	simrun "cclab/backend/sim"
	"cclab/plan"
	"cclab/scenario"
)

// TestBackendsAgree builds the simulator's topology and the live relay's
// configuration from one plan and checks that both realize it: the same link
// IDs with the same names, link models and random streams, every flow's
// path through the hops in both directions, and the cross traffic of each
// hop. (Both describe the run to metrics.Collector with the plan's RunInfo;
// the multi-hop tests of each backend check the measured identities.)
func TestBackendsAgree(t *testing.T) {
	exp, err := scenario.ParseScenario("agree.yaml", []byte(`name: agree
duration: 5s
topology:
  kind: chain
  hops:
    - {rate: 20Mbit, delay: 2ms, queue: droptail:50p, cross: ["cbr:rate=2Mbit"]}
    - {rate: 8Mbit, delay: 3ms, queue: droptail:30p, loss: 0.01,
       cross: ["cbr:rate=1Mbit", {traffic: "cbr:rate=500kbit", dir: rev}]}
    - {rate: 12Mbit, delay: 4ms, queue: "red:min=5,max=15,maxp=0.1,limit=60p", rev_rate: unlimited}
  access: {delay: 1ms}
flows:
  - {name: e2e, count: 2, cc: reno}
  - {name: mid, cc: cubic, path: 1-2, access_delay: 0ms}
  - {name: first, cc: ccid2, path: 0}
  - {name: last, cc: reno, path: 2, access_delay: 0ms}
`))
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.New(exp.Points[0].Scenario, 3)
	if err != nil {
		t.Fatal(err)
	}
	k := len(p.Hops[plan.Fwd])

	// The simulator.
	s, err := simrun.Build(p, simrun.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range p.Links() {
		l := s.Net.Links[h.ID]
		if l.ID != h.ID || l.Name != h.Name || l.From.Name != h.From || l.To.Name != h.To {
			t.Errorf("sim link %d: %s %s→%s, want the plan's %s %s→%s", h.ID, l.Name, l.From.Name, l.To.Name, h.Name, h.From, h.To)
		}
		if c := l.Config(); c.Rate != h.Link.Rate || c.Delay != h.Link.Delay || c.Queue != h.Link.Queue || c.Loss != h.Link.Loss {
			t.Errorf("sim link %s: config %+v, want the plan's %+v", h.Name, c, h.Link)
		}
	}
	for i, f := range p.Flows {
		for dir, ends := range [2][2]int{{0, 1}, {1, 0}} {
			nodes := [2]string{fmt.Sprint("s", i), fmt.Sprint("r", i)}
			path := s.Net.Path(s.Net.Node(nodes[ends[0]]), s.Net.Node(nodes[ends[1]]))
			var ids []int32
			for _, l := range path[1 : len(path)-1] { // without the two access links
				ids = append(ids, l.ID)
			}
			if !slices.Equal(ids, f.Path[dir]) {
				t.Errorf("sim flow %d (%s) %s path: links %v, want the plan's %v", f.ID, f.Name, plan.DirNames[dir], ids, f.Path[dir])
			}
		}
		if acc := s.Net.Path(s.Senders[i], s.Receivers[i])[0].Config().Delay; acc != f.AccessDelay {
			t.Errorf("sim flow %s: access delay %v, want %v", f.Name, acc, f.AccessDelay)
		}
	}

	// The live relay.
	cfg, entries, err := liverun.RelayConfig(p, "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	for dir := range p.Hops {
		for i, h := range p.Hops[dir] {
			if cfg.Links[dir][i] != h.ID || cfg.Streams[dir][i] != h.Stream {
				t.Errorf("relay %s hop %d: link %d stream %q, want %d %q", plan.DirNames[dir], i, cfg.Links[dir][i], cfg.Streams[dir][i], h.ID, h.Stream)
			}
			lc, want := cfg.Hops[dir][i], h.Link
			if (dir == plan.Fwd && i == 0) || (dir == plan.Rev && i == k-1) {
				want.Delay += p.Flows[0].AccessDelay // the access delay, folded into the first hop each way
			}
			if lc.Rate != want.Rate || lc.Delay != want.Delay || lc.Queue != want.Queue || lc.Loss != want.Loss {
				t.Errorf("relay %s hop %d: %+v, want %+v", plan.DirNames[dir], i, lc, want)
			}
		}
	}
	var cross []string
	for _, c := range cfg.Cross {
		cross = append(cross, fmt.Sprintf("%s/%d/%s/%s/%#x", c.Dir, c.Hop, c.Gen, c.Stream, c.Flow))
	}
	var want []string
	for dir := range p.Hops {
		for i, h := range p.Hops[dir] {
			for _, c := range h.Cross {
				want = append(want, fmt.Sprintf("%s/%d/%s/%s/%#x", plan.DirNames[dir], i, c.Traffic, c.Stream, c.Key))
			}
		}
	}
	if !slices.Equal(cross, want) || len(cross) != 3 {
		t.Errorf("relay cross traffic %v, want the plan's %v", cross, want)
	}
	for i, f := range p.Flows {
		first, last := [2]int{0, 0}, [2]int{k - 1, k - 1}
		if e := entries[i]; e >= 0 {
			en := cfg.Entries[e]
			first = [2]int{en.First, k - 1 - en.Last}
			last = [2]int{en.Last, k - 1 - en.First}
		} else if !f.EndToEnd(k) {
			t.Errorf("relay flow %s: dials the main address, but crosses only hops %d-%d", f.Name, f.First, f.Last)
		}
		for dir := range p.Hops {
			var ids []int32
			for j := first[dir]; j <= last[dir]; j++ {
				ids = append(ids, cfg.Links[dir][j])
			}
			if !slices.Equal(ids, f.Path[dir]) {
				t.Errorf("relay flow %d (%s) %s path: links %v, want the plan's %v", f.ID, f.Name, plan.DirNames[dir], ids, f.Path[dir])
			}
		}
	}
	if len(cfg.Entries) != 3 {
		t.Errorf("relay entries %+v, want one per distinct partial path (3)", cfg.Entries)
	}

}

// TestRelayConfigRefuses: what the relay cannot model is an error that says why.
func TestRelayConfigRefuses(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{`{name: a, path: 1, access_delay: 5ms}`, "enters at hop 1"},
		{`{name: a, access_delay: 5ms}, {name: b, access_delay: 6ms}`, "different access delays"},
	} {
		exp, err := scenario.ParseScenario("r.yaml", []byte(`name: r
duration: 1s
topology: {kind: chain, hops: [{rate: 10Mbit}, {rate: 10Mbit}]}
flows: [`+c.src+`]
`))
		if err != nil {
			t.Fatal(err)
		}
		p, err := plan.New(exp.Points[0].Scenario, 1)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := liverun.RelayConfig(p, "127.0.0.1"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error about %q", c.src, err, c.want)
		}
	}
}
