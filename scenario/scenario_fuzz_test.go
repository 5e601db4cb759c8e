package scenario

import (
	"strings"
	"testing"
)

// FuzzParseScenario feeds arbitrary bytes to the scenario parser: it must
// return a scenario or an error naming the file, never panic.
// sweepScenario is a small swept scenario (as the harness tests use).
const sweepScenario = `name: sweep-test
duration: 2s
seeds: [1, 2, 3]
backends: [sim, live]
topology: {kind: dumbbell, bottleneck: {rate: 16Mbit, loss: [0, 0.01, 0.1]}}
flows: [{cc: [reno, newreno]}]
`

func FuzzParseScenario(f *testing.F) {
	f.Add([]byte(goodScenario))
	f.Add([]byte(sweepScenario))
	f.Add([]byte("name: x\nduration: 1s\ntopology: {kind: chain, hops: [{rate: 1Mbit}]}\nflows: [{cc: [reno, \"x?\"]}]\n"))
	f.Add([]byte("a: &a [*a]\n"))
	f.Add([]byte("- - - -\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 4096 {
			return // sweeps grow as the product of list lengths
		}
		exp, err := ParseScenario("fuzz.yaml", b)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.yaml") {
				t.Errorf("error does not name the file: %v", err)
			}
			return
		}
		if len(exp.Points) == 0 {
			t.Errorf("no points and no error")
		}
	})
}
