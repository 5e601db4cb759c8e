package tunshell

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"cclab/internal/hostlimit"
	"cclab/relay"
)

// Supported reports whether link shells can be built here: Linux, root
// (creating a network namespace needs CAP_SYS_ADMIN, configuring devices
// CAP_NET_ADMIN), and /dev/net/tun can be opened. The error says what is
// missing.
func Supported() error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("the link shell needs root (network namespaces and TUN devices need CAP_SYS_ADMIN and CAP_NET_ADMIN)")
	}
	fd, err := unix.Open("/dev/net/tun", unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("cannot open /dev/net/tun (%v): the link shell needs the tun module and root (CAP_NET_ADMIN)", err)
	}
	unix.Close(fd)
	return nil
}

// innerName is the TUN device's name inside the namespace (private to it).
const innerName = "tun0"

// shells numbers the shells of this process, for unique outer device names.
var shells atomic.Int64

// Shell is a running link shell: a network namespace whose only route out
// is a TUN device, another TUN device in the host namespace, and a
// packet-mode relay between them that applies the configured link model.
type Shell struct {
	cfg   Config
	ns    *Namespace
	inner *Device
	outer *Device
	relay *relay.Relay
	addrs Addrs
	tx    *txDrops // the devices' transmit-queue drops (relay.Config.KernelDrops)

	closeOnce sync.Once
	closeErr  error
}

// Start builds a link shell: the namespace, the two TUN devices with their
// addresses and routes (the namespace's default routes point into its
// device), and the relay, already forwarding. Close tears it all down.
func Start(cfg Config) (*Shell, error) {
	s, err := build(cfg)
	if err != nil {
		return nil, err
	}
	s.inner.SetStallLimit(drainTime(s.cfg.Relay, relay.Fwd, s.cfg.MTU))
	s.outer.SetStallLimit(drainTime(s.cfg.Relay, relay.Rev, s.cfg.MTU))
	prev := s.cfg.Relay.HostCheck
	s.cfg.Relay.HostCheck = func(h *hostlimit.Report) {
		if prev != nil {
			prev(h)
		}
		st := s.ReadStalls()
		h.ReadStalls = &st
	}
	if s.cfg.Relay.KernelDrops == nil {
		s.tx = s.newTxDrops()
		s.cfg.Relay.KernelDrops = s.tx.drops
	}
	if s.relay, err = relay.NewPacket(s.cfg.Relay, s.inner, s.outer); err != nil {
		s.Close()
		return nil, err
	}
	s.relay.Start()
	return s, nil
}

// build makes a shell's namespace and configured devices, without the
// relay; on error it has undone what it made.
func build(cfg Config) (_ *Shell, err error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if err := Supported(); err != nil {
		return nil, err
	}
	s := &Shell{cfg: cfg}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	if s.ns, err = NewNamespace(); err != nil {
		return nil, err
	}
	if err = s.ns.Do(func() error {
		var err error
		s.inner, err = OpenTUN(innerName)
		return err
	}); err != nil {
		return nil, err
	}
	openOuter := func() error {
		var err error
		s.outer, err = OpenTUN(fmt.Sprintf("cc%dt%%d", os.Getpid()%10000000))
		return err
	}
	if cfg.Outer != nil {
		err = cfg.Outer.Do(openOuter)
	} else {
		err = openOuter()
	}
	if err != nil {
		return nil, err
	}
	if err = s.configure(); err != nil {
		return nil, err
	}
	return s, nil
}

// hostHandle opens a netlink handle on the shell's outer side: the
// namespace Config.Outer, or the caller's own.
func (s *Shell) hostHandle() (*netlink.Handle, error) {
	var h *netlink.Handle
	var err error
	if s.cfg.Outer != nil {
		h, err = netlink.NewHandleAt(s.cfg.Outer.Handle())
	} else {
		h, err = netlink.NewHandle()
	}
	if err != nil {
		return nil, fmt.Errorf("netlink: %w", err)
	}
	return h, nil
}

