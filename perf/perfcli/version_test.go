package perfcli

import (
	"io"
	"runtime"
	"strings"
	"testing"
)

// TestVersion: -version prints the build's version line (module version,
// VCS commit, Go version) on stdout and exits with status 0, in the sender
// and in the receiver.
func TestVersion(t *testing.T) {
	for name, tool := range map[string]func(args []string, stdout, stderr io.Writer) int{
		"sender":   Sender,
		"receiver": func(args []string, stdout, stderr io.Writer) int { return Receiver(args, stdout, stderr, nil) },
	} {
		var out, errs strings.Builder
		if code := tool([]string{"-version"}, &out, &errs); code != 0 {
			t.Fatalf("%s -version: exit status %d, want 0; stderr %q", name, code, errs.String())
		}
		if got := out.String(); !strings.HasPrefix(got, name+": cclab ") || !strings.Contains(got, runtime.Version()) || !strings.Contains(got, "build ") {
			t.Errorf("%s -version: got %q, want \"%s: cclab <version> ... %s ... build <identity>\"", name, got, name, runtime.Version())
		}
	}
}
