package relay

import (
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"cclab/clock"
	"cclab/ecn"
	"cclab/event"
	"cclab/link"
	"cclab/netio"
	"cclab/qdisc"
	"cclab/traffic"
)

func TestParseHop(t *testing.T) {
	tests := []struct {
		in    string
		check func(link.Config) bool
	}{
		{"rate=10Mbit,delay=5ms", func(c link.Config) bool { return c.Rate == 10e6 && c.Delay == 5*time.Millisecond }},
		{"queue=red:min=5,max=15,maxp=0.1,ecn,delay=2ms", func(c link.Config) bool {
			return c.Queue == "red:min=5,max=15,maxp=0.1,ecn" && c.Delay == 2*time.Millisecond
		}},
		{"loss=ge:p=0.01,r=0.3,h=0,k=1,rate=1Mbit", func(c link.Config) bool { return c.Loss == "ge:p=0.01,r=0.3,h=0,k=1" && c.Rate == 1e6 }},
		{"queue=[droptail:20p],reorder,jitter=1ms,delay=1ms", func(c link.Config) bool {
			return c.Queue == "droptail:20p" && c.Reorder && c.Jitter == time.Millisecond
		}},
		{"loss=0.02", func(c link.Config) bool { return c.Loss == "0.02" }},
	}
	for _, tc := range tests {
		c, err := ParseHop(tc.in)
		if err != nil || !tc.check(c) {
			t.Errorf("ParseHop(%q) got %+v, %v", tc.in, c, err)
		}
	}
	for _, bad := range []string{"speed=10", "rate=fast", "delay=-1ms", "queue=nosuch", "loss=2", "rate=1,rate=2", "mtu=0", "mtu=67", "jitter=2ms,delay=1ms", "jitter=1ms"} {
		if _, err := ParseHop(bad); err == nil {
			t.Errorf("ParseHop(%q) got nil error, want an error", bad)
		}
	}
}

