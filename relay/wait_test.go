package relay

import (
	"os"
	"testing"
	"time"

	"cclab/link"
)

// TestSchedulerSettings relays delayed datagrams with every way the
// scheduler can wait (the learned lead, a fixed spin, no polling, a locked
// thread, a real-time thread): every datagram arrives, none before its
// configured delay (the scheduler polls to the instant after a sleep that
// ended early, never writes ahead of it).
func TestSchedulerSettings(t *testing.T) {
	const delay = 5 * time.Millisecond
	cases := []struct {
		name string
		cfg  Config
	}{
		{"auto", Config{}},
		{"spin 150us", Config{Spin: 150 * time.Microsecond}},
		{"off", Config{Spin: -1}},
		{"lock-thread", Config{LockThread: true}},
		{"realtime", Config{Realtime: true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.cfg.Realtime {
				if err := checkRealtime(); err != nil {
					if os.Getenv("CI") == "true" {
						t.Fatalf("CI runs as root, which may use SCHED_FIFO: %v", err)
					}
					t.Skipf("no real-time policy for this process: %v", err)
				}
			}
			tn := memNet()
			dst := newSink(t, tn, false)
			cfg := c.cfg
			cfg.Target = dst.conn.LocalAddr().String()
			cfg.Hops = [2][]link.Config{{mkHop(t, "delay=5ms")}}
			r := startRelay(t, tn, cfg)
			cl := dial(t, tn, r.Addr())
			const n = 50
			got := sendAll(t, cl, dst, n, 1, 200, 3*time.Second)
			if len(got) != n {
				t.Fatalf("got %d datagrams, want %d", len(got), n)
			}
			for _, g := range got {
				if d := g.got - g.sent; d < delay {
					t.Errorf("datagram %d took %v, less than the configured %v", g.seq, d, delay)
				}
			}
			r.mu.Lock()
			defer r.mu.Unlock()
			if r.realtimeErr != nil {
				t.Errorf("scheduler not real-time: %v", r.realtimeErr)
			}
			// Counters.Lead is the lead in effect: none where the
			// scheduler never polls, else the fixed Spin or the learned
			// lead (within 0..maxLead).
			lead := r.cnt.Lead
			switch {
			case cfg.Spin < 0 || r.noSpin || cfg.Realtime:
				if lead != 0 {
					t.Errorf("Counters.Lead got %v, want 0 (no polling)", lead)
				}
			case cfg.Spin > 0:
				if lead != cfg.Spin {
					t.Errorf("Counters.Lead got %v, want Spin %v", lead, cfg.Spin)
				}
			case lead < 0 || lead > maxLead:
				t.Errorf("Counters.Lead got %v, want 0..%v (learned)", lead, maxLead)
			}
		})
	}
}
