package relay

import (
	"errors"
	"net/netip"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"cclab/clock"
	"cclab/ecn"
	"cclab/event"
	"cclab/link"
	"cclab/netio"
)

// loopMode, if set, makes startRelay build relays with the polling loop
// (TestBusyPollSuite: Config.BusyPoll; TestWaitPollSuite: WaitPoll).
var loopMode func(*Config)

// loopSuite lists the relay's end-to-end tests that every driver must pass
// (TestBusyPollSuite, TestWaitPollSuite).
var loopSuite = []struct {
	name string
	f    func(*testing.T)
}{
	{"offload", TestRelayOffload},
	{"droptail burst", TestDropTailBurstDropsExactly},
	{"added delay", TestAddedDelay},
	{"reverse path and ecn", TestReversePathAndECN},
	{"multi-hop and cross traffic", TestMultiHopAndCrossTraffic},
	{"many clients", TestManyClientsGetTheirOwnReplies},
	{"entries", TestEntries},
	{"idle client expires", TestIdleClientExpires},
	{"many ports of one host", TestManyPortsOfOneHost},
	{"full table evicts idlest", TestFullTableEvictsIdlest},
}

// runLoopSuite runs loopSuite with relays that mode configures.
func runLoopSuite(t *testing.T, mode func(*Config)) {
	loopMode = mode
	defer func() { loopMode = nil }()
	for _, tc := range loopSuite {
		t.Run(tc.name, tc.f)
	}
}

// TestBusyPollSuite runs the relay's end-to-end tests again with the
// busy-polling driver (Config.BusyPoll): delivery, order, content and ECN
// of GRO/GSO traffic over loopback, exact queue drops, the configured
// delay as a lower bound, the reverse path over loopback and in memory,
// hops in series with cross traffic, many clients, entries, idle expiry
// and eviction (the loop drops the sockets of closed sessions). The one
// test that checks a measured rate against a tolerance is left out
// (TestBusyPollTimes checks the modelled instants instead).
func TestBusyPollSuite(t *testing.T) {
	runLoopSuite(t, func(c *Config) { c.BusyPoll = true })
}

// TestWaitPollSuite runs the same tests with the waiting loop
// (Config.WaitPoll): over loopback it blocks in epoll between datagrams
// and departures, in memory (MemConn, no descriptor) its waits are
// bounded (waitMemBound).
func TestWaitPollSuite(t *testing.T) {
	runLoopSuite(t, func(c *Config) { c.WaitPoll = true })
}

// TestBusyPollTimes relays a saturating burst through a rate-limited,
// delayed hop over loopback with the busy-polling driver: every datagram
// arrives, in order, none before the instant the link model gave it (its
// Departure event, mapped onto the receiver's clock), the hop's modelled
// bytes and busy time are exactly those of the configured rate, and the
// counters show the loop (passes, no sleeps, no lock waits). How late the
// datagrams are is a timing figure for the benchmark (cmd/bottleneck/relaybench
// -poll busy); it is only logged here.
func TestBusyPollTimes(t *testing.T) {
	for _, m := range loopModes(t) {
		t.Run(m.name, func(t *testing.T) { testLoopTimes(t, m.cfg) })
	}
}

// loopModeCase is a configuration of the polling loop under test.
type loopModeCase struct {
	name string
	cfg  Config
}

// loopModes are the polling loop's modes: busy, waiting, and waiting on a
// real-time thread where the process may use the policy (in CI it must).
func loopModes(t *testing.T) []loopModeCase {
	modes := []loopModeCase{{"busy", Config{BusyPoll: true}}, {"wait", Config{WaitPoll: true}}}
	if err := checkRealtime(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI runs as root, which may use SCHED_FIFO: %v", err)
		}
		t.Logf("no real-time policy for this process (%v): the real-time waiting loop is not tested", err)
		return modes
	}
	return append(modes, loopModeCase{"wait realtime", Config{WaitPoll: true, Realtime: true}})
}

