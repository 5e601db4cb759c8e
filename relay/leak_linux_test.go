package relay

import (
	"os"
	"strings"
	"testing"
)

// TestFailedNewReleasesFDs: a New that fails after build (here its listen
// address) leaves no file descriptor open, the scheduler's eventfd
// included.
func TestFailedNewReleasesFDs(t *testing.T) {
	open := func() int {
		fds, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Fatal(err)
		}
		return len(fds)
	}
	before := open()
	for range 3 {
		_, err := New(Config{Listen: "127.0.0.1:99999", Target: "127.0.0.1:9"})
		if err == nil || !strings.Contains(err.Error(), "listen") {
			t.Fatalf("New with listen port 99999: got error %v, want a listen error", err)
		}
	}
	if got := open(); got != before {
		t.Errorf("open file descriptors after 3 failed New got %d, want %d", got, before)
	}
}
