package eval

import (
	"path/filepath"
	"testing"

	"cclab/store"
)

// openTestStore opens a new SQLite store, closed when the test ends.
func openTestStore(t *testing.T) *store.SQLStore {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "test.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// count returns the number of rows of a table.
func count(t *testing.T, st *store.SQLStore, table string) int {
	t.Helper()
	var n int
	if err := st.DB().QueryRow(`SELECT COUNT(*) FROM ` + table).Scan(&n); err != nil {
		t.Fatalf("count %s: %v", table, err)
	}
	return n
}
