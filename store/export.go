package store

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"io"
	"strconv"

	"cclab/metrics"
	"cclab/scenario"
)

// CSVHeader is the header row of ExportCSV: one row per summary metric.
var CSVHeader = []string{"experiment", "run_id", "run_key", "point", "params", "backend", "seed", "status",
	"scope", "scope_id", "scope_name", "metric", "unit", "value"}

// ExportCSV writes every summary of the runs of the experiment's version
// with ID version (0: every run) as CSV (header CSVHeader; params as
// "axis=value;axis=value").
func ExportCSV(ctx context.Context, st Store, experiment string, version int64, w io.Writer) error {
	runs, err := st.Runs(ctx, experiment, version)
	if err != nil {
		return err
	}
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVHeader); err != nil {
		return err
	}
	for _, r := range runs {
		names := map[string]string{}
		for _, f := range r.Flows {
			names["flow/"+strconv.FormatInt(f.ID, 10)] = f.Name
		}
		for _, l := range r.Links {
			names["link/"+strconv.FormatInt(l.ID, 10)] = l.Name
		}
		for _, s := range r.Summaries {
			name := names[string(s.Scope)+"/"+strconv.FormatInt(s.ScopeID, 10)]
			if s.Scope == metrics.ScopeNetwork {
				name = "network"
			}
			rec := []string{experiment, strconv.FormatInt(r.ID, 10), r.Key, strconv.Itoa(r.Point), scenario.ParamsString(r.Params),
				r.Backend, strconv.FormatUint(r.Seed, 10), r.Status, string(s.Scope), strconv.FormatInt(s.ScopeID, 10), name,
				s.Metric, s.Unit, strconv.FormatFloat(s.Value, 'g', -1, 64)}
			if err := cw.Write(rec); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// ExportJSON writes the runs of the experiment's version with ID version (0:
// every run; with flows, links, summaries, provenance and settings, without
// time series) as a JSON array of RunRecord.
func ExportJSON(ctx context.Context, st Store, experiment string, version int64, w io.Writer) error {
	runs, err := st.Runs(ctx, experiment, version)
	if err != nil {
		return err
	}
	if runs == nil {
		runs = []RunRecord{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	return enc.Encode(runs)
}
