package main

import (
	"os"
	"path/filepath"
	"testing"

	"cclab/internal/docgen"
)

// TestSimExampleDocumented keeps docs/sim.md's example output true: the
// simulator is deterministic, so the output of the documented command is
// generated into the page (scripts/gen-docs.sh) and compared here.
func TestSimExampleDocumented(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates 20 s")
	}
	out := filepath.Join(t.TempDir(), "out.txt")
	if code := runSim([]string{"-flows", "1", "-cc", "reno", "-rate", "20Mbit", "-rtt", "40ms", "-buffer", "1bdp", "-duration", "20s", "-o", out}); code != 0 {
		t.Fatalf("cclab sim: exit %d", code)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	docgen.Check(t, "../../docs/sim.md", "sim-example", string(b))
}