// testLoopTimes is TestBusyPollTimes with the loop mode in mode.
func testLoopTimes(t *testing.T, mode Config) {
	const rate, size, n = 50e6, 1200, 500 // 500 × 1228 bytes at 50 Mbit/s ≈ 98 ms
	for _, tn := range []testNet{udpNet(), memNet()} {
		t.Run(map[bool]string{true: "udp", false: "memory"}[tn.mem == nil], func(t *testing.T) {
			dst := newSink(t, tn, false)
			var deps []clock.Time // modelled arrivals at the far end, in packet order
			depSink := event.Func(func(e *event.Event) {
				if e.Kind == event.Departure {
					deps = append(deps, e.Time)
				}
			})
			cnt := newCounter()
			cfg := mode
			cfg.Target = dst.conn.LocalAddr().String()
			cfg.Sink = event.Func(func(e *event.Event) { depSink.Record(e); cnt.Record(e) })
			cfg.Hops = [2][]link.Config{{mkHop(t, "rate=50Mbit,delay=5ms,queue=droptail:10000p")}}
			r := startRelay(t, tn, cfg)
			// The relay's clock against the test's (testBase): the
			// narrowest of 100 bracketed readings.
			var off, best time.Duration
			for i := range 100 {
				a := time.Since(testBase)
				rc := time.Duration(r.Now())
				b := time.Since(testBase)
				if i == 0 || b-a < best {
					best, off = b-a, rc-(a+b)/2
				}
			}
			c := dial(t, tn, r.Addr())
			// Paced in batches of 10 (on loopback a burst of 500 could
			// overflow the relay's socket before its first read on a
			// loaded machine); the queue takes the rest.
			for i := 0; i < n; i += 10 {
				if _, err := c.WriteBatch(datagrams(i, 10, size, ecn.ECT0)); err != nil {
					t.Fatal(err)
				}
			}
			got := dst.waitFor(n, 10*time.Second)
			if len(got) != n {
				t.Fatalf("received %d datagrams, want %d", len(got), n)
			}
			cn := r.Counters() // under the relay's lock: deps is complete once all arrived
			r.mu.Lock()
			model := slices.Clone(deps)
			r.mu.Unlock()
			if len(model) != n {
				t.Fatalf("%d departures modelled, want %d", len(model), n)
			}
			var errs []time.Duration
			for i, g := range got {
				if g.seq != uint64(i) || g.ecn != ecn.ECT0 || g.size != size {
					t.Fatalf("delivery %d: datagram %d, ECN %v, %d bytes; want %d, ECT(0), %d (in order, unchanged)", i, g.seq, g.ecn, g.size, i, size)
				}
				at := time.Duration(model[i]) - off // on the test's clock
				if g.got < at-best {
					t.Errorf("datagram %d received at %v, before its modelled arrival %v", i, g.got, at)
				}
				errs = append(errs, g.got-at)
			}
			wire := int64(size + r.Overhead())
			st := r.HopStats(Fwd)[0]
			if st.DepartureBytes != n*wire {
				t.Errorf("departure bytes got %d, want %d × %d", st.DepartureBytes, n, wire)
			}
			busy := time.Duration(float64(n*wire) * 8 / rate * 1e9)
			if d := st.BusyTime - busy; d < -time.Microsecond || d > time.Microsecond {
				t.Errorf("modelled busy time got %v, want %v (n·(size+overhead)·8/rate)", st.BusyTime, busy)
			}
			if cn.Loop.Hist.Count() == 0 || cn.LockWait.Hist.Count() != 0 {
				t.Errorf("loop passes %d, lock waits %d: want passes, no lock waits (no scheduler)", cn.Loop.Hist.Count(), cn.LockWait.Hist.Count())
			}
			// The busy loop never blocks; the waiting loop blocks at
			// least while the first datagrams cross the 5 ms delay.
			if waits := cn.LoopWaits; mode.WaitPoll != (waits > 0) {
				t.Errorf("loop waits %d with WaitPoll %v: want some exactly when WaitPoll", waits, mode.WaitPoll)
			}
			if !mode.WaitPoll && cn.SleepLate.Hist.Count() != 0 {
				t.Errorf("busy loop: %d sleeps, want none", cn.SleepLate.Hist.Count())
			}
			r.mu.Lock()
			rtErr := r.realtimeErr
			r.mu.Unlock()
			if rtErr != nil {
				t.Errorf("loop not real-time: %v", rtErr)
			}
			if cn.Sent[Fwd] != n || cn.WriteLate.Hist.Count() != n {
				t.Errorf("sent %d, lateness of %d writes; want %d each", cn.Sent[Fwd], cn.WriteLate.Hist.Count(), n)
			}
			slices.Sort(errs)
			t.Logf("receive - model: median %v, p99 %v, max %v; relay write lateness median %v, p99 %v; loop pass median %v, p99 %v; %d waits",
				errs[n/2], errs[n*99/100], errs[n-1], cn.WriteLate.P50, cn.WriteLate.P99, cn.Loop.P50, cn.Loop.P99, cn.LoopWaits)
		})
	}
}

