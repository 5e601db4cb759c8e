package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"cclab/scenario"
)

// Schema versions (docs/store.md, "Schema versions"):
//
//	1: experiments, runs (keyed by a point hash without the build), flows,
//	   links, summaries, timeseries; no schema_info table.
//	2: schema_info; versions and version_points (an experiment's versions
//	   and their points); runs.provenance and runs.settings; point hashes
//	   include cclab's build identity.
//	3: packet_traces (a run's packet trace, RunRecord.Trace).
var schema2 = []string{
	`ALTER TABLE runs ADD COLUMN provenance TEXT NOT NULL DEFAULT '{}'`,
	`ALTER TABLE runs ADD COLUMN settings TEXT NOT NULL DEFAULT '{}'`,
	`CREATE TABLE versions (
		id INTEGER PRIMARY KEY,
		experiment_id INTEGER NOT NULL REFERENCES experiments(id),
		seq INTEGER NOT NULL,
		hash TEXT NOT NULL,
		scenario TEXT NOT NULL,
		build TEXT NOT NULL,
		cclab_version TEXT NOT NULL,
		created TEXT NOT NULL,
		last_used TEXT NOT NULL,
		note TEXT NOT NULL DEFAULT '',
		UNIQUE (experiment_id, hash),
		UNIQUE (experiment_id, seq))`,
	`CREATE TABLE version_points (
		version_id INTEGER NOT NULL REFERENCES versions(id),
		point INTEGER NOT NULL,
		params TEXT NOT NULL,
		point_hash TEXT NOT NULL,
		PRIMARY KEY (version_id, point))`,
	`CREATE INDEX runs_point_hash ON runs (experiment_id, scenario_hash)`,
	`CREATE INDEX version_points_hash ON version_points (point_hash)`,
}

// schema3 adds the packet traces of runs (RunInfo.Trace): one row per
// trace point (idx: its place in the trace, event order).
var schema3 = []string{
	`CREATE TABLE IF NOT EXISTS packet_traces (
		run_id INTEGER NOT NULL REFERENCES runs(id),
		idx BIGINT NOT NULL,
		flow_id BIGINT NOT NULL,
		t DOUBLE PRECISION NOT NULL,
		kind TEXT NOT NULL,
		seq BIGINT NOT NULL,
		PRIMARY KEY (run_id, idx))`,
}

// migrate brings the database to SchemaVersion: it creates a new database's
// tables, and converts an older one, in one transaction (all of it or none)
// that holds the store lock, so shards opening a new database at once
// create it once.
func (s *SQLStore) migrate(ctx context.Context) error {
	// A current database needs no write (and no lock): the common case when
	// many shards open one store.
	if v, err := s.schemaVersion(ctx, s.x()); err != nil || v == SchemaVersion {
		return err
	}
	old, from := false, 0
	err := s.inTx(ctx, true, func(x dq) error {
		if _, err := x.exec(ctx, `CREATE TABLE IF NOT EXISTS schema_info (name TEXT PRIMARY KEY, value TEXT NOT NULL)`); err != nil {
			return fmt.Errorf("creating schema_info: %w", err)
		}
		version, err := s.schemaVersion(ctx, x)
		if err != nil || version == SchemaVersion {
			return err // another process migrated it meanwhile
		}
		from = version
		if version < 2 {
			if err := migrateTo2(ctx, s, x, &old); err != nil {
				return err
			}
		} else {
			old = true
		}
		for _, q := range schema3 {
			if _, err := x.exec(ctx, q); err != nil {
				return fmt.Errorf("migrating to schema 3: %w", err)
			}
		}
		if version > 0 {
			_, err = x.exec(ctx, `UPDATE schema_info SET value = ? WHERE name = 'schema_version'`, strconv.Itoa(SchemaVersion))
			return err
		}
		_, err = x.exec(ctx, `INSERT INTO schema_info (name, value) VALUES ('schema_version', ?)`, strconv.Itoa(SchemaVersion))
		return err
	})
	if err != nil {
		return err
	}
	if old {
		s.Migrated = max(from, 1)
	}
	return nil
}

