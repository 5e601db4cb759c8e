package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"syscall"
	"testing"

	"cclab/internal/cli"
	"cclab/internal/testsvc"
)

func init() {
	register("testbed", "start a single-node Slurm cluster and PostgreSQL in a temporary directory (as the tests do) and run a command against them", runTestbed)
}

// testbedTB lets cclab testbed start internal/testsvc's services outside a
// test: a failure (or a missing service, which a test would skip) ends the
// command with the message, and the cleanups (stopping the daemons,
// removing their directories) run last first when it ends. testsvc calls
// only the methods defined here; the embedded nil TB makes any other a
// panic rather than a silent no-op.
type testbedTB struct {
	testing.TB
	cleanups []func()
	log      io.Writer
}

// testbedFailure is the panic value of a failure, recovered by runTestbed.
type testbedFailure string

func (t *testbedTB) Helper()                 {}
func (t *testbedTB) Name() string            { return "cclab testbed" }
func (t *testbedTB) Cleanup(f func())        { t.cleanups = append(t.cleanups, f) }
func (t *testbedTB) Logf(f string, a ...any) { fmt.Fprintf(t.log, "cclab testbed: "+f+"\n", a...) }
func (t *testbedTB) Fatal(a ...any)          { panic(testbedFailure(fmt.Sprint(a...))) }
func (t *testbedTB) Fatalf(f string, a ...any) {
	panic(testbedFailure(fmt.Sprintf(f, a...)))
}
func (t *testbedTB) Skipf(f string, a ...any) { t.Fatalf(f, a...) }

// cleanup runs the cleanups, last first.
func (t *testbedTB) cleanup() {
	for _, f := range slices.Backward(t.cleanups) {
		f()
	}
	t.cleanups = nil
}

func runTestbed(args []string) int {
	fs := flag.NewFlagSet("cclab testbed", flag.ContinueOnError)
	dbName := fs.String("db-name", "cclab", "the PostgreSQL database to create (CCLAB_DB is its URL)")
	noSlurm := fs.Bool("no-slurm", false, "start PostgreSQL only")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: cclab testbed [flags] [COMMAND [ARGS...]]\n\n"+
			"Starts PostgreSQL and a single-node Slurm cluster in a temporary directory on loopback, runs COMMAND\n"+
			"with CCLAB_DB (the database's URL) and SLURM_CONF in its environment, stops both and removes the\n"+
			"directory; without COMMAND it prints the environment and waits for Ctrl-C. See docs/scale.md.\n\nflags:\n")
		fs.PrintDefaults()
	}
	if code, ok := cli.ParseArgs(fs, args); !ok {
		return code
	}
	tb := &testbedTB{log: os.Stderr}
	defer tb.cleanup()
	env, err := startTestbed(tb, *dbName, !*noSlurm)
	if err != nil {
		fmt.Fprintf(os.Stderr, "cclab testbed: %v\n", err)
		return 1
	}
	if fs.NArg() == 0 {
		for _, e := range env {
			fmt.Printf("export %s\n", shellQuote(e))
		}
		fmt.Fprintln(os.Stderr, "cclab testbed: running; Ctrl-C stops the services and removes their directory")
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
		<-sig
		return 0
	}
	cmd := exec.Command(fs.Arg(0), fs.Args()[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	signal.Ignore(os.Interrupt) // Ctrl-C goes to the command; the services stop after it
	defer signal.Reset(os.Interrupt)
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode()
		}
		fmt.Fprintf(os.Stderr, "cclab testbed: %v\n", err)
		return 1
	}
	return 0
}

// startTestbed starts the services and returns the command's environment.
func startTestbed(tb *testbedTB, dbName string, slurm bool) (env []string, err error) {
	defer func() {
		if r := recover(); r != nil {
			msg, ok := r.(testbedFailure)
			if !ok {
				panic(r)
			}
			err = errors.New(string(msg))
		}
	}()
	pg := testsvc.StartPostgres(tb)
	env = append(env, "CCLAB_DB="+pg.CreateDB(tb, dbName))
	if slurm {
		s := testsvc.StartSlurm(tb)
		env = append(env, "SLURM_CONF="+s.Conf)
	}
	return env, nil
}
