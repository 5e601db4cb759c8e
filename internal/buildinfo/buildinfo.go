// Package buildinfo says which build of cclab is running: the main module's
// version and VCS commit from the Go build information (runtime/debug), the Go
// version, the host's OS, architecture and kernel, and an identity of the
// build that run keys include (docs/store.md, "Scenario identity"). Every tool
// prints it with -version.
package buildinfo

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
)

// Info describes the running build.
type Info struct {
	Module   string `json:"module"`             // main module path ("cclab")
	Version  string `json:"version"`            // module version; "(devel)" when the go command stamped none
	Commit   string `json:"commit,omitempty"`   // VCS revision, from the go command's stamp or -ldflags -X (stampCommit); "" when unknown
	Time     string `json:"vcs_time,omitempty"` // commit time, RFC 3339
	Modified bool   `json:"modified,omitempty"` // built from a tree with uncommitted changes
	Go       string `json:"go"`                 // Go version of the toolchain that built it
	OS       string `json:"os"`                 // GOOS
	Arch     string `json:"arch"`               // GOARCH
	Kernel   string `json:"kernel,omitempty"`   // kernel name and release (uname), "" where unknown
	Build    string `json:"build"`              // the build's identity (Identity)
}

// The commit stamped at build time by -ldflags -X (scripts/ldflags.sh
// prints the flags), for builds the go command stamps with no VCS
// information: -buildvcs=false (as scripts/test.sh and many build machines
// set in GOFLAGS) and go run. The go command's own stamp wins when both
// are there.
var (
	stampCommit   string // full commit hash (git rev-parse HEAD)
	stampTime     string // commit time, RFC 3339 in UTC
	stampModified string // "true": built from a tree with uncommitted changes
)

// base is the build information without the identity (no file is read).
var base = sync.OnceValue(func() Info { return read(debug.ReadBuildInfo) })

// read is base with the build information passed in, for tests.
func read(buildInfo func() (*debug.BuildInfo, bool)) Info {
	i := Info{Module: "cclab", Version: "(devel)", Go: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH, Kernel: kernel()}
	if bi, ok := buildInfo(); ok {
		if bi.Main.Path != "" {
			i.Module = bi.Main.Path
		}
		if bi.Main.Version != "" {
			i.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				i.Commit = s.Value
			case "vcs.time":
				i.Time = s.Value
			case "vcs.modified":
				i.Modified = s.Value == "true"
			}
		}
	}
	if i.Commit == "" && stampCommit != "" {
		i.Commit, i.Time, i.Modified = stampCommit, stampTime, stampModified == "true"
	}
	return i
}

// build is the identity; it hashes the executable when the build has no
// clean commit, so it is computed only when asked for.
var build = sync.OnceValue(func() string { return identity(base(), executableHash) })

// Read returns the running build's information (computed once).
func Read() Info {
	i := base()
	i.Build = build()
	return i
}

// Short returns Read().Short() without computing the build identity.
func Short() string { return base().Short() }

// identity is the build's identity: "commit:<revision>" for a build of a
// clean checkout stamped by the go command, else "exe:<SHA-256 of the
// executable>" (go run, -buildvcs=false, uncommitted changes: the commit
// alone would not say which code ran), else "unknown".
func identity(i Info, exeHash func() string) string {
	if i.Commit != "" && !i.Modified {
		return "commit:" + i.Commit
	}
	if h := exeHash(); h != "" {
		return "exe:" + h
	}
	return "unknown"
}

// executableHash returns the hex SHA-256 of the running executable, or "".
func executableHash() string {
	path, err := os.Executable()
	if err != nil {
		return ""
	}
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return ""
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Short returns the version for a report's or a list's header: the module
// version, with the commit's first 12 characters and "+modified" when known.
func (i Info) Short() string {
	v := i.Version
	if i.Commit != "" {
		c := i.Commit
		if len(c) > 12 {
			c = c[:12]
		}
		if !strings.Contains(v, c) {
			v += " " + c
		}
		if i.Modified && !strings.Contains(v, "dirty") {
			v += "+modified"
		}
	}
	return v
}

// System returns the host's OS, architecture and kernel, e.g.
// "linux/amd64 Linux 6.1.0" (iperf3's system_info).
func (i Info) System() string {
	return strings.TrimSpace(fmt.Sprintf("%s/%s %s", i.OS, i.Arch, i.Kernel))
}

// Line returns the -version line of a tool, e.g.
// "sender: cclab v0.0.0-20261201025415-de612496efa3 (commit de612496efa3…,
// 2026-12-01T02:54:15Z), go1.26.8 linux/amd64, Linux 6.1.0".
func (i Info) Line(tool string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s %s", tool, i.Module, i.Version)
	switch {
	case i.Commit != "":
		fmt.Fprintf(&b, " (commit %s", i.Commit)
		if i.Time != "" {
			fmt.Fprintf(&b, ", %s", i.Time)
		}
		if i.Modified {
			b.WriteString(", with uncommitted changes")
		}
		b.WriteString(")")
	default:
		b.WriteString(" (commit unknown: built by go run or with -buildvcs=false without scripts/ldflags.sh's -ldflags; README shows the build command that stamps it)")
	}
	fmt.Fprintf(&b, ", %s %s/%s", i.Go, i.OS, i.Arch)
	if i.Kernel != "" {
		fmt.Fprintf(&b, ", %s", i.Kernel)
	}
	fmt.Fprintf(&b, "; build %s", i.Build)
	return b.String()
}
