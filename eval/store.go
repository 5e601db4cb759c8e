package eval

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"runtime/debug"
	"strings"
	"time"

	_ "modernc.org/sqlite" // the "sqlite" database/sql driver (pure Go)
)

// DefaultDB is the store file used when none is named.
const DefaultDB = "cclab.db"

// Run statuses.
const (
	StatusDone   = "done"
	StatusFailed = "failed"
)

// Store keeps experiments, runs and their metrics. SQLStore implements it
// on SQLite; the SQL is kept portable (plain types, no SQLite-only syntax
// but the driver's placeholders) so a PostgreSQL store can implement it too.
type Store interface {
	// Experiment returns the ID of the named experiment, creating it (with
	// the scenario source) on first use.
	Experiment(ctx context.Context, name string, source []byte) (int64, error)
	// Done reports whether the run with this key completed before.
	Done(ctx context.Context, experiment int64, key string) (bool, error)
	// SaveRun writes a run and all its rows in one transaction, replacing a
	// previous failed attempt with the same key.
	SaveRun(ctx context.Context, experiment int64, r *RunRecord) error
	// Experiments lists the stored experiments.
	Experiments(ctx context.Context) ([]ExperimentRecord, error)
	// Runs returns the runs of an experiment with their summaries, in point,
	// backend, seed order.
	Runs(ctx context.Context, experiment string) ([]RunRecord, error)
	// Series returns the time series of a run.
	Series(ctx context.Context, run int64) ([]SeriesRecord, error)
	// Close releases the store.
	Close() error
}

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
	Params       []Param            `json:"params"`
	ScenarioHash string             `json:"scenario_hash"`
	Backend      string             `json:"backend"`
	Seed         uint64             `json:"seed"`
	Version      string             `json:"version"` // software version that produced it
	Status       string             `json:"status"`
	Error        string             `json:"error,omitempty"`
	Started      time.Time          `json:"started"`
	Finished     time.Time          `json:"finished"`
	WallSeconds  float64            `json:"wall_seconds"`    // wall-clock time the run took
	Notes        map[string]float64 `json:"notes,omitempty"` // run conditions (RunResult.Notes)
	Flows        []ScopeRecord      `json:"flows,omitempty"`
	Links        []ScopeRecord      `json:"links,omitempty"`
	Summaries    []SummaryRecord    `json:"summaries,omitempty"`
	// Series is written with the run; Runs does not load it (see Store.Series).
	Series []SeriesRecord `json:"-"`
}

// ScopeRecord describes a flow or link of a run.
type ScopeRecord struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
	Info string `json:"info,omitempty"` // e.g. the flow's controller, the link's rate and queue
}

// SummaryRecord is one summary metric of a run.
type SummaryRecord struct {
	Scope   Scope   `json:"scope"`
	ScopeID int64   `json:"scope_id"`
	Metric  string  `json:"metric"`
	Unit    string  `json:"unit"`
	Value   float64 `json:"value"`
}

// SeriesRecord is one time series of a run.
type SeriesRecord struct {
	Scope   Scope     `json:"scope"`
	ScopeID int64     `json:"scope_id"`
	Metric  string    `json:"metric"`
	T       []float64 `json:"t"`
	V       []float64 `json:"v"`
}

// Value returns the named summary of the given scope and ID.
func (r *RunRecord) Value(scope Scope, id int64, metric string) (float64, bool) {
	for _, s := range r.Summaries {
		if s.Scope == scope && s.ScopeID == id && s.Metric == metric {
			return s.Value, true
		}
	}
	return math.NaN(), false
}

// SetMetrics fills the run's flows, links, summaries and series from m.
func (r *RunRecord) SetMetrics(m Metrics) {
	add := func(res Result) {
		for name, v := range res.Values {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				continue
			}
			r.Summaries = append(r.Summaries, SummaryRecord{Scope: res.Scope, ScopeID: res.ID, Metric: name, Unit: UnitOf(res.Scope, name), Value: v})
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
}

func appendScope(list []ScopeRecord, res Result) []ScopeRecord {
	for _, s := range list {
		if s.ID == res.ID {
			return list
		}
	}
	return append(list, ScopeRecord{ID: res.ID, Name: res.Name})
}

// Version is the software version recorded with each run: the main module's
// version from the build information, else "devel".
var Version = func() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		v := bi.Main.Version
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				v = s.Value[:12]
			}
		}
		if v != "" && v != "(devel)" {
			return v
		}
	}
	return "devel"
}()

