package netio

import (
	"errors"
	"fmt"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ReadySet tells which of a set of UDP sockets have datagrams waiting, with
// one epoll_wait(2) that never blocks: a driver that polls its sockets in a
// loop of its own (relay.Config.BusyPoll) reads only those, so a pass costs
// one system call plus one read per ready socket instead of one read per
// socket (an idle session's socket costs nothing). Level-triggered: a
// socket that still holds datagrams after a read is reported again. A
// ReadySet is not safe for concurrent use.
type ReadySet struct {
	ep  int
	evs []unix.EpollEvent
}

// readySetMax is how many ready sockets one Ready call reports at most;
// the others are reported by the next call (level-triggered).
const readySetMax = 256

// NewReadySet returns an empty set.
func NewReadySet() (*ReadySet, error) {
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("epoll_create1: %w", err)
	}
	return &ReadySet{ep: ep, evs: make([]unix.EpollEvent, readySetMax)}, nil
}

// errNoFD is Add's error for a Conn that is not a socket (MemConn).
var errNoFD = errors.New("netio: not a socket (poll it every pass)")

// Add watches c, reported by Ready as key. It fails for a Conn that is not
// a UDPConn (a MemConn has no descriptor: its caller polls it every pass).
func (s *ReadySet) Add(c Conn, key int32) error {
	return s.ctl(c, unix.EPOLL_CTL_ADD, key)
}

// Remove stops watching c; call it before closing c (a closed descriptor
// leaves the set by itself, but its number may be reused at once).
func (s *ReadySet) Remove(c Conn) error {
	return s.ctl(c, unix.EPOLL_CTL_DEL, 0)
}

func (s *ReadySet) ctl(c Conn, op int, key int32) error {
	u, ok := c.(*UDPConn)
	if !ok {
		return errNoFD
	}
	var err error
	if cerr := u.sys.rc.Control(func(fd uintptr) { err = s.ctlFD(op, int(fd), key) }); cerr != nil {
		return mapClosed(cerr)
	}
	return err
}

// AddFD watches descriptor fd for reading (e.g. an eventfd that wakes a
// Wait), reported by Ready and Wait as key.
func (s *ReadySet) AddFD(fd int, key int32) error {
	return s.ctlFD(unix.EPOLL_CTL_ADD, fd, key)
}

// ctlFD is epoll_ctl(2) op on descriptor fd, for reading, as key.
func (s *ReadySet) ctlFD(op, fd int, key int32) error {
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: key}
	if err := unix.EpollCtl(s.ep, op, fd, &ev); err != nil {
		return fmt.Errorf("epoll_ctl: %w", err)
	}
	return nil
}

// Ready appends to keys the keys of the watched sockets that have a
// datagram waiting (or a pending error), without blocking, and returns it.
func (s *ReadySet) Ready(keys []int32) ([]int32, error) {
	for {
		n, err := unix.EpollWait(s.ep, s.evs, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return keys, fmt.Errorf("epoll_wait: %w", err)
		}
		for _, ev := range s.evs[:n] {
			keys = append(keys, ev.Fd)
		}
		return keys, nil
	}
}

// Wait is Ready that blocks until a watched descriptor is ready or d has
// passed (then it returns keys unchanged and timedOut), with the
// nanosecond timeout of epoll_pwait2(2) (Linux 5.11: epoll_wait's is in
// ms), which wakes as precisely as the calling thread's timer slack allows
// (netio.PreciseTimers; 0 for a real-time thread). raw makes it a raw
// system call, outside the Go runtime's syscall bookkeeping (the goroutine
// keeps its P while it blocks), for a real-time thread: on the way out of
// a system call the runtime may spin until another thread gives a P back,
// and a SCHED_FIFO thread that spins starves a normal thread of its CPU. A
// signal (the runtime's preemption) that ends the wait early (EINTR)
// returns keys unchanged and timedOut false: the caller looks at the
// clock and waits again for what is left.
func (s *ReadySet) Wait(keys []int32, d time.Duration, raw bool) (_ []int32, timedOut bool, err error) {
	ts := unix.NsecToTimespec(int64(max(d, 0)))
	var n uintptr
	var e unix.Errno
	if raw {
		n, _, e = unix.RawSyscall6(unix.SYS_EPOLL_PWAIT2, uintptr(s.ep), uintptr(unsafe.Pointer(&s.evs[0])), uintptr(len(s.evs)), uintptr(unsafe.Pointer(&ts)), 0, 0)
	} else {
		n, _, e = unix.Syscall6(unix.SYS_EPOLL_PWAIT2, uintptr(s.ep), uintptr(unsafe.Pointer(&s.evs[0])), uintptr(len(s.evs)), uintptr(unsafe.Pointer(&ts)), 0, 0)
	}
	switch {
	case e == unix.EINTR:
		return keys, false, nil
	case e != 0:
		return keys, false, fmt.Errorf("epoll_pwait2: %w", e)
	case n == 0:
		return keys, true, nil
	}
	for _, ev := range s.evs[:n] {
		keys = append(keys, ev.Fd)
	}
	return keys, false, nil
}

// CheckWait reports an error if Wait cannot block here: epoll_pwait2 is
// Linux 5.11 and later (earlier kernels answer ENOSYS, and every Wait would
// return at once with that error).
func CheckWait() error {
	s, err := NewReadySet()
	if err != nil {
		return err
	}
	defer s.Close()
	if _, _, err := s.Wait(nil, 0, false); err != nil {
		return fmt.Errorf("%w (needs Linux 5.11 or later)", err)
	}
	return nil
}

// Close releases the set (not the sockets).
func (s *ReadySet) Close() error { return unix.Close(s.ep) }
