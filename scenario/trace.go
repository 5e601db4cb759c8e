package scenario

import (
	"fmt"
	"time"

	"go.yaml.in/yaml/v3"
)

// The packet trace of one flow (docs/scenarios.md "trace", docs/metrics.md
// "Packet trace"): every packet the flow's sender sent in a time window,
// with its sequence number, and the losses its sender declared and the
// retransmission timeouts it took, for a sequence-number-vs-time figure.
// The Collector records it from the same events it measures (both
// backends), and the store keeps it with the run (table packet_traces).

// TraceSpec selects the traced flow and window of a scenario (key trace).
type TraceSpec struct {
	Flow int           `json:"flow" scenario:"flow,required" doc:"the traced flow's number (plan numbering: scenario order, counts expanded)"`
	From time.Duration `json:"from" scenario:"duration" doc:"start of the window, from the run's start"`
	To   time.Duration `json:"to" scenario:"duration,required" doc:"end of the window, from the run's start; after from"`
}

// traceSpec decodes a scenario's trace mapping.
func (d *decoder) traceSpec(n *yaml.Node, path string) (*TraceSpec, error) {
	t := &TraceSpec{}
	_, err := d.fields(n, path, t, nil)
	if err == nil && t.To <= t.From {
		err = d.errAt(n, path+".to", "%v must be after from (%v)", t.To, t.From)
	}
	return t, err
}

// checkTrace checks the trace against the scenario's flows and duration.
func (s *Scenario) checkTrace() error {
	if s.Trace == nil {
		return nil
	}
	n := 0
	for _, f := range s.Flows {
		n += max(f.Count, 1)
	}
	if s.Trace.Flow > n {
		return fmt.Errorf("trace.flow: flow %d does not exist (the scenario has flows 1..%d)", s.Trace.Flow, n)
	}
	if s.Trace.From >= s.Duration {
		return fmt.Errorf("trace.from: %v is not before the end of the run (%v)", s.Trace.From, s.Duration)
	}
	return nil
}
