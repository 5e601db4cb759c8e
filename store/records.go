package store

import (
	"encoding/json"
	"math"
	"strconv"
	"time"

	"cclab/internal/buildinfo"
	"cclab/metrics"
	"cclab/scenario"
)

// VersionRecord is one version of an experiment: the set of resolved points
// a scenario file (with a given build of cclab) defines. Runs belong to the
// versions whose points have their point hash (RunRecord.ScenarioHash).
type VersionRecord struct {
	ID           int64          `json:"id"`
	Experiment   string         `json:"experiment"`
	Seq          int            `json:"seq"`           // 1, 2, ... in order of creation: "v2"
	Hash         string         `json:"hash"`          // Experiment.VersionHash
	Scenario     string         `json:"scenario"`      // YAML source last run as this version; "" if unknown
	Build        string         `json:"build"`         // cclab build identity; "" if unknown
	CclabVersion string         `json:"cclab_version"` // cclab's version, for people
	Created      string         `json:"created"`       // RFC 3339, UTC
	LastUsed     string         `json:"last_used"`     // RFC 3339, UTC: last registered by a sweep
	Note         string         `json:"note,omitempty"`
	Points       []VersionPoint `json:"points"`
	Done, Failed int            `json:"-"` // runs of the version by status (Versions fills them)
}

// VersionPoint is one point of a version.
type VersionPoint struct {
	Index  int              `json:"point"`
	Params []scenario.Param `json:"params"`
	Hash   string           `json:"hash"` // Point.Hash
}

// Label returns "v<seq>".
func (v *VersionRecord) Label() string { return "v" + strconv.Itoa(v.Seq) }

// ExperimentRecord is one stored experiment.
type ExperimentRecord struct {
	ID       int64  `json:"id"`
	Name     string `json:"name"`
	Scenario string `json:"scenario"` // the YAML source
	Created  string `json:"created"`  // RFC 3339, UTC
}

// RunRecord is one run: a point of the sweep on one backend with one seed.
type RunRecord struct {
	ID           int64              `json:"id"`
	Experiment   string             `json:"experiment"`
	Key          string             `json:"key"` // identifies the run within its experiment (RunSpec.Key)
	Point        int                `json:"point"`
	Params       []scenario.Param   `json:"params"`
	ScenarioHash string             `json:"scenario_hash"`
	Backend      string             `json:"backend"`
	Seed         uint64             `json:"seed"`
	Version      string             `json:"version"` // cclab's version that produced it (buildinfo.Info.Short)
	Status       string             `json:"status"`
	Error        string             `json:"error,omitempty"`
	Started      time.Time          `json:"started"`
	Finished     time.Time          `json:"finished"`
	WallSeconds  float64            `json:"wall_seconds"`    // wall-clock time the run took
	Notes        map[string]float64 `json:"notes,omitempty"` // run conditions (RunResult.Notes)
	// Provenance is the build and host that produced the run.
	Provenance buildinfo.Info `json:"provenance"`
	// Settings are the run's resolved settings (Point.Settings): the point's
	// scenario after defaults and sweep expansion, backend and seed.
	Settings  json.RawMessage       `json:"settings,omitempty"`
	Flows     []metrics.ScopeRecord `json:"flows,omitempty"`
	Links     []metrics.ScopeRecord `json:"links,omitempty"`
	Summaries []SummaryRecord       `json:"summaries,omitempty"`
	// Series is written with the run; Runs does not load it (see Store.Series).
	Series []SeriesRecord `json:"-"`
	// Trace is the packet trace of flow TraceFlow (Metrics.Trace), written
	// with the run; Runs does not load it (see Store.Trace).
	Trace     []metrics.TracePoint `json:"-"`
	TraceFlow int64                `json:"-"`
}

// SummaryRecord is one summary metric of a run.
type SummaryRecord struct {
	Scope   metrics.Scope `json:"scope"`
	ScopeID int64         `json:"scope_id"`
	Metric  string        `json:"metric"`
	Unit    string        `json:"unit"`
	Value   float64       `json:"value"`
}

// SeriesRecord is one time series of a run.
type SeriesRecord struct {
	Scope   metrics.Scope `json:"scope"`
	ScopeID int64         `json:"scope_id"`
	Metric  string        `json:"metric"`
	T       []float64     `json:"t"`
	V       []float64     `json:"v"`
}

// Value returns the named summary of the given scope and ID.
func (r *RunRecord) Value(scope metrics.Scope, id int64, metric string) (float64, bool) {
	for _, s := range r.Summaries {
		if s.Scope == scope && s.ScopeID == id && s.Metric == metric {
			return s.Value, true
		}
	}
	return math.NaN(), false
}

// SetMetrics fills the run's flows, links, summaries and series from m.
func (r *RunRecord) SetMetrics(m metrics.Metrics) {
	add := func(res metrics.Result) {
		for name, v := range res.Values {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				continue
			}
			r.Summaries = append(r.Summaries, SummaryRecord{Scope: res.Scope, ScopeID: res.ID, Metric: name, Unit: metrics.UnitOf(res.Scope, name), Value: v})
		}
		for _, s := range res.Series {
			if len(s.T) > 0 {
				r.Series = append(r.Series, SeriesRecord{Scope: res.Scope, ScopeID: res.ID, Metric: s.Name, T: s.T, V: s.V})
			}
		}
	}
	for _, f := range m.Flows {
		r.Flows = appendScope(r.Flows, f)
		add(f)
	}
	for _, l := range m.Links {
		r.Links = appendScope(r.Links, l)
		add(l)
	}
	add(m.Network)
	r.Trace, r.TraceFlow = m.Trace, m.TraceFlow
}

func appendScope(list []metrics.ScopeRecord, res metrics.Result) []metrics.ScopeRecord {
	for _, s := range list {
		if s.ID == res.ID {
			return list
		}
	}
	return append(list, metrics.ScopeRecord{ID: res.ID, Name: res.Name})
}
