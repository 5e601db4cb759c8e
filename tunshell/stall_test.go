package tunshell

import (
	"testing"
	"time"

	"cclab/internal/hostlimit"
	"cclab/link"
	"cclab/relay"
)

// TestReadGaps drives the stall detector with a fake clock: only reads
// that found packets waiting count, each with the gap since the previous
// read returned, and a gap counts as a stall only above the limit.
func TestReadGaps(t *testing.T) {
	const ms = int64(time.Millisecond)
	type read struct {
		at     int64 // ns
		waited bool
	}
	cases := []struct {
		name  string
		limit time.Duration
		reads []read
		want  hostlimit.Stalls
	}{
		{"first read is never a gap", 12 * time.Millisecond, []read{{100 * ms, false}}, hostlimit.Stalls{Limit: 12 * time.Millisecond}},
		{"back to back", 12 * time.Millisecond, []read{{1 * ms, false}, {2 * ms, false}, {3 * ms, false}},
			hostlimit.Stalls{Limit: 12 * time.Millisecond, Reads: 2, Max: time.Millisecond}},
		{"a stall", 12 * time.Millisecond, []read{{1 * ms, false}, {2 * ms, false}, {32 * ms, false}, {33 * ms, false}},
			hostlimit.Stalls{Limit: 12 * time.Millisecond, Reads: 3, Stalls: 1, Max: 30 * time.Millisecond}},
		{"at the limit is no stall", 12 * time.Millisecond, []read{{1 * ms, false}, {13 * ms, false}},
			hostlimit.Stalls{Limit: 12 * time.Millisecond, Reads: 1, Max: 12 * time.Millisecond}},
		{"idle waits are not stalls", 12 * time.Millisecond, []read{{1 * ms, false}, {500 * ms, true}, {501 * ms, false}, {900 * ms, true}},
			hostlimit.Stalls{Limit: 12 * time.Millisecond, Reads: 1, Max: time.Millisecond}},
		{"a gap after an idle wait counts from its return", 12 * time.Millisecond, []read{{1 * ms, false}, {500 * ms, true}, {520 * ms, false}},
			hostlimit.Stalls{Limit: 12 * time.Millisecond, Reads: 1, Stalls: 1, Max: 20 * time.Millisecond}},
		{"no limit: measured only", 0, []read{{1 * ms, false}, {100 * ms, false}},
			hostlimit.Stalls{Reads: 1, Max: 99 * time.Millisecond}},
	}
	for _, c := range cases {
		var g readGaps
		g.setLimit(c.limit)
		for _, r := range c.reads {
			g.read(r.at, r.waited)
		}
		if got := g.stalls(); got != c.want {
			t.Errorf("%s: got %+v, want %+v", c.name, got, c.want)
		}
	}
}

// TestDrainTime: the path (20 Mbit/s, 20 packets of 1500 bytes)
// drains in 12 ms; bytes limits, the default queue, unshaped hops and the
// shortest of several hops.
func TestDrainTime(t *testing.T) {
	hops := func(hs ...link.Config) relay.Config {
		var c relay.Config
		c.Hops[relay.Fwd] = hs
		return c
	}
	cases := []struct {
		name string
		cfg  relay.Config
		mtu  int
		want time.Duration
	}{
		{"20 packets at 20 Mbit/s", hops(link.Config{Rate: 20e6, Queue: "droptail:20p"}), 1500, 12 * time.Millisecond},
		{"bytes limit ignores the MTU", hops(link.Config{Rate: 10e6, Queue: "droptail:30kb"}), 9000, 24 * time.Millisecond},
		{"larger MTU, longer drain", hops(link.Config{Rate: 20e6, Queue: "droptail:20p"}), 3000, 24 * time.Millisecond},
		{"unshaped", hops(link.Config{Queue: "droptail:20p"}), 1500, 0},
		{"no hops", relay.Config{}, 1500, 0},
		{"shortest hop", hops(link.Config{Rate: 100e6, Queue: "droptail:100p"}, link.Config{Rate: 20e6, Queue: "droptail:20p"}), 1500, 12 * time.Millisecond},
		{"bad spec skipped", hops(link.Config{Rate: 20e6, Queue: "nosuchqueue"}), 1500, 0},
	}
	for _, c := range cases {
		if got := drainTime(c.cfg, relay.Fwd, c.mtu); got != c.want {
			t.Errorf("%s: drain %v, want %v", c.name, got, c.want)
		}
	}
	// The default queue has a bounded capacity: some drain time.
	if got := drainTime(hops(link.Config{Rate: 20e6}), relay.Fwd, 1500); got <= 0 {
		t.Errorf("default queue: drain %v, want > 0", got)
	}
	if got := drainTime(hops(link.Config{Rate: 20e6, Queue: "droptail:20p"}), relay.Rev, 1500); got != 0 {
		t.Errorf("the other direction: drain %v, want 0", got)
	}
}
