package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSimUntilDoneNoNaN: a run ended early by -until-done reports numbers
// over its whole length, never NaN or a negative window (the
// default warm-up, a quarter of -duration, was longer than the run, leaving
// an empty measurement window), and a warm-up that does outlast the run is
// an error saying so.
func TestSimUntilDoneNoNaN(t *testing.T) {
	base := []string{"-flows", "1", "-rate", "20Mbit", "-rtt", "40ms", "-traffic", "greedy:1MB", "-until-done", "-duration", "20s"}
	for _, form := range [][]string{nil, {"-J"}} {
		out := filepath.Join(t.TempDir(), "out")
		if code := runSim(append(append(base, form...), "-o", out)); code != 0 {
			t.Fatalf("cclab sim %v: exit %d, want 0", form, code)
		}
		b, _ := os.ReadFile(out)
		if strings.Contains(string(b), "NaN") || strings.Contains(string(b), "over -") || strings.Contains(string(b), `"window_s": -`) || len(b) == 0 {
			t.Errorf("cclab sim -until-done %v printed NaN, a negative window or nothing:\n%s", form, b)
		}
	}
	if code := runSim(append(base, "-warmup", "10s", "-o", filepath.Join(t.TempDir(), "out"))); code != 1 {
		t.Errorf("-until-done with a warm-up longer than the run: exit %d, want 1", code)
	}
}
