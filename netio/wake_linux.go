package netio

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// SocketWait blocks one driver goroutine, in one system call, until its
// socket has a datagram (or an error) waiting, another goroutine calls
// Wake, or a timeout passes: epoll_pwait2(2) on the socket and an eventfd,
// with a nanosecond timeout. A driver that reads, runs its timers and
// writes in one goroutine (udp.Config.OneGoroutine) waits with it instead
// of parking a reader goroutine in the Go runtime's poller and a writer on
// a Go timer: a wake-up then costs one return from a system call on the
// same thread, not a hand-off between goroutines (and threads). The
// goroutine stays in a system call while it waits (the runtime gives its
// P away only if other goroutines need it). Wait is for one goroutine;
// Wake is safe for concurrent use.
type SocketWait struct {
	// Raw makes the wait a raw system call, outside the Go runtime's
	// syscall bookkeeping: the goroutine keeps its P while it blocks. A
	// wait in an ordinary system call lets the P go idle, and on the way
	// out the runtime takes an idle P and wakes its monitor thread
	// (sysmon) from its deep sleep: two more context switches per
	// wake-up (measured: 4-5 k futex calls a second at a 1 ms quantum).
	// With Raw the runtime's preemption (a signal every 10 ms or so, and
	// at each garbage collection) ends a wait early. Use it only with
	// GOMAXPROCS > 1: the held P runs no other goroutine while it waits.
	Raw bool
	ep  int
	efd int
	evs [2]unix.EpollEvent
	buf [8]byte
}

// Keys of the two descriptors in the set.
const (
	waitSocket int32 = 0
	waitWake   int32 = 1
)

// errNotSocket is NewSocketWait's error for a Conn without a descriptor.
var errNotSocket = errors.New("netio: not a socket (no descriptor to wait on)")

// NewSocketWait returns a SocketWait on c's socket; it fails for a Conn
// that is not a UDPConn (a MemConn has no descriptor) and on kernels
// without epoll_pwait2 (before Linux 5.11).
func NewSocketWait(c Conn) (*SocketWait, error) {
	u, ok := c.(*UDPConn)
	if !ok {
		return nil, errNotSocket
	}
	if err := CheckWait(); err != nil {
		return nil, err
	}
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("epoll_create1: %w", err)
	}
	efd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		unix.Close(ep)
		return nil, fmt.Errorf("eventfd: %w", err)
	}
	w := &SocketWait{ep: ep, efd: efd}
	add := func(fd int, key int32) error {
		ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: key}
		return unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, fd, &ev)
	}
	err = add(efd, waitWake)
	if err == nil {
		if cerr := u.sys.rc.Control(func(fd uintptr) { err = add(int(fd), waitSocket) }); cerr != nil {
			err = mapClosed(cerr)
		}
	}
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("epoll_ctl: %w", err)
	}
	return w, nil
}

// Wait blocks until the socket is readable, Wake was called (since the
// last Wait that reported it), or d has passed (d < 0: no timeout). It
// reports which: readable, woken (both may hold), or neither (the timeout,
// or a signal that ended the wait early: the caller looks at the clock).
func (w *SocketWait) Wait(d time.Duration) (readable, woken bool, err error) {
	call := unix.Syscall6
	if w.Raw {
		call = unix.RawSyscall6
	}
	var n uintptr
	var e unix.Errno
	if d < 0 {
		n, _, e = call(unix.SYS_EPOLL_PWAIT, uintptr(w.ep), uintptr(unsafe.Pointer(&w.evs[0])), uintptr(len(w.evs)), ^uintptr(0), 0, 0)
	} else {
		ts := unix.NsecToTimespec(int64(d))
		n, _, e = call(unix.SYS_EPOLL_PWAIT2, uintptr(w.ep), uintptr(unsafe.Pointer(&w.evs[0])), uintptr(len(w.evs)), uintptr(unsafe.Pointer(&ts)), 0, 0)
	}
	switch {
	case e == unix.EINTR:
		return false, false, nil
	case e != 0:
		return false, false, fmt.Errorf("epoll_pwait: %w", e)
	}
	for _, ev := range w.evs[:n] {
		switch ev.Fd {
		case waitSocket:
			readable = true
		case waitWake:
			woken = true
			_, _ = unix.Read(w.efd, w.buf[:]) // back to 0
		}
	}
	return readable, woken, nil
}

// Wake ends the Wait in progress, or the next one.
func (w *SocketWait) Wake() {
	var one [8]byte
	binary.NativeEndian.PutUint64(one[:], 1)
	_, _ = unix.Write(w.efd, one[:])
}

// Close releases the epoll set and the eventfd (not the socket).
func (w *SocketWait) Close() error {
	unix.Close(w.efd)
	return unix.Close(w.ep)
}