// TestBusyPollIdleSessions: the busy-polling loop reads only the sockets
// that hold datagrams (netio.ReadySet), so client sessions that went idle,
// e.g. a flood of source ports, do not lengthen its passes: over loopback,
// with 64 idle sessions open, the loop makes fewer reads than passes (one
// read per socket per pass would be 65 per pass).
func TestBusyPollIdleSessions(t *testing.T) {
	const sessions = 64
	tn := udpNet()
	dst := newSink(t, tn, false)
	r := startRelay(t, tn, Config{Target: dst.conn.LocalAddr().String(), BusyPoll: true,
		Hops: [2][]link.Config{{mkHop(t, "rate=100Mbit,delay=1ms,queue=droptail:1000p")}}})
	if r.ready == nil {
		t.Fatal("busy polling on Linux has no ReadySet (epoll)")
	}
	for i := 0; i < sessions; i++ {
		c := dial(t, tn, r.Addr())
		if _, err := c.WriteBatch(datagrams(i, 1, 100, ecn.NotECT)); err != nil {
			t.Fatal(err)
		}
	}
	if got := dst.waitFor(sessions, 10*time.Second); len(got) != sessions {
		t.Fatalf("received %d datagrams, want %d", len(got), sessions)
	}
	if cn := r.Counters(); cn.Clients != sessions {
		t.Fatalf("sessions got %d, want %d", cn.Clients, sessions)
	}
	loops := func() int64 { cn := r.Counters(); return cn.Loop.Hist.Count() }
	passes0, reads0 := loops(), r.pollReads.Load()
	deadline := time.Now().Add(10 * time.Second)
	for loops() < passes0+2000 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond) // poll the counter
	}
	passes, reads := loops()-passes0, int64(r.pollReads.Load()-reads0)
	if passes < 2000 {
		t.Fatalf("only %d loop passes in 10 s", passes)
	}
	cn := r.Counters()
	t.Logf("%d idle sessions: %d reads in %d passes; pass p50 %v, p99 %v, p99.9 %v", sessions, reads, passes, cn.Loop.P50, cn.Loop.P99, cn.Loop.P999)
	if reads >= passes {
		t.Errorf("%d reads in %d passes with %d idle sessions: want fewer reads than passes (idle sockets not read)", reads, passes, sessions)
	}
}

// TestBusyPollConfig: busy polling is refused with the real-time policy and
// on devices that cannot be read without blocking, with an error saying
// why.
func TestBusyPollConfig(t *testing.T) {
	tn := memNet()
	_, err := New(Config{Listen: tn.host + ":0", Network: tn.mem, Target: "10.0.0.9:9", BusyPoll: true, Realtime: true})
	if !errors.Is(err, errPollRealtime) {
		t.Errorf("BusyPoll with Realtime: got %v, want %v", err, errPollRealtime)
	}
	_, err = New(Config{Listen: tn.host + ":0", Network: tn.mem, Target: "10.0.0.9:9", BusyPoll: true, WaitPoll: true})
	if !errors.Is(err, errPollBoth) {
		t.Errorf("BusyPoll with WaitPoll: got %v, want %v", err, errPollBoth)
	}
	if _, err = NewPacket(Config{WaitPoll: true}, blocking{}, blocking{}); err == nil || !strings.Contains(err.Error(), "without blocking") {
		t.Errorf("WaitPoll on a device without TryReadBatch: got %v, want an error saying it cannot be read without blocking", err)
	}
	inner, outer := blocking{}, blocking{}
	_, err = NewPacket(Config{BusyPoll: true}, inner, outer)
	if err == nil || !strings.Contains(err.Error(), "inner device") || !strings.Contains(err.Error(), "without blocking") {
		t.Errorf("BusyPoll on a device without TryReadBatch: got %v, want an error naming the inner device", err)
	}
}

// blocking is a netio.Conn that is not a netio.Poller.
type blocking struct{}

func (blocking) ReadBatch([]netio.Message) (int, error)  { return 0, netio.ErrClosed }
func (blocking) WriteBatch([]netio.Message) (int, error) { return 0, netio.ErrClosed }
func (blocking) LocalAddr() netip.AddrPort               { return netip.AddrPort{} }
func (blocking) Close() error                            { return nil }

