package transport

import (
	"math/rand/v2"
	"net/netip"
	"testing"
	"time"

	"cclab/clock"
	"cclab/event"
)

// poison fills b with buffers of garbage: bytes 0xA5 and segments with
// every field set, as an earlier connection might leave them.
func poison(b *Buffers) {
	for c := range 6 {
		for range 4 {
			r := make([]byte, minRing<<c)
			for i := range r {
				r[i] = 0xA5
			}
			b.putRing(r)
			s := make([]Segment, minSegs<<c)
			for i := range s {
				s[i] = Segment{Off: 1 << 40, Len: 999, Fin: true, SentAt: 12345, TS: 7, Retrans: 3, Sacked: true, Lost: true, SendSeq: 1 << 30}
			}
			b.putSegments(s)
		}
	}
}

// TestBufPoolDeterministic: connections whose scoreboard and rings come
// from free lists full of an earlier connection's garbage behave exactly as
// with fresh buffers (same event trace, every byte delivered), and a
// finished connection gives its empty buffers back.
func TestBufPoolDeterministic(t *testing.T) {
	for _, rec := range []string{"newreno", "rack"} {
		t.Run(rec, func(t *testing.T) {
			fresh := NewBuffers()
			h1, cli, srv := runImpairedBufs(t, 7, 0.05, 512<<10, rec, fresh)
			checkTransfer(t, cli, srv, 512<<10, 0.05)
			if got := [3]bool{cli.sb.segs == nil, srv.rbuf.b == nil, cli.rbuf.b == nil}; got != [3]bool{true, true, true} {
				t.Errorf("finished conns: client scoreboard, server and client receive rings released %v, want all true", got)
			}
			if fresh.Held() == 0 {
				t.Errorf("finished conns returned nothing: Held() = 0")
			}
			dirty := NewBuffers()
			poison(dirty)
			h2, cli, srv := runImpairedBufs(t, 7, 0.05, 512<<10, rec, dirty)
			checkTransfer(t, cli, srv, 512<<10, 0.05)
			if h1.traceHash() != h2.traceHash() {
				t.Errorf("fresh and recycled buffers: traces differ")
			}
		})
	}
}

// TestBuffersBound: a Buffers keeps at most MaxPooledBytes; a nil Buffers
// allocates and keeps nothing.
func TestBuffersBound(t *testing.T) {
	b := NewBuffers()
	big := minRing << (poolClasses - 1) // 4 MiB
	for range 2 * MaxPooledBytes / big {
		b.putRing(make([]byte, big))
	}
	if got, want := b.Held(), MaxPooledBytes; got != want {
		t.Errorf("Held() after putting twice the bound = %d, want %d", got, want)
	}
	r := b.ring(big)
	if got, want := b.Held(), MaxPooledBytes-big; len(r) != big || got != want {
		t.Errorf("after one ring(%d): len %d, Held() = %d, want %d", big, len(r), got, want)
	}
	b.putRing(make([]byte, 3*minRing)) // not a pooled size
	if got, want := b.Held(), MaxPooledBytes-big; got != want {
		t.Errorf("Held() after an unpooled size = %d, want %d", got, want)
	}
	var none *Buffers
	none.putRing(make([]byte, minRing))
	if got := none.Held(); got != 0 || len(none.ring(minRing)) != minRing || len(none.segments(minSegs)) != minSegs {
		t.Errorf("nil Buffers: Held() = %d, want 0 and fresh buffers of the asked size", got)
	}
}

// TestPoolClass: only power-of-two multiples of the smallest size within
// the classes are pooled.
func TestPoolClass(t *testing.T) {
	for _, tc := range []struct{ n, min, want int }{
		{4096, minRing, 0}, {8192, minRing, 1}, {4096 << 10, minRing, 10}, {4096 << 11, minRing, -1},
		{2048, minRing, -1}, {12288, minRing, -1}, {0, minRing, -1}, {64, minSegs, 0}, {96, minSegs, -1},
	} {
		if got := poolClass(tc.n, tc.min); got != tc.want {
			t.Errorf("poolClass(%d, %d) = %d, want %d", tc.n, tc.min, got, tc.want)
		}
	}
}

// BenchmarkConnChurn: one op is one short connection (dial, a 48 kB stream
// as the scale benchmark's mean ON period, both FINs, drain and removal)
// between two Endpoints in memory, with the buffer pools (pooled) and with
// fresh buffers per connection (fresh), side by side in one run; setup is
// the same with a 1-byte stream: the cost of a connection's setup and
// teardown alone (handshake, both FINs, drain, removal).
func BenchmarkConnChurn(b *testing.B) {
	for _, tc := range []struct {
		name    string
		size    int64
		recycle bool
	}{{"pooled", 48 << 10, true}, {"fresh", 48 << 10, false}, {"setup", 1, true}} {
		b.Run(tc.name, func(b *testing.B) {
			var bufs *Buffers
			if tc.recycle {
				bufs = NewBuffers()
			}
			benchChurn(b, tc.size, bufs)
		})
	}
}

func benchChurn(b *testing.B, size int64, bufs *Buffers) {
	cfg := Config{Digest: "none", Sink: event.Discard}
	now := clock.Start
	ca := netip.MustParseAddrPort("10.0.0.1:1")
	sa := netip.MustParseAddrPort("10.0.0.2:2")
	cli := NewEndpoint(EndpointConfig{Defaults: cfg, Rand: rand.New(rand.NewPCG(1, 1))})
	srv := NewEndpoint(EndpointConfig{Server: true, Defaults: cfg, NoRetry: true, Rand: rand.New(rand.NewPCG(2, 2))})
	cli.bufs, srv.bufs = bufs, bufs // nil: fresh buffers for every connection
	buf := make([]byte, 65536)
	rbuf := make([]byte, 1<<16)
	delivered := uint64(0)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		c, err := cli.Dial(now, sa, Config{})
		if err != nil {
			b.Fatal(err)
		}
		c.SetSource(NewPatternSource(1), size)
		var s *Conn
		for steps := 0; !c.Done() || s == nil || !s.Done(); steps++ {
			if steps > 100000 {
				b.Fatalf("connection not done after %d steps", steps)
			}
			for moved := true; moved; {
				moved = false
				for n, _, cp := cli.Transmit(now, buf); n > 0; n, _, cp = cli.Transmit(now, buf) {
					srv.Receive(now, ca, cp, buf[:n])
					moved = true
				}
				if s == nil {
					s = srv.Accept()
				}
				if s != nil {
					for s.Read(rbuf) > 0 {
					}
					if s.EOF() {
						s.CloseWrite(now)
					}
				}
				for n, _, cp := srv.Transmit(now, buf); n > 0; n, _, cp = srv.Transmit(now, buf) {
					cli.Receive(now, sa, cp, buf[:n])
					moved = true
				}
			}
			now = now.Add(time.Millisecond)
			cli.OnDeadline(now)
			srv.OnDeadline(now)
		}
		delivered += s.Stats().BytesDelivered
		now = now.Add(100 * time.Millisecond) // older connections drain and are removed
		cli.OnDeadline(now)
		srv.OnDeadline(now)
	}
	b.StopTimer()
	if delivered != uint64(b.N)*uint64(size) {
		b.Fatalf("delivered %d bytes, want %d", delivered, uint64(b.N)*uint64(size))
	}
	b.ReportMetric(float64(len(cli.byCID)+len(srv.byCID)), "live-conns")
}
