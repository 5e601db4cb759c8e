package netio

import (
	"net"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// Unpoll takes the socket out of the Go runtime's network poller: it
// duplicates the descriptor, closes the runtime's (which removes it from
// the runtime's epoll set), and from then on makes every system call on
// the duplicate directly. For a driver that waits on the socket itself in
// one goroutine (SocketWait, udp.Config.OneGoroutine): while the socket is
// in the runtime's edge-triggered epoll set, every datagram that arrives
// wakes the runtime's thread blocked in it (waiting for the program's
// timers) although no goroutine waits on the socket (measured: 1.1-1.3 k
// such wake-ups a second at a 1 ms pacing quantum, as many as the driver's
// own). After Unpoll a ReadBatch or WriteBatch that would block waits in
// poll(2) on the calling thread, in slices of unpollSlice so that Close is
// noticed; Raw's *net.UDPConn is closed.
func (u *UDPConn) Unpoll() error {
	if _, ok := u.sys.rc.(*rawFD); ok {
		return nil
	}
	nfd := -1
	var derr error
	if err := u.sys.rc.Control(func(fd uintptr) { nfd, derr = unix.FcntlInt(fd, unix.F_DUPFD_CLOEXEC, 0) }); err != nil {
		return mapClosed(err)
	}
	if derr != nil {
		return derr
	}
	// The duplicate shares the open file description, O_NONBLOCK included.
	if err := u.c.Close(); err != nil {
		unix.Close(nfd)
		return err
	}
	r := &rawFD{fd: nfd}
	u.sys.rc = r
	u.closeFn = r.close
	return nil
}

// unpollSlice bounds one poll(2) of an unpolled socket's blocking read or
// write, so that a Close from another goroutine is noticed.
const unpollSlice = 100 * time.Millisecond

// rawFD is a syscall.RawConn on a descriptor outside the runtime's poller.
type rawFD struct {
	fd     int
	closed atomic.Bool
}

func (r *rawFD) Control(f func(fd uintptr)) error {
	if r.closed.Load() {
		return net.ErrClosed
	}
	f(uintptr(r.fd))
	return nil
}

func (r *rawFD) Read(f func(fd uintptr) bool) error { return r.do(f, unix.POLLIN) }

func (r *rawFD) Write(f func(fd uintptr) bool) error { return r.do(f, unix.POLLOUT) }

// do calls f until it reports done, waiting in poll(2) for ev in between.
func (r *rawFD) do(f func(fd uintptr) bool, ev int16) error {
	for {
		if r.closed.Load() {
			return net.ErrClosed
		}
		if f(uintptr(r.fd)) {
			return nil
		}
		fds := [1]unix.PollFd{{Fd: int32(r.fd), Events: ev}}
		_, _ = unix.Poll(fds[:], int(unpollSlice/time.Millisecond))
	}
}

func (r *rawFD) close() error {
	if r.closed.Swap(true) {
		return net.ErrClosed
	}
	return unix.Close(r.fd)
}
