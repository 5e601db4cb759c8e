//go:build !linux

package tunshell

import (
	"errors"
	"fmt"
	"io"
	"time"
)

// errNotLinux is what every entry point returns off Linux: network
// namespaces and /dev/net/tun are Linux's.
var errNotLinux = errors.New("the link shell needs Linux (network namespaces and /dev/net/tun)")

// Namespace is a network namespace (Linux only; Config.Outer is nil off
// Linux).
type Namespace struct{}

// Supported reports why link shells cannot be built here.
func Supported() error { return errNotLinux }

// Stdio are the standard streams a shell's program gets.
type Stdio struct {
	In       io.Reader
	Out, Err io.Writer
}

// Run reports that the link shell needs Linux and returns 1.
func Run(cfg Config, argv []string, stdio Stdio, duration time.Duration, stop <-chan struct{}) int {
	fmt.Fprintf(stdio.Err, "bottleneck: link shell: %v\n", errNotLinux)
	return 1
}
