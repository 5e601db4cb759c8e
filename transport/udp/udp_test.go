package udp

import (
	"context"
	"errors"
	"io"
	"net/netip"
	"sync"
	"testing"
	"time"

	"cclab/netio"
	"cclab/transport"
)

// pair returns a client and a server Endpoint connected by c and s.
func pair(c, s netio.Conn) (*Endpoint, *Endpoint) {
	srv := New(s, Config{Endpoint: transport.EndpointConfig{Server: true}})
	cli := New(c, Config{})
	return cli, srv
}

// transfer sends n pattern bytes from cli to srv and returns the two conns
// after both are done.
func transfer(t testing.TB, cli, srv *Endpoint, peer netip.AddrPort, n int64) (*Conn, *Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	accepted := make(chan *Conn, 1)
	go func() {
		c, err := srv.Accept(ctx)
		if err != nil {
			t.Error(err)
			close(accepted)
			return
		}
		buf := make([]byte, 64<<10)
		for {
			if _, err := c.Read(buf); err != nil {
				if err != io.EOF {
					t.Error(err)
				}
				break
			}
		}
		c.CloseWrite()
		accepted <- c
	}()
	c, err := cli.Dial(ctx, peer, transport.Config{})
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	c.SetSource(transport.NewPatternSource(7), n)
	buf := make([]byte, 16)
	if _, err := c.Read(buf); err != io.EOF {
		t.Fatalf("client Read: got %v, want EOF", err)
	}
	if err := c.Wait(ctx); err != nil {
		t.Fatalf("client Wait: %v", err)
	}
	s := <-accepted
	if s == nil {
		t.FailNow()
	}
	if err := s.Wait(ctx); err != nil {
		t.Fatalf("server Wait: %v", err)
	}
	return c, s
}

func checkDigests(t testing.TB, c, s *Conn, n int64) {
	cs, ss := c.Stats(), s.Stats()
	if cs.SentDigest != ss.RecvDigest {
		t.Errorf("digest: sender %x, receiver %x: want equal", cs.SentDigest[:8], ss.RecvDigest[:8])
	}
	if int64(ss.BytesDelivered) != n {
		t.Errorf("delivered: got %d, want %d", ss.BytesDelivered, n)
	}
}

// udpPair runs a server Endpoint (config scfg) on a loopback UDP socket
// and a client Endpoint (ccfg) on a socket connected to it; both close when
// tb ends.
func udpPair(tb testing.TB, scfg, ccfg Config) (srv, cli *Endpoint) {
	tb.Helper()
	srv, err := Listen("127.0.0.1:0", scfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { srv.Close() })
	cli, err = DialSocket(srv.LocalAddr().String(), ccfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { cli.Close() })
	return srv, cli
}

func TestTransferMem(t *testing.T) {
	a, b := netio.MemPair(addrA, addrB)
	cli, srv := pair(a, b)
	defer cli.Close()
	defer srv.Close()
	const n = 4 << 20
	c, s := transfer(t, cli, srv, addrB, n)
	checkDigests(t, c, s, n)
}

func TestTransferUDP(t *testing.T) {
	srv, cli := udpPair(t, Config{Endpoint: transport.EndpointConfig{Server: true}}, Config{})
	transferThenIdle(t, srv, cli)
}

// transferThenIdle sends 8 MiB from cli to srv, checks it arrived as sent,
// and then that the idle endpoints do not spin on their timer: a deadline
// that stays in the past would re-arm every minRearm (thousands of
// wake-ups in 300 ms).
func transferThenIdle(t *testing.T, srv, cli *Endpoint) {
	t.Helper()
	const n = 8 << 20
	c, s := transfer(t, cli, srv, srv.LocalAddr(), n)
	checkDigests(t, c, s, n)
	before := cli.LoopStats().TimerFires + srv.LoopStats().TimerFires
	time.Sleep(300 * time.Millisecond)
	if fires := cli.LoopStats().TimerFires + srv.LoopStats().TimerFires - before; fires > 100 {
		t.Errorf("timer wake-ups in 300 ms of idleness: got %d, want few", fires)
	}
}

