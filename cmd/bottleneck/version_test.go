package main

import (
	"runtime"
	"strings"
	"testing"
)

// TestVersion: -version prints the build's version line (module version,
// VCS commit, Go version) on stdout and exits with status 0.
func TestVersion(t *testing.T) {
	var out, errs strings.Builder
	if code := run([]string{"-version"}, &out, &errs, nil); code != 0 {
		t.Fatalf("-version: exit status %d, want 0; stderr %q", code, errs.String())
	}
	if got := out.String(); !strings.HasPrefix(got, "bottleneck: cclab ") || !strings.Contains(got, runtime.Version()) || !strings.Contains(got, "build ") {
		t.Errorf("-version: got %q, want \"bottleneck: cclab <version> ... %s ... build <identity>\"", got, runtime.Version())
	}
}
