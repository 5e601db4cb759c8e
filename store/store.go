// Package store keeps experiments, their versions, runs and metrics in SQLite
// or PostgreSQL (docs/store.md): dialects, schema migrations, copying between
// stores, export, and the digest of a stored run.
package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"modernc.org/sqlite" // the "sqlite" database/sql driver (pure Go)
	sqlite3 "modernc.org/sqlite/lib"

	"cclab/internal/buildinfo"
	"cclab/metrics"
)

// DefaultDB is the store file used when none is named.
const DefaultDB = "cclab.db"

// Run statuses.
const (
	StatusDone   = "done"
	StatusFailed = "failed"
)

// Store keeps experiments, their versions, runs and metrics. SQLStore
// implements it on SQLite and on PostgreSQL with one set of portable
// statements (store_dialect.go).
type Store interface {
	// Experiment returns the ID of the named experiment, creating it (with
	// the scenario source) on first use.
	Experiment(ctx context.Context, name string, source []byte) (int64, error)
	// Version registers the experiment version v (found by v.Hash, created
	// with its points on first use), marks it the newest and sets v.ID,
	// v.Seq and v.Created.
	Version(ctx context.Context, experiment int64, v *VersionRecord) error
	// Versions lists the named experiment's versions, newest (last used)
	// first, with their points and run counts.
	Versions(ctx context.Context, experiment string) ([]VersionRecord, error)
	// Done reports whether the run with this key completed before.
	Done(ctx context.Context, experiment int64, key string) (bool, error)
	// SaveRun writes a run and all its rows in one transaction, replacing a
	// previous failed attempt with the same key.
	SaveRun(ctx context.Context, experiment int64, r *RunRecord) error
	// Experiments lists the stored experiments.
	Experiments(ctx context.Context) ([]ExperimentRecord, error)
	// Runs returns runs of an experiment with their summaries, in point,
	// backend, seed order: those of the version with this ID (Point and
	// Params as in that version), or every run for version 0.
	Runs(ctx context.Context, experiment string, version int64) ([]RunRecord, error)
	// Series returns the time series of a run.
	Series(ctx context.Context, run int64) ([]SeriesRecord, error)
	// Trace returns the packet trace of a run (RunRecord.Trace): the
	// traced flow's number and its points in time order; 0 and none if
	// the run has no trace.
	Trace(ctx context.Context, run int64) (flow int64, points []metrics.TracePoint, err error)
	// Close releases the store.
	Close() error
}

// Version is cclab's version recorded with each run and shown in reports
// (buildinfo.Info.Short: module version, commit).
var Version = buildinfo.Short()

// SchemaVersion is the version of the database layout this build writes
// (docs/store.md, "Schema versions"). OpenSQLite migrates older databases to
// it and refuses newer ones.
const SchemaVersion = 3

