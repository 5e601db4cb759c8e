package store

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"
)

// TestSQLiteBusy: sqliteBusy recognises SQLite's "database is locked"
// (another connection holds the write lock and there is no busy timeout),
// wrapped or not, and nothing else.
func TestSQLiteBusy(t *testing.T) {
	path := filepath.Join(t.TempDir(), "busy.db")
	holder, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	ctx := context.Background()
	conn, err := holder.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "CREATE TABLE t (x)"); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, "BEGIN EXCLUSIVE"); err != nil {
		t.Fatal(err)
	}
	defer conn.ExecContext(ctx, "ROLLBACK")
	other, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(0)")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	_, busy := other.Exec("INSERT INTO t VALUES (1)")
	_, syntax := other.Exec("NOT SQL")
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"locked", busy, true},
		{"wrapped", errors.Join(errors.New("store x"), busy), true},
		{"syntax error", syntax, false},
		{"other error", errors.New("database is locked"), false},
		{"nil", nil, false},
	} {
		if got := sqliteBusy(tc.err); got != tc.want {
			t.Errorf("%s: sqliteBusy(%v) = %v, want %v", tc.name, tc.err, got, tc.want)
		}
	}
}
