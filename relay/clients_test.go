package relay

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"cclab/ecn"
	"cclab/event"
	"cclab/link"
	"cclab/netio"
)

func TestManyClientsGetTheirOwnReplies(t *testing.T) {
	tn := memNet()
	dst := newSink(t, tn, true)
	r := startRelay(t, tn, Config{Target: dst.conn.LocalAddr().String(),
		Hops: [2][]link.Config{{mkHop(t, "delay=2ms")}, {mkHop(t, "rate=50Mbit,delay=2ms")}}})
	const clients, each = 8, 10
	conns := make([]netio.Conn, clients)
	for i := range conns {
		conns[i] = dial(t, tn, r.Addr())
		if _, err := conns[i].WriteBatch(datagrams(i*1000, each, 64, ecn.NotECT)); err != nil {
			t.Fatal(err)
		}
	}
	for i, c := range conns {
		got := readAll(t, c, each, 5*time.Second)
		for _, m := range got {
			if seq := binary.BigEndian.Uint64(m.Buf); int(seq)/1000 != i {
				t.Errorf("client %d got the reply to datagram %d", i, seq)
			}
		}
		if len(got) != each {
			t.Errorf("client %d got %d replies, want %d", i, len(got), each)
		}
	}
	if cn := r.Counters(); cn.Clients != clients {
		t.Errorf("relay opened %d sessions, want %d", cn.Clients, clients)
	}
}

// TestEntries: a client of an entry crosses only its hops, both ways, and
// gets its replies from the entry's address; a client of the main address
// crosses every hop.
func TestEntries(t *testing.T) {
	tn := memNet()
	dst := newSink(t, tn, true)
	cnt := newCounter()
	r := startRelay(t, tn, Config{Target: dst.conn.LocalAddr().String(), Sink: cnt,
		Entries: []Entry{{Listen: tn.host + ":0", First: 1, Last: 2}},
		Links:   [2][]int32{{0, 2, 4}, {5, 3, 1}},
		Hops: [2][]link.Config{{mkHop(t, "delay=1ms"), mkHop(t, "delay=2ms"), mkHop(t, "delay=3ms")},
			{mkHop(t, "delay=3ms"), mkHop(t, "delay=2ms"), mkHop(t, "delay=1ms")}}})
	part := dial(t, tn, r.EntryAddr(0))
	if _, err := part.WriteBatch(datagrams(0, 5, 64, ecn.NotECT)); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, part, 5, 5*time.Second); len(got) != 5 {
		t.Fatalf("entry client got %d replies, want 5 (from the entry's address)", len(got))
	}
	for _, l := range []int32{2, 4, 5, 3} {
		if n := cnt.get(l, event.Departure); n != 5 {
			t.Errorf("link %d: %d departures, want 5 (the entry's path)", l, n)
		}
	}
	for _, l := range []int32{0, 1} {
		if n := cnt.get(l, event.Departure); n != 0 {
			t.Errorf("link %d: %d departures, want none (outside the entry's path)", l, n)
		}
	}
	full := dial(t, tn, r.Addr())
	if _, err := full.WriteBatch(datagrams(100, 5, 64, ecn.NotECT)); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, full, 5, 5*time.Second); len(got) != 5 {
		t.Fatalf("main client got %d replies, want 5", len(got))
	}
	for _, l := range []int32{0, 1} {
		if n := cnt.get(l, event.Departure); n != 5 {
			t.Errorf("link %d: %d departures, want 5 (the main client's)", l, n)
		}
	}
	if _, err := New(Config{Listen: tn.host + ":0", Target: dst.conn.LocalAddr().String(), Network: tn.mem,
		Entries: []Entry{{Listen: tn.host + ":0", First: 1, Last: 3}},
		Hops:    [2][]link.Config{{{}, {}}, {{}, {}}}}); err == nil || !strings.Contains(err.Error(), "entry 0") {
		t.Errorf("an entry beyond the hops: got %v, want an error naming it", err)
	}
}

func TestIdleClientExpires(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the once-a-second expiry sweep")
	}
	tn := memNet()
	dst := newSink(t, tn, false)
	r := startRelay(t, tn, Config{Target: dst.conn.LocalAddr().String(), ClientTimeout: 100 * time.Millisecond})
	c := dial(t, tn, r.Addr())
	c.WriteBatch(datagrams(0, 1, 50, ecn.NotECT))
	dst.waitFor(1, time.Second)
	r.mu.Lock()
	var first *client // the session that expires
	for _, cl := range r.clients {
		first = cl
	}
	r.mu.Unlock()
	// The sweep runs once a second: wait (at most 5 s) until it expired the session.
	deadline := time.Now().Add(5 * time.Second)
	for r.Counters().Expired == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond) // poll the counter
	}
	c.WriteBatch(datagrams(1, 1, 50, ecn.NotECT))
	if got := dst.waitFor(2, time.Second); len(got) != 2 {
		t.Fatalf("received %d datagrams, want 2 (a new session after expiry)", len(got))
	}
	if cn := r.Counters(); cn.Expired != 1 || cn.Clients != 2 {
		t.Errorf("expired %d, sessions %d; want 1 and 2", cn.Expired, cn.Clients)
	}
	// With Config.BusyPoll the expiry dropped the session's reader from
	// the loop's sockets (they are the loop's: read once it has ended,
	// after Close).
	r.Close()
	for _, rd := range append(slices.Clone(r.polled), r.watched...) {
		if first != nil && rd != nil && rd.c == first {
			t.Errorf("the expired session's socket is still polled")
		}
	}
}

