package eval

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
	st, err := open(v1)
	if err != nil {
		t.Fatal(err)
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
