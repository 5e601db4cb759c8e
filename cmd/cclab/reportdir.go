package main

import (
	"flag"
	"net/url"
	"path"
	"path/filepath"
	"strings"

	"cclab/internal/cli"
	"cclab/store"
)

// reportDir is the report directory of a command whose -out flag (name)
// defaults to "reports": given, it is used as it is; left at its default
// with a database other than store.DefaultDB, the database's name is
// appended ("reports-sweep" for sweep.db or postgres://.../sweep), so the
// reports of different databases do not overwrite each other.
func reportDir(fs *flag.FlagSet, name, out, db string) string {
	if cli.IsSet(fs, name) || db == store.DefaultDB || db == "" {
		return out
	}
	return out + "-" + dbLabel(db)
}

// dbLabel is a short name of the database db: an SQLite file's base name
// without its extension, or a PostgreSQL URL's database name.
func dbLabel(db string) string {
	if store.IsPostgresURL(db) {
		if u, err := url.Parse(db); err == nil && strings.Trim(u.Path, "/") != "" {
			return path.Base(u.Path)
		}
		return "postgres"
	}
	base := filepath.Base(db)
	return strings.TrimSuffix(base, filepath.Ext(base))
}