// schema creates the tables; see docs/store.md.
var schema = []string{
	`CREATE TABLE IF NOT EXISTS experiments (
		id INTEGER PRIMARY KEY,
		name TEXT NOT NULL UNIQUE,
		scenario TEXT NOT NULL,
		created TEXT NOT NULL)`,
	`CREATE TABLE IF NOT EXISTS runs (
		id INTEGER PRIMARY KEY,
		experiment_id INTEGER NOT NULL REFERENCES experiments(id),
		run_key TEXT NOT NULL,
		point INTEGER NOT NULL,
		params TEXT NOT NULL,
		scenario_hash TEXT NOT NULL,
		backend TEXT NOT NULL,
		seed BIGINT NOT NULL,
		version TEXT NOT NULL,
		status TEXT NOT NULL,
		error TEXT NOT NULL,
		started TEXT NOT NULL,
		finished TEXT NOT NULL,
		wall_seconds DOUBLE PRECISION NOT NULL,
		notes TEXT NOT NULL DEFAULT '{}',
		UNIQUE (experiment_id, run_key))`,
	`CREATE TABLE IF NOT EXISTS flows (
		run_id INTEGER NOT NULL REFERENCES runs(id),
		flow_id BIGINT NOT NULL,
		name TEXT NOT NULL,
		info TEXT NOT NULL,
		PRIMARY KEY (run_id, flow_id))`,
	`CREATE TABLE IF NOT EXISTS links (
		run_id INTEGER NOT NULL REFERENCES runs(id),
		link_id BIGINT NOT NULL,
		name TEXT NOT NULL,
		info TEXT NOT NULL,
		PRIMARY KEY (run_id, link_id))`,
	`CREATE TABLE IF NOT EXISTS summaries (
		run_id INTEGER NOT NULL REFERENCES runs(id),
		scope TEXT NOT NULL,
		scope_id BIGINT NOT NULL,
		metric TEXT NOT NULL,
		unit TEXT NOT NULL,
		value DOUBLE PRECISION NOT NULL,
		PRIMARY KEY (run_id, scope, scope_id, metric))`,
	`CREATE TABLE IF NOT EXISTS timeseries (
		run_id INTEGER NOT NULL REFERENCES runs(id),
		scope TEXT NOT NULL,
		scope_id BIGINT NOT NULL,
		metric TEXT NOT NULL,
		t DOUBLE PRECISION NOT NULL,
		value DOUBLE PRECISION NOT NULL)`,
	`CREATE INDEX IF NOT EXISTS timeseries_run ON timeseries (run_id, scope, scope_id, metric)`,
	`CREATE INDEX IF NOT EXISTS summaries_metric ON summaries (metric)`,
}

// SQLStore is the SQLite store.
type SQLStore struct {
	db *sql.DB
	// hook, if set (tests), is called between the inserts of SaveRun with
	// the stage name; an error aborts the transaction.
	hook func(stage string) error
}

var _ Store = (*SQLStore)(nil)

// OpenSQLite opens (creating on first use) the SQLite store in file path.
func OpenSQLite(path string) (*SQLStore, error) {
	dsn := "file:" + path + "?_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1) // one writer; SQLite serializes anyway
	for _, q := range schema {
		if _, err := db.Exec(q); err != nil {
			db.Close()
			return nil, fmt.Errorf("store %s: creating schema: %w", path, err)
		}
	}
	// Databases from before the notes column gain it.
	if _, err := db.Exec(`SELECT notes FROM runs LIMIT 0`); err != nil {
		if _, err := db.Exec(`ALTER TABLE runs ADD COLUMN notes TEXT NOT NULL DEFAULT '{}'`); err != nil {
			db.Close()
			return nil, fmt.Errorf("store %s: adding runs.notes: %w", path, err)
		}
	}
	return &SQLStore{db: db}, nil
}

// Close closes the database.
func (s *SQLStore) Close() error { return s.db.Close() }

// DB returns the underlying database (for ad-hoc queries).
func (s *SQLStore) DB() *sql.DB { return s.db }

func now() string { return time.Now().UTC().Format(time.RFC3339) }

// Experiment returns the named experiment's ID, creating it on first use. A
// changed scenario source replaces the stored one (runs are keyed by their
// configuration hash, so changed points simply have new keys).
func (s *SQLStore) Experiment(ctx context.Context, name string, source []byte) (int64, error) {
	var id int64
	err := s.db.QueryRowContext(ctx, `SELECT id FROM experiments WHERE name = ?`, name).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		res, err := s.db.ExecContext(ctx, `INSERT INTO experiments (name, scenario, created) VALUES (?, ?, ?)`, name, string(source), now())
		if err != nil {
			return 0, err
		}
		return res.LastInsertId()
	}
	if err != nil {
		return 0, err
	}
	if source != nil {
		_, err = s.db.ExecContext(ctx, `UPDATE experiments SET scenario = ? WHERE id = ?`, string(source), id)
	}
	return id, err
}