// TestWaitPollIdle: the waiting loop (Config.WaitPoll) reads only the
// sockets that hold datagrams, as the busy one does, and blocks while
// nothing arrives and nothing is due. Over loopback, with 64 idle sessions
// open, one client's 100 datagrams (each sent once the previous one has
// arrived) cost fewer reads than passes (one read per socket per pass
// would be 65 per pass); then, idle, the loop makes almost no passes (a
// busy loop makes tens of thousands a second).
func TestWaitPollIdle(t *testing.T) {
	const sessions, n = 64, 100
	for _, m := range loopModes(t) {
		if !m.cfg.WaitPoll {
			continue
		}
		t.Run(m.name, func(t *testing.T) {
			tn := udpNet()
			dst := newSink(t, tn, false)
			cfg := m.cfg
			cfg.Target = dst.conn.LocalAddr().String()
			cfg.Hops = [2][]link.Config{{mkHop(t, "rate=100Mbit,delay=1ms,queue=droptail:1000p")}}
			r := startRelay(t, tn, cfg)
			if r.ready == nil {
				t.Fatal("the waiting loop on Linux has no ReadySet (epoll)")
			}
			var first netio.Conn
			for i := 0; i < sessions; i++ {
				c := dial(t, tn, r.Addr())
				if i == 0 {
					first = c
				}
				if _, err := c.WriteBatch(datagrams(i, 1, 100, ecn.NotECT)); err != nil {
					t.Fatal(err)
				}
			}
			if got := dst.waitFor(sessions, 10*time.Second); len(got) != sessions {
				t.Fatalf("received %d datagrams, want %d", len(got), sessions)
			}
			passes0, reads0 := r.pollPasses.Load(), r.pollReads.Load()
			for i := 0; i < n; i++ {
				if _, err := first.WriteBatch(datagrams(sessions+i, 1, 100, ecn.NotECT)); err != nil {
					t.Fatal(err)
				}
				if got := dst.waitFor(sessions+i+1, 10*time.Second); len(got) != sessions+i+1 {
					t.Fatalf("received %d datagrams, want %d", len(got), sessions+i+1)
				}
			}
			passes, reads := r.pollPasses.Load()-passes0, r.pollReads.Load()-reads0
			t.Logf("%d idle sessions, %d datagrams: %d reads in %d passes", sessions, n, reads, passes)
			if reads >= passes {
				t.Errorf("%d reads in %d passes with %d idle sessions: want fewer reads than passes (idle sockets not read)", reads, passes, sessions)
			}
			// Idle: the loop wakes for the statistics line and the
			// expiry check (once a second each), nothing else.
			const window = 300 * time.Millisecond
			idle0 := r.pollPasses.Load()
			time.Sleep(window) // a measurement window, not a synchronisation
			if idle := r.pollPasses.Load() - idle0; idle > 100 {
				t.Errorf("idle for %v: %d loop passes, want at most 100 (the loop blocks; a busy loop makes tens of thousands)", window, idle)
			}
		})
	}
}

// TestWaitPollClose: Close wakes a waiting loop at once (the sleeper's
// eventfd is in its epoll set), over loopback and in memory, on a normal
// and a real-time thread. The relay has no sessions and an hour between
// statistics lines, so a loop that Close could not wake would block for
// an hour.
func TestWaitPollClose(t *testing.T) {
	for _, m := range loopModes(t) {
		if !m.cfg.WaitPoll {
			continue
		}
		for _, tn := range []testNet{udpNet(), memNet()} {
			t.Run(m.name+"/"+map[bool]string{true: "udp", false: "memory"}[tn.mem == nil], func(t *testing.T) {
				cfg := m.cfg
				cfg.Listen, cfg.Network, cfg.Target = tn.host+":0", tn.network(), tn.host+":9"
				cfg.Interval = time.Hour
				r, err := New(cfg)
				if err != nil {
					t.Fatal(err)
				}
				r.Start()
				end := time.Now().Add(10 * time.Second)
				for waits(r) == 0 && time.Now().Before(end) {
					time.Sleep(time.Millisecond) // poll the counter
				}
				if waits(r) == 0 {
					r.Close()
					t.Fatal("the loop did not block within 10 s")
				}
				done := make(chan struct{})
				go func() { r.Close(); close(done) }()
				select {
				case <-done:
				case <-time.After(30 * time.Second):
					t.Fatal("Close did not return within 30 s: the blocked loop was not woken")
				}
			})
		}
	}
}

// waits returns how often r's loop has blocked.
func waits(r *Relay) int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cnt.LoopWaits
}

