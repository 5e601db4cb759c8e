// Package cli holds the flag handling cclab's commands share.
package cli

import (
	"errors"
	"flag"
	"fmt"
)

// Parse parses args into fs, which must use flag.ContinueOnError, and refuses
// positional arguments. ok is false when the command should exit at once
// with code: 0 after -h or -help (fs.Usage has run), 2 on a bad flag (fs has
// reported it) or on a positional argument, which it reports on fs.Output() as
// "NAME: unexpected arguments [...]"; a bad flag is one line of output
// (without the usage text); 0 after -version (AddVersion), once
// the version line is printed.
func Parse(fs *flag.FlagSet, args []string) (code int, ok bool) {
	// A bad flag is reported on one line (the flag package's message names
	// the flag and the parser's reason), without the whole usage text after
	// it; -h still prints the usage.
	usage := fs.Usage
	fs.Usage = func() {}
	err := fs.Parse(args)
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
		return 2, false
	}
	if Version(fs) {
		return 0, false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(fs.Output(), "%s: unexpected arguments %q\n", fs.Name(), fs.Args())
		return 2, false
	}
	return 0, true
}
