package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"cclab/sim"
)

func simJSON(t *testing.T, args ...string) sim.Summary {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out.json")
	if code := runSim(append(args, "-J", "-o", out)); code != 0 {
		t.Fatalf("cclab sim %v: exit %d", args, code)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var s sim.Summary
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("JSON: %v\n%s", err, b)
	}
	return s
}

func TestSimCommand(t *testing.T) {
	args := []string{"-flows", "2", "-cc", "reno;cubic", "-rate", "10Mbit", "-rtt", "30ms", "-duration", "4s",
		"-udp-flows", "1", "-udp", "cbr:rate=1Mbit", "-hash"}
	a := simJSON(t, append(args, "-seed", "3")...)
	b := simJSON(t, append(args, "-seed", "3")...)
	c := simJSON(t, append(args, "-seed", "4")...)
	if len(a.Flows) != 2 || a.Flows[0].CC != "reno" || a.Flows[1].CC != "cubic" || len(a.UDP) != 1 || len(a.Links) != 2 {
		t.Fatalf("summary shape: %+v", a)
	}
	if a.Warmup != 1 || a.Duration != 4 {
		t.Errorf("duration/warm-up got %v/%v, want 4/1 (default warm-up = duration/4)", a.Duration, a.Warmup)
	}
	if a.TraceHash == "" || a.TraceHash != b.TraceHash || a.TraceHash == c.TraceHash {
		t.Errorf("trace hashes seed3 %q, seed3 %q, seed4 %q: want equal, equal, different", a.TraceHash, b.TraceHash, c.TraceHash)
	}
	for _, bad := range [][]string{{"-topology", "ring"}, {"-buffer", "lots"}, {"-traffic", "cbr"}, {"-rtts", "x"}, {"-cc", "nosuch"}} {
		if code := runSim(append(bad, "-duration", "1s", "-o", filepath.Join(t.TempDir(), "x"))); code == 0 {
			t.Errorf("cclab sim %v: exit 0, want an error", bad)
		}
	}
}

func TestSimScenarioFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "sc.json")
	if err := os.WriteFile(file, []byte(`{"topology": "chain", "hops": 2, "flows": 1, "cross": 1, "rate": "10Mbit", "duration": "9s", "seed": 5}`), 0o644); err != nil {
		t.Fatal(err)
	}
	s := simJSON(t, "-scenario", file, "-duration", "3s")
	if len(s.Flows) != 3 || len(s.Links) != 4 || s.Seed != 5 {
		t.Errorf("chain from file: %d flows, %d links, seed %d; want 3, 4, 5", len(s.Flows), len(s.Links), s.Seed)
	}
	if s.Duration != 3 {
		t.Errorf("duration got %v, want 3 (command line overrides the file)", s.Duration)
	}
	if err := os.WriteFile(file, []byte(`{"nosuchflag": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if code := runSim([]string{"-scenario", file}); code == 0 {
		t.Errorf("unknown flag in scenario file: exit 0, want an error")
	}
}
