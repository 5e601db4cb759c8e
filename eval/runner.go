// Package eval is the experiment harness (docs/eval.md): it runs an
// experiment's points on the backends (Runner) for every seed, stores the
// results and reports progress.
package eval

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"cclab/internal/buildinfo"
	"cclab/metrics"
	"cclab/scenario"
	"cclab/store"
)

// Runner runs one scenario point on one backend.
type Runner interface {
	Run(ctx context.Context, spec scenario.RunSpec) (metrics.RunResult, error)
}

// RunKey returns the store key of a run: hex SHA-256 of the point's hash,
// the backend and the seed, shortened to 20 characters.
func RunKey(p scenario.Point, backend string, seed uint64) string {
	h := sha256.Sum256([]byte(p.Hash() + "/" + backend + "/" + strconv.FormatUint(seed, 10)))
	return hex.EncodeToString(h[:10])
}

// Specs lists the runs of an experiment on the given backends (all of the
// scenario's backends if none given), in point, backend, seed order.
func Specs(exp *scenario.Experiment, backends []string) []scenario.RunSpec {
	var out []scenario.RunSpec
	for _, p := range exp.Points {
		bs := backends
		if len(bs) == 0 {
			bs = p.Scenario.Backends
		}
		for _, b := range bs {
			if !slices.Contains(p.Scenario.Backends, b) {
				continue
			}
			seeds := p.Scenario.Seeds
			if b == scenario.BackendLive && p.Scenario.LiveRuns > 0 && p.Scenario.LiveRuns < len(seeds) {
				seeds = seeds[:p.Scenario.LiveRuns]
			}
			for _, seed := range seeds {
				out = append(out, scenario.RunSpec{Experiment: exp.Name, Point: p, Backend: b, Seed: seed, Key: RunKey(p, b, seed)})
			}
		}
	}
	return out
}

// CheckBackends returns an error when one of backends (a -backends
// selection) is not a backend of any point of exp: the selection would run
// nothing on it, which is a mistake, not "0 runs".
func CheckBackends(exp *scenario.Experiment, backends []string) error {
	for _, b := range backends {
		if b != scenario.BackendSim && b != scenario.BackendLive && b != scenario.BackendNS3 {
			return fmt.Errorf("unknown backend %q (allowed: %s, %s, %s)", b, scenario.BackendSim, scenario.BackendLive, scenario.BackendNS3)
		}
		found := false
		for _, p := range exp.Points {
			if slices.Contains(p.Scenario.Backends, b) {
				found = true
				break
			}
		}
		if !found {
			return fmt.Errorf("%s has no %s runs (its backends: %s): add %s to the scenario's backends to run it there",
				exp.Name, b, strings.Join(exp.Base.Backends, ", "), b)
		}
	}
	return nil
}

// SweepOptions configure Sweep.
type SweepOptions struct {
	Store    store.Store       // where results go (required)
	Runners  map[string]Runner // by backend; backends without a runner are skipped and reported
	Backends []string          // restrict to these backends; nil: the scenario's
	// Parallel is the number of concurrent runs per backend; missing or 0:
	// runtime.NumCPU() for sim, 1 for live (live runs share the machine's
	// real time and must not disturb each other).
	Parallel map[string]int
	// Progress, if set, receives the plan, then every run's start and end
	// (ProgressMeter turns them into a truthful display). Calls are
	// serialized.
	Progress func(ProgressEvent)
	// Log receives notes about the sweep (backends without a runner,
	// resumption); nil discards.
	Log io.Writer
	// Shard selects this process's share of the sweep's runs when Shards >
	// 1 (Shard in 0..Shards-1; see ShardSpecs). Every shard registers the
	// same experiment version, so the shards' runs together are the sweep.
	Shard, Shards int
	// RetryHostLimited runs a run marked host-limited (run note
	// host_limited = 1, docs/metrics.md "Host-limited runs") again, up to
	// this many more times (at most MaxRetryHostLimited); the last
	// attempt is stored, with the note host_limited_attempts. 0: none.
	RetryHostLimited int
}

// MaxRetryHostLimited bounds SweepOptions.RetryHostLimited: a host that
// stays starved will not get better by waiting longer.
const MaxRetryHostLimited = 10

// noteHostLimited is the run note of the host-limited mark (backend/live).
const noteHostLimited = "host_limited"