func TestParseCross(t *testing.T) {
	tests := []struct {
		in   string
		want CrossConfig
	}{
		// The older ON/OFF syntax: bare durations are exponential means.
		{"onoff:rate=5Mbit,size=1200,on=50ms,off=20ms,hop=1,dir=rev",
			CrossConfig{Gen: "udponoff:rate=5Mbit,size=1200,on=exp(50ms),off=exp(20ms)", Hop: 1, Dir: "rev"}},
		{"onoff:rate=5Mbit", CrossConfig{Gen: "udponoff:rate=5Mbit,on=exp(100ms),off=exp(100ms)", Dir: "fwd"}},
		{"onoff:rate=1Mbit,on=pareto(1s/1.5)", CrossConfig{Gen: "udponoff:rate=1Mbit,on=pareto(1s/1.5),off=exp(100ms)", Dir: "fwd"}},
		{"cbr:rate=6Mbit,size=1000,hop=2", CrossConfig{Gen: "cbr:rate=6Mbit,size=1000", Hop: 2, Dir: "fwd"}},
		{"cbr:2Mbit,phase,dir=REV", CrossConfig{Gen: "cbr:2mbit,phase", Dir: "rev"}},
		{"udponoff:rate=3Mbit,on=exp(200ms),off=pareto(1s/1.5)", CrossConfig{Gen: "udponoff:rate=3Mbit,on=exp(200ms),off=pareto(1s/1.5)", Dir: "fwd"}},
	}
	for _, tc := range tests {
		got, err := ParseCross(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseCross(%q) got %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"poisson:rate=1M", "greedy", "cbr:rate=0", "cbr:rate=1M,size=0", "cbr:rate=1M,dir=up",
		"cbr:rate=1M,bogus=1", "cbr:rate=1M,hop=-1", "cbr:rate=1M,hop=x", "onoff:rate=1M,on=-5ms"} {
		if _, err := ParseCross(bad); err == nil {
			t.Errorf("ParseCross(%q) got nil error, want an error", bad)
		}
	}
}

// offlineRelay is a Relay without sockets: one forward hop with the given
// cross traffic, driven by calling service with model time.
func offlineRelay(t testing.TB, overhead int, hopSpec string, cross ...string) (*Relay, *hop) {
	t.Helper()
	r := &Relay{overhead: overhead}
	h := &hop{dir: Fwd}
	l, err := link.New(mkHop(t, hopSpec), link.Env{Rand: rand.New(rand.NewPCG(1, 2)), Free: func(p *qdisc.Packet) { r.dropped(h, p) }})
	if err != nil {
		t.Fatal(err)
	}
	h.l = l
	r.paths[Fwd] = []*hop{h}
	r.paths[Rev] = []*hop{}
	for i, s := range cross {
		cc, err := ParseCross(s)
		if err != nil {
			t.Fatal(err)
		}
		g, err := newCrossGen(cc.Gen, 9, crossStreamName(i))
		if err != nil {
			t.Fatal(err)
		}
		h.cross = append(h.cross, &crossSource{gen: g, flow: uint64(i + 1)})
	}
	for _, g := range h.cross {
		g.start(clock.Start)
	}
	return r, h
}

func TestCrossTrafficRates(t *testing.T) {
	// Generator rates are of UDP payload (docs/traffic.md); on the link each
	// datagram also carries the overhead, so the offered wire rate is
	// rate·(size+overhead)/size: CBR exactly, ON/OFF in the long run
	// rate·on/(on+off).
	const dur = 200 * time.Second
	tests := []struct {
		spec string
		rate float64 // long-run payload rate, bits/s
		tol  float64
	}{
		{"cbr:rate=5Mbit,size=1000", 5e6, 0.001},
		{"onoff:rate=6Mbit,size=1000,on=100ms,off=200ms", 6e6 * 100 / 300, 0.05},
		{"udponoff:rate=6Mbit,size=500,on=exp(100ms),off=exp(100ms)", 6e6 / 2, 0.05},
	}
	for _, tc := range tests {
		for _, ov := range []int{0, link.IPv4UDPOverhead, link.IPv6UDPOverhead} {
			r, h := offlineRelay(t, ov, "rate=1Gbit,queue=droptail:100000p", tc.spec)
			for now := clock.Start; now <= clock.Start.Add(dur); now = now.Add(time.Millisecond) {
				r.service(now)
			}
			st := h.l.Stats()
			size := int64(h.cross[0].size)
			if want := st.Injected * (size + int64(ov)); st.ArrivalBytes != want {
				t.Errorf("%s overhead %d: arrival bytes %d, want %d injected × (%d+%d)", tc.spec, ov, st.ArrivalBytes, st.Injected, size, ov)
			}
			got := float64(st.ArrivalBytes) * 8 / dur.Seconds()
			want := tc.rate * float64(size+int64(ov)) / float64(size)
			if d := got/want - 1; d < -tc.tol || d > tc.tol {
				t.Errorf("%s overhead %d: wire rate %.0f bit/s, want %.0f ± %g%%", tc.spec, ov, got, want, 100*tc.tol)
			}
		}
	}
}

func TestCrossTrafficIsTheTrafficGenerator(t *testing.T) {
	// Cross source i draws from traffic.Stream(seed, "cross/i"), so its
	// sample path is the traffic package's for that stream.
	const spec = "udponoff:rate=4Mbit,size=700,on=exp(50ms),off=pareto(100ms/1.5)"
	_, h := offlineRelay(t, 0, "rate=1Gbit", spec)
	ref, err := traffic.New(spec, traffic.Env{Rand: traffic.Stream(9, "cross/0")})
	if err != nil {
		t.Fatal(err)
	}
	rg := ref.(traffic.DatagramGen)
	at, size := rg.NextDatagram(clock.Start)
	src := h.cross[0]
	for i := 0; i < 5000; i++ {
		if src.next != at || src.size != size {
			t.Fatalf("datagram %d: relay source at %v size %d, want %v size %d", i, src.next, src.size, at, size)
		}
		src.advance()
		at, size = rg.NextDatagram(at)
	}
}

func TestCrossTrafficAllocationFree(t *testing.T) {
	// Steady state: injecting, queueing, serializing and discarding cross
	// traffic reuses pooled packets.
	r, _ := offlineRelay(t, link.IPv4UDPOverhead, "rate=10Mbit,delay=5ms,queue=droptail:50p",
		"cbr:rate=6Mbit,size=1000", "onoff:rate=8Mbit,size=1200,on=20ms,off=20ms")
	now := clock.Start
	step := func() {
		now = now.Add(time.Millisecond)
		r.service(now)
	}
	for i := 0; i < 2000; i++ { // warm up pools, queues and the delay line
		step()
	}
	if a := testing.AllocsPerRun(2000, step); a != 0 {
		t.Errorf("allocations per 1 ms step of cross traffic got %v, want 0", a)
	}
}

// BenchmarkRelayForward pushes datagrams through a shaped relay hop over
// loopback (client → relay → sink) and reports allocations per datagram of
// the whole process (blaster and sink are allocation-free in their loops).
func BenchmarkRelayForward(b *testing.B) { benchRelayForward(b, nil) }

// BenchmarkRelayForwardSink is BenchmarkRelayForward with a Config.Sink
// that counts the link events (the cost of exposing them, e.g. to
// metrics.Collector in a live run).
func BenchmarkRelayForwardSink(b *testing.B) {
	var n int64
	benchRelayForward(b, event.Func(func(*event.Event) { n++ }))
	b.ReportMetric(float64(n)/float64(b.N), "events/op")
}

func benchRelayForward(b *testing.B, sink event.Sink) {
	dst, err := netio.ListenUDP("127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer dst.Close()
	var recvd atomic.Int64
	go func() {
		ms := NewBatch(64, 2048)
		for {
			n, err := dst.ReadBatch(ms)
			if err != nil {
				return
			}
			recvd.Add(int64(n))
		}
	}()
	r, err := New(Config{Listen: "127.0.0.1:0", Target: dst.LocalAddr().String(),
		Hops: [2][]link.Config{{{Rate: 1e9, Delay: time.Millisecond, Queue: "droptail:10000p"}}}, Sink: sink})
	if err != nil {
		b.Fatal(err)
	}
	r.Start()
	defer r.Close()
	c, err := netio.DialUDP("127.0.0.1:0", r.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ms := datagrams(0, 32, 200, ecn.NotECT)
	// Warm up pools and slices.
	for i := 0; i < 200; i++ {
		c.WriteBatch(ms)
		time.Sleep(20 * time.Microsecond)
	}
	time.Sleep(50 * time.Millisecond)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += len(ms) {
		c.WriteBatch(ms)
		if i%(8*len(ms)) == 0 {
			time.Sleep(50 * time.Microsecond)
		}
	}
	time.Sleep(20 * time.Millisecond)
	b.StopTimer()
	if recvd.Load() == 0 {
		b.Fatal("nothing relayed")
	}
}
