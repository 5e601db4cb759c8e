package testenv

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestProgram(t *testing.T) {
	if err := Program("sh"); err != nil {
		t.Errorf("Program(sh): got %v, want nil", err)
	}
	if err := Program("no-such-program-cclab"); err == nil || !strings.Contains(err.Error(), "not on PATH") {
		t.Errorf("Program(no-such-program-cclab): got %v, want a not-on-PATH error", err)
	}
}

func TestCI(t *testing.T) {
	for _, tc := range []struct {
		env  string
		want bool
	}{{"true", true}, {"", false}, {"1", false}} {
		t.Setenv("CI", tc.env)
		if got := CI(); got != tc.want {
			t.Errorf("CI=%q: got %v, want %v", tc.env, got, tc.want)
		}
	}
}

func TestGoBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go build; skipped with -short")
	}
	dir := BuildTools(t, "cclab/scripts/testfilter")
	fi, err := os.Stat(filepath.Join(dir, "testfilter"))
	if err != nil {
		t.Fatalf("BuildTools(testfilter): %v", err)
	}
	if got := fi.Mode().Perm() & 0o111; got != 0o111 {
		t.Errorf("binary mode: got %v, want executable by all", fi.Mode())
	}
	if di, err := os.Stat(dir); err != nil || di.Mode().Perm() != 0o755 {
		t.Errorf("directory mode: got %v (%v), want 0755", di.Mode(), err)
	}
	err = GoBuild(t.TempDir(), "cclab/no/such/command")
	if err == nil || !strings.Contains(err.Error(), "cclab/no/such/command") {
		t.Errorf("GoBuild(missing package): got %v, want an error naming it", err)
	}
	if err := GoBuild(t.TempDir()); err == nil {
		t.Error("GoBuild(no package): got nil, want an error")
	}
}
