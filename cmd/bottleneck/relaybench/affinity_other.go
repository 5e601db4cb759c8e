//go:build !linux

package main

import (
	"errors"
	"os/exec"
)

// hasAffinity says whether -affinity can pin processes here.
const hasAffinity = false

func allowedCPUs() ([]int, error) { return nil, errors.New("CPU affinity: Linux only") }

func pinSelf([]int) error { return errors.New("CPU affinity: Linux only") }

func startOn(cmd *exec.Cmd, cpus []int) error {
	if cpus != nil {
		return errors.New("CPU affinity: Linux only")
	}
	return cmd.Start()
}