// configure gives the devices their MTU, queue length, addresses and
// routes, and brings them up.
func (s *Shell) configure() error {
	host, err := s.hostHandle()
	if err != nil {
		return err
	}
	defer host.Close()
	in, err := netlink.NewHandleAt(s.ns.Handle())
	if err != nil {
		return fmt.Errorf("netlink in the namespace: %w", err)
	}
	defer in.Close()

	unlock, err := lockAddrs()
	if err != nil {
		return err
	}
	defer unlock()
	if s.addrs, err = pickAddrs(host, s.cfg.Subnet); err != nil {
		return err
	}
	if !ipv6Enabled() {
		s.addrs.Host6, s.addrs.Inner6 = netip.Addr{}, netip.Addr{}
	}
	a := s.addrs
	if err := setUp(host, s.outer.Name(), s.cfg.MTU, a.Host, a.Inner, a.Host6, a.Inner6); err != nil {
		return fmt.Errorf("outer device %s: %w", s.outer.Name(), err)
	}
	if err := setUp(in, innerName, s.cfg.MTU, a.Inner, a.Host, a.Inner6, a.Host6); err != nil {
		return fmt.Errorf("inner device %s: %w", innerName, err)
	}
	lo, err := in.LinkByName("lo")
	if err == nil {
		err = in.LinkSetUp(lo)
	}
	if err != nil {
		return fmt.Errorf("loopback in the namespace: %w", err)
	}
	dev, err := in.LinkByName(innerName)
	if err != nil {
		return err
	}
	routes := []*netlink.Route{{LinkIndex: dev.Attrs().Index, Scope: netlink.SCOPE_LINK, Dst: &net.IPNet{IP: net.IPv4zero.To4(), Mask: net.CIDRMask(0, 32)}}}
	if a.Inner6.IsValid() {
		routes = append(routes, &netlink.Route{LinkIndex: dev.Attrs().Index, Dst: &net.IPNet{IP: net.IPv6zero, Mask: net.CIDRMask(0, 128)}})
	}
	for _, r := range routes {
		if err := in.RouteAdd(r); err != nil {
			return fmt.Errorf("default route in the namespace: %w", err)
		}
	}
	return nil
}

// setUp configures one TUN device: MTU, transmit queue length, up, the
// point-to-point addresses local→peer (IPv4, and IPv6 if valid, without
// duplicate address detection, RFC 4862 §5.4, which a link of two ends
// that the shell numbers itself does not need).
func setUp(h *netlink.Handle, name string, mtu int, local, peer, local6, peer6 netip.Addr) error {
	l, err := h.LinkByName(name)
	if err != nil {
		return err
	}
	if err := h.LinkSetMTU(l, mtu); err != nil {
		return fmt.Errorf("mtu %d: %w", mtu, err)
	}
	if err := h.LinkSetTxQLen(l, TxQueueLen); err != nil {
		return fmt.Errorf("txqueuelen: %w", err)
	}
	// Up first: the kernel adds the route to an IPv6 peer when the address
	// becomes valid, which for an address without DAD added to a device
	// that is down never happens.
	if err := h.LinkSetUp(l); err != nil {
		return fmt.Errorf("up: %w", err)
	}
	if err := h.AddrAdd(l, &netlink.Addr{IPNet: hostNet(local), Peer: hostNet(peer)}); err != nil {
		return fmt.Errorf("address %v peer %v: %w", local, peer, err)
	}
	if local6.IsValid() {
		if err := h.AddrAdd(l, &netlink.Addr{IPNet: hostNet(local6), Peer: hostNet(peer6), Flags: unix.IFA_F_NODAD}); err != nil {
			return fmt.Errorf("address %v peer %v: %w", local6, peer6, err)
		}
	}
	return nil
}

// ipv6Enabled reports whether the host has IPv6 (the namespace then has it
// too: a new namespace takes net.ipv6.conf.default from the kernel's).
func ipv6Enabled() bool {
	b, err := os.ReadFile("/proc/sys/net/ipv6/conf/all/disable_ipv6")
	return err == nil && len(b) > 0 && b[0] == '0'
}

// hostNet is a as a single-address prefix (/32 or /128).
func hostNet(a netip.Addr) *net.IPNet {
	return &net.IPNet{IP: a.AsSlice(), Mask: net.CIDRMask(a.BitLen(), a.BitLen())}
}

