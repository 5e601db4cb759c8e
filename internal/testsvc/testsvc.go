// Package testsvc starts real services for tests, each in a temporary
// directory, on loopback, stopped when the test ends: a PostgreSQL server
// (Debian's postgresql package) and a single-node Slurm cluster (munged,
// slurmctld and slurmd from Debian's slurm-wlm and munge packages).
//
// A test that needs a service the machine lacks is skipped with the reason,
// except under CI (CI=true), where it fails (internal/testenv): CI installs
// the packages (.ci/run), so a missing one is a broken setup, not a reason
// to skip.
package testsvc

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"cclab/internal/testenv"
)

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("finding a free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// tempDir makes a temporary directory that other users can enter (services
// that drop root, such as PostgreSQL, need to reach their files), removed
// when the test ends (after the services stop: cleanups run last first).
func tempDir(t testing.TB, prefix string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// daemon is a service process run in the foreground as the test's child.
type daemon struct {
	name string
	cmd  *exec.Cmd
	log  string // file with its output
	done chan error
}

// startDaemon starts a foreground daemon whose output goes to dir/NAME.out,
// and stops it (SIGTERM, then SIGKILL after a grace period) when the test
// ends.
func startDaemon(t testing.TB, dir, name string, argv ...string) *daemon {
	t.Helper()
	d := &daemon{name: name, log: filepath.Join(dir, name+".out"), done: make(chan error, 1)}
	out, err := os.Create(d.log)
	if err != nil {
		t.Fatal(err)
	}
	d.cmd = exec.Command(argv[0], argv[1:]...)
	d.cmd.Stdout, d.cmd.Stderr = out, out
	d.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := d.cmd.Start(); err != nil {
		out.Close()
		t.Fatalf("starting %s: %v", name, err)
	}
	go func() { d.done <- d.cmd.Wait(); out.Close() }()
	t.Cleanup(func() { d.stop(t) })
	return d
}

// stop ends the daemon's process group.
func (d *daemon) stop(t testing.TB) {
	pgid := d.cmd.Process.Pid
	syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-d.done:
	case <-time.After(15 * time.Second):
		t.Logf("%s did not stop on SIGTERM within 15 s; killing it", d.name)
		syscall.Kill(-pgid, syscall.SIGKILL)
		<-d.done
	}
}

// exited reports whether the daemon has exited, with its output.
func (d *daemon) exited() (bool, string) {
	select {
	case err := <-d.done:
		d.done <- err
		b, _ := os.ReadFile(d.log)
		return true, fmt.Sprintf("%v\n%s", err, b)
	default:
		return false, ""
	}
}

// waitFor polls ready until it returns true, failing the test after limit
// (generous: a start-up bound on a loaded machine, not a timing check) or
// when one of the daemons exits.
func waitFor(t testing.TB, what string, limit time.Duration, ready func() bool, daemons ...*daemon) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !ready() {
		for _, d := range daemons {
			if gone, out := d.exited(); gone {
				t.Fatalf("%s exited while waiting for %s: %s", d.name, what, out)
			}
		}
		if time.Now().After(deadline) {
			var logs bytes.Buffer
			for _, d := range daemons {
				b, _ := os.ReadFile(d.log)
				fmt.Fprintf(&logs, "--- %s:\n%s\n", d.name, b)
			}
			t.Fatalf("%s not ready after %v\n%s", what, limit, logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// serviceUser returns the credential to run a service that refuses root as
// (the named system user) when the test runs as root, else nil (run as the
// test's user).
func serviceUser(t testing.TB, name string) *syscall.Credential {
	t.Helper()
	if os.Geteuid() != 0 {
		return nil
	}
	u, err := user.Lookup(name)
	testenv.Need(t, fmt.Sprintf("a %q user to run the service as (the test runs as root)", name), err)
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
}
