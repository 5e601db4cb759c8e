package netio

import (
	"errors"
	"fmt"

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
	if cerr := u.sys.rc.Control(func(fd uintptr) {
		ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: key}
		err = unix.EpollCtl(s.ep, op, int(fd), &ev)
	}); cerr != nil {
		return mapClosed(cerr)
	}
	if err != nil {
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

// Close releases the set (not the sockets).
func (s *ReadySet) Close() error { return unix.Close(s.ep) }