func TestParseEntry(t *testing.T) {
	for in, want := range map[string]Entry{
		"127.0.0.1:9001=1-2": {Listen: "127.0.0.1:9001", First: 1, Last: 2},
		"[::1]:0=3":          {Listen: "[::1]:0", First: 3, Last: 3},
		" :9002 = 0 - 1":     {Listen: ":9002", First: 0, Last: 1},
	} {
		if got, err := ParseEntry(in); err != nil || got != want {
			t.Errorf("ParseEntry(%q) got %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, bad := range []string{"127.0.0.1:9001", "=1", "a=x", "a=2-1", "a=-1", "a=1-"} {
		if _, err := ParseEntry(bad); err == nil {
			t.Errorf("ParseEntry(%q) got nil error, want an error", bad)
		}
	}
}

// waitCounters polls the relay's counters until ok holds (at most 10 s).
func waitCounters(r *Relay, ok func(Counters) bool) Counters {
	// A generous bound: it only ends a failing test. Under the race detector
	// on a loaded 2-core machine 2,000 new sessions took over 10 s.
	deadline := time.Now().Add(60 * time.Second)
	for {
		c := r.Counters()
		if ok(c) || time.Now().After(deadline) {
			return c
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestManyPortsOfOneHost: 2,000 datagrams from 2,000 ports of one host
// (more than MaxClients) no longer lock new clients out: that host keeps at
// most MaxClientsPerHost sessions, each new port replacing its idlest one.
func TestManyPortsOfOneHost(t *testing.T) {
	tn := memNet()
	dst := newSink(t, tn, false)
	r := startRelay(t, tn, Config{Target: dst.conn.LocalAddr().String(),
		Hops: [2][]link.Config{{mkHop(t, "rate=1Gbit")}}})
	attacker := testNet{mem: tn.mem, host: "10.0.0.66"}
	const ports = 2000
	for i := range ports {
		dial(t, attacker, r.Addr()).WriteBatch(datagrams(1000+i, 1, 100, ecn.NotECT))
	}
	if c := waitCounters(r, func(c Counters) bool { return c.Received[Fwd] == ports }); c.Received[Fwd] != ports {
		t.Fatalf("relay read %d of the %d flood datagrams (client-limit drops %d)", c.Received[Fwd], ports, c.ClientLimit)
	}
	// New clients, of another host and of the flooding host, get through.
	for i, h := range []string{"10.0.0.1", "10.0.0.2", "10.0.0.66"} {
		dial(t, testNet{mem: tn.mem, host: h}, r.Addr()).WriteBatch(datagrams(i, 1, 100, ecn.NotECT))
	}
	isNew := func(g []rx) int {
		n := 0
		for _, x := range g {
			if x.seq < 3 {
				n++
			}
		}
		return n
	}
	if got := dst.waitUntil(func(g []rx) bool { return isNew(g) == 3 }, 10*time.Second); isNew(got) != 3 {
		t.Errorf("new clients after the flood: %d of 3 datagrams arrived, want 3", isNew(got))
	}
	c := r.Counters()
	if got, want := c.Evicted, int64(ports+1-DefaultMaxClientsPerHost); got != want {
		t.Errorf("evicted sessions: got %d, want %d (the host's ports beyond %d)", got, want, DefaultMaxClientsPerHost)
	}
	if c.ClientLimit != 0 {
		t.Errorf("client-limit drops: got %d, want 0", c.ClientLimit)
	}
	r.mu.Lock()
	hostSessions := r.perHost[netip.MustParseAddr("10.0.0.66")]
	r.mu.Unlock()
	if hostSessions != DefaultMaxClientsPerHost {
		t.Errorf("sessions of the flooding host: got %d, want %d", hostSessions, DefaultMaxClientsPerHost)
	}
}

// TestFullTableEvictsIdlest: with MaxClients sessions from as many hosts, a
// new client is refused while none has been idle for EvictIdle, and
// otherwise replaces the idlest one.
func TestFullTableEvictsIdlest(t *testing.T) {
	for _, tc := range []struct {
		evictIdle   time.Duration
		wantEvicted int64
		wantLimited int64
	}{
		{time.Hour, 0, 1},
		{time.Nanosecond, 1, 0},
	} {
		tn := memNet()
		dst := newSink(t, tn, false)
		r := startRelay(t, tn, Config{Target: dst.conn.LocalAddr().String(), MaxClients: 4, EvictIdle: tc.evictIdle,
			Hops: [2][]link.Config{{mkHop(t, "rate=1Gbit")}}})
		var first netip.AddrPort
		for i := range 4 {
			c := dial(t, testNet{mem: tn.mem, host: fmt.Sprintf("10.0.1.%d", i+1)}, r.Addr())
			if i == 0 {
				first = c.LocalAddr()
			}
			c.WriteBatch(datagrams(i, 1, 100, ecn.NotECT))
			// Each session exists before the next client sends (so the first is the idlest).
			waitCounters(r, func(c Counters) bool { return c.Clients == int64(i+1) })
		}
		dial(t, testNet{mem: tn.mem, host: "10.0.2.1"}, r.Addr()).WriteBatch(datagrams(4, 1, 100, ecn.NotECT))
		c := waitCounters(r, func(c Counters) bool { return c.Evicted+c.ClientLimit == 1 })
		if c.Evicted != tc.wantEvicted || c.ClientLimit != tc.wantLimited {
			t.Errorf("EvictIdle %v: evicted %d, client-limit drops %d; want %d and %d", tc.evictIdle, c.Evicted, c.ClientLimit, tc.wantEvicted, tc.wantLimited)
		}
		r.mu.Lock()
		_, firstKept := r.clients[first]
		r.mu.Unlock()
		if firstKept != (tc.wantEvicted == 0) {
			t.Errorf("EvictIdle %v: the idlest (first) session kept %v, want %v", tc.evictIdle, firstKept, tc.wantEvicted == 0)
		}
	}
}