// lockAddrs serializes address allocation among the link shells of all
// processes on the machine (an exclusive flock on a lock file), so that two
// shells starting together do not pick the same subnet.
func lockAddrs() (unlock func(), err error) {
	var f *os.File
	for _, dir := range []string{"/run", os.TempDir()} {
		if f, err = os.OpenFile(filepath.Join(dir, "cclab-tunshell.lock"), os.O_RDWR|os.O_CREATE, 0o600); err == nil {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("address lock: %w", err)
	}
	for {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("address lock: %w", err)
	}
	return func() { f.Close() }, nil // closing drops the lock
}

// pickAddrs chooses the first subnet, starting from a number derived from
// the process and the shell, whose addresses no route or address of the
// host covers.
func pickAddrs(h *netlink.Handle, subnet netip.Prefix) (Addrs, error) {
	var used []netip.Prefix
	for _, fam := range []int{netlink.FAMILY_V4, netlink.FAMILY_V6} {
		rs, err := h.RouteListFiltered(fam, &netlink.Route{Table: unix.RT_TABLE_UNSPEC}, netlink.RT_FILTER_TABLE)
		if err != nil {
			return Addrs{}, fmt.Errorf("netlink: list routes: %w", err)
		}
		for _, r := range rs {
			if p, ok := prefixOf(r.Dst); ok && p.Bits() > 0 {
				used = append(used, p)
			}
		}
		as, err := h.AddrList(nil, fam)
		if err != nil {
			return Addrs{}, fmt.Errorf("netlink: list addresses: %w", err)
		}
		for _, a := range as {
			if p, ok := prefixOf(a.IPNet); ok {
				used = append(used, p)
			}
			if p, ok := prefixOf(a.Peer); ok {
				used = append(used, p)
			}
		}
	}
	start := uint32(os.Getpid())*64 + uint32(shells.Add(1))
	return allocate(subnet, start, used)
}

// prefixOf converts a netlink prefix; ok is false for nil.
func prefixOf(n *net.IPNet) (netip.Prefix, bool) {
	if n == nil {
		return netip.Prefix{}, false
	}
	a, ok := netip.AddrFromSlice(n.IP)
	if !ok {
		return netip.Prefix{}, false
	}
	ones, _ := n.Mask.Size()
	return netip.PrefixFrom(a.Unmap(), ones).Masked(), true
}

// ReadStalls returns the TUN readers' stalls, both devices together
// (docs/shell.md, "Arrival instant"): reads that found packets waiting,
// those after a gap longer than their direction's queue drain time, the
// longest gap. The relay's host report (HostReport, the summary) carries
// them and marks the run host-limited (read_stall) from MinLate stalls.
func (s *Shell) ReadStalls() hostlimit.Stalls {
	st := s.inner.ReadStalls()
	st.Merge(s.outer.ReadStalls())
	return st
}

// Addrs returns the shell's addresses.
func (s *Shell) Addrs() Addrs { return s.addrs }

// Namespace returns the shell's namespace (the inner device's), e.g. to
// put another shell's outer device into it (Config.Outer).
func (s *Shell) Namespace() *Namespace { return s.ns }

// Relay returns the relay that applies the link model.
func (s *Shell) Relay() *relay.Relay { return s.relay }

// OuterName returns the name of the host-side TUN device.
func (s *Shell) OuterName() string { return s.outer.Name() }

// Do runs f on an OS thread inside the shell's namespace: sockets f opens
// (e.g. a cclab transport endpoint) send and receive across the emulated
// link for good.
func (s *Shell) Do(f func() error) error { return s.ns.Do(f) }

// Env returns the environment of a program in the shell: the process's
// own plus the shell's addresses (docs/shell.md, "Environment").
func (s *Shell) Env() []string { return append(os.Environ(), s.addrs.Env()...) }

// Command returns a command that StartCommand runs inside the namespace,
// with Env set and its own process group (so that the shell can signal it
// and everything it starts); the caller sets its standard streams.
func (s *Shell) Command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Env = s.Env()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	return cmd
}

// StartCommand starts cmd inside the namespace (the process is forked from
// a thread that is in it).
func (s *Shell) StartCommand(cmd *exec.Cmd) error { return s.ns.Do(cmd.Start) }

// Close kills every process left in the namespace, stops the relay (which
// writes its final statistics and summary), deletes both devices and
// releases the namespace. It is safe to call more than once.
func (s *Shell) Close() error {
	s.closeOnce.Do(func() {
		var errs []error
		if s.ns != nil {
			s.ns.KillAll()
		}
		if s.relay != nil {
			errs = append(errs, s.relay.Close()) // closes both devices
		} else {
			for _, d := range []*Device{s.inner, s.outer} {
				if d != nil {
					errs = append(errs, d.Close())
				}
			}
		}
		s.tx.close() // after the relay's last statistics line
		if s.ns != nil {
			errs = append(errs, s.ns.Close())
		}
		s.closeErr = errors.Join(errs...)
	})
	return s.closeErr
}

// Summary writes the shell's setup in one line.
func (s *Shell) Summary(w io.Writer) {
	a := s.addrs
	fmt.Fprintf(w, "link shell: namespace %s %v (and %v) ⇄ host %s %v (and %v)\n",
		innerName, a.Inner, a.Inner6, s.outer.Name(), a.Host, a.Host6)
}
