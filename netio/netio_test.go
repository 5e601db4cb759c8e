package netio

import (
	"bytes"
	"errors"
	"net"
	"net/netip"
	"testing"
	"time"

	"cclab/ecn"
)

func newMsgs(n, size int) []Message {
	ms := make([]Message, n)
	for i := range ms {
		ms[i].Buf = make([]byte, size)
	}
	return ms
}

// readAll reads until want datagrams arrived or the deadline passes.
func readAll(t *testing.T, c Conn, want int) []Message {
	t.Helper()
	var got []Message
	done := make(chan struct{})
	go func() {
		defer close(done)
		for len(got) < want {
			ms := newMsgs(8, 2048)
			n, err := c.ReadBatch(ms)
			if err != nil {
				return
			}
			got = append(got, ms[:n]...)
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		c.Close()
		<-done
		t.Fatalf("received %d datagrams, want %d", len(got), want)
	}
	return got
}

func TestUDPBatchECNAndAddresses(t *testing.T) {
	cases := []struct {
		name, listen, dialTo string
	}{
		{"ipv4", "127.0.0.1:0", "127.0.0.1"},
		{"ipv6", "[::1]:0", "::1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv, err := ListenUDP(tc.listen)
			if err != nil {
				t.Skipf("cannot listen on %s: %v", tc.listen, err)
			}
			defer srv.Close()
			cli, err := ListenUDP(net.JoinHostPort(tc.dialTo, "0"))
			if err != nil {
				t.Fatal(err)
			}
			defer cli.Close()
			cps := []ecn.Codepoint{ecn.NotECT, ecn.ECT0, ecn.ECT1, ecn.CE}
			out := newMsgs(len(cps), 100)
			for i, cp := range cps {
				out[i].N = copy(out[i].Buf, []byte{byte(i), 'x', 'y'})
				out[i].Addr = srv.LocalAddr()
				out[i].ECN = cp
			}
			if n, err := cli.WriteBatch(out); n != len(out) || err != nil {
				t.Fatalf("WriteBatch = %d, %v; want %d, nil", n, err, len(out))
			}
			got := readAll(t, srv, len(cps))
			for _, m := range got {
				i := int(m.Buf[0])
				if !bytes.Equal(m.Buf[:m.N], out[i].Buf[:out[i].N]) {
					t.Errorf("datagram %d: got %q, want %q", i, m.Buf[:m.N], out[i].Buf[:out[i].N])
				}
				if m.ECN != cps[i] {
					t.Errorf("datagram %d: ECN got %v, want %v", i, m.ECN, cps[i])
				}
				if m.Addr != cli.LocalAddr() {
					t.Errorf("datagram %d: from got %v, want %v", i, m.Addr, cli.LocalAddr())
				}
			}
		})
	}
}