// migrateTo2 creates a new database's tables of schemas 1 and 2, or
// converts a schema-1 database (old is set when the runs table existed).
func migrateTo2(ctx context.Context, s *SQLStore, x dq, old *bool) error {
	var err error
	// Version 0 in schema_info: a new database or one of schema 1, which
	// had no schema_info. Tell them apart by the runs table.
	if *old, err = x.exists(ctx, s.d.tableExists, "runs"); err != nil {
		return err
	}
	for _, q := range schema1 {
		if _, err := x.exec(ctx, q); err != nil {
			return fmt.Errorf("creating schema: %w", err)
		}
	}
	// Databases from before the notes column (still schema 1) gain it.
	if has, err := x.exists(ctx, s.d.columnExists, "runs", "notes"); err != nil {
		return err
	} else if !has {
		if _, err := x.exec(ctx, `ALTER TABLE runs ADD COLUMN notes TEXT NOT NULL DEFAULT '{}'`); err != nil {
			return fmt.Errorf("adding runs.notes: %w", err)
		}
	}
	for _, q := range schema2 {
		if _, err := x.exec(ctx, q); err != nil {
			return fmt.Errorf("migrating to schema 2: %w", err)
		}
	}
	if err := migrateVersions(ctx, x); err != nil {
		return fmt.Errorf("migrating to schema 2: %w", err)
	}
	return nil
}

// schemaVersion reads schema_info's schema_version: 0 when the table or the
// row is missing (a new database or one of schema 1); an error for a newer
// version than this build knows.
func (s *SQLStore) schemaVersion(ctx context.Context, x dq) (int, error) {
	if has, err := x.exists(ctx, s.d.tableExists, "schema_info"); err != nil || !has {
		return 0, err
	}
	n, err := readVersion(ctx, x, "schema_version")
	if err == nil && n > SchemaVersion {
		return 0, fmt.Errorf("the database has schema version %d; this cclab knows versions up to %d: use a newer cclab", n, SchemaVersion)
	}
	return n, err
}

// readVersion reads the schema_info row name as a version number: 0 when
// the row is missing.
func readVersion(ctx context.Context, x dq, name string) (int, error) {
	var v string
	switch err := x.row(ctx, `SELECT value FROM schema_info WHERE name = ?`, name).Scan(&v); {
	case errors.Is(err, sql.ErrNoRows):
		return 0, nil
	case err != nil:
		return 0, err
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("schema_info: %s %q is not a number", name, v)
	}
	return n, nil
}

// legacyPoint is the runs of a schema-1 database with one point hash.
type legacyPoint struct {
	hash     string
	point    int
	params   string // JSON, as stored
	label    string // params as "axis=value;..."
	first    string // earliest start of its runs (sortableTime)
	last     string // latest finish (sortableTime)
	versions []string
}