// ShardSpecs returns shard i of n of the runs (i in 0..n-1): the runs whose
// position in Specs' order (point, backend, seed) is i modulo n. The shares
// are deterministic, disjoint and together the whole sweep, and round-robin
// spreads every point's seeds and every axis' values over the shards, so
// they take about equal time.
func ShardSpecs(specs []scenario.RunSpec, i, n int) []scenario.RunSpec {
	if n <= 1 {
		return specs
	}
	var out []scenario.RunSpec
	for k := i; k < len(specs); k += n {
		out = append(out, specs[k])
	}
	return out
}

// ParseShard parses a -shard value "I/N": shard I (0-based) of N.
func ParseShard(s string) (i, n int, err error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return 0, 0, fmt.Errorf("want I/N with N >= 1 and I in 0..N-1 (e.g. 0/4 for the first of 4 shards), got %q", s)
	}
	return i, n, nil
}

// SweepStats summarizes a sweep.
type SweepStats struct {
	Total    int      // runs in the sweep (in this shard, if sharded)
	Skipped  int      // already done in the store (resumed)
	Ran      int      // completed now
	Failed   int      // failed now (stored with status failed; retried by the next sweep)
	Missing  []string // backends with no runner
	Version  int      // the experiment version's sequence number (VersionRecord.Seq)
	Duration time.Duration
}

// Sweep runs every run of exp that the store does not hold as done yet, each
// written in its own transaction as it finishes; so an interrupted sweep
// leaves only whole runs, and running it again completes it. A cancelled
// context stops the sweep: runs in progress are abandoned, not stored.
func Sweep(ctx context.Context, exp *scenario.Experiment, opt SweepOptions) (SweepStats, error) {
	start := time.Now()
	var st SweepStats
	if err := CheckBackends(exp, opt.Backends); err != nil {
		return st, err
	}
	logf := func(format string, args ...any) {
		if opt.Log != nil {
			fmt.Fprintf(opt.Log, format+"\n", args...)
		}
	}
	expID, err := opt.Store.Experiment(ctx, exp.Name, exp.Source)
	if err != nil {
		return st, err
	}
	ver := store.NewVersionRecord(exp)
	if err := opt.Store.Version(ctx, expID, ver); err != nil {
		return st, err
	}
	st.Version = ver.Seq
	if opt.Shards > 1 && (opt.Shard < 0 || opt.Shard >= opt.Shards) {
		return st, fmt.Errorf("shard %d of %d: want a shard in 0..%d", opt.Shard, opt.Shards, opt.Shards-1)
	}
	specs := ShardSpecs(Specs(exp, opt.Backends), opt.Shard, opt.Shards)
	st.Total = len(specs)
	byBackend, order, err := pending(ctx, opt, expID, specs, &st)
	if err != nil {
		return st, err
	}
	sort.Strings(st.Missing)
	for _, b := range st.Missing {
		logf("backend %s: no runner available; its runs are left out", b)
	}
	if st.Skipped > 0 {
		logf("resuming: %d of %d runs already done", st.Skipped, st.Total)
	}
	var mu sync.Mutex // guards st, progress and the store writes
	progress := func(ev ProgressEvent) {
		if opt.Progress != nil {
			ev.At = time.Now()
			opt.Progress(ev)
		}
	}
	var todo []scenario.RunSpec
	for _, b := range order {
		todo = append(todo, byBackend[b]...)
	}
	progress(ProgressEvent{Kind: ProgressPlan, Todo: todo, Skipped: st.Skipped})
	var firstErr error
	// Backends run one after another (a live run must not compete with a
	// parallel sim sweep for the CPU); runs within a backend in parallel.
	for _, b := range order {
		par := opt.Parallel[b]
		if par <= 0 {
			par = 1
			if b == scenario.BackendSim {
				par = runtime.NumCPU()
			}
		}
		ch := make(chan scenario.RunSpec)
		var wg sync.WaitGroup
		for w := 0; w < par; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for s := range ch {
					label := s.Point.Label(exp.Axes)
					mu.Lock()
					progress(ProgressEvent{Kind: ProgressStart, Spec: s, Label: label})
					mu.Unlock()
					rec := execute(ctx, opt.Runners[b], s)
					for k := 0; k < min(opt.RetryHostLimited, MaxRetryHostLimited) && hostLimited(rec) && ctx.Err() == nil; k++ {
						mu.Lock()
						logf("%s %s seed %d: host-limited, running it again (%d of %d)", label, b, s.Seed, k+1, opt.RetryHostLimited)
						mu.Unlock()
						rec = execute(ctx, opt.Runners[b], s)
						if rec.Notes != nil {
							rec.Notes["host_limited_attempts"] = float64(k + 2)
						}
					}
					if ctx.Err() != nil {
						return // interrupted: store nothing of this run
					}
					mu.Lock()
					err := opt.Store.SaveRun(context.WithoutCancel(ctx), expID, rec)
					if err != nil && firstErr == nil {
						firstErr = err
					}
					if rec.Status == store.StatusDone {
						st.Ran++
					} else {
						st.Failed++
					}
					progress(ProgressEvent{Kind: ProgressDone, Spec: s, Label: label, Status: rec.Status, Error: rec.Error,
						Wall: rec.Finished.Sub(rec.Started)})
					mu.Unlock()
				}
			}()
		}
	feed:
		for _, s := range byBackend[b] {
			select {
			case ch <- s:
			case <-ctx.Done():
				break feed
			}
		}
		close(ch)
		wg.Wait()
		if ctx.Err() != nil {
			break
		}
	}
	st.Duration = time.Since(start)
	if ctx.Err() != nil {
		return st, ctx.Err()
	}
	return st, firstErr
}

