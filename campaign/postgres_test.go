package campaign

import (
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
	newDB := testsvc.StartPostgres(t).DBMaker("campaign")
	for _, tc := range schedulerTests {
		t.Run(tc.name, func(t *testing.T) { tc.test(t, newDB) })
	}
}
