package relay

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// fifoThreads returns the threads of this process with the SCHED_FIFO
// policy.
func fifoThreads(t *testing.T) []int {
	t.Helper()
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, e := range tasks {
		tid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		a, err := unix.SchedGetAttr(tid, 0)
		if err != nil {
			continue // the thread has ended
		}
		if a.Policy == unix.SCHED_FIFO {
			out = append(out, tid)
		}
	}
	return out
}

// TestRealtimeThread: with Config.Realtime the scheduler's thread (with
// Config.WaitPoll the polling loop's; and no other) has SCHED_FIFO at RealtimePriority while the relay runs, and no
// thread keeps it after Close, nor after New's permission probe.
func TestRealtimeThread(t *testing.T) {
	if err := checkRealtime(); err != nil {
		if !strings.Contains(err.Error(), "CAP_SYS_NICE") {
			t.Errorf("error %q does not say what is needed (root or CAP_SYS_NICE)", err)
		}
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI runs as root, which may use SCHED_FIFO: %v", err)
		}
		t.Skipf("no real-time policy for this process: %v", err)
	}
	if got := fifoThreads(t); len(got) != 0 {
		t.Fatalf("after the probe, threads %v have SCHED_FIFO, want none", got)
	}
	for _, tc := range []struct {
		name, thread string
		cfg          Config
	}{
		{"scheduler", "the scheduler's", Config{Realtime: true}},
		{"waiting loop", "the polling loop's", Config{Realtime: true, WaitPoll: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tn := memNet()
			dst := newSink(t, tn, false)
			cfg := tc.cfg
			cfg.Listen, cfg.Network, cfg.Target = tn.host+":0", tn.network(), dst.conn.LocalAddr().String()
			r, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			r.Start()
			// The thread sets its policy as it starts, and ends after
			// Close returns: wait (bounded) for either to show.
			fifo := waitFIFO(t, func(n int) bool { return n > 0 })
			if len(fifo) != 1 {
				t.Errorf("while relaying, threads %v have SCHED_FIFO, want exactly one (%s)", fifo, tc.thread)
			}
			for _, tid := range fifo {
				if a, err := unix.SchedGetAttr(tid, 0); err == nil && a.Priority != RealtimePriority {
					t.Errorf("thread %d priority got %d, want %d", tid, a.Priority, RealtimePriority)
				}
			}
			r.Close()
			if got := waitFIFO(t, func(n int) bool { return n == 0 }); len(got) != 0 {
				t.Errorf("after Close, threads %v have SCHED_FIFO, want none", got)
			}
		})
	}
}

// waitFIFO returns fifoThreads once ok accepts their number, or after 5 s.
func waitFIFO(t *testing.T, ok func(int) bool) []int {
	t.Helper()
	end := time.Now().Add(5 * time.Second)
	for {
		got := fifoThreads(t)
		if ok(len(got)) || time.Now().After(end) {
			return got
		}
		time.Sleep(time.Millisecond)
	}
}
