package cli

import (
	"flag"
	"fmt"
	"io"

	"cclab/internal/buildinfo"
)

// versionFlag is the boolean -version flag AddVersion registers.
type versionFlag struct {
	set bool
	w   io.Writer
}

func (v *versionFlag) String() string   { return fmt.Sprint(v.set) }
func (v *versionFlag) IsBoolFlag() bool { return true }
func (v *versionFlag) Set(s string) error {
	switch s {
	case "true":
		v.set = true
	case "false":
		v.set = false
	default:
		return fmt.Errorf("want no value (-version)")
	}
	return nil
}

// AddVersion registers -version on fs: after fs is parsed, Parse (or
// Version, for commands that parse fs themselves) prints the build's version
// line (internal/buildinfo: module version, VCS commit, Go version, OS and
// kernel) on w, and the command exits with status 0.
func AddVersion(fs *flag.FlagSet, w io.Writer) {
	fs.Var(&versionFlag{w: w}, "version", "print the version (module version, VCS commit, Go version, OS/kernel) and exit")
}

// Version reports whether -version was given on the parsed fs, and then
// prints the version line.
func Version(fs *flag.FlagSet) bool {
	f := fs.Lookup("version")
	if f == nil {
		return false
	}
	v, ok := f.Value.(*versionFlag)
	if !ok || !v.set {
		return false
	}
	fmt.Fprintln(v.w, buildinfo.Read().Line(fs.Name()))
	return true
}
