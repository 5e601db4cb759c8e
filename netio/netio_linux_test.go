package netio

import (
	"errors"
	"net/netip"
	"os"
	"slices"
	"testing"
	"time"

	"cclab/ecn"

	"golang.org/x/sys/unix"
)

// TestParseTOSMalformed: malformed control messages yield Not-ECT, never a
// panic or an out-of-range read.
func TestParseTOSMalformed(t *testing.T) {
	for _, oob := range [][]byte{nil, {1}, make([]byte, 16), {255, 255, 255, 255, 255, 255, 255, 255, 0, 0, 0, 0, 1, 0, 0, 0}} {
		if got := parseTOS(oob); got != ecn.NotECT {
			t.Errorf("parseTOS(%v) = %v, want Not-ECT", oob, got)
		}
	}
}

// TestRaiseReceiveBuffer: the buffer does not shrink and is reported;
// not a UDP socket gives 0.
func TestRaiseReceiveBuffer(t *testing.T) {
	c, err := ListenUDP("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	before := RaiseReceiveBuffer(c, 1)
	got := RaiseReceiveBuffer(c, 8<<20)
	if got < before || got <= 0 {
		t.Errorf("receive buffer after asking for 8 MiB: got %d, want at least the %d before", got, before)
	}
	if os.Geteuid() == 0 && got < 2*(8<<20) {
		t.Logf("receive buffer as root: %d, less than the %d asked for (no CAP_NET_ADMIN for SO_RCVBUFFORCE?)", got, 2*(8<<20))
	}
	a, _ := MemPair(netip.MustParseAddrPort("10.0.0.1:1"), netip.MustParseAddrPort("10.0.0.2:2"))
	if got := RaiseReceiveBuffer(a, 1<<20); got != 0 {
		t.Errorf("RaiseReceiveBuffer(MemConn): got %d, want 0", got)
	}
}

// TestTryReadBatch: the Pollers (UDPConn, MemConn) return 0, nil at once
// when nothing is queued, the queued datagrams (content, sender) when some
// are, and ErrClosed once closed.
func TestTryReadBatch(t *testing.T) {
	udp := func(t *testing.T) (tx Conn, rx Poller) {
		r, err := ListenUDP("127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		s, err := DialUDP("", r.LocalAddr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s, r
	}
	mem := func(t *testing.T) (tx Conn, rx Poller) {
		a, b := MemPair(netip.MustParseAddrPort("10.0.0.1:1"), netip.MustParseAddrPort("10.0.0.2:2"))
		return a, b
	}
	for _, tc := range []struct {
		name string
		pair func(t *testing.T) (Conn, Poller)
	}{{"udp", udp}, {"mem", mem}} {
		t.Run(tc.name, func(t *testing.T) {
			tx, rx := tc.pair(t)
			in := newMsgs(8, 64)
			if n, err := rx.TryReadBatch(in); n != 0 || err != nil {
				t.Fatalf("TryReadBatch on an empty socket: got %d, %v; want 0, nil", n, err)
			}
			out := newMsgs(3, 64)
			for i := range out {
				out[i].N = 10 + i
				out[i].Buf[0] = byte(i)
			}
			if n, err := tx.WriteBatch(out); n != 3 || err != nil {
				t.Fatalf("WriteBatch: got %d, %v; want 3, nil", n, err)
			}
			// Loopback delivers within the send call, but poll until all
			// three are read rather than assume it.
			got := 0
			for tries := 0; got < 3 && tries < 1e6; tries++ {
				n, err := rx.TryReadBatch(in[got:])
				if err != nil {
					t.Fatalf("TryReadBatch: %v", err)
				}
				got += n
			}
			if got != 3 {
				t.Fatalf("read %d datagrams, want 3", got)
			}
			for i := range got {
				if in[i].N != 10+i || in[i].Buf[0] != byte(i) || in[i].Addr != tx.LocalAddr() {
					t.Errorf("datagram %d: got (%d bytes, first %d, from %v), want (%d, %d, %v)", i, in[i].N, in[i].Buf[0], in[i].Addr, 10+i, i, tx.LocalAddr())
				}
			}
			if n, err := rx.TryReadBatch(in); n != 0 || err != nil {
				t.Errorf("TryReadBatch once drained: got %d, %v; want 0, nil", n, err)
			}
			rx.Close()
			if _, err := rx.TryReadBatch(in); !errors.Is(err, ErrClosed) {
				t.Errorf("TryReadBatch after Close: got %v, want ErrClosed", err)
			}
		})
	}
}

// TestReadySet: a watched socket is reported (by its key) exactly while it
// holds a datagram (level-triggered, without blocking); a removed one is
// not; a MemConn cannot be watched.
func TestReadySet(t *testing.T) {
	s, err := NewReadySet()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var rx [3]*UDPConn
	for i := range rx {
		if rx[i], err = ListenUDP("127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
		defer rx[i].Close()
		if err := s.Add(rx[i], int32(10+i)); err != nil {
			t.Fatalf("Add: %v", err)
		}
	}
	tx, err := ListenUDP("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Close()
	ready := func() []int32 {
		t.Helper()
		k, err := s.Ready(nil)
		if err != nil {
			t.Fatalf("Ready: %v", err)
		}
		slices.Sort(k)
		return k
	}
	if got := ready(); len(got) != 0 {
		t.Fatalf("ready with nothing sent: got %v, want none", got)
	}
	out := newMsgs(1, 64)
	out[0].N = 10
	for _, i := range []int{0, 2} {
		out[0].Addr = rx[i].LocalAddr()
		if n, err := tx.WriteBatch(out); n != 1 || err != nil {
			t.Fatalf("WriteBatch: %d, %v", n, err)
		}
	}
	// Loopback delivers within the send call, but poll rather than assume.
	var got []int32
	for tries := 0; len(got) < 2 && tries < 1e5; tries++ {
		got = ready()
	}
	if want := []int32{10, 12}; !slices.Equal(got, want) {
		t.Fatalf("ready after datagrams to sockets 0 and 2: got %v, want %v", got, want)
	}
	if got := ready(); !slices.Equal(got, []int32{10, 12}) {
		t.Errorf("ready again, nothing read (level-triggered): got %v, want [10 12]", got)
	}
	in := newMsgs(4, 64)
	if n, err := rx[0].TryReadBatch(in); n != 1 || err != nil {
		t.Fatalf("TryReadBatch: %d, %v", n, err)
	}
	if err := s.Remove(rx[2]); err != nil {
		t.Fatalf("Remove: %v", err)
	}
	if got := ready(); len(got) != 0 {
		t.Errorf("ready after reading socket 0 and removing socket 2: got %v, want none", got)
	}
	a, _ := MemPair(netip.MustParseAddrPort("10.0.0.1:1"), netip.MustParseAddrPort("10.0.0.2:2"))
	if err := s.Add(a, 1); err == nil {
		t.Error("Add of a MemConn: no error")
	}
}

// TestReadySetWait: CheckWait finds epoll_pwait2 on this kernel, and
// Wait blocks until a watched descriptor is ready or its timeout passes: with nothing ready it times out and returns no key
// (the normal and the raw system call), it returns the key of a socket a
// datagram reached, and of a descriptor added with AddFD (an eventfd,
// as the relay's Close wakes its waiting loop). No bound on how long a
// wait took is checked: only what it returned.
func TestReadySetWait(t *testing.T) {
	s, err := NewReadySet()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := CheckWait(); err != nil {
		t.Fatalf("CheckWait: %v (Wait, below, cannot work either)", err)
	}
	rx, err := ListenUDP("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer rx.Close()
	if err := s.Add(rx, 7); err != nil {
		t.Fatal(err)
	}
	efd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(efd)
	if err := s.AddFD(efd, -1); err != nil {
		t.Fatalf("AddFD: %v", err)
	}
	// wait waits until Wait reports a key or a timeout (a signal may end
	// a wait early: then it waits again).
	wait := func(d time.Duration, raw bool) ([]int32, bool) {
		t.Helper()
		for tries := 0; tries < 100; tries++ {
			k, timedOut, err := s.Wait(nil, d, raw)
			if err != nil {
				t.Fatalf("Wait: %v", err)
			}
			if timedOut || len(k) > 0 {
				slices.Sort(k)
				return k, timedOut
			}
		}
		t.Fatal("Wait returned neither a key nor a timeout 100 times")
		return nil, false
	}
	for _, raw := range []bool{false, true} {
		if k, timedOut := wait(time.Millisecond, raw); len(k) != 0 || !timedOut {
			t.Errorf("raw %v, nothing ready: got keys %v, timed out %v; want none, true", raw, k, timedOut)
		}
	}
	tx, err := ListenUDP("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Close()
	out := newMsgs(1, 64)
	out[0].N, out[0].Addr = 10, rx.LocalAddr()
	if n, err := tx.WriteBatch(out); n != 1 || err != nil {
		t.Fatalf("WriteBatch: %d, %v", n, err)
	}
	if k, timedOut := wait(time.Minute, false); !slices.Equal(k, []int32{7}) || timedOut {
		t.Errorf("a datagram sent: got keys %v, timed out %v; want [7], false", k, timedOut)
	}
	var one [8]byte
	one[0] = 1
	if _, err := unix.Write(efd, one[:]); err != nil {
		t.Fatal(err)
	}
	if k, timedOut := wait(time.Minute, true); !slices.Equal(k, []int32{-1, 7}) || timedOut {
		t.Errorf("eventfd written, datagram unread: got keys %v, timed out %v; want [-1 7], false", k, timedOut)
	}
}

// TestReceiveDrops: datagrams sent to a socket with a small receive
// buffer that nobody reads are dropped by the kernel and counted; the
// count starts at 0; not a UDP socket is unknown.
func TestReceiveDrops(t *testing.T) {
	rc, err := ListenUDP("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	if err := rc.Raw().SetReadBuffer(4096); err != nil {
		t.Fatal(err)
	}
	if d, ok := ReceiveDrops(rc); !ok || d != 0 {
		t.Fatalf("ReceiveDrops before traffic: %d, %v; want 0, known", d, ok)
	}
	sc, err := DialUDP("", rc.LocalAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	const n = 200
	ms := make([]Message, n)
	for i := range ms {
		ms[i] = Message{Buf: make([]byte, 1000), N: 1000}
	}
	if _, err := sc.WriteBatch(ms); err != nil {
		t.Fatal(err)
	}
	// 200 kB into a buffer of a few kB: the kernel drops most on arrival
	// (loopback delivers synchronously within the send).
	if d, ok := ReceiveDrops(rc); !ok || d < n/2 {
		t.Errorf("ReceiveDrops after %d datagrams into a 4 KiB buffer: %d, %v; want at least %d", n, d, ok, n/2)
	}
	a, _ := MemPair(netip.MustParseAddrPort("10.0.0.1:1"), netip.MustParseAddrPort("10.0.0.2:1"))
	if _, ok := ReceiveDrops(a); ok {
		t.Errorf("ReceiveDrops on a MemConn: known, want unknown")
	}
}
