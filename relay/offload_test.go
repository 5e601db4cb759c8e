package relay

import (
	"encoding/binary"
	"errors"
	"sync"
	"testing"
	"time"

	"cclab/clock"
	"cclab/ecn"
	"cclab/event"
	"cclab/internal/testenv"
	"cclab/link"
	"cclab/netio"
)

// offloadDG is one datagram of TestRelayOffload: size and ECN codepoint.
type offloadDG struct {
	n  int
	cp ecn.Codepoint
}

// offloadMix: GSO runs of several lengths (one longer than a GSO send's 64
// segments), short last segments, ECN changes and single datagrams.
func offloadMix() []offloadDG {
	var s []offloadDG
	for range 80 {
		s = append(s, offloadDG{1400, ecn.ECT0})
	}
	s = append(s, offloadDG{700, ecn.ECT0}, offloadDG{1400, ecn.NotECT}, offloadDG{1400, ecn.NotECT},
		offloadDG{300, ecn.ECT1}, offloadDG{1200, ecn.CE}, offloadDG{1200, ecn.CE}, offloadDG{1300, ecn.CE})
	for i := range 40 {
		s = append(s, offloadDG{1000 + i%3, ecn.ECT0}) // sizes that never make a run longer than 2
	}
	return s
}

// TestRelayOffload: over real loopback sockets, a client's GSO runs cross
// the relay (GRO reads, GSO writes) as the same datagrams, in order, with
// their ECN codepoints, to a receiver with and without GRO, through an
// unshaped hop and through a rate-limited, delayed, queued one; and the
// relay's reads and writes were coalesced (fewer system calls than
// datagrams). With NoOffload the same arrives, without coalescing.
func TestRelayOffload(t *testing.T) {
	probe, err := netio.ListenUDP("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gro := netio.EnableGRO(probe)
	probe.Close()
	if !gro {
		testenv.Need(t, "UDP GRO (UDP_GRO, Linux >= 5.0)", errors.New("netio.EnableGRO returned false"))
	}
	for _, tc := range []struct {
		name    string
		hop     string
		noOff   bool
		sinkGRO bool
	}{
		{"unshaped", "", false, true},
		{"unshaped, plain receiver", "", false, false},
		{"rate delay queue", "rate=200Mbit,delay=2ms,queue=droptail:1000p", false, true},
		{"no offload", "rate=200Mbit,delay=2ms,queue=droptail:1000p", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dst, err := netio.ListenUDP("127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer dst.Close()
			if tc.sinkGRO && !netio.EnableGRO(dst) {
				t.Fatal("EnableGRO on the receiver: got false")
			}
			var hops [2][]link.Config
			if tc.hop != "" {
				hops[Fwd] = []link.Config{mkHop(t, tc.hop)}
			}
			r := startRelay(t, udpNet(), Config{Target: dst.LocalAddr().String(), Hops: hops, NoOffload: tc.noOff})
			src, err := netio.DialUDP("127.0.0.1:0", r.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			g := netio.NewGSOWriter(src)
			if g == nil {
				testenv.Need(t, "UDP GSO (UDP_SEGMENT, Linux >= 4.18)", errors.New("netio.NewGSOWriter returned nil"))
			}
			want := offloadMix()
			ms := make([]netio.Message, len(want))
			for i, w := range want {
				b := make([]byte, w.n)
				binary.BigEndian.PutUint32(b, uint32(i))
				for j := 4; j < len(b); j++ {
					b[j] = byte(i * j)
				}
				ms[i] = netio.Message{Buf: b, N: w.n, ECN: w.cp}
			}
			if sent, _, err := g.WriteMessages(ms); err != nil || sent != len(ms) {
				t.Fatalf("client GSO send: got %d, %v; want %d, nil", sent, err, len(ms))
			}
			rm := NewBatch(8, netio.GROBufSize)
			_ = dst.Raw().SetReadDeadline(time.Now().Add(10 * time.Second))
			got := 0
			for got < len(want) {
				n, err := dst.ReadBatch(rm)
				if err != nil {
					t.Fatalf("received %d of %d datagrams: %v", got, len(want), err)
				}
				for _, m := range rm[:n] {
					for k := range m.Count() {
						d := m.Datagram(k)
						w := want[got]
						if len(d) != w.n || binary.BigEndian.Uint32(d) != uint32(got) || m.ECN != w.cp {
							t.Fatalf("datagram %d: got len %d seq %d ECN %v, want %d %d %v",
								got, len(d), binary.BigEndian.Uint32(d), m.ECN, w.n, got, w.cp)
						}
						for j := 4; j < len(d); j++ {
							if d[j] != byte(got*j) {
								t.Fatalf("datagram %d byte %d: got %d, want %d", got, j, d[j], byte(got*j))
							}
						}
						got++
					}
				}
			}
			c := r.Counters()
			if c.Sent[Fwd] != int64(len(want)) || c.Received[Fwd] != int64(len(want)) {
				t.Errorf("relay received %d, sent %d datagrams, want %d each", c.Received[Fwd], c.Sent[Fwd], len(want))
			}
			// Kernel receive stamps: every received message's read
			// lateness is counted, mapped onto the relay's clock (a broken
			// mapping would be off by years, not by a minute).
			if n := c.ReadLate.Hist.Count(); n == 0 || n > c.Received[Fwd] {
				t.Errorf("read lateness of %d messages, want 1..%d (one per received message)", n, c.Received[Fwd])
			}
			if c.ReadLate.P50 > c.ReadLate.P99 || c.ReadLate.P99 > c.ReadLate.P999 || c.ReadLate.Max > time.Minute {
				t.Errorf("read lateness median %v, p99 %v, p99.9 %v, max %v: want ordered percentiles and a maximum below a minute",
					c.ReadLate.P50, c.ReadLate.P99, c.ReadLate.P999, c.ReadLate.Max)
			}
			if tc.noOff {
				if c.GROReads != 0 {
					t.Errorf("GRO reads with NoOffload: got %d, want 0", c.GROReads)
				}
				return
			}
			if c.GROReads == 0 || c.ReadCalls >= c.Received[Fwd] {
				t.Errorf("relay reads: %d calls, %d coalesced, for %d datagrams; want coalesced reads", c.ReadCalls, c.GROReads, c.Received[Fwd])
			}
			if tc.hop == "" && c.WriteCalls >= c.Sent[Fwd] {
				t.Errorf("relay writes: %d calls for %d datagrams, want fewer (GSO runs)", c.WriteCalls, c.Sent[Fwd])
			}
		})
	}
}

// TestCoalesce: the scheduler wakes no sooner than Coalesce after its last
// write, and at the deadline otherwise.
func TestCoalesce(t *testing.T) {
	const us = clock.Time(time.Microsecond)
	last := clock.Start
	for _, tc := range []struct {
		name string
		d    clock.Time
		c    time.Duration
		want clock.Time
	}{
		{"no deadline", clock.Never, 50 * time.Microsecond, clock.Never},
		{"off", last + 10*us, -1, last + 10*us},
		{"zero", last + 10*us, 0, last + 10*us},
		{"due soon after a write: waits", last + 10*us, 50 * time.Microsecond, last + 50*us},
		{"due long after: at its instant", last + 80*us, 50 * time.Microsecond, last + 80*us},
		{"exactly at the bound", last + 50*us, 50 * time.Microsecond, last + 50*us},
		{"overdue: waits for the bound", last - 5*us, 50 * time.Microsecond, last + 50*us},
	} {
		if got := coalesce(tc.d, last, tc.c); got != tc.want {
			t.Errorf("%s: coalesce(%v, %v, %v) got %v, want %v", tc.name, tc.d, last, tc.c, got, tc.want)
		}
	}
}

// TestReadLateness: datagrams that waited in the relay's socket before its
// reader ran (stamps are on from the socket's creation) count that wait as
// read lateness, and enter the link at Start (the floor of their kernel
// receive stamps), not before.
func TestReadLateness(t *testing.T) {
	const wait = 50 * time.Millisecond
	dst, err := netio.ListenUDP("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	stampsLive(t, dst)
	var mu sync.Mutex
	var enq []clock.Time
	sink := event.Func(func(e *event.Event) {
		if e.Kind == event.Enqueue {
			mu.Lock()
			enq = append(enq, e.Time)
			mu.Unlock()
		}
	})
	r, err := New(Config{Listen: "127.0.0.1:0", Target: dst.LocalAddr().String(), Sink: sink,
		Hops: [2][]link.Config{{mkHop(t, "delay=1ms")}}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	src, err := netio.DialUDP("127.0.0.1:0", r.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	const n = 5
	ms := make([]netio.Message, n)
	for i := range ms {
		ms[i] = netio.Message{Buf: make([]byte, 100), N: 100}
	}
	if sent, err := src.WriteBatch(ms); err != nil || sent != n {
		t.Fatalf("send: %d, %v; want %d, nil", sent, err, n)
	}
	time.Sleep(wait) // the datagrams wait in the relay's socket: the wait is what is measured
	start := r.Now()
	r.Start()
	rm := NewBatch(n, 2048)
	_ = dst.Raw().SetReadDeadline(time.Now().Add(10 * time.Second))
	for got := 0; got < n; {
		k, err := dst.ReadBatch(rm)
		if err != nil {
			t.Fatalf("received %d of %d: %v", got, n, err)
		}
		got += k
	}
	mu.Lock()
	times := append([]clock.Time(nil), enq...)
	mu.Unlock()
	if len(times) != n {
		t.Fatalf("%d enqueue events, want %d", len(times), n)
	}
	for i, at := range times {
		if at < start {
			t.Errorf("datagram %d entered the link %v before Start, want at or after it (its read)", i, start.Sub(at))
		}
	}
	c := r.Counters()
	if c.ReadLate.Hist.Count() == 0 || c.ReadLate.Max < wait {
		t.Errorf("read lateness: %d messages, max %v; want at least one, max at least %v (the wait in the socket)", c.ReadLate.Hist.Count(), c.ReadLate.Max, wait)
	}
}

// stampsLive waits (at most 10 s) until the kernel stamps datagrams as they
// arrive: the first socket that asks for receive stamps switches them on
// for the whole host through a deferred work item, and until that has run
// a datagram is stamped when it is read, not when it arrived. It sends c
// (a UDP socket it then drains) a datagram, lets it wait 5 ms, and checks
// that the stamp is at least that old.
func stampsLive(t *testing.T, c *netio.UDPConn) {
	t.Helper()
	if !netio.EnableRxTimestamps(c) {
		t.Skip("no kernel receive timestamps here (SO_TIMESTAMPNS is Linux)")
	}
	const held = 5 * time.Millisecond
	src, err := netio.DialUDP("127.0.0.1:0", c.LocalAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	ms := NewBatch(1, 2048)
	end := time.Now().Add(10 * time.Second)
	for time.Now().Before(end) {
		if _, err := src.WriteBatch([]netio.Message{{Buf: make([]byte, 10), N: 10}}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(held) // the wait the stamp must show
		if _, err := c.ReadBatch(ms); err != nil {
			t.Fatal(err)
		}
		if ms[0].RxTime != 0 && time.Now().UnixNano()-ms[0].RxTime >= int64(held) {
			return
		}
	}
	t.Fatal("the kernel's receive stamps did not come on within 10 s")
}
