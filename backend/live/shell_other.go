//go:build !linux

package liverun

import (
	"errors"
	"net/netip"

	"cclab/clock"
	"cclab/relay"
)

// linkShell is the link shell a run with kernel flows crosses (Linux only).
type linkShell struct{}

func (*linkShell) do(f func() error) error { return f() }
func (*linkShell) inner() netip.Addr       { return netip.Addr{} }

// errNoShell is the error of a run with kernel flows off Linux.
var errNoShell = errors.New("liverun: kernel TCP flows run through the link shell, which needs Linux")

func (lr *liveRun) startShell(relay.Config, []int) error             { return errNoShell }
func (lr *liveRun) serveKernel() error                               { return nil }
func (lr *liveRun) stopShell()                                       {}
func (lr *liveRun) kernelFlow(*sender, clock.Time, clock.Time) error { return errNoShell }
