package relay

import (
	"runtime"
	"runtime/debug"
	"testing"
)

// TestTwoProcs: GOMAXPROCS 1 becomes 2 unless the environment sets it;
// other values stay.
func TestTwoProcs(t *testing.T) {
	old := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(old)
	for _, tc := range []struct {
		env         string
		procs, want int
	}{
		{"", 1, 2},
		{"1", 1, 1},
		{"", 3, 3},
		{"", 2, 2},
	} {
		t.Setenv("GOMAXPROCS", tc.env)
		runtime.GOMAXPROCS(tc.procs)
		if got := TwoProcs(); got != tc.want {
			t.Errorf("GOMAXPROCS %d, env %q: TwoProcs() = %d, want %d", tc.procs, tc.env, got, tc.want)
		}
		if got := runtime.GOMAXPROCS(0); got != tc.want {
			t.Errorf("GOMAXPROCS %d, env %q: GOMAXPROCS after %d, want %d", tc.procs, tc.env, got, tc.want)
		}
	}
}

// TestQuietGC: GOGC becomes GCPercent unless the environment sets it.
func TestQuietGC(t *testing.T) {
	old := debug.SetGCPercent(100)
	defer debug.SetGCPercent(old)
	for _, tc := range []struct {
		env       string
		set, want int
	}{
		{"", 100, GCPercent},
		{"50", 50, 50},
		{"off", -1, -1},
	} {
		t.Setenv("GOGC", tc.env)
		debug.SetGCPercent(tc.set)
		if got := QuietGC(); got != tc.want {
			t.Errorf("GOGC %d, env %q: QuietGC() = %d, want %d", tc.set, tc.env, got, tc.want)
		}
		if got := debug.SetGCPercent(tc.set); got != tc.want {
			t.Errorf("GOGC %d, env %q: GOGC after %d, want %d", tc.set, tc.env, got, tc.want)
		}
	}
}
