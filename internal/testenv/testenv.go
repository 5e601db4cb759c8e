// Package testenv decides what a test does when a component it needs (a
// device, a privilege, an external program) is missing: outside CI it skips
// with the reason printed; in CI (CI=true), where .ci/run installs every
// component the tests need, it fails.
package testenv

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
)

// CI reports whether the tests run in CI (the environment variable CI is
// "true").
func CI() bool { return os.Getenv("CI") == "true" }

// Need stops t if err is not nil: it fails with CI=true and skips
// otherwise, in both cases saying that what is missing and why.
func Need(t testing.TB, what string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if CI() {
		t.Fatalf("CI=true but %s is missing: %v", what, err)
	}
	t.Skipf("%s is missing: %v", what, err)
}

// Program returns an error if the executable name is not on PATH.
func Program(name string) error {
	if _, err := exec.LookPath(name); err != nil {
		return fmt.Errorf("%s not on PATH (install it, e.g. apt-get install %s)", name, name)
	}
	return nil
}

// GoBuild builds the commands pkgs (import paths, e.g. "cclab/cmd/cclab")
// into dir, each as dir/NAME (go build -o dir/), and leaves dir readable and
// searchable by every user: Slurm tasks and processes in other namespaces
// run the binaries.
func GoBuild(dir string, pkgs ...string) error {
	if len(pkgs) == 0 {
		return fmt.Errorf("testenv.GoBuild: no package to build")
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return err
	}
	args := append([]string{"build", "-o", dir + string(os.PathSeparator)}, pkgs...)
	if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %v\n%s", strings.Join(pkgs, " "), err, out)
	}
	return nil
}

// BuildTools builds the commands pkgs into a new temporary directory of t
// (GoBuild) and returns the directory; the binaries are DIR/NAME, NAME the
// last element of the import path. It stops t if the build fails.
func BuildTools(t testing.TB, pkgs ...string) string {
	t.Helper()
	dir := t.TempDir()
	if err := GoBuild(dir, pkgs...); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Buffer is a bytes.Buffer that one writer (e.g. a command's output
// copier) and concurrent readers may share.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns what was written so far.
func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
