//go:build unix

package rusage

import (
	"runtime"
	"syscall"
	"time"
)

func cpu() (time.Duration, bool) {
	u, s, ok := times()
	return u + s, ok
}

func times() (user, system time.Duration, ok bool) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, 0, false
	}
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano()), true
}

func maxRSS() (int64, bool) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, false
	}
	// ru_maxrss is in KiB on Linux and the BSDs, in bytes on Darwin.
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		return int64(ru.Maxrss), true
	}
	return int64(ru.Maxrss) * 1024, true
}
