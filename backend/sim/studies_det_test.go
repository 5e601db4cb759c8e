package simrun

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"cclab/experiments"
	"cclab/scenario"
)

// TestStudiesDeterministic runs one point of each case of the dccp-tcp and
// fair-queueing quick forms twice (shortened): the same seed gives the same
// trace hash over every event (the simulator's determinism is what makes
// the studies' tables reproducible).
func TestStudiesDeterministic(t *testing.T) {
	d := 12 * time.Second // the second flows of dccp-tcp start at 5 s
	if testing.Short() {
		d = 10 * time.Second // and fair-queueing-quick's short transfers start up to 8 s
	}
	for _, name := range []string{"dccp-tcp-quick", "fair-queueing-quick"} {
		src, _ := experiments.Source(name)
		exp, err := scenario.ParseScenario(name+".yaml", src)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, p := range exp.Points {
			c, _ := p.Get(scenario.CaseAxis)
			// One point per case; of the multi-hop cases the CSFQ ones.
			if seen[c] || strings.HasPrefix(c, "multihop") && !strings.HasSuffix(c, "-csfq") {
				continue
			}
			seen[c] = true
			sc := p.Scenario
			sc.Duration, sc.Warmup = d, d/4
			a, ra, _ := runStudy(t, sc, Options{Hash: true})
			b, rb, _ := runStudy(t, sc, Options{Hash: true})
			// The packet trace (the ack-ratio case's trace key) is part of
			// what the simulator reproduces.
			if sc.Trace != nil && (len(ra.Metrics.Trace) == 0 || !reflect.DeepEqual(ra.Metrics.Trace, rb.Metrics.Trace)) {
				t.Errorf("%s %s: packet traces of %d and %d points, want equal and non-empty", name, p.Label(exp.Axes),
					len(ra.Metrics.Trace), len(rb.Metrics.Trace))
			}
			ha, na := a.TraceHash()
			hb, nb := b.TraceHash()
			t.Logf("%s %s: trace hash %s over %d events", name, p.Label(exp.Axes), ha, na)
			if ha != hb || na != nb || na == 0 {
				t.Errorf("%s %s: trace hashes %s (%d events) and %s (%d events), want equal", name, p.Label(exp.Axes), ha, na, hb, nb)
			}
		}
	}
}
