//go:build unix

package campaign

import (
	"errors"
	"syscall"
)

// processAlive reports whether a process with this id exists on this host
// (signal 0: existence and permission checks only; EPERM means it exists).
func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