// hostLimited reports whether a done run was marked host-limited.
func hostLimited(rec *store.RunRecord) bool {
	return rec.Status == store.StatusDone && rec.Notes[noteHostLimited] == 1
}

// pending groups the specs still to run by backend, in the order the
// backends first appear; it counts the runs already done (st.Skipped) and
// lists the backends without a runner (st.Missing). Live runs go round by
// round (Alternate).
func pending(ctx context.Context, opt SweepOptions, expID int64, specs []scenario.RunSpec, st *SweepStats) (map[string][]scenario.RunSpec, []string, error) {
	byBackend := map[string][]scenario.RunSpec{}
	var order []string
	for _, s := range specs {
		if opt.Runners[s.Backend] == nil {
			if !slices.Contains(st.Missing, s.Backend) {
				st.Missing = append(st.Missing, s.Backend)
			}
			continue
		}
		done, err := opt.Store.Done(ctx, expID, s.Key)
		if err != nil {
			return nil, nil, err
		}
		if done {
			st.Skipped++
			continue
		}
		if _, ok := byBackend[s.Backend]; !ok {
			order = append(order, s.Backend)
		}
		byBackend[s.Backend] = append(byBackend[s.Backend], s)
	}
	if l, ok := byBackend[scenario.BackendLive]; ok {
		byBackend[scenario.BackendLive] = Alternate(l)
	}
	return byBackend, order, nil
}

// Alternate orders live runs by round: the first seed of every point in
// point order, then the second seed of every point, and so on (a stable
// sort by the seed's position in its point's seed list). Points compared
// with each other (kernel TCP against cclab, one controller against
// another) then run close together in time, paired and alternated, so the
// drift of the host's load over a sweep does not fall on one side of a
// comparison (docs/compat.md: the kernel's goodput on a shallow buffer
// moves with the load).
func Alternate(specs []scenario.RunSpec) []scenario.RunSpec {
	round := func(s scenario.RunSpec) int { return slices.Index(s.Point.Scenario.Seeds, s.Seed) }
	slices.SortStableFunc(specs, func(a, b scenario.RunSpec) int { return round(a) - round(b) })
	return specs
}

// execute runs one spec and turns the outcome into a record.
func execute(ctx context.Context, r Runner, s scenario.RunSpec) (rec *store.RunRecord) {
	rec = &store.RunRecord{Experiment: s.Experiment, Key: s.Key, Point: s.Point.Index, Params: s.Point.Params,
		ScenarioHash: s.Point.Hash(), Backend: s.Backend, Seed: s.Seed, Version: store.Version, Started: time.Now(),
		Provenance: buildinfo.Read(), Settings: s.Point.Settings(s.Backend, s.Seed)}
	defer func() {
		if p := recover(); p != nil {
			rec.Status, rec.Error = store.StatusFailed, fmt.Sprintf("panic: %v", p)
		}
		rec.Finished = time.Now()
		rec.WallSeconds = rec.Finished.Sub(rec.Started).Seconds()
	}()
	res, err := r.Run(ctx, s)
	if err != nil {
		rec.Status, rec.Error = store.StatusFailed, err.Error()
		return rec
	}
	rec.Status = store.StatusDone
	rec.Notes = res.Notes
	rec.SetMetrics(res.Metrics)
	mergeInfo(rec.Flows, res.Flows)
	mergeInfo(rec.Links, res.Links)
	return rec
}

func mergeInfo(dst, src []metrics.ScopeRecord) {
	for i := range dst {
		for _, s := range src {
			if s.ID == dst[i].ID {
				dst[i].Info = s.Info
				if s.Name != "" {
					dst[i].Name = s.Name
				}
			}
		}
	}
}
