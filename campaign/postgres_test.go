package campaign

import (
	"fmt"
	"sync/atomic"
	"testing"

	"cclab/internal/testsvc"
)

// TestSchedulerPostgres runs the scheduler tests on a PostgreSQL server
// started for the test: the same tables, statements and transactions as on
// SQLite.
func TestSchedulerPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a PostgreSQL server")
	}
	pg := testsvc.StartPostgres(t)
	var n atomic.Int64
	newDB := func(t *testing.T) string { return pg.CreateDB(t, fmt.Sprintf("campaign%d", n.Add(1))) }
	for _, tc := range schedulerTests {
		t.Run(tc.name, func(t *testing.T) { tc.test(t, newDB) })
	}
}
