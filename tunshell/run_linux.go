package tunshell

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Stdio are the standard streams a shell's program gets. Files are passed
// on as they are (an interactive shell needs its terminal); other readers
// and writers are copied through pipes.
type Stdio struct {
	In       io.Reader
	Out, Err io.Writer
}

// Run is the command-line link shell (cmd/bottleneck -tun): it starts a
// shell, runs argv inside it (the user's $SHELL, or /bin/sh, if argv is
// empty), and when the program exits tears the shell down and returns the
// program's exit status (128+N if signal N ended it; 1 if the shell could
// not be built, 127 if the program could not be started).
//
// SIGINT, SIGTERM and SIGHUP, the end of duration (if > 0) and a receive on
// stop are passed on to the program's process group (SIGTERM for the last
// two); if it has not exited Grace later, or at a second signal, the group
// is killed. When standard input is the terminal and the shell runs in its
// foreground, the program's process group becomes the foreground one (so
// Ctrl-C reaches the program, not the shell, and an interactive shell works
// as usual) until it exits.
func Run(cfg Config, argv []string, stdio Stdio, duration time.Duration, stop <-chan struct{}) int {
	if len(argv) == 0 {
		sh := os.Getenv("SHELL")
		if sh == "" {
			sh = "/bin/sh"
		}
		argv = []string{sh}
	}
	s, err := Start(cfg)
	if err != nil {
		fmt.Fprintf(stdio.Err, "bottleneck: link shell: %v\n", err)
		return 1
	}
	defer s.Close()
	s.Summary(stdio.Err)

	cmd := s.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdio.In, stdio.Out, stdio.Err
	cmd.WaitDelay = time.Second // do not wait for background processes holding a pipe
	tty := foregroundTTY(stdio.In)
	if tty >= 0 {
		cmd.SysProcAttr.Foreground = true
		cmd.SysProcAttr.Ctty = tty
	}
	sigc := make(chan os.Signal, 4)
	signal.Notify(sigc, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigc)
	if err := s.StartCommand(cmd); err != nil {
		fmt.Fprintf(stdio.Err, "bottleneck: link shell: %v\n", err)
		return 127
	}
	waitc := make(chan error, 1)
	go func() { waitc <- cmd.Wait() }()
	pgid := cmd.Process.Pid
	var timeout, grace <-chan time.Time
	if duration > 0 {
		timeout = time.After(duration)
	}
	end := func(sig syscall.Signal) {
		if grace != nil { // the second request: no more waiting
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			return
		}
		_ = syscall.Kill(-pgid, sig)
		grace = time.After(Grace)
	}
	var werr error
wait:
	for {
		select {
		case werr = <-waitc:
			break wait
		case sig := <-sigc:
			end(sig.(syscall.Signal))
		case <-timeout:
			timeout = nil
			end(syscall.SIGTERM)
		case <-stop:
			stop = nil
			end(syscall.SIGTERM)
		case <-grace:
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
		}
	}
	if tty >= 0 {
		// Take the terminal back; from the background that needs SIGTTOU
		// ignored (ignoring it earlier would pass that on to the program).
		signal.Ignore(syscall.SIGTTOU)
		_ = unix.IoctlSetPointerInt(tty, unix.TIOCSPGRP, unix.Getpgrp())
		signal.Reset(syscall.SIGTTOU)
	}
	code := exitCode(cmd, werr)
	if err := s.Close(); err != nil {
		fmt.Fprintf(stdio.Err, "bottleneck: link shell: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// foregroundTTY returns in's descriptor if in is a terminal whose
// foreground process group is this process's, else -1.
func foregroundTTY(in io.Reader) int {
	f, ok := in.(*os.File)
	if !ok {
		return -1
	}
	fd := int(f.Fd())
	if _, err := unix.IoctlGetTermios(fd, unix.TCGETS); err != nil {
		return -1
	}
	pg, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP)
	if err != nil || pg != unix.Getpgrp() {
		return -1
	}
	return fd
}

// exitCode is the shell's exit status for the program's end.
func exitCode(cmd *exec.Cmd, err error) int {
	ps := cmd.ProcessState
	if ps == nil {
		return 1
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	if code := ps.ExitCode(); code >= 0 {
		if code == 0 && err != nil && !errors.Is(err, exec.ErrWaitDelay) {
			return 1
		}
		return code
	}
	return 1
}
