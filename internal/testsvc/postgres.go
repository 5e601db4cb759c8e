package testsvc

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver

	"cclab/internal/testenv"
)

// PostgresUser is the database superuser of the test server (trust
// authentication on loopback: no password).
const PostgresUser = "cclab"

// Postgres is a running PostgreSQL server.
type Postgres struct {
	Port int
	Dir  string // its temporary directory (data in Dir/data, log in Dir/postgres.log)
}

// postgresBin finds the server's programs: Debian's
// /usr/lib/postgresql/VERSION/bin (the newest), or initdb on PATH.
func postgresBin() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Strings(dirs)
	for i := len(dirs) - 1; i >= 0; i-- {
		if _, err := os.Stat(filepath.Join(dirs[i], "pg_ctl")); err == nil {
			return dirs[i], nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", fmt.Errorf("PostgreSQL server programs (initdb, pg_ctl) not found in /usr/lib/postgresql/*/bin or on PATH (Debian: apt-get install postgresql)")
}

// StartPostgres initializes a database cluster in a temporary directory,
// starts a server on 127.0.0.1 (a free port; also a Unix socket in its
// directory) and stops it when the test ends. As root it runs the server as
// the postgres user (PostgreSQL refuses to run as root).
func StartPostgres(t testing.TB) *Postgres {
	t.Helper()
	bin, err := postgresBin()
	testenv.Need(t, "PostgreSQL", err)
	cred := serviceUser(t, "postgres")
	p := &Postgres{Dir: tempDir(t, "cclab-pg-"), Port: freePort(t)}
	data := filepath.Join(p.Dir, "data")
	if cred != nil {
		if err := os.Chown(p.Dir, int(cred.Uid), int(cred.Gid)); err != nil {
			t.Fatal(err)
		}
	}
	run := func(argv ...string) error {
		cmd := exec.Command(filepath.Join(bin, argv[0]), argv[1:]...)
		cmd.Dir = p.Dir
		if cred != nil {
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		}
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("%s: %v\n%s", strings.Join(argv, " "), err, out)
		}
		return nil
	}
	if err := run("initdb", "-D", data, "-U", PostgresUser, "--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync"); err != nil {
		t.Fatal(err)
	}
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=50", p.Port, p.Dir)
	if err := run("pg_ctl", "-D", data, "-l", filepath.Join(p.Dir, "postgres.log"), "-o", opts, "-w", "-t", "120", "start"); err != nil {
		log, _ := os.ReadFile(filepath.Join(p.Dir, "postgres.log"))
		t.Fatalf("%v\n%s", err, log)
	}
	t.Cleanup(func() {
		if err := run("pg_ctl", "-D", data, "-m", "fast", "-w", "-t", "60", "stop"); err != nil {
			t.Logf("stopping PostgreSQL: %v", err)
		}
	})
	return p
}

// URL returns the postgres:// URL of database db on the server.
func (p *Postgres) URL(db string) string {
	return fmt.Sprintf("postgres://%s@127.0.0.1:%d/%s?sslmode=disable", PostgresUser, p.Port, db)
}

// DBMaker returns a function that creates a fresh empty database named
// prefix1, prefix2, … on each call and returns its URL: one database per
// subtest of a table run on this server.
func (p *Postgres) DBMaker(prefix string) func(t *testing.T) string {
	var n atomic.Int64
	return func(t *testing.T) string { return p.CreateDB(t, fmt.Sprintf("%s%d", prefix, n.Add(1))) }
}

// CreateDB creates an empty database and returns its URL.
func (p *Postgres) CreateDB(t testing.TB, name string) string {
	t.Helper()
	db, err := sql.Open("pgx", p.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := db.ExecContext(ctx, `CREATE DATABASE "`+name+`"`); err != nil {
		t.Fatalf("creating database %s: %v", name, err)
	}
	return p.URL(name)
}
