package buildinfo

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"runtime"
	"strings"
	"testing"
)

func TestIdentity(t *testing.T) {
	hash := func() string { return "abc" }
	none := func() string { return "" }
	for _, tc := range []struct {
		name string
		info Info
		exe  func() string
		want string
	}{
		{"clean commit", Info{Commit: "de61249"}, hash, "commit:de61249"},
		{"modified tree", Info{Commit: "de61249", Modified: true}, hash, "exe:abc"},
		{"no VCS information", Info{}, hash, "exe:abc"},
		{"nothing known", Info{}, none, "unknown"},
	} {
		if got := identity(tc.info, tc.exe); got != tc.want {
			t.Errorf("%s: identity got %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestRead checks the running test binary's information: the Go version and
// platform of the runtime, and (built without VCS stamping by go test) an
// identity that is the SHA-256 of the executable.
func TestRead(t *testing.T) {
	i := Read()
	if i.Go != runtime.Version() || i.OS != runtime.GOOS || i.Arch != runtime.GOARCH {
		t.Errorf("Read: got %+v, want the runtime's Go version and platform", i)
	}
	if i.Module == "" || i.Version == "" {
		t.Errorf("Read: module %q version %q, want both set", i.Module, i.Version)
	}
	if runtime.GOOS == "linux" && !strings.HasPrefix(i.Kernel, "Linux ") {
		t.Errorf("Kernel: got %q, want Linux <release>", i.Kernel)
	}
	exe, _ := os.Executable()
	b, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	if i.Commit == "" || i.Modified {
		if want := "exe:" + hex.EncodeToString(sum[:]); i.Build != want {
			t.Errorf("Build: got %q, want %q", i.Build, want)
		}
	}
	line := i.Line("tool")
	for _, want := range []string{"tool: ", i.Module, i.Go, i.Build} {
		if !strings.Contains(line, want) {
			t.Errorf("Line: %q lacks %q", line, want)
		}
	}
}

func TestShort(t *testing.T) {
	for _, tc := range []struct {
		info Info
		want string
	}{
		{Info{Version: "(devel)"}, "(devel)"},
		{Info{Version: "(devel)", Commit: "de612496efa390b4cdab"}, "(devel) de612496efa3"},
		{Info{Version: "(devel)", Commit: "de612496efa390b4cdab", Modified: true}, "(devel) de612496efa3+modified"},
		{Info{Version: "v0.0.0-20261201025415-de612496efa3+dirty", Commit: "de612496efa390b4cdab", Modified: true}, "v0.0.0-20261201025415-de612496efa3+dirty"},
		{Info{Version: "v1.2.0", Commit: "de612496efa390b4cdab"}, "v1.2.0 de612496efa3"},
	} {
		if got := tc.info.Short(); got != tc.want {
			t.Errorf("Short(%+v): got %q, want %q", tc.info, got, tc.want)
		}
	}
}