// migrateVersions sorts the runs of a schema-1 database into experiment
// versions. Schema 1 kept only an experiment's latest scenario, and runs of an
// edited scenario at the same grid point were grouped together by the report.
// Runs whose point hash matches a point of the stored scenario form the
// version that carries it; the other runs, grouped by point hash and taken in
// order of their first run, fill earlier versions (scenario unknown), a new
// one starting whenever a point's parameters repeat. No run is changed or
// dropped, and no version holds two points with the same parameters.
func migrateVersions(ctx context.Context, tx dq) error {
	type expRow struct {
		id       int64
		name     string
		scenario string
	}
	var exps []expRow
	rows, err := tx.query(ctx, `SELECT id, name, scenario FROM experiments ORDER BY id`)
	if err != nil {
		return err
	}
	for rows.Next() {
		var e expRow
		if err := rows.Scan(&e.id, &e.name, &e.scenario); err != nil {
			rows.Close()
			return err
		}
		exps = append(exps, e)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, e := range exps {
		points, order, err := legacyPoints(ctx, tx, e.id)
		if err != nil {
			return err
		}
		type group struct {
			points   []*legacyPoint
			labels   map[string]bool
			scenario string
			note     string
		}
		var groups []*group
		// The stored scenario's own points.
		current := &group{labels: map[string]bool{}, scenario: e.scenario,
			note: "migrated from schema 1: runs of the stored scenario"}
		if exp, err := scenario.ParseScenario(e.name+".yaml", []byte(e.scenario)); err == nil {
			for _, pt := range exp.Points {
				if lp := points[pt.LegacyHash()]; lp != nil && !current.labels[lp.label] {
					lp.point = pt.Index
					current.points = append(current.points, lp)
					current.labels[lp.label] = true
				}
			}
		}
		if len(current.points) > 0 {
			groups = append(groups, current)
		}
		var open *group
		for _, lp := range order {
			if containsPoint(current.points, lp) {
				continue
			}
			if open == nil || open.labels[lp.label] {
				open = &group{labels: map[string]bool{}, note: "migrated from schema 1: runs of an earlier scenario (its source was not kept)"}
				groups = append(groups, open)
			}
			open.points = append(open.points, lp)
			open.labels[lp.label] = true
		}
		for _, g := range groups {
			sort.SliceStable(g.points, func(i, j int) bool { return g.points[i].point < g.points[j].point })
		}
		// Number the versions in the order of their first run.
		firstOf := func(g *group) string {
			f := ""
			for _, p := range g.points {
				if f == "" || p.first < f {
					f = p.first
				}
			}
			return f
		}
		sort.SliceStable(groups, func(i, j int) bool { return firstOf(groups[i]) < firstOf(groups[j]) })
		for seq, g := range groups {
			var hashes, versions []string
			last := ""
			for _, p := range g.points {
				hashes = append(hashes, p.hash)
				for _, v := range p.versions {
					if !slices.Contains(versions, v) {
						versions = append(versions, v)
					}
				}
				if p.last > last {
					last = p.last
				}
			}
			sort.Strings(hashes)
			h := sha256.Sum256([]byte("schema1\n" + strings.Join(hashes, "\n")))
			vid, err := tx.insertID(ctx, `INSERT INTO versions (experiment_id, seq, hash, scenario, build, cclab_version, created, last_used, note)
				VALUES (?, ?, ?, ?, '', ?, ?, ?, ?)`, e.id, seq+1, hex.EncodeToString(h[:]), g.scenario, strings.Join(versions, ", "),
				firstOf(g), last, g.note)
			if err != nil {
				return err
			}
			for i, p := range g.points {
				idx := p.point
				if g != current {
					idx = i // a migrated group's own order; point indices of different scenarios may collide
				}
				if _, err := tx.exec(ctx, `INSERT INTO version_points (version_id, point, params, point_hash) VALUES (?, ?, ?, ?)`,
					vid, idx, p.params, p.hash); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// legacyPoints reads a schema-1 experiment's runs as points, one per point
// hash, in the order of their first run.
func legacyPoints(ctx context.Context, tx dq, expID int64) (map[string]*legacyPoint, []*legacyPoint, error) {
	points := map[string]*legacyPoint{}
	var order []*legacyPoint
	rows, err := tx.query(ctx, `SELECT point, params, scenario_hash, version, started, finished FROM runs
		WHERE experiment_id = ? ORDER BY id`, expID)
	if err != nil {
		return nil, nil, err
	}
	for rows.Next() {
		var point int
		var params, hash, version, started, finished string
		if err := rows.Scan(&point, &params, &hash, &version, &started, &finished); err != nil {
			rows.Close()
			return nil, nil, err
		}
		started, finished = sortable(started), sortable(finished)
		p := points[hash]
		if p != nil && started < p.first {
			p.first = started
		}
		if p == nil {
			var ps []scenario.Param
			_ = json.Unmarshal([]byte(params), &ps)
			p = &legacyPoint{hash: hash, point: point, params: params, label: scenario.ParamsString(ps), first: started}
			points[hash] = p
			order = append(order, p)
		}
		if finished > p.last {
			p.last = finished
		}
		if !slices.Contains(p.versions, version) {
			p.versions = append(p.versions, version)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	return points, order, nil
}

func containsPoint(list []*legacyPoint, p *legacyPoint) bool {
	for _, q := range list {
		if q == p {
			return true
		}
	}
	return false
}

// sortable rewrites an RFC 3339 time in sortableTime's fixed width.
func sortable(s string) string {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return s
	}
	return t.UTC().Format(sortableTime)
}
