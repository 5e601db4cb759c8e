package relay

import (
	"encoding/binary"
	"fmt"
	"time"
	"unsafe"

	"cclab/netio"

	"golang.org/x/sys/unix"
)

// sleeper is the scheduler's precise, interruptible sleep: ppoll(2) on an
// eventfd with a nanosecond timeout, which wakes as precisely as nanosleep
// (the calling thread's timer slack: 1 ns, set before each sleep, or 0 for
// a real-time thread) and returns at once when a reader or Close writes to
// the eventfd. A Go timer would wake up to about 1 ms late, and a plain
// nanosleep cannot be interrupted (the scheduler used to sleep in chunks of
// at most 500 µs to notice a reader's earlier deadline).
type sleeper struct {
	fd     int
	locked bool // the scheduler's thread is locked and already has 1 ns timer slack
	// raw makes the ppoll a raw system call, outside the Go runtime's
	// syscall bookkeeping (the goroutine keeps its P while it sleeps), for
	// a real-time thread (Config.Realtime): on the way out of a system call
	// the runtime may spin (procyield, sched_yield) until another thread
	// releases its P, and a SCHED_FIFO thread spinning on a CPU starves
	// that thread if it has the normal policy and the same CPU (measured:
	// the scheduler's thread at 95 % of the relay's CPU in
	// runtime.exitsyscall, 0.9 s stalls until the kernel's real-time
	// throttling stopped it). Signals (the runtime's preemption) end a raw
	// sleep early (EINTR); it then sleeps again for what is left.
	raw bool
	buf [8]byte
}

// newSleeper opens the eventfd; locked says the scheduler runs on a locked
// OS thread whose timer slack is already set (Config.LockThread,
// Config.Realtime); raw says it is a real-time thread (sleeper.raw).
func newSleeper(locked, raw bool) (*sleeper, error) {
	fd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("eventfd: %v", err)
	}
	return &sleeper{fd: fd, locked: locked, raw: raw}, nil
}

// sleep blocks for d or until wake; it reports whether it was woken.
func (s *sleeper) sleep(d time.Duration) bool {
	if !s.locked {
		netio.PreciseTimers() // this goroutine's thread of the moment
	}
	ts := unix.NsecToTimespec(int64(max(d, 0)))
	fds := [1]unix.PollFd{{Fd: int32(s.fd), Events: unix.POLLIN}}
	var n int
	if s.raw {
		r, _, e := unix.RawSyscall6(unix.SYS_PPOLL, uintptr(unsafe.Pointer(&fds[0])), 1, uintptr(unsafe.Pointer(&ts)), 0, 0, 0)
		if e != 0 {
			return false
		}
		n = int(r)
	} else {
		var err error
		if n, err = unix.Ppoll(fds[:], &ts, nil); err != nil {
			return false
		}
	}
	if n == 0 {
		return false
	}
	s.drain()
	return true
}

// drain sets the eventfd's counter back to 0 (after a wake).
func (s *sleeper) drain() { _, _ = unix.Read(s.fd, s.buf[:]) }

// eventFD is the eventfd that wake makes readable, for a wait in epoll
// (Config.WaitPoll).
func (s *sleeper) eventFD() int { return s.fd }

// wake interrupts a sleep in progress or the next one (the eventfd stays
// readable until a sleep drains it).
func (s *sleeper) wake() {
	var one [8]byte
	binary.NativeEndian.PutUint64(one[:], 1)
	_, _ = unix.Write(s.fd, one[:])
}

// close releases the eventfd.
func (s *sleeper) close() { unix.Close(s.fd) }
