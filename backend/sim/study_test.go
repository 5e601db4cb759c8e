package simrun

import (
	"context"
	"testing"
	"time"

	"cclab/experiments"
	"cclab/metrics"
	"cclab/plan"
	"cclab/scenario"
	"cclab/traffic"
)

// studyPoint returns the point of the built-in DCA study's quick form with
// the given case, path model and measured controller, shortened to d.
func studyPoint(t *testing.T, caseName, model, cc string, d time.Duration) scenario.Scenario {
	t.Helper()
	src, ok := experiments.Source("dca-vs-reno-quick")
	if !ok {
		t.Fatal("no built-in dca-vs-reno-quick")
	}
	exp, err := scenario.ParseScenario("dca-vs-reno-quick.yaml", src)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range exp.Points {
		c, _ := p.Get(scenario.CaseAxis)
		m, _ := p.Get("topology")
		f, _ := p.Get("cc")
		if c == caseName && m == model && f == cc {
			sc := p.Scenario
			sc.Duration, sc.Warmup = d, d/4
			return sc
		}
	}
	t.Fatalf("no point case=%s topology=%s cc=%s", caseName, model, cc)
	return scenario.Scenario{}
}

// runStudy runs sc with seed 1 and returns the run, its result and the
// recorded sample paths of the flows' stream generators (by flow name).
func runStudy(t *testing.T, sc scenario.Scenario, opt Options) (*Sim, metrics.RunResult, map[string][]traffic.Transfer) {
	t.Helper()
	p, err := plan.New(sc, 1)
	if err != nil {
		t.Fatal(err)
	}
	recs := map[string]*streamRec{}
	opt.Generator = func(f *plan.Flow, g traffic.Generator) traffic.Generator {
		if sg, ok := g.(traffic.StreamGen); ok {
			r := &streamRec{StreamGen: sg}
			recs[f.Name] = r
			return r
		}
		return g
	}
	s, err := Build(p, opt)
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	paths := map[string][]traffic.Transfer{}
	for n, r := range recs {
		paths[n] = r.log
	}
	return s, res, paths
}

// TestStudyDeterministic runs points of the DCA study (Emory path model,
// both congested hops with their background groups): the same seed gives
// the same trace hash (printed); swapping the measured flow's controller
// (Reno → DCA) changes its behaviour but leaves every background
// generator's draws identical (common random numbers, the study's pairing).
func TestStudyDeterministic(t *testing.T) {
	d := 12 * time.Second
	if testing.Short() {
		d = 6 * time.Second
	}
	dca := studyPoint(t, "single", "emory", "dca:tick=10ms", d)
	a, resA, pathsDCA := runStudy(t, dca, Options{Hash: true})
	b, _, _ := runStudy(t, dca, Options{Hash: true})
	ha, na := a.TraceHash()
	hb, nb := b.TraceHash()
	t.Logf("dca-vs-reno-quick case=single topology=emory cc=dca:tick=10ms seed 1, %v: trace hash %s over %d events", d, ha, na)
	if ha != hb || na != nb || na == 0 {
		t.Errorf("same seed: trace hashes %s (%d events) and %s (%d events), want equal", ha, na, hb, nb)
	}
	_, resR, pathsReno := runStudy(t, studyPoint(t, "single", "emory", "reno", d), Options{})
	if len(pathsDCA) < 50 || len(pathsDCA) != len(pathsReno) {
		t.Fatalf("recorded %d and %d stream generators, want the same 50+", len(pathsDCA), len(pathsReno))
	}
	compared := 0
	for name, pa := range pathsDCA {
		if name == "m" {
			continue
		}
		pb := pathsReno[name]
		for k := range min(len(pa), len(pb)) {
			if pa[k].Idle != pb[k].Idle || pa[k].Bytes != pb[k].Bytes || pa[k].Duration != pb[k].Duration {
				t.Errorf("%s transfer %d: DCA run drew %+v, Reno run %+v; want identical draws", name, k, pa[k], pb[k])
				break
			}
			compared++
		}
	}
	if compared < 100 {
		t.Errorf("compared %d background transfers, want at least 100", compared)
	}
	fa, fr := resA.Metrics.Flows[0].Values, resR.Metrics.Flows[0].Values
	if fa["total_packets_sent"] == fr["total_packets_sent"] {
		t.Errorf("the measured flow sent %v packets as DCA and as Reno: the swap had no effect", fa["total_packets_sent"])
	}
}