func TestDialRefused(t *testing.T) {
	srv, err := Listen("127.0.0.1:0", Config{})
	if err != nil {
		t.Fatal(err)
	}
	addr := srv.LocalAddr()
	srv.Close() // nobody listens there now
	cli, err := DialSocket(addr.String(), Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err = cli.Dial(ctx, addr, transport.Config{HandshakeTimeout: 5 * time.Second})
	if err == nil {
		t.Fatal("Dial to a closed port: got nil error, want one")
	}
}

// errAsked is a context that never ends and closes asked the first time
// its Err is called: Endpoint.wait calls it with the lock held just before
// it blocks, and releases the lock only in cond.Wait.
type errAsked struct {
	context.Context
	once  sync.Once
	asked chan struct{}
}

func (c *errAsked) Err() error {
	c.once.Do(func() { close(c.asked) })
	return c.Context.Err()
}

// TestCloseUnblocksAccept: an Accept blocked waiting for a connection
// returns ErrClosed when the Endpoint closes. Close runs once Accept is
// about to block (its context's Err asked), and Close needs the lock that
// Accept releases only when it blocks.
func TestCloseUnblocksAccept(t *testing.T) {
	a, _ := netio.MemPair(addrA, addrB)
	e := New(a, Config{Endpoint: transport.EndpointConfig{Server: true}})
	ctx := &errAsked{Context: context.Background(), asked: make(chan struct{})}
	errc := make(chan error, 1)
	go func() {
		_, err := e.Accept(ctx)
		errc <- err
	}()
	select {
	case <-ctx.asked:
	case err := <-errc:
		t.Fatalf("Accept returned %v before blocking", err)
	}
	e.Close()
	select {
	case err := <-errc:
		if err != ErrClosed {
			t.Errorf("Accept after Close: got %v, want ErrClosed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Accept not unblocked by Close")
	}
}

// benchTransfer moves b.N segments of 1200 bytes; allocs/op is per segment.
func benchTransfer(b *testing.B, cli, srv *Endpoint, peer netip.AddrPort) {
	n := int64(b.N) * 1200
	b.ReportAllocs()
	b.SetBytes(1200)
	before := [2]LoopStats{cli.LoopStats(), srv.LoopStats()}
	b.ResetTimer()
	c, s := transfer(b, cli, srv, peer, n)
	b.StopTimer()
	checkDigests(b, c, s, n)
	// The driver's goroutine hand-offs per 1000 segments, both ends: read
	// batches (each a reader wake-up by the socket), wake-ups posted to
	// the writer, and timer expiries.
	var reads, kicks, fires uint64
	for i, e := range []*Endpoint{cli, srv} {
		st := e.LoopStats()
		reads += st.ReadBatches - before[i].ReadBatches
		kicks += st.Kicks - before[i].Kicks
		fires += st.TimerFires - before[i].TimerFires
	}
	per := 1000 / float64(b.N)
	b.ReportMetric(float64(reads)*per, "reads/kseg")
	b.ReportMetric(float64(kicks)*per, "kicks/kseg")
	b.ReportMetric(float64(fires)*per, "timer/kseg")
}

// BenchmarkTransferMem: a full transport transfer through the driver over a
// netio.MemPair (allocs/op per 1200-byte segment must be ~0).
func BenchmarkTransferMem(b *testing.B) {
	a, m := netio.MemPair(addrA, addrB)
	cli, srv := pair(a, m)
	defer cli.Close()
	defer srv.Close()
	benchTransfer(b, cli, srv, addrB)
}

// BenchmarkTransferUDP: the same over loopback UDP sockets.
func BenchmarkTransferUDP(b *testing.B) {
	srv, cli := udpPair(b, Config{Endpoint: transport.EndpointConfig{Server: true}}, Config{})
	benchTransfer(b, cli, srv, srv.LocalAddr())
}

func TestTransferUDPPerBatch(t *testing.T) {
	cfg := Config{TransmitPerBatch: true}
	scfg := cfg
	scfg.Endpoint = transport.EndpointConfig{Server: true}
	srv, cli := udpPair(t, scfg, cfg)
	const n = 8 << 20
	c, s := transfer(t, cli, srv, srv.LocalAddr(), n)
	checkDigests(t, c, s, n)
	// Fewer ACKs than one per two segments is the point of the mode; at
	// least one per received batch must still go out.
	segs := (n + int64(c.Stats().MSS) - 1) / int64(c.Stats().MSS)
	if acks := s.Stats().AcksSent; acks == 0 || int64(acks) > segs {
		t.Errorf("ACKs sent: got %d for %d segments, want between 1 and %d", acks, segs, segs)
	}
}

// TestWriteReadEcho: the blocking Write/Read path (no Source) moves bytes
// both ways intact: the server echoes what it reads.
func TestWriteReadEcho(t *testing.T) {
	a, b := netio.MemPair(addrA, addrB)
	cli, srv := pair(a, b)
	defer cli.Close()
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	go func() {
		c, err := srv.Accept(ctx)
		if err != nil {
			return
		}
		buf := make([]byte, 10000)
		for {
			n, err := c.Read(buf)
			if n > 0 {
				if _, werr := c.Write(buf[:n]); werr != nil {
					return
				}
			}
			if err != nil {
				c.CloseWrite()
				return
			}
		}
	}()
	c, err := cli.Dial(ctx, addrB, transport.Config{SendBuffer: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	const n = 3 << 20
	want := make([]byte, n)
	transport.NewPatternSource(3).Fill(0, want)
	go func() {
		for off := 0; off < n; off += 100000 { // larger than SendBuffer chunks block
			if _, err := c.Write(want[off:min(off+100000, n)]); err != nil {
				t.Error(err)
				return
			}
		}
		c.CloseWrite()
	}()
	got := make([]byte, 0, n)
	buf := make([]byte, 7000)
	for {
		k, err := c.Read(buf)
		got = append(got, buf[:k]...)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("Read after %d bytes: %v", len(got), err)
		}
	}
	if len(got) != n || string(got) != string(want) {
		t.Fatalf("echo: got %d bytes (equal=%v), want %d identical bytes", len(got), string(got) == string(want), n)
	}
	if err := c.Wait(ctx); err != nil {
		t.Errorf("Wait: %v", err)
	}
}

// TestPeerUnreachable: the receiver goes away mid-transfer; the sender's
// retransmissions draw ICMP port unreachable on its connected socket, and
// after UnreachableErrors of them the connection ends with
// ErrPeerUnreachable (before, only the 2-minute idle timer ended it). The
// 60 s bound is far above the expected ~1.5 s (three backed-off RTOs) and
// far below the idle timeout and the 15-minute give-up time.
func TestPeerUnreachable(t *testing.T) {
	srv, err := Listen("127.0.0.1:0", Config{Endpoint: transport.EndpointConfig{Server: true}})
	if err != nil {
		t.Fatal(err)
	}
	addr := srv.LocalAddr()
	cli, err := DialSocket(addr.String(), Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := cli.Dial(ctx, addr, transport.Config{})
	if err != nil {
		t.Fatal(err)
	}
	c.SetSource(transport.NewPatternSource(1), -1)
	s, err := srv.Accept(ctx)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64<<10)
	got := 0
	for got < 1<<20 {
		n, err := s.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		got += n
	}
	srv.Close() // the receiver goes away
	if err := c.Wait(ctx); !errors.Is(err, ErrPeerUnreachable) {
		t.Fatalf("sender after the receiver closed: %v, want ErrPeerUnreachable", err)
	}
	if st := cli.LoopStats(); st.Unreachable != 1 {
		t.Errorf("LoopStats.Unreachable = %d, want 1", st.Unreachable)
	}
}