// schema1 creates the tables of schema version 1 (the layout before
// versions and provenance); OpenSQLite creates them when absent and then
// migrates, so a new database and an old one take the same path.
var schema1 = []string{
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

// SQLStore is the store on an SQL database: SQLite (OpenSQLite) or
// PostgreSQL (OpenPostgres), with the same schema, statements and
// transactions; only the dialect (placeholders, catalog queries, locks)
// differs.
type SQLStore struct {
	db *sql.DB
	d  *dialect
	// hook, if set (tests), is called between the inserts of SaveRun with
	// the stage name; an error aborts the transaction.
	hook func(stage string) error
	// Migrated is the schema version the database had when opened, if
	// opening migrated it (0: created now or already current).
	Migrated int
}

var _ Store = (*SQLStore)(nil)

// sqliteBusyTimeout is how long (ms) a writer waits for another process's
// write transaction (concurrent shards writing to one file) before failing
// with "database is locked".
const sqliteBusyTimeout = 120000

// OpenSQLite opens (creating on first use) the SQLite store in file path,
// migrating a database of an older schema version in one transaction.
// Several processes may write to it at once (sweep shards): transactions
// take the write lock when they begin (_txlock=immediate), so a writer
// waits up to the busy timeout instead of failing when another commits
// first.
//
// Opening is retried while SQLite reports the database busy: switching a new
// file to WAL (journal_mode) upgrades a shared lock to an exclusive one, and
// SQLite answers SQLITE_BUSY at once instead of calling the busy handler when
// another process holds a shared lock (deadlock avoidance), which happens
// when several shards create one database at the same moment.
func OpenSQLite(path string) (*SQLStore, error) {
	dsn := "file:" + path + "?_txlock=immediate&_pragma=busy_timeout(" + strconv.Itoa(sqliteBusyTimeout) +
		")&_pragma=foreign_keys(1)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)"
	deadline := time.Now().Add(sqliteBusyTimeout * time.Millisecond)
	for wait := 10 * time.Millisecond; ; wait = min(2*wait, time.Second) {
		db, err := sql.Open("sqlite", dsn)
		if err != nil {
			return nil, err
		}
		db.SetMaxOpenConns(1) // one writer; SQLite serializes anyway
		st, err := openSQL(db, sqliteDialect, path)
		if err == nil || !sqliteBusy(err) || time.Now().Add(wait).After(deadline) {
			return st, err
		}
		time.Sleep(wait)
	}
}

// sqliteBusy reports whether err is SQLite's SQLITE_BUSY or SQLITE_LOCKED
// (any extended code of either).
func sqliteBusy(err error) bool {
	var e *sqlite.Error
	if !errors.As(err, &e) {
		return false
	}
	switch e.Code() & 0xff {
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
		return true
	}
	return false
}

// openSQL wraps an opened database and brings its schema up to date.
func openSQL(db *sql.DB, d *dialect, name string) (*SQLStore, error) {
	st := &SQLStore{db: db, d: d}
	if err := st.migrate(context.Background()); err != nil {
		db.Close()
		return nil, fmt.Errorf("store %s: %w", name, err)
	}
	return st, nil
}

// IsPostgresURL reports whether a -db argument names a PostgreSQL database
// (a postgres:// or postgresql:// URL) rather than an SQLite file.
func IsPostgresURL(db string) bool {
	return strings.HasPrefix(db, "postgres://") || strings.HasPrefix(db, "postgresql://")
}

// Open opens the store a -db argument names: a PostgreSQL URL
// (postgres://user@host:port/database?sslmode=disable) or an SQLite file.
func Open(db string) (*SQLStore, error) {
	if IsPostgresURL(db) {
		return OpenPostgres(db)
	}
	return OpenSQLite(db)
}

// Close closes the database.
func (s *SQLStore) Close() error { return s.db.Close() }

// DB returns the underlying database (for ad-hoc queries).
func (s *SQLStore) DB() *sql.DB { return s.db }

// Dialect is the database's kind: "sqlite" or "postgres".
func (s *SQLStore) Dialect() string { return s.d.name }

// x runs statements on the database itself (outside a transaction).
func (s *SQLStore) x() dq { return dq{s.db, s.d} }

func now() string { return time.Now().UTC().Format(time.RFC3339) }

// sortableTime is RFC 3339 with a fixed number of decimals, so that times
// sort as strings (versions.created, versions.last_used).
const sortableTime = "2006-01-02T15:04:05.000000Z07:00"

// Experiment returns the named experiment's ID, creating it on first use
// (concurrent first uses by several shards create it once). A changed
// scenario source replaces the stored one (runs are keyed by their
// configuration hash, so changed points simply have new keys).
func (s *SQLStore) Experiment(ctx context.Context, name string, source []byte) (int64, error) {
	x := s.x()
	if _, err := x.exec(ctx, `INSERT INTO experiments (name, scenario, created) VALUES (?, ?, ?) ON CONFLICT (name) DO NOTHING`,
		name, string(source), now()); err != nil {
		return 0, err
	}
	var id int64
	if err := x.row(ctx, `SELECT id FROM experiments WHERE name = ?`, name).Scan(&id); err != nil {
		return 0, err
	}
	if source != nil {
		if _, err := x.exec(ctx, `UPDATE experiments SET scenario = ? WHERE id = ?`, string(source), id); err != nil {
			return 0, err
		}
	}
	return id, nil
}

// Version registers v (by v.Hash) for the experiment: a new version gets the
// next sequence number and its points; a known one its latest scenario
// source. Either becomes the newest (last used). It sets v.ID, v.Seq and
// v.Created.
func (s *SQLStore) Version(ctx context.Context, experiment int64, v *VersionRecord) error {
	t := time.Now().UTC().Format(sortableTime)
	v.Created, v.LastUsed = t, t
	return s.inTx(ctx, true, func(x dq) error { _, err := version(ctx, x, experiment, v, false); return err })
}

// version registers v in a transaction and reports whether it is new; keep
// stores v's Created and LastUsed as they are (a copy), else a known
// version's LastUsed is updated and its Created read back.
func version(ctx context.Context, x dq, experiment int64, v *VersionRecord, keep bool) (created bool, err error) {
	var stored string
	switch e := x.row(ctx, `SELECT id, seq, created FROM versions WHERE experiment_id = ? AND hash = ?`, experiment, v.Hash).Scan(&v.ID, &v.Seq, &stored); {
	case e == nil:
		if keep {
			_, err = x.exec(ctx, `UPDATE versions SET last_used = ? WHERE id = ? AND last_used < ?`, v.LastUsed, v.ID, v.LastUsed)
			return false, err
		}
		v.Created = stored
		_, err = x.exec(ctx, `UPDATE versions SET scenario = ?, last_used = ? WHERE id = ?`, v.Scenario, v.LastUsed, v.ID)
		return false, err
	case errors.Is(e, sql.ErrNoRows):
		if err = x.row(ctx, `SELECT COALESCE(MAX(seq), 0) + 1 FROM versions WHERE experiment_id = ?`, experiment).Scan(&v.Seq); err != nil {
			return false, err
		}
		v.ID, err = x.insertID(ctx, `INSERT INTO versions (experiment_id, seq, hash, scenario, build, cclab_version, created, last_used, note)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, experiment, v.Seq, v.Hash, v.Scenario, v.Build, v.CclabVersion, v.Created, v.LastUsed, v.Note)
		if err != nil {
			return false, err
		}
		rows := make([][]any, 0, len(v.Points))
		for _, p := range v.Points {
			params, _ := json.Marshal(p.Params)
			rows = append(rows, []any{v.ID, p.Index, string(params), p.Hash})
		}
		return true, x.insertRows(ctx, "version_points", []string{"version_id", "point", "params", "point_hash"}, rows)
	default:
		return false, e
	}
}

// inTx runs f in one transaction: committed if f succeeds, rolled back (and
// nothing of it stored) if it fails. With lock, the transaction first takes
// the dialect's store lock (it reads, then writes what it read: Version and
// the migration must not interleave across processes).
func (s *SQLStore) inTx(ctx context.Context, lock bool, f func(dq) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	x := dq{tx, s.d}
	if lock && s.d.lock != "" {
		if _, err := x.exec(ctx, s.d.lock); err != nil {
			tx.Rollback()
			return err
		}
	}
	if err := f(x); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

// Versions lists the experiment's versions, newest (last used) first.
func (s *SQLStore) Versions(ctx context.Context, experiment string) ([]VersionRecord, error) {
	x := s.x()
	rows, err := x.query(ctx, `SELECT v.id, v.seq, v.hash, v.scenario, v.build, v.cclab_version, v.created, v.last_used, v.note
		FROM versions v JOIN experiments e ON v.experiment_id = e.id WHERE e.name = ? ORDER BY v.last_used DESC, v.seq DESC`, experiment)
	if err != nil {
		return nil, err
	}
	var out []VersionRecord
	for rows.Next() {
		v := VersionRecord{Experiment: experiment}
		if err := rows.Scan(&v.ID, &v.Seq, &v.Hash, &v.Scenario, &v.Build, &v.CclabVersion, &v.Created, &v.LastUsed, &v.Note); err != nil {
			rows.Close()
			return nil, err
		}
		out = append(out, v)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for i := range out {
		v := &out[i]
		prow, err := x.query(ctx, `SELECT point, params, point_hash FROM version_points WHERE version_id = ? ORDER BY point`, v.ID)
		if err != nil {
			return nil, err
		}
		for prow.Next() {
			var p VersionPoint
			var params string
			if err := prow.Scan(&p.Index, &params, &p.Hash); err != nil {
				prow.Close()
				return nil, err
			}
			_ = json.Unmarshal([]byte(params), &p.Params)
			v.Points = append(v.Points, p)
		}
		prow.Close()
		if err := prow.Err(); err != nil {
			return nil, err
		}
		crow, err := x.query(ctx, `SELECT r.status, COUNT(*) FROM runs r JOIN version_points vp ON vp.point_hash = r.scenario_hash
			JOIN versions v ON v.id = vp.version_id AND v.experiment_id = r.experiment_id WHERE vp.version_id = ? GROUP BY r.status`, v.ID)
		if err != nil {
			return nil, err
		}
		for crow.Next() {
			var status string
			var n int
			if err := crow.Scan(&status, &n); err != nil {
				crow.Close()
				return nil, err
			}
			if status == StatusDone {
				v.Done += n
			} else {
				v.Failed += n
			}
		}
		crow.Close()
		if err := crow.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Done reports whether the run completed.
func (s *SQLStore) Done(ctx context.Context, experiment int64, key string) (bool, error) {
	var n int
	err := s.x().row(ctx, `SELECT COUNT(*) FROM runs WHERE experiment_id = ? AND run_key = ? AND status = ?`,
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
func (s *SQLStore) SaveRun(ctx context.Context, experiment int64, r *RunRecord) error {
	var id int64
	if err := s.inTx(ctx, false, func(x dq) (err error) { id, err = s.saveRun(ctx, x, experiment, r); return err }); err != nil {
		return err
	}
	r.ID = id
	return nil
}

func (s *SQLStore) saveRun(ctx context.Context, x dq, experiment int64, r *RunRecord) (id int64, err error) {
	// Replace an earlier attempt (a failed run being retried).
	var old int64
	switch e := x.row(ctx, `SELECT id FROM runs WHERE experiment_id = ? AND run_key = ?`, experiment, r.Key).Scan(&old); {
	case e == nil:
		for _, t := range []string{"packet_traces", "timeseries", "summaries", "links", "flows"} {
			if _, err = x.exec(ctx, `DELETE FROM `+t+` WHERE run_id = ?`, old); err != nil {
				return 0, err
			}
		}
		if _, err = x.exec(ctx, `DELETE FROM runs WHERE id = ?`, old); err != nil {
			return 0, err
		}
	case !errors.Is(e, sql.ErrNoRows):
		return 0, e
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
	prov, _ := json.Marshal(r.Provenance)
	settings := "{}"
	if len(r.Settings) > 0 {
		settings = string(r.Settings)
	}
	id, err = x.insertID(ctx, `INSERT INTO runs (experiment_id, run_key, point, params, scenario_hash, backend, seed,
		version, status, error, started, finished, wall_seconds, notes, provenance, settings) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		experiment, r.Key, r.Point, string(params), r.ScenarioHash, r.Backend, int64(r.Seed), r.Version, r.Status, r.Error,
		r.Started.UTC().Format(time.RFC3339Nano), r.Finished.UTC().Format(time.RFC3339Nano), r.WallSeconds, string(notes), string(prov), settings)
	if err != nil {
		return 0, err
	}
	if err = s.step("run"); err != nil {
		return 0, err
	}
	scopes := func(table, idcol string, list []metrics.ScopeRecord) error {
		rows := make([][]any, 0, len(list))
		for _, f := range list {
			rows = append(rows, []any{id, f.ID, f.Name, f.Info})
		}
		return x.insertRows(ctx, table, []string{"run_id", idcol, "name", "info"}, rows)
	}
	if err = scopes("flows", "flow_id", r.Flows); err != nil {
		return 0, err
	}
	if err = scopes("links", "link_id", r.Links); err != nil {
		return 0, err
	}
	if err = s.step("scopes"); err != nil {
		return 0, err
	}
	rows := make([][]any, 0, len(r.Summaries))
	for _, m := range r.Summaries {
		rows = append(rows, []any{id, string(m.Scope), m.ScopeID, m.Metric, m.Unit, m.Value})
	}
	if err = x.insertRows(ctx, "summaries", []string{"run_id", "scope", "scope_id", "metric", "unit", "value"}, rows); err != nil {
		return 0, err
	}
	if err = s.step("summaries"); err != nil {
		return 0, err
	}
	rows = rows[:0]
	for _, se := range r.Series {
		for i := range se.T {
			v := se.V[i]
			if math.IsNaN(v) || math.IsInf(v, 0) {
				continue
			}
			rows = append(rows, []any{id, string(se.Scope), se.ScopeID, se.Metric, se.T[i], v})
		}
	}
	if err = x.insertRows(ctx, "timeseries", []string{"run_id", "scope", "scope_id", "metric", "t", "value"}, rows); err != nil {
		return 0, err
	}
	if err = s.step("series"); err != nil {
		return 0, err
	}
	rows = rows[:0]
	for i, p := range r.Trace {
		rows = append(rows, []any{id, i, r.TraceFlow, p.T, p.Kind, int64(p.Seq)})
	}
	if err = x.insertRows(ctx, "packet_traces", []string{"run_id", "idx", "flow_id", "t", "kind", "seq"}, rows); err != nil {
		return 0, err
	}
	if err = s.step("trace"); err != nil {
		return 0, err
	}
	return id, nil
}

// Experiments lists the stored experiments by name.
func (s *SQLStore) Experiments(ctx context.Context) ([]ExperimentRecord, error) {
	rows, err := s.x().query(ctx, `SELECT id, name, scenario, created FROM experiments ORDER BY name`)
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

// Runs returns an experiment's runs with flows, links and summaries: every
// run for version 0, else the runs of the version with that ID, each with the
// point index and parameters it has in that version.
func (s *SQLStore) Runs(ctx context.Context, experiment string, version int64) ([]RunRecord, error) {
	cols := `r.id, r.run_key, r.point, r.params, r.scenario_hash, r.backend, r.seed,
		r.version, r.status, r.error, r.started, r.finished, r.wall_seconds, r.notes, r.provenance, r.settings`
	var rows *sql.Rows
	var err error
	if version == 0 {
		rows, err = s.x().query(ctx, `SELECT `+cols+`
			FROM runs r JOIN experiments e ON r.experiment_id = e.id WHERE e.name = ?
			ORDER BY r.point, r.backend, r.seed, r.id`, experiment)
	} else {
		rows, err = s.x().query(ctx, `SELECT `+cols+`, vp.point, vp.params
			FROM runs r JOIN experiments e ON r.experiment_id = e.id
			JOIN versions v ON v.experiment_id = e.id AND v.id = ?
			JOIN version_points vp ON vp.version_id = v.id AND vp.point_hash = r.scenario_hash
			WHERE e.name = ? ORDER BY vp.point, r.backend, r.seed, r.id`, version, experiment)
	}
	if err != nil {
		return nil, err
	}
	var out []RunRecord
	byID := map[int64][]int{}
	for rows.Next() {
		var r RunRecord
		var params, started, finished, notes, prov, settings string
		var seed int64
		dest := []any{&r.ID, &r.Key, &r.Point, &params, &r.ScenarioHash, &r.Backend, &seed,
			&r.Version, &r.Status, &r.Error, &started, &finished, &r.WallSeconds, &notes, &prov, &settings}
		if version != 0 {
			dest = append(dest, &r.Point, &params)
		}
		if err := rows.Scan(dest...); err != nil {
			rows.Close()
			return nil, err
		}
		r.Experiment = experiment
		r.Seed = uint64(seed)
		_ = json.Unmarshal([]byte(params), &r.Params)
		if notes != "" && notes != "{}" {
			_ = json.Unmarshal([]byte(notes), &r.Notes)
		}
		_ = json.Unmarshal([]byte(prov), &r.Provenance)
		if settings != "" && settings != "{}" {
			r.Settings = json.RawMessage(settings)
		}
		r.Started, _ = time.Parse(time.RFC3339Nano, started)
		r.Finished, _ = time.Parse(time.RFC3339Nano, finished)
		byID[r.ID] = append(byID[r.ID], len(out))
		out = append(out, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return out, nil
	}
	each := func(run int64, f func(r *RunRecord)) {
		for _, i := range byID[run] {
			f(&out[i])
		}
	}
	join := ` r ON x.run_id = r.id JOIN experiments e ON r.experiment_id = e.id WHERE e.name = ?`
	scopes := func(table, idcol string, set func(*RunRecord, metrics.ScopeRecord)) error {
		rows, err := s.x().query(ctx, `SELECT x.run_id, x.`+idcol+`, x.name, x.info FROM `+table+` x JOIN runs`+join+
			` ORDER BY x.run_id, x.`+idcol, experiment)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var run int64
			var sc metrics.ScopeRecord
			if err := rows.Scan(&run, &sc.ID, &sc.Name, &sc.Info); err != nil {
				return err
			}
			each(run, func(r *RunRecord) { set(r, sc) })
		}
		return rows.Err()
	}
	if err := scopes("flows", "flow_id", func(r *RunRecord, sc metrics.ScopeRecord) { r.Flows = append(r.Flows, sc) }); err != nil {
		return nil, err
	}
	if err := scopes("links", "link_id", func(r *RunRecord, sc metrics.ScopeRecord) { r.Links = append(r.Links, sc) }); err != nil {
		return nil, err
	}
	srows, err := s.x().query(ctx, `SELECT x.run_id, x.scope, x.scope_id, x.metric, x.unit, x.value
		FROM summaries x JOIN runs`+join+` ORDER BY x.run_id, x.scope, x.scope_id, x.metric`, experiment)
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
		m.Scope = metrics.Scope(scope)
		each(run, func(r *RunRecord) { r.Summaries = append(r.Summaries, m) })
	}
	return out, srows.Err()
}

// Series returns a run's time series.
func (s *SQLStore) Series(ctx context.Context, run int64) ([]SeriesRecord, error) {
	rows, err := s.x().query(ctx, `SELECT scope, scope_id, metric, t, value FROM timeseries
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
		if n == 0 || out[n-1].Scope != metrics.Scope(scope) || out[n-1].ScopeID != id || out[n-1].Metric != metric {
			out = append(out, SeriesRecord{Scope: metrics.Scope(scope), ScopeID: id, Metric: metric})
			n++
		}
		out[n-1].T = append(out[n-1].T, t)
		out[n-1].V = append(out[n-1].V, v)
	}
	return out, rows.Err()
}

// Trace returns a run's packet trace.
func (s *SQLStore) Trace(ctx context.Context, run int64) (int64, []metrics.TracePoint, error) {
	rows, err := s.x().query(ctx, `SELECT flow_id, t, kind, seq FROM packet_traces WHERE run_id = ? ORDER BY idx`, run)
	if err != nil {
		return 0, nil, err
	}
	defer rows.Close()
	var flow int64
	var out []metrics.TracePoint
	for rows.Next() {
		var p metrics.TracePoint
		var seq int64
		if err := rows.Scan(&flow, &p.T, &p.Kind, &seq); err != nil {
			return 0, nil, err
		}
		p.Seq = uint64(seq)
		out = append(out, p)
	}
	return flow, out, rows.Err()
}