// TestWaitPollRest: a real-time waiting loop that has blocked for less
// than waitRest in all in the last waitRestAfter (a flood, even one with
// brief gaps) rests instead of starting the next pass, counted in
// Counters.LoopRests, and blocks for nothing after a pass that read
// datagrams otherwise. The waiter is driven directly, on a relay that is
// not started.
func TestWaitPollRest(t *testing.T) {
	tn := memNet()
	r, err := New(Config{Listen: tn.host + ":0", Network: tn.network(), Target: tn.host + ":9", WaitPoll: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	now := r.now()
	tests := []struct {
		name        string
		rest        bool
		busy        time.Duration // since the stretch began (busySince)
		blocked     time.Duration // in waits since
		got         bool          // the pass read datagrams
		waited      bool
		wantRests   int64
		wantBlocked int64
	}{
		{"flood, real-time: rests", true, waitRestAfter, 0, true, true, 1, 0},
		{"flood with brief blocks, real-time: rests", true, waitRestAfter, waitRest - time.Nanosecond, true, true, 1, 0},
		{"flood, normal policy: next pass", false, 10 * waitRestAfter, 0, true, false, 0, 0},
		{"real-time, busy briefly: next pass", true, waitRestAfter / 2, 0, true, false, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r.mu.Lock()
			rests0, waits0 := r.cnt.LoopRests, r.cnt.LoopWaits
			r.mu.Unlock()
			w := &waiter{r: r, rest: tc.rest, undo: func() {}, busySince: now.Add(-tc.busy), blocked: tc.blocked}
			_, waited := w.wait(now, now.Add(time.Hour), tc.got)
			r.mu.Lock()
			rests, waits := r.cnt.LoopRests-rests0, r.cnt.LoopWaits-waits0
			r.mu.Unlock()
			if waited != tc.waited || rests != tc.wantRests || waits != tc.wantBlocked {
				t.Errorf("waited %v, rests %d, waits %d; want %v, %d, %d", waited, rests, waits, tc.waited, tc.wantRests, tc.wantBlocked)
			}
			if tc.wantRests > 0 && (w.busySince <= now || w.blocked != 0) {
				t.Errorf("after a rest, busySince %v, blocked %v: want past %v, 0", w.busySince, w.blocked, now)
			}
		})
	}
}

// TestWaitPollBlocked: the waits since the stretch began add up, and only
// when they reach waitRest does a new stretch begin: a flood's brief gaps,
// each a wait of 1 µs, do not each start one.
func TestWaitPollBlocked(t *testing.T) {
	start := clock.Start
	w := &waiter{busySince: start}
	end := start
	for i := 1; i < int(waitRest/time.Microsecond); i++ {
		end = end.Add(50 * time.Microsecond)
		w.blockedFor(time.Microsecond, end)
		if w.busySince != start || w.blocked != time.Duration(i)*time.Microsecond {
			t.Fatalf("after %d waits of 1 µs: busySince %v, blocked %v; want %v, %v", i, w.busySince, w.blocked, start, time.Duration(i)*time.Microsecond)
		}
	}
	end = end.Add(50 * time.Microsecond)
	w.blockedFor(time.Microsecond, end)
	if w.busySince != end || w.blocked != 0 {
		t.Errorf("blocked %v in all: busySince %v, blocked %v; want %v, 0", waitRest, w.busySince, w.blocked, end)
	}
	w.blockedFor(waitRest, end.Add(time.Millisecond))
	if w.busySince != end.Add(time.Millisecond) || w.blocked != 0 {
		t.Errorf("one wait of %v: busySince %v, blocked %v; want %v, 0", waitRest, w.busySince, w.blocked, end.Add(time.Millisecond))
	}
}

// TestWaitPollLead: the waiting loop polls before an instant only for a
// fixed Config.Spin; it learns no lead (Spin 0) and never polls with a
// negative Spin, whatever the learned estimate holds.
func TestWaitPollLead(t *testing.T) {
	for _, tc := range []struct {
		spin, want time.Duration
	}{
		{0, 0},
		{-1, 0},
		{150 * time.Microsecond, 150 * time.Microsecond},
	} {
		r := &Relay{cfg: Config{WaitPoll: true, Spin: tc.spin}}
		r.lead.est = 40 * time.Microsecond
		if got := (&waiter{r: r}).lead(); got != tc.want {
			t.Errorf("Spin %v: lead got %v, want %v", tc.spin, got, tc.want)
		}
	}
}