// Done reports whether the run completed.
func (s *SQLStore) Done(ctx context.Context, experiment int64, key string) (bool, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM runs WHERE experiment_id = ? AND run_key = ? AND status = ?`,
		experiment, key, StatusDone).Scan(&n)
	return n > 0, err
}

func (s *SQLStore) step(stage string) error {
	if s.hook != nil {
		return s.hook(stage)
	}
	return nil
}

// SaveRun writes r in one transaction; on any error nothing of r is stored.
func (s *SQLStore) SaveRun(ctx context.Context, experiment int64, r *RunRecord) (err error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tx.Rollback()
		}
	}()
	// Replace an earlier attempt (a failed run being retried).
	var old int64
	switch e := tx.QueryRowContext(ctx, `SELECT id FROM runs WHERE experiment_id = ? AND run_key = ?`, experiment, r.Key).Scan(&old); {
	case e == nil:
		for _, t := range []string{"timeseries", "summaries", "links", "flows"} {
			if _, err = tx.ExecContext(ctx, `DELETE FROM `+t+` WHERE run_id = ?`, old); err != nil {
				return err
			}
		}
		if _, err = tx.ExecContext(ctx, `DELETE FROM runs WHERE id = ?`, old); err != nil {
			return err
		}
	case !errors.Is(e, sql.ErrNoRows):
		return e
	}
	params, _ := json.Marshal(r.Params)
	notes := []byte("{}")
	if len(r.Notes) > 0 {
		clean := map[string]float64{}
		for k, v := range r.Notes {
			if !math.IsNaN(v) && !math.IsInf(v, 0) {
				clean[k] = v
			}
		}
		notes, _ = json.Marshal(clean)
	}
	if r.Version == "" {
		r.Version = Version
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO runs (experiment_id, run_key, point, params, scenario_hash, backend, seed,
		version, status, error, started, finished, wall_seconds, notes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		experiment, r.Key, r.Point, string(params), r.ScenarioHash, r.Backend, int64(r.Seed), r.Version, r.Status, r.Error,
		r.Started.UTC().Format(time.RFC3339Nano), r.Finished.UTC().Format(time.RFC3339Nano), r.WallSeconds, string(notes))
	if err != nil {
		return err
	}
	id, err := res.LastInsertId()
	if err != nil {
		return err
	}
	if err = s.step("run"); err != nil {
		return err
	}
	for _, f := range r.Flows {
		if _, err = tx.ExecContext(ctx, `INSERT INTO flows (run_id, flow_id, name, info) VALUES (?, ?, ?, ?)`, id, f.ID, f.Name, f.Info); err != nil {
			return err
		}
	}
	for _, l := range r.Links {
		if _, err = tx.ExecContext(ctx, `INSERT INTO links (run_id, link_id, name, info) VALUES (?, ?, ?, ?)`, id, l.ID, l.Name, l.Info); err != nil {
			return err
		}
	}
	if err = s.step("scopes"); err != nil {
		return err
	}
	sum, err := tx.PrepareContext(ctx, `INSERT INTO summaries (run_id, scope, scope_id, metric, unit, value) VALUES (?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	defer sum.Close()
	for _, m := range r.Summaries {
		if _, err = sum.ExecContext(ctx, id, string(m.Scope), m.ScopeID, m.Metric, m.Unit, m.Value); err != nil {
			return err
		}
	}
	if err = s.step("summaries"); err != nil {
		return err
	}
	ts, err := tx.PrepareContext(ctx, `INSERT INTO timeseries (run_id, scope, scope_id, metric, t, value) VALUES (?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	defer ts.Close()
	for _, se := range r.Series {
		for i := range se.T {
			v := se.V[i]
			if math.IsNaN(v) || math.IsInf(v, 0) {
				continue
			}
			if _, err = ts.ExecContext(ctx, id, string(se.Scope), se.ScopeID, se.Metric, se.T[i], v); err != nil {
				return err
			}
		}
	}
	if err = s.step("series"); err != nil {
		return err
	}
	if err = tx.Commit(); err != nil {
		return err
	}
	r.ID = id
	return nil
}

// Experiments lists the stored experiments by name.
func (s *SQLStore) Experiments(ctx context.Context) ([]ExperimentRecord, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, name, scenario, created FROM experiments ORDER BY name`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []ExperimentRecord
	for rows.Next() {
		var e ExperimentRecord
		if err := rows.Scan(&e.ID, &e.Name, &e.Scenario, &e.Created); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// Runs returns an experiment's runs with flows, links and summaries.
func (s *SQLStore) Runs(ctx context.Context, experiment string) ([]RunRecord, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT r.id, r.run_key, r.point, r.params, r.scenario_hash, r.backend, r.seed,
		r.version, r.status, r.error, r.started, r.finished, r.wall_seconds, r.notes
		FROM runs r JOIN experiments e ON r.experiment_id = e.id WHERE e.name = ?
		ORDER BY r.point, r.backend, r.seed, r.id`, experiment)
	if err != nil {
		return nil, err
	}
	var out []RunRecord
	byID := map[int64]int{}
	for rows.Next() {
		var r RunRecord
		var params, started, finished, notes string
		var seed int64
		if err := rows.Scan(&r.ID, &r.Key, &r.Point, &params, &r.ScenarioHash, &r.Backend, &seed,
			&r.Version, &r.Status, &r.Error, &started, &finished, &r.WallSeconds, &notes); err != nil {
			rows.Close()
			return nil, err
		}
		r.Experiment = experiment
		r.Seed = uint64(seed)
		_ = json.Unmarshal([]byte(params), &r.Params)
		if notes != "" && notes != "{}" {
			_ = json.Unmarshal([]byte(notes), &r.Notes)
		}
		r.Started, _ = time.Parse(time.RFC3339Nano, started)
		r.Finished, _ = time.Parse(time.RFC3339Nano, finished)
		byID[r.ID] = len(out)
		out = append(out, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return out, nil
	}
	join := ` r JOIN experiments e ON r.experiment_id = e.id WHERE e.name = ?`
	scopes := func(table, idcol string, set func(*RunRecord, ScopeRecord)) error {
		rows, err := s.db.QueryContext(ctx, `SELECT x.run_id, x.`+idcol+`, x.name, x.info FROM `+table+` x JOIN runs`+join+
			` AND x.run_id = r.id ORDER BY x.run_id, x.`+idcol, experiment)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var run int64
			var sc ScopeRecord
			if err := rows.Scan(&run, &sc.ID, &sc.Name, &sc.Info); err != nil {
				return err
			}
			set(&out[byID[run]], sc)
		}
		return rows.Err()
	}
	if err := scopes("flows", "flow_id", func(r *RunRecord, sc ScopeRecord) { r.Flows = append(r.Flows, sc) }); err != nil {
		return nil, err
	}
	if err := scopes("links", "link_id", func(r *RunRecord, sc ScopeRecord) { r.Links = append(r.Links, sc) }); err != nil {
		return nil, err
	}
	srows, err := s.db.QueryContext(ctx, `SELECT x.run_id, x.scope, x.scope_id, x.metric, x.unit, x.value
		FROM summaries x JOIN runs`+join+` AND x.run_id = r.id ORDER BY x.run_id, x.scope, x.scope_id, x.metric`, experiment)
	if err != nil {
		return nil, err
	}
	defer srows.Close()
	for srows.Next() {
		var run int64
		var m SummaryRecord
		var scope string
		if err := srows.Scan(&run, &scope, &m.ScopeID, &m.Metric, &m.Unit, &m.Value); err != nil {
			return nil, err
		}
		m.Scope = Scope(scope)
		r := &out[byID[run]]
		r.Summaries = append(r.Summaries, m)
	}
	return out, srows.Err()
}

// Series returns a run's time series.
func (s *SQLStore) Series(ctx context.Context, run int64) ([]SeriesRecord, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT scope, scope_id, metric, t, value FROM timeseries
		WHERE run_id = ? ORDER BY scope, scope_id, metric, t`, run)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []SeriesRecord
	for rows.Next() {
		var scope, metric string
		var id int64
		var t, v float64
		if err := rows.Scan(&scope, &id, &metric, &t, &v); err != nil {
			return nil, err
		}
		n := len(out)
		if n == 0 || out[n-1].Scope != Scope(scope) || out[n-1].ScopeID != id || out[n-1].Metric != metric {
			out = append(out, SeriesRecord{Scope: Scope(scope), ScopeID: id, Metric: metric})
			n++
		}
		out[n-1].T = append(out[n-1].T, t)
		out[n-1].V = append(out[n-1].V, v)
	}
	return out, rows.Err()
}

// paramsString formats params as "axis=value;axis=value".
func paramsString(ps []Param) string {
	var parts []string
	for _, p := range ps {
		parts = append(parts, p.Axis+"="+p.Value)
	}
	return strings.Join(parts, ";")
}
