package docgen

import (
	"math"
	"strconv"
	"strings"
	"testing"

	"cclab/link"
)

// traceSteps are the rates of docs/traces/steps.trace, bits/s, each held for
// traceStep: a path whose capacity jumps, for watching a controller follow
// it (docs/bottleneck.md).
var traceSteps = []float64{12e6, 4e6, 8e6, 2e6, 16e6}

const traceStepMS = 2000

// stepsTrace returns the trace in Mahimahi's format: one millisecond
// timestamp per delivery opportunity of link.DefaultMTU bytes.
func stepsTrace() string {
	var b strings.Builder
	cum := 0.0 // opportunities so far
	ms := 0
	for _, r := range traceSteps {
		per := r / (float64(link.DefaultMTU) * 8) / 1000 // opportunities per ms
		for i := 0; i < traceStepMS; i++ {
			ms++
			next := cum + per
			for k := math.Floor(cum); k < math.Floor(next); k++ {
				b.WriteString(strconv.Itoa(ms) + "\n")
			}
			cum = next
		}
	}
	return b.String()
}

// TestStepsTrace keeps docs/traces/steps.trace (the trace the docs use)
// generated, and checks the link model reads it with the documented mean
// rate: (12 + 4 + 8 + 2 + 16) / 5 = 8.4 Mbit/s over its 10 s loop.
func TestStepsTrace(t *testing.T) {
	text := stepsTrace()
	CheckFile(t, "../../docs/traces/steps.trace", text)
	tr, err := link.TraceFromReader(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	if tr.Period.Milliseconds() != int64(len(traceSteps)*traceStepMS) {
		t.Errorf("period: got %v, want %d ms", tr.Period, len(traceSteps)*traceStepMS)
	}
	if got := tr.Rate(link.DefaultMTU); math.Abs(got-8.4e6) > 0.002*8.4e6 {
		t.Errorf("mean rate: got %.0f bit/s, want 8.4 Mbit/s", got)
	}
}
