package store

// Schema1 and OpenMigrated serve the external tests (package store_test),
// which run sweeps through the harness above this package.
var (
	Schema1      = schema1
	OpenMigrated = openMigrated
)
