package rusage

import (
	"runtime"
	"testing"
	"time"
)

// spin burns CPU on this goroutine until the process has used d more CPU
// time, or gives up after a bounded number of rounds.
func spin(t *testing.T, d time.Duration) (before, after time.Duration) {
	t.Helper()
	before, ok := CPU()
	if !ok {
		t.Skipf("getrusage is not available on %s", runtime.GOOS)
	}
	x := uint64(1)
	for range 10000 {
		for range 100000 {
			x = x*6364136223846793005 + 1442695040888963407
		}
		if after, _ = CPU(); after-before >= d {
			break
		}
	}
	if x == 0 {
		t.Log(x) // keep the loop
	}
	return before, after
}

func TestCPUGrowsWithWork(t *testing.T) {
	before, after := spin(t, 20*time.Millisecond)
	if got := after - before; got < 20*time.Millisecond {
		t.Errorf("CPU after spinning: got %v more, want at least 20ms", got)
	}
	if before <= 0 {
		t.Errorf("CPU before: got %v, want > 0 (the test binary has run)", before)
	}
}

func TestMaxRSSCoversLiveHeap(t *testing.T) {
	if _, ok := MaxRSS(); !ok {
		t.Skipf("getrusage is not available on %s", runtime.GOOS)
	}
	const n = 64 << 20
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i)
	}
	got, _ := MaxRSS()
	if got < n {
		t.Errorf("MaxRSS after touching %d bytes: got %d, want at least that", n, got)
	}
	runtime.KeepAlive(b)
}
