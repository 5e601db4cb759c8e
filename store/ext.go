package store

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
)

// SQLTx runs portable statements (the store's subset: "?" placeholders,
// INSERT ... RETURNING, ON CONFLICT) in the store's dialect, on the
// database or in a transaction. Other packages keep their own tables in the
// results database with it (the campaign store, docs/campaigns.md), with
// the same statements on SQLite and PostgreSQL.
type SQLTx struct{ x dq }

// Exec runs a statement.
func (t SQLTx) Exec(ctx context.Context, q string, args ...any) (sql.Result, error) {
	return t.x.exec(ctx, q, args...)
}

// Query runs a query.
func (t SQLTx) Query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	return t.x.query(ctx, q, args...)
}

// QueryRow runs a query of one row.
func (t SQLTx) QueryRow(ctx context.Context, q string, args ...any) *sql.Row {
	return t.x.row(ctx, q, args...)
}

// SQL runs portable statements on the database itself (each its own
// transaction).
func (s *SQLStore) SQL() SQLTx { return SQLTx{s.x()} }

// InTx runs f in one transaction: committed if f succeeds, rolled back if
// it fails. With lock the transaction first takes the store lock
// (PostgreSQL's advisory lock; SQLite's transactions take the write lock
// when they begin), for transactions that read before they write.
func (s *SQLStore) InTx(ctx context.Context, lock bool, f func(SQLTx) error) error {
	return s.inTx(ctx, lock, func(x dq) error { return f(SQLTx{x}) })
}

// TablesVersion returns the schema version of a component's tables
// (MigrateTables): 0 when the database does not hold them. It creates
// nothing.
func (s *SQLStore) TablesVersion(ctx context.Context, component string) (int, error) {
	return readVersion(ctx, s.x(), component+"_schema_version")
}

// MigrateTables brings the tables of a component (e.g. "campaign") to
// schema version len(steps), as the store migrates its own: steps[k-1]
// creates or converts version k; the version is kept in schema_info under
// "<component>_schema_version"; all pending steps run in one transaction
// holding the store lock (concurrent openers migrate once); a database of a
// newer version than steps knows is refused.
func (s *SQLStore) MigrateTables(ctx context.Context, component string, steps [][]string) error {
	key := component + "_schema_version"
	read := func(x dq) (int, error) {
		n, err := readVersion(ctx, x, key)
		if err != nil {
			return 0, err
		}
		if n > len(steps) {
			return 0, fmt.Errorf("the database's %s tables have schema version %d; this cclab knows versions up to %d: use a newer cclab", component, n, len(steps))
		}
		return n, nil
	}
	if v, err := read(s.x()); err != nil || v == len(steps) {
		return err
	}
	return s.inTx(ctx, true, func(x dq) error {
		v, err := read(x)
		if err != nil || v == len(steps) {
			return err // another process migrated meanwhile
		}
		for k := v; k < len(steps); k++ {
			for _, q := range steps[k] {
				if _, err := x.exec(ctx, q); err != nil {
					return fmt.Errorf("%s tables, schema version %d: %w", component, k+1, err)
				}
			}
		}
		_, err = x.exec(ctx, `INSERT INTO schema_info (name, value) VALUES (?, ?)
			ON CONFLICT (name) DO UPDATE SET value = excluded.value`, key, strconv.Itoa(len(steps)))
		return err
	})
}
