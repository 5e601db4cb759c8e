//go:build !linux

package liverun

// hog spins until stop closes (unpinned: CPU affinity is Linux's
// sched_setaffinity).
func hog(_ int, stop chan struct{}) {
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
