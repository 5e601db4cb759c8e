package metrics

// RunResult is what a runner measured.
type RunResult struct {
	Info    RunInfo       // the measurement window and topology used
	Metrics Metrics       // computed by Collector from the run's events
	Flows   []ScopeRecord // optional descriptions of flows (Info strings); names come from Metrics
	Links   []ScopeRecord // optional descriptions of links
	// Notes are measurements of the run's conditions rather than of the
	// network (e.g. a live run's host load and relay lateness); see
	// docs/store.md for the keys.
	Notes map[string]float64
}

// ScopeRecord describes a flow or link of a run.
type ScopeRecord struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
	Info string `json:"info,omitempty"` // e.g. the flow's controller, the link's rate and queue
}
