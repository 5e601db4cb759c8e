package buildinfo

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
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

// TestStamp: a commit stamped with -ldflags -X is used when the go command
// stamped none (-buildvcs=false), and the go command's own stamp wins.
func TestStamp(t *testing.T) {
	defer func(c, tm, m string) { stampCommit, stampTime, stampModified = c, tm, m }(stampCommit, stampTime, stampModified)
	stampCommit, stampTime, stampModified = "4e1a8f151945be3cd6b0", "2026-12-07T03:27:13Z", "false"
	none := func() (*debug.BuildInfo, bool) { return &debug.BuildInfo{Main: debug.Module{Path: "cclab"}}, true }
	if i := read(none); i.Commit != stampCommit || i.Time != stampTime || i.Modified || identity(i, func() string { return "" }) != "commit:"+stampCommit {
		t.Errorf("stamped build: got %+v, want commit %s at %s, unmodified, identity commit:%s", i, stampCommit, stampTime, stampCommit)
	}
	vcs := func() (*debug.BuildInfo, bool) {
		return &debug.BuildInfo{Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "de612496efa3"}}}, true
	}
	if i := read(vcs); i.Commit != "de612496efa3" {
		t.Errorf("VCS-stamped build: commit %q, want the go command's de612496efa3", i.Commit)
	}
	stampCommit = ""
	if line := read(none).Line("tool"); !strings.Contains(line, "commit unknown") || !strings.Contains(line, "scripts/ldflags.sh") {
		t.Errorf("unstamped build: line %q, want it to say the commit is unknown and how to stamp it", line)
	}
}

// TestBuildVCSFalse builds a tool as scripts/test.sh does (GOFLAGS=
// -buildvcs=false) with scripts/ldflags.sh's flags, and checks that its
// -version names the checkout's commit.
func TestBuildVCSFalse(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped with -short: builds cmd/sender")
	}
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("not in a git checkout (git rev-parse HEAD: %v)", err)
	}
	flags, err := exec.Command("sh", "../../scripts/ldflags.sh").Output()
	if err != nil {
		t.Fatalf("scripts/ldflags.sh: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "sender")
	build := exec.Command("go", "build", "-ldflags", strings.TrimSpace(string(flags)), "-o", bin, "cclab/cmd/sender")
	build.Env = append(os.Environ(), "GOFLAGS=-buildvcs=false")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "-version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if commit := strings.TrimSpace(string(head)); !strings.Contains(string(out), "(commit "+commit) {
		t.Errorf("-version of a -buildvcs=false build: %q, want it to name commit %s", out, commit)
	}
}
