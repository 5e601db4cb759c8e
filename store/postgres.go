package store

import (
	"database/sql"
	"net/url"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
)

// OpenPostgres opens the store in the PostgreSQL database at url
// (postgres://user[:password]@host[:port]/database[?sslmode=disable],
// libpq's URL form), creating its tables on first use and migrating an older
// schema in one transaction, as OpenSQLite does. Any number of processes may
// write to it at once (the shards of a sweep): each run is one transaction,
// and the transactions that read before they write (registering a version,
// migrating) hold a transaction-scoped advisory lock.
func OpenPostgres(dsn string) (*SQLStore, error) {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(4) // the sweep's writes are serialized; the report reads
	return openSQL(db, postgresDialect, DBName(dsn))
}

// DBName is a -db argument for messages: a PostgreSQL URL without its
// password, an SQLite file as it is.
func DBName(db string) string {
	if !IsPostgresURL(db) {
		return db
	}
	u, err := url.Parse(db)
	if err != nil {
		return "the PostgreSQL database"
	}
	return u.Redacted()
}
