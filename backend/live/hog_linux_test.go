package liverun

import (
	"runtime"

	"golang.org/x/sys/unix"
)

// hog spins on one CPU until stop closes.
func hog(cpu int, stop chan struct{}) {
	runtime.LockOSThread()
	var set unix.CPUSet
	set.Set(cpu)
	_ = unix.SchedSetaffinity(0, &set)
	for x := uint64(1); ; x = x*6364136223846793005 + 1 {
		if x&0xffff == 0 {
			select {
			case <-stop:
				return
			default:
			}
		}
	}
}
