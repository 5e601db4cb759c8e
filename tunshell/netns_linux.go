package tunshell

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"

	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// Namespace is a network namespace of its own, held open by a file
// descriptor and never named (not bound under /run/netns), so it cannot
// outlive the process: the kernel frees it when the descriptor is closed
// and the last process inside has exited.
type Namespace struct {
	ns   netns.NsHandle // the new namespace
	host netns.NsHandle // the namespace the process started in
	ino  uint64         // inode of the namespace (its identity in /proc/PID/ns/net)
	dev  uint64
}

// NewNamespace creates a network namespace (unshare(CLONE_NEWNET) on a
// thread of its own, which then returns to the host namespace).
func NewNamespace() (*Namespace, error) {
	host, err := netns.Get()
	if err != nil {
		return nil, fmt.Errorf("netns: current namespace: %w", err)
	}
	n := &Namespace{host: host}
	err = onThread(func() error {
		ns, err := netns.New() // unshare + open /proc/thread-self/ns/net
		if err != nil {
			return fmt.Errorf("netns: unshare(CLONE_NEWNET): %w", err)
		}
		n.ns = ns
		return nil
	}, host)
	if err != nil {
		host.Close()
		return nil, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(n.ns), &st); err != nil {
		n.Close()
		return nil, fmt.Errorf("netns: %w", err)
	}
	n.ino, n.dev = st.Ino, st.Dev
	return n, nil
}

// onThread runs f on a thread of its own and then moves that thread into
// namespace back. If it cannot, the thread stays locked and is destroyed
// when the goroutine ends, so no goroutine ever runs in the wrong
// namespace.
func onThread(f func() error, back netns.NsHandle) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		err := f()
		if rerr := netns.Set(back); rerr != nil {
			errc <- errors.Join(err, fmt.Errorf("netns: return to the host namespace: %w", rerr))
			return // still locked: the runtime discards the thread
		}
		runtime.UnlockOSThread()
		errc <- err
	}()
	return <-errc
}

// Do runs f on an OS thread inside the namespace, then returns the thread to
// the host namespace. Sockets and TUN devices that f creates belong to the
// namespace for good, whichever thread uses them later; a process f starts
// (exec.Cmd.Start) runs inside it.
func (n *Namespace) Do(f func() error) error {
	return onThread(func() error {
		if err := netns.Set(n.ns); err != nil {
			return fmt.Errorf("netns: enter: %w", err)
		}
		return f()
	}, n.host)
}

// Handle returns the namespace's handle (for netlink.NewHandleAt).
func (n *Namespace) Handle() netns.NsHandle { return n.ns }

// Pids returns the processes whose network namespace is this one.
func (n *Namespace) Pids() []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		var st unix.Stat_t
		if unix.Stat(filepath.Join("/proc", e.Name(), "ns", "net"), &st) != nil {
			continue
		}
		if st.Ino == n.ino && st.Dev == n.dev {
			out = append(out, pid)
		}
	}
	return out
}

// KillAll sends SIGKILL to every process left in the namespace and returns
// how many there were.
func (n *Namespace) KillAll() int {
	pids := n.Pids()
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	return len(pids)
}

// Close releases the namespace's descriptors; the kernel frees the
// namespace once no process is left inside.
func (n *Namespace) Close() error {
	var err error
	if n.ns.IsOpen() {
		err = n.ns.Close()
	}
	if n.host.IsOpen() {
		err = errors.Join(err, n.host.Close())
	}
	return err
}
