package tunshell

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/vishvananda/netlink"
)

// TCPRoute are kernel TCP settings that Linux takes from the route a
// connection uses (ip-route(8) metrics): the namespace's default route for
// what its senders do, the host's route to the namespace for what the
// receivers on the host do. Zero values leave the kernel's defaults.
type TCPRoute struct {
	// InitCwnd is the senders' initial window, segments (initcwnd).
	InitCwnd int
	// RTOMin is the senders' RTO floor (rto_min, locked so that it holds;
	// whole milliseconds).
	RTOMin time.Duration
	// QuickAck makes the host's receivers acknowledge every segment at
	// once (quickack 1).
	QuickAck bool
}

// SetTCPRoute applies r to the shell's routes: the namespace's IPv4
// default route (initcwnd, rto_min) and the host's route to the
// namespace's address (quickack).
func (s *Shell) SetTCPRoute(r TCPRoute) error {
	if r.RTOMin%time.Millisecond != 0 {
		return fmt.Errorf("rto_min %v: the route takes whole milliseconds", r.RTOMin)
	}
	if r.InitCwnd != 0 || r.RTOMin != 0 {
		in, err := netlink.NewHandleAt(s.ns.Handle())
		if err != nil {
			return fmt.Errorf("netlink in the namespace: %w", err)
		}
		defer in.Close()
		dev, err := in.LinkByName(innerName)
		if err != nil {
			return err
		}
		rt := &netlink.Route{LinkIndex: dev.Attrs().Index, Scope: netlink.SCOPE_LINK,
			Dst: &net.IPNet{IP: net.IPv4zero.To4(), Mask: net.CIDRMask(0, 32)}, InitCwnd: r.InitCwnd}
		if r.RTOMin > 0 {
			rt.RtoMin, rt.RtoMinLock = int(r.RTOMin/time.Millisecond), true
		}
		if err := in.RouteReplace(rt); err != nil {
			return fmt.Errorf("default route in the namespace (initcwnd %d, rto_min %v): %w", r.InitCwnd, r.RTOMin, err)
		}
	}
	if r.QuickAck {
		host, err := s.hostHandle()
		if err != nil {
			return err
		}
		defer host.Close()
		dev, err := host.LinkByName(s.outer.Name())
		if err != nil {
			return err
		}
		rt := &netlink.Route{LinkIndex: dev.Attrs().Index, Scope: netlink.SCOPE_LINK, Dst: hostNet(s.addrs.Inner),
			Src: s.addrs.Host.AsSlice(), Protocol: netlink.RouteProtocol(2), QuickACK: 1} // RTPROT_KERNEL, as the address made it
		if err := host.RouteReplace(rt); err != nil {
			return fmt.Errorf("route to the namespace (quickack): %w", err)
		}
	}
	return nil
}

// Sysctl sets a network sysctl of the shell's namespace, e.g.
// "net.ipv4.tcp_sack" to "0" (the namespace's own copy: the host's is
// untouched).
func (s *Shell) Sysctl(key, value string) error {
	if !strings.HasPrefix(key, "net.") || strings.Contains(key, "..") {
		return fmt.Errorf("sysctl %q: only net.* keys are per namespace", key)
	}
	path := filepath.Join("/proc/sys", strings.ReplaceAll(key, ".", "/"))
	return s.ns.Do(func() error {
		if err := os.WriteFile(path, []byte(value), 0); err != nil {
			return fmt.Errorf("sysctl %s=%s in the namespace: %w", key, value, err)
		}
		return nil
	})
}
