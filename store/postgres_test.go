package store

import (
	"testing"

	"cclab/internal/testsvc"
)

// TestStorePostgres runs storeTests on a PostgreSQL server (started for the
// test in a temporary directory): the same statements and transactions as
// on SQLite, through pgx.
func TestStorePostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a PostgreSQL server")
	}
	newDB := testsvc.StartPostgres(t).DBMaker("store")
	for _, tc := range storeTests {
		t.Run(tc.name, func(t *testing.T) { tc.test(t, newDB) })
	}
}
