package store

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"

	"cclab/metrics"
)

// CopyStats counts what CopyStore copied.
type CopyStats struct {
	Experiments int // experiments copied (created in the destination or already there)
	Versions    int // versions created in the destination
	Runs        int // runs written
	Skipped     int // runs the destination already held as done
}

// CopyStore copies experiments (all, or the named one), their versions and
// their runs with flows, links, summaries and time series from src to dst:
// between SQLite and PostgreSQL in either direction, or between two
// databases of one kind. Each run is written in its own transaction (as
// SaveRun does), so an interrupted copy leaves whole runs and copying again
// completes it; runs the destination holds as done are kept. Versions keep
// their hash, points, scenario, build, times and note; a version new to
// the destination gets the next sequence number there (the same number when
// copying into an empty database).
func CopyStore(ctx context.Context, dst, src *SQLStore, experiment string) (CopyStats, error) {
	var st CopyStats
	exps, err := src.Experiments(ctx)
	if err != nil {
		return st, err
	}
	found := experiment == ""
	for _, e := range exps {
		if experiment != "" && e.Name != experiment {
			continue
		}
		found = true
		id, err := dst.Experiment(ctx, e.Name, []byte(e.Scenario))
		if err != nil {
			return st, fmt.Errorf("experiment %s: %w", e.Name, err)
		}
		st.Experiments++
		vers, err := src.Versions(ctx, e.Name)
		if err != nil {
			return st, fmt.Errorf("experiment %s: %w", e.Name, err)
		}
		slices.SortFunc(vers, func(a, b VersionRecord) int { return cmp.Compare(a.Seq, b.Seq) })
		for _, v := range vers {
			v.ID, v.Seq = 0, 0
			created := false
			err := dst.inTx(ctx, true, func(x dq) (err error) { created, err = version(ctx, x, id, &v, true); return err })
			if err != nil {
				return st, fmt.Errorf("experiment %s, version %s: %w", e.Name, v.Hash, err)
			}
			if created {
				st.Versions++
			}
		}
		runs, err := src.Runs(ctx, e.Name, 0)
		if err != nil {
			return st, fmt.Errorf("experiment %s: %w", e.Name, err)
		}
		for i := range runs {
			r := &runs[i]
			done, err := dst.Done(ctx, id, r.Key)
			if err != nil {
				return st, err
			}
			if done {
				st.Skipped++
				continue
			}
			if err = loadRunData(ctx, src, r); err != nil {
				return st, fmt.Errorf("experiment %s, run %s: %w", e.Name, r.Key, err)
			}
			if err := dst.SaveRun(ctx, id, r); err != nil {
				return st, fmt.Errorf("experiment %s, run %s: %w", e.Name, r.Key, err)
			}
			st.Runs++
		}
	}
	if !found {
		return st, fmt.Errorf("no experiment %q in the source database", experiment)
	}
	return st, nil
}

// RunDigest is a hash of what a run measured and how it was configured: its
// key, point hash, parameters, backend, seed, status, error, settings,
// notes, flows, links, summaries, time series and packet trace (r.Series,
// r.Trace; Store.Runs does not load them), in a canonical order. It leaves out what differs between
// two executions of the same deterministic run (store IDs, times, wall
// time, provenance). Two stores hold the same results of a simulator sweep
// exactly when their runs' digests are equal, whichever database, host or
// shard wrote them.
func RunDigest(r *RunRecord) string {
	h := sha256.New()
	line := func(parts ...string) {
		for _, p := range parts {
			h.Write([]byte(p))
			h.Write([]byte{0})
		}
		h.Write([]byte{'\n'})
	}
	f := func(v float64) string { return strconv.FormatUint(math.Float64bits(v), 16) }
	params, _ := json.Marshal(r.Params)
	notes, _ := json.Marshal(r.Notes) // map keys are sorted
	line("run", r.Key, r.ScenarioHash, string(params), r.Backend, strconv.FormatUint(r.Seed, 10), r.Status, r.Error, string(r.Settings), string(notes))
	scopes := func(kind string, list []metrics.ScopeRecord) {
		list = slices.Clone(list)
		slices.SortFunc(list, func(a, b metrics.ScopeRecord) int { return cmp.Compare(a.ID, b.ID) })
		for _, s := range list {
			line(kind, strconv.FormatInt(s.ID, 10), s.Name, s.Info)
		}
	}
	scopes("flow", r.Flows)
	scopes("link", r.Links)
	type key struct {
		scope  metrics.Scope
		id     int64
		metric string
	}
	order := func(a, b key) int {
		return cmp.Or(cmp.Compare(a.scope, b.scope), cmp.Compare(a.id, b.id), cmp.Compare(a.metric, b.metric))
	}
	sums := slices.Clone(r.Summaries)
	slices.SortFunc(sums, func(a, b SummaryRecord) int {
		return order(key{a.Scope, a.ScopeID, a.Metric}, key{b.Scope, b.ScopeID, b.Metric})
	})
	for _, s := range sums {
		line("summary", string(s.Scope), strconv.FormatInt(s.ScopeID, 10), s.Metric, s.Unit, f(s.Value))
	}
	series := slices.Clone(r.Series)
	slices.SortFunc(series, func(a, b SeriesRecord) int {
		return order(key{a.Scope, a.ScopeID, a.Metric}, key{b.Scope, b.ScopeID, b.Metric})
	})
	for _, s := range series {
		line("series", string(s.Scope), strconv.FormatInt(s.ScopeID, 10), s.Metric)
		for i := range s.T {
			if math.IsNaN(s.V[i]) || math.IsInf(s.V[i], 0) {
				continue // not stored
			}
			line(f(s.T[i]), f(s.V[i]))
		}
	}
	if len(r.Trace) > 0 {
		line("trace", strconv.FormatInt(r.TraceFlow, 10))
		for _, p := range r.Trace {
			line(f(p.T), p.Kind, strconv.FormatUint(p.Seq, 10))
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// loadRunData loads what Store.Runs leaves out of r: its time series and
// packet trace.
func loadRunData(ctx context.Context, st Store, r *RunRecord) (err error) {
	if r.Series, err = st.Series(ctx, r.ID); err != nil {
		return err
	}
	r.TraceFlow, r.Trace, err = st.Trace(ctx, r.ID)
	return err
}

// Digests returns the RunDigest of every run of the experiment, by run key
// (time series and packet traces loaded from the store).
func Digests(ctx context.Context, st Store, experiment string) (map[string]string, error) {
	runs, err := st.Runs(ctx, experiment, 0)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(runs))
	for i := range runs {
		r := &runs[i]
		if err = loadRunData(ctx, st, r); err != nil {
			return nil, err
		}
		out[r.Key] = RunDigest(r)
	}
	return out, nil
}
