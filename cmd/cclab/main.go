// Command cclab is cclab's experiment driver. Subcommands:
//
//	cclab sim [flags]    run a dumbbell or chain in the discrete-event simulator (docs/sim.md)
//	cclab run, report, list   experiments, reports and the results database (docs/eval.md)
//	cclab perf -s | -c HOST   the receiver or the sender, as iperf3 -s/-c (docs/sender.md)
//	cclab -version       print the version (module version, VCS commit, Go version, OS/kernel);
//	                     every subcommand takes -version too (cclab run -version)
//
// Each subcommand registers itself in its own file (see simcmd.go); run
// "cclab <subcommand> -h" for its flags.
package main

import (
	"fmt"
	"os"
	"sort"

	"cclab/internal/buildinfo"
)

// command is one subcommand.
type command struct {
	summary string
	run     func(args []string) int // returns the exit status
}

var commands = map[string]command{}

func register(name, summary string, run func(args []string) int) {
	if _, dup := commands[name]; dup {
		panic("cclab: duplicate subcommand " + name)
	}
	commands[name] = command{summary: summary, run: run}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: cclab <subcommand> [flags] | cclab [<subcommand>] -version\n\nsubcommands:")
	var names []string
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(os.Stderr, "  %-10s %s\n", n, commands[n].summary)
	}
}

func main() {
	if len(os.Args) < 2 || os.Args[1] == "-h" || os.Args[1] == "help" || os.Args[1] == "--help" {
		usage()
		os.Exit(2)
	}
	switch os.Args[1] {
	case "-version", "--version", "version":
		fmt.Println(buildinfo.Read().Line("cclab"))
		os.Exit(0)
	}
	c, ok := commands[os.Args[1]]
	if !ok {
		fmt.Fprintf(os.Stderr, "cclab: unknown subcommand %q\n", os.Args[1])
		usage()
		os.Exit(2)
	}
	if asksVersion(os.Args[2:]) {
		fmt.Println(buildinfo.Read().Line("cclab " + os.Args[1]))
		os.Exit(0)
	}
	os.Exit(c.run(os.Args[2:]))
}

// asksVersion reports whether a subcommand's arguments (flags, or the
// nested subcommand and its flags) include -version or --version before a
// "--": every subcommand then prints cclab's version line and exits 0, as
// cclab -version does.
func asksVersion(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-version", "--version":
			return true
		}
	}
	return false
}
