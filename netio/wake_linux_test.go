package netio

import (
	"errors"
	"net/netip"
	"testing"
	"time"
)

// udpPairT opens a listening socket r and a socket s connected to it;
// both close when t ends.
func udpPairT(t *testing.T) (s, r *UDPConn) {
	t.Helper()
	r, err := ListenUDP("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	s, err = DialUDP("", r.LocalAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, r
}

// TestSocketWait: Wait reports a datagram waiting (level-triggered: until
// it is read), a Wake (once), and neither at its timeout; a MemConn
// cannot be waited on. Run with the runtime's poller and after Unpoll, in
// ordinary and raw system calls.
func TestSocketWait(t *testing.T) {
	if err := CheckWait(); err != nil {
		t.Skipf("no epoll_pwait2 here: %v", err)
	}
	a, _ := MemPair(netip.MustParseAddrPort("10.0.0.1:1"), netip.MustParseAddrPort("10.0.0.2:2"))
	if _, err := NewSocketWait(a); err == nil {
		t.Error("NewSocketWait(MemConn): got nil error, want one")
	}
	for _, tc := range []struct {
		name        string
		unpoll, raw bool
	}{{"polled", false, false}, {"unpolled", true, false}, {"unpolled raw", true, true}} {
		t.Run(tc.name, func(t *testing.T) {
			s, r := udpPairT(t)
			if tc.unpoll {
				if err := r.Unpoll(); err != nil {
					t.Fatal(err)
				}
			}
			w, err := NewSocketWait(r)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			w.Raw = tc.raw
			wait := func(d time.Duration) (readable, woken bool) {
				t.Helper()
				// A signal (the runtime's preemption) may end a wait
				// early with neither: wait again, up to a bound.
				for range 100 {
					readable, woken, err := w.Wait(d)
					if err != nil {
						t.Fatal(err)
					}
					if readable || woken || d >= 0 {
						return readable, woken
					}
				}
				t.Fatal("Wait(-1) kept returning with nothing")
				return
			}
			if rd, wk := wait(time.Millisecond); rd || wk {
				t.Errorf("Wait(1ms) on an idle socket: got readable %v, woken %v; want neither", rd, wk)
			}
			w.Wake()
			if rd, wk := wait(-1); rd || !wk {
				t.Errorf("Wait after Wake: got readable %v, woken %v; want woken only", rd, wk)
			}
			if rd, wk := wait(time.Millisecond); rd || wk {
				t.Errorf("Wait after the Wake was reported: got readable %v, woken %v; want neither", rd, wk)
			}
			out := newMsgs(1, 64)
			out[0].N = 20
			if _, err := s.WriteBatch(out); err != nil {
				t.Fatal(err)
			}
			for range 2 { // level-triggered: still there
				if rd, wk := wait(-1); !rd || wk {
					t.Errorf("Wait with a datagram queued: got readable %v, woken %v; want readable only", rd, wk)
				}
			}
			in := newMsgs(4, 64)
			if n, err := r.TryReadBatch(in); n != 1 || err != nil || in[0].N != 20 {
				t.Fatalf("TryReadBatch: got %d (%d bytes), %v; want 1 (20 bytes), nil", n, in[0].N, err)
			}
			if rd, _ := wait(time.Millisecond); rd {
				t.Error("Wait once the datagram was read: got readable, want not")
			}
		})
	}
}

// TestUnpoll: after Unpoll the socket still reads (blocking and not),
// writes and reports its addresses; Close ends a blocked ReadBatch with
// ErrClosed.
func TestUnpoll(t *testing.T) {
	s, r := udpPairT(t)
	for _, c := range []*UDPConn{s, r} {
		if err := c.Unpoll(); err != nil {
			t.Fatal(err)
		}
		if err := c.Unpoll(); err != nil {
			t.Fatalf("second Unpoll: %v", err)
		}
	}
	in := newMsgs(4, 64)
	if n, err := r.TryReadBatch(in); n != 0 || err != nil {
		t.Fatalf("TryReadBatch on an empty socket: got %d, %v; want 0, nil", n, err)
	}
	got := make(chan int, 1)
	go func() {
		n, err := r.ReadBatch(in) // blocks in poll(2) until the datagram below
		if err != nil {
			t.Error(err)
		}
		got <- n
	}()
	out := newMsgs(1, 64)
	out[0].N, out[0].Buf[0] = 33, 7
	if n, err := s.WriteBatch(out); n != 1 || err != nil {
		t.Fatalf("WriteBatch after Unpoll: got %d, %v; want 1, nil", n, err)
	}
	if n := <-got; n != 1 || in[0].N != 33 || in[0].Buf[0] != 7 || in[0].Addr != s.LocalAddr() {
		t.Errorf("ReadBatch after Unpoll: got %d (%d bytes, first %d, from %v), want 1 (33, 7, %v)", n, in[0].N, in[0].Buf[0], in[0].Addr, s.LocalAddr())
	}
	errc := make(chan error, 1)
	go func() {
		_, err := r.ReadBatch(in)
		errc <- err
	}()
	r.Close()
	if err := <-errc; !errors.Is(err, ErrClosed) {
		t.Errorf("ReadBatch ended by Close: got %v, want ErrClosed", err)
	}
	if err := r.Close(); !errors.Is(err, ErrClosed) {
		t.Errorf("second Close: got %v, want ErrClosed", err)
	}
}
