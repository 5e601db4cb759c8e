//go:build unix

package campaign

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"syscall"
)

// processAlive reports whether a process with this id runs on this host
// (signal 0: existence and permission checks only; EPERM means it exists).
// A zombie (killed, not yet reaped by its parent) does not run: a run
// killed by a parent that has not waited for it yet gives up its lease.
func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return (err == nil || errors.Is(err, syscall.EPERM)) && !zombie(pid)
}

// zombie reports whether /proc says the process has exited (state Z or X,
// proc(5)); false where /proc cannot tell.
func zombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// "pid (comm) state ...": comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return false
	}
	return b[i+2] == 'Z' || b[i+2] == 'X'
}