func TestUDPConnectedAndClose(t *testing.T) {
	srv, err := ListenUDP("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cli, err := DialUDP("", srv.LocalAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	out := newMsgs(100, 1200)
	for i := range out {
		out[i].N = 1200
		out[i].Buf[0] = byte(i)
	}
	if n, err := cli.WriteBatch(out); n != 100 || err != nil {
		t.Fatalf("WriteBatch = %d, %v; want 100, nil", n, err)
	}
	got := readAll(t, srv, 100)
	if len(got) != 100 {
		t.Fatalf("got %d datagrams, want 100", len(got))
	}
	// Close unblocks a pending read with ErrClosed.
	errc := make(chan error, 1)
	go func() {
		_, err := srv.ReadBatch(newMsgs(1, 10))
		errc <- err
	}()
	time.Sleep(20 * time.Millisecond)
	srv.Close()
	select {
	case err := <-errc:
		if !errors.Is(err, ErrClosed) {
			t.Errorf("read after close: got %v, want ErrClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("read did not return after Close")
	}
}

func TestMemPair(t *testing.T) {
	a, b := MemPair(netip.MustParseAddrPort("10.0.0.1:1"), netip.MustParseAddrPort("10.0.0.2:2"))
	out := newMsgs(3, 10)
	for i := range out {
		out[i].N = 1 + i
		out[i].ECN = ecn.Codepoint(i)
	}
	a.WriteBatch(out)
	in := newMsgs(8, 10)
	n, err := b.ReadBatch(in)
	if n != 3 || err != nil {
		t.Fatalf("ReadBatch = %d, %v; want 3, nil", n, err)
	}
	for i := 0; i < n; i++ {
		if in[i].N != 1+i || in[i].ECN != ecn.Codepoint(i) || in[i].Addr != a.LocalAddr() {
			t.Errorf("msg %d: got (%d, %v, %v), want (%d, %v, %v)", i, in[i].N, in[i].ECN, in[i].Addr, 1+i, ecn.Codepoint(i), a.LocalAddr())
		}
	}
	// Overflow drops and counts, like a socket buffer.
	big := newMsgs(MemCapacity+10, 4)
	for i := range big {
		big[i].N = 4
	}
	a.WriteBatch(big)
	if got, want := b.Dropped(), uint64(10); got != want {
		t.Errorf("Dropped: got %d, want %d", got, want)
	}
	b.Close()
	if _, err := b.ReadBatch(newMsgs(MemCapacity, 4)); err != nil {
		t.Errorf("queued data must still be readable after close, got %v", err)
	}
	if _, err := b.ReadBatch(in); !errors.Is(err, ErrClosed) {
		t.Errorf("read after close: got %v, want ErrClosed", err)
	}
}

// benchLoop measures a send/receive round of batches of 32 datagrams over
// loopback. Allocs/op is what matters: the Linux path must report 0.
func benchLoop(b *testing.B, tx, rx Conn, to netip.AddrPort) {
	out := newMsgs(32, 1200)
	for i := range out {
		out[i].N, out[i].Addr, out[i].ECN = 1200, to, ecn.ECT0
	}
	in := newMsgs(32, 1500)
	b.SetBytes(32 * 1200)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := tx.WriteBatch(out); err != nil {
			b.Fatal(err)
		}
		got := 0
		for got < len(out) {
			n, err := rx.ReadBatch(in)
			if err != nil {
				b.Fatal(err)
			}
			got += n
		}
	}
}

// BenchmarkUDPBatch compares the recvmmsg/sendmmsg implementation with
// golang.org/x/net's batch I/O side by side (run with -bench UDPBatch).
func BenchmarkUDPBatch(b *testing.B) {
	b.Run("netio", func(b *testing.B) {
		rx, _ := ListenUDP("127.0.0.1:0")
		tx, _ := ListenUDP("127.0.0.1:0")
		defer rx.Close()
		defer tx.Close()
		benchLoop(b, tx, rx, rx.LocalAddr())
	})
	b.Run("x-net-ipv4", func(b *testing.B) {
		rc, _ := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		tc, _ := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		rx, tx := NewXNetConn(rc), NewXNetConn(tc)
		defer rx.Close()
		defer tx.Close()
		benchLoop(b, tx, rx, rx.LocalAddr())
	})
}

// TestMemNet: sockets on an in-memory network get the datagrams sent to
// their address (with the sender's address and ECN), a connected socket
// sends to its peer whatever Message.Addr says, a datagram to an unbound
// address is lost and counted, and a closed socket frees its address.
func TestMemNet(t *testing.T) {
	n := NewMemNet()
	host := netip.MustParseAddr("10.0.0.1")
	a, err := n.Listen(netip.AddrPortFrom(host, 0))
	if err != nil {
		t.Fatal(err)
	}
	b, err := n.Listen(netip.AddrPortFrom(host, 5000))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.Listen(netip.AddrPortFrom(host, 5000)); err == nil {
		t.Errorf("a second socket on %v: no error, want the address in use", b.LocalAddr())
	}
	if a.LocalAddr().Port() == 0 || a.LocalAddr() == b.LocalAddr() {
		t.Fatalf("ephemeral address %v", a.LocalAddr())
	}
	c, err := n.DialPacket("", b.LocalAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	out := newMsgs(3, 16)
	for i := range out {
		out[i].N = copy(out[i].Buf, []byte{byte(i)})
		out[i].ECN = ecn.ECT0
	}
	out[0].Addr = b.LocalAddr()
	out[1].Addr = netip.AddrPortFrom(host, 1) // nobody there
	out[2].Addr = b.LocalAddr()
	if k, err := a.WriteBatch(out); k != 3 || err != nil {
		t.Fatalf("WriteBatch = %d, %v", k, err)
	}
	if _, err := c.WriteBatch([]Message{{Buf: []byte{9}, N: 1, Addr: a.LocalAddr()}}); err != nil {
		t.Fatal(err)
	}
	got := readAll(t, b, 3)
	want := []struct {
		tag  byte
		from netip.AddrPort
	}{{0, a.LocalAddr()}, {2, a.LocalAddr()}, {9, c.LocalAddr()}}
	for i, w := range want {
		if got[i].Buf[0] != w.tag || got[i].Addr != w.from {
			t.Errorf("datagram %d: tag %d from %v, want %d from %v", i, got[i].Buf[0], got[i].Addr, w.tag, w.from)
		}
	}
	if got[0].ECN != ecn.ECT0 {
		t.Errorf("ECN %v, want ECT(0)", got[0].ECN)
	}
	if n.Lost() != 1 {
		t.Errorf("lost %d, want 1 (the datagram to an unbound address)", n.Lost())
	}
	b.Close()
	if _, err := n.Listen(netip.AddrPortFrom(host, 5000)); err != nil {
		t.Errorf("address of a closed socket: %v, want it free", err)
	}
}

// TestMessageSplit: Count and Datagram cut a received message into its
// datagrams.
func TestMessageSplit(t *testing.T) {
	buf := make([]byte, 100)
	for i := range buf {
		buf[i] = byte(i)
	}
	for _, tc := range []struct {
		name string
		n    int
		seg  int
		want []int // lengths
	}{
		{"one datagram", 40, 0, []int{40}},
		{"empty datagram", 0, 0, []int{0}},
		{"segment larger than message", 40, 50, []int{40}},
		{"segment equal to message", 40, 40, []int{40}},
		{"exact multiple", 90, 30, []int{30, 30, 30}},
		{"short last", 100, 30, []int{30, 30, 30, 10}},
		{"negative segment", 40, -5, []int{40}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := Message{Buf: buf, N: tc.n, Seg: tc.seg}
			if got := m.Count(); got != len(tc.want) {
				t.Fatalf("Count: got %d, want %d", got, len(tc.want))
			}
			off := 0
			for i, w := range tc.want {
				d := m.Datagram(i)
				if len(d) != w || (w > 0 && d[0] != byte(off)) {
					t.Errorf("Datagram(%d): got len %d first %v, want len %d first %d", i, len(d), d[:min(1, len(d))], w, off)
				}
				off += w
			}
		})
	}
}
