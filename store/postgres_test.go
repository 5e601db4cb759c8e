package store

import (
	"fmt"
	"sync/atomic"
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
	pg := testsvc.StartPostgres(t)
	var n atomic.Int64
	newDB := func(t *testing.T) string { return pg.CreateDB(t, fmt.Sprintf("store%d", n.Add(1))) }
	for _, tc := range storeTests {
		t.Run(tc.name, func(t *testing.T) { tc.test(t, newDB) })
	}
}
