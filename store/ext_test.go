package store

import (
	"context"
	"strings"
	"testing"
)

// TestMigrateTables: a component's tables are created at their newest
// version, migrated step by step on reopening, and refused by a build that
// knows fewer versions.
func TestMigrateTables(t *testing.T) {
	ctx := context.Background()
	db := newSQLiteDB(t)
	v1 := [][]string{{`CREATE TABLE extra (id INTEGER PRIMARY KEY, a TEXT NOT NULL)`}}
	v2 := append(v1, []string{`ALTER TABLE extra ADD COLUMN b TEXT NOT NULL DEFAULT 'x'`})
	open := func(steps [][]string) (*SQLStore, error) {
		st, err := OpenSQLite(db)
		if err != nil {
			t.Fatal(err)
		}
		if err := st.MigrateTables(ctx, "extra", steps); err != nil {
			st.Close()
			return nil, err
		}
		return st, nil
	}
	fresh, err := OpenSQLite(db)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := fresh.TablesVersion(ctx, "extra"); v != 0 || err != nil {
		t.Errorf("TablesVersion before migrating: got %d, %v; want 0, nil", v, err)
	}
	fresh.Close()
	st, err := open(v1)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := st.TablesVersion(ctx, "extra"); v != 1 || err != nil {
		t.Errorf("TablesVersion after migrating to 1: got %d, %v; want 1, nil", v, err)
	}
	if err := st.InTx(ctx, false, func(tx SQLTx) error {
		_, err := tx.Exec(ctx, `INSERT INTO extra (a) VALUES (?)`, "row")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	st, err = open(v2)
	if err != nil {
		t.Fatal(err)
	}
	var a, b string
	if err := st.SQL().QueryRow(ctx, `SELECT a, b FROM extra`).Scan(&a, &b); err != nil || a != "row" || b != "x" {
		t.Errorf("after migrating: got %q, %q, %v; want row, x", a, b, err)
	}
	if v, err := st.TablesVersion(ctx, "extra"); v != 2 || err != nil {
		t.Errorf("TablesVersion after migrating to 2: got %d, %v; want 2, nil", v, err)
	}
	st.Close()
	if st, err = open(v2); err != nil { // current: no change
		t.Fatal(err)
	}
	st.Close()
	_, err = open(v1)
	if err == nil || !strings.Contains(err.Error(), "schema version 2") {
		t.Errorf("opening with fewer versions: got %v, want an error naming schema version 2", err)
	}
}
