package main

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"

	"golang.org/x/sys/unix"
)

// hasAffinity says whether -affinity can pin processes here.
const hasAffinity = true

// cpuSet returns the set of the given CPUs.
func cpuSet(cpus []int) unix.CPUSet {
	var s unix.CPUSet
	for _, c := range cpus {
		s.Set(c)
	}
	return s
}

// allowedCPUs returns the CPUs this thread may run on.
func allowedCPUs() ([]int, error) {
	var s unix.CPUSet
	if err := unix.SchedGetaffinity(0, &s); err != nil {
		return nil, err
	}
	var cpus []int
	for c := 0; c < len(s)*64; c++ {
		if s.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}

// pinSelf restricts every thread of this process to cpus (threads created
// later inherit it from their creators).
func pinSelf(cpus []int) error {
	s := cpuSet(cpus)
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return err
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		if err := unix.SchedSetaffinity(tid, &s); err != nil && err != unix.ESRCH {
			return fmt.Errorf("sched_setaffinity %d: %v", tid, err)
		}
	}
	return nil
}

// startOn starts cmd with its CPU affinity set to cpus (nil: inherited):
// the child inherits the mask of the thread that forks it, so that thread
// is locked and pinned for the fork and restored after. A Go child then
// also sizes GOMAXPROCS to len(cpus).
func startOn(cmd *exec.Cmd, cpus []int) error {
	if cpus == nil {
		return cmd.Start()
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var old unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		return err
	}
	s := cpuSet(cpus)
	if err := unix.SchedSetaffinity(0, &s); err != nil {
		return fmt.Errorf("sched_setaffinity: %v", err)
	}
	defer unix.SchedSetaffinity(0, &old)
	return cmd.Start()
}
