// Package cli holds the flag handling cclab's commands share.
package cli

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
)

// Parse parses args into fs, which must use flag.ContinueOnError, and refuses
// positional arguments. ok is false when the command should exit at once
// with code: 0 after -h or -help (fs.Usage has run), 2 on a bad flag or on a
// positional argument, each reported as one line on fs.Output() (see
// ParseArgs; "NAME: unexpected arguments [...]"); 0 after -version
// (AddVersion), once the version line is printed.
func Parse(fs *flag.FlagSet, args []string) (code int, ok bool) {
	if code, ok := ParseArgs(fs, args); !ok {
		return code, ok
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(fs.Output(), "%s: unexpected arguments %q\n", fs.Name(), fs.Args())
		return 2, false
	}
	return 0, true
}

// ParseArgs is Parse for commands that take positional arguments after
// their flags (fs.Args()). A bad flag is reported as one line, "NAME: the
// flag package's reason (NAME -h lists the flags)", without the usage text,
// and gives code 2; only -h or -help prints the usage (fs.Usage, or the
// flag list if it is nil), with code 0.
func ParseArgs(fs *flag.FlagSet, args []string) (code int, ok bool) {
	out, usage := fs.Output(), fs.Usage
	var discard strings.Builder // the flag package's own report and usage
	fs.SetOutput(&discard)
	fs.Usage = func() {}
	err := fs.Parse(args)
	fs.SetOutput(out)
	fs.Usage = usage
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			if usage != nil {
				usage()
			} else {
				fs.PrintDefaults()
			}
			return 0, false
		}
		fmt.Fprintf(out, "%s: %v (%s -h lists the flags)\n", fs.Name(), err, fs.Name())
		return 2, false
	}
	if Version(fs) {
		return 0, false
	}
	return 0, true
}

// Undocumented returns the flags listed in usage (flag.PrintDefaults'
// "  -name ..." lines) that doc never names as "`-name" followed by a
// backquote, space or comma (or with two dashes, "`--name`", as --bidir is
// written): a tool's tests pass its -h output and its
// docs/ page.
func Undocumented(usage, doc string) []string {
	var missing []string
	for _, line := range strings.Split(usage, "\n") {
		f, ok := strings.CutPrefix(line, "  -")
		if !ok {
			continue
		}
		name := "-" + strings.Fields(f)[0]
		if !strings.Contains(doc, "`"+name+"`") && !strings.Contains(doc, "`"+name+" ") && !strings.Contains(doc, "`"+name+",") &&
			!strings.Contains(doc, "`-"+name+"`") {
			missing = append(missing, name)
		}
	}
	return missing
}

// IsSet reports whether the flag name was given on the command line (fs
// parsed), under its name or an alias (Alias), as opposed to left at its
// default.
func IsSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || Canonical(f) == name })
	return set
}

// aliasUsage starts the usage text of an alias; Canonical reads it back.
const aliasUsage = "same as -"

// Alias registers each alias as another name of the flag name on fs, with
// the same value (iperf3's short and GNU long names beside cclab's: -b for
// -rate, --time for -t). The flag package takes -x and --x alike, so a
// long alias is written --name. IsSet and Refuse see a flag given under any
// of its names.
func Alias(fs *flag.FlagSet, name string, aliases ...string) {
	f := fs.Lookup(name)
	if f == nil {
		panic("cli.Alias: no flag -" + name)
	}
	for _, a := range aliases {
		fs.Var(f.Value, a, aliasUsage+name)
	}
}

// Canonical is the name of the flag f stands for: its own, or the one it
// is an alias of.
func Canonical(f *flag.Flag) string {
	if n, ok := strings.CutPrefix(f.Usage, aliasUsage); ok {
		return n
	}
	return f.Name
}

// Refuse returns an error naming the first flag given on fs (under the name
// it was given) whose canonical name is in names, "-NAME: why", or nil.
func Refuse(fs *flag.FlagSet, why string, names ...string) error {
	var err error
	fs.Visit(func(f *flag.Flag) {
		if err == nil && slices.Contains(names, Canonical(f)) {
			err = fmt.Errorf("-%s: %s", f.Name, why)
		}
	})
	return err
}

// WithPort returns addr ("host", "host:port", "[v6]", "[v6]:port" or
// ":port") with its port set to port, the value of the flag name (-p); a
// port outside 1..65535 is refused, naming the flag.
func WithPort(name, addr string, port int) (string, error) {
	if port < 1 || port > 65535 {
		return "", fmt.Errorf("-%s %d: want a port, 1..65535", name, port)
	}
	host := addr
	if h, _, err := net.SplitHostPort(addr); err == nil {
		host = h
	}
	return net.JoinHostPort(strings.Trim(host, "[]"), strconv.Itoa(port)), nil
}
