package experiments_test

import (
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"cclab/eval"
	"cclab/experiments"
	"cclab/scenario"
)

var update = flag.Bool("update", false, "rewrite testdata/digests.txt")

// TestScenarioDigests: the identities every stored result is keyed by
// (docs/store.md) stay what they were for every built-in experiment: each
// point's hash (with a fixed build identity), schema 1's hash, run key,
// parameters and recorded settings, and the experiment's version hash. A
// change of the scenario format's decoding, defaults or JSON names that
// would orphan stored runs fails here.
func TestScenarioDigests(t *testing.T) {
	defer func(f func() string) { scenario.BuildIdentity = f }(scenario.BuildIdentity)
	scenario.BuildIdentity = func() string { return "commit:0123456789abcdef" }
	var b strings.Builder
	for _, n := range experiments.Names() {
		src, _ := experiments.Source(n)
		exp, err := scenario.ParseScenario(n+".yaml", src)
		if err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		fmt.Fprintf(&b, "%s version %s\n", n, exp.VersionHash())
		for _, p := range exp.Points {
			settings := sha256.Sum256(p.Settings("sim", 1))
			fmt.Fprintf(&b, "%s %d %s %s %s %s %s\n", n, p.Index, p.Hash()[:16], p.LegacyHash()[:16],
				eval.RunKey(p, "sim", 1), hex.EncodeToString(settings[:8]), scenario.ParamsString(p.Params))
		}
	}
	const file = "testdata/digests.txt"
	if *update {
		if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(b.String(), "\n")
	for i, w := range strings.Split(string(want), "\n") {
		if i >= len(got) || got[i] != w {
			g := ""
			if i < len(got) {
				g = got[i]
			}
			t.Fatalf("%s:%d:\n got %s\nwant %s\n(a built-in experiment changed on purpose: check that only its lines change, "+
				"then go test ./experiments -run TestScenarioDigests -update)", file, i+1, g, w)
		}
	}
	if len(got) != strings.Count(string(want), "\n")+1 {
		t.Errorf("%d lines, want %d", len(got), strings.Count(string(want), "\n")+1)
	}
}
