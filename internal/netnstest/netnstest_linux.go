package netnstest

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"

	"github.com/vishvananda/netlink"

	"cclab/internal/testenv"
	"cclab/relay"
	"cclab/tunshell"
)

// Address plan (inside the namespaces only): the access link of host h of
// continent c is the /30 10.77.c.4h (router end .4h+1, host .4h+2); the
// inter link of continent c >= 1 is 10.77.200.4c (first continent's router
// .4c+1, continent c's router .4c+2).
const (
	// MaxContinents bounds Config.Continents (the third octet of the access
	// links, below the inter links' 200).
	MaxContinents = 200
	// MaxHosts bounds the hosts of one continent (64 /30s in a /24).
	MaxHosts   = 64
	interOctet = 200
)

// Continent is a group of hosts behind one router.
type Continent struct {
	Name  string   // the group's name, e.g. "eu" (Node.Group)
	Hosts []string // host names, unique in the network
	// Access is every host's access link to the router: Hops[relay.Fwd]
	// the uplink (host → router), Hops[relay.Rev] the downlink, as for
	// bottleneck -tun. Each link gets its own random streams, named
	// "HOST/access/DIR/HOP" (unless Streams is set). Stats, Summary and
	// Pcap, if set, would be shared by all the continent's access links:
	// leave them unset, and read each link's counters with Network.Link.
	Access relay.Config
	// Inter is the link from this continent's router to the first
	// continent's (Hops[relay.Fwd] towards the first continent), with
	// streams "NAME/inter/DIR/HOP"; ignored for the first continent.
	Inter relay.Config
}

// Config describes a network.
type Config struct {
	Continents []Continent // one or more; the first is the hub of the star
}

func (c Config) validate() error {
	if len(c.Continents) == 0 || len(c.Continents) > MaxContinents {
		return fmt.Errorf("netnstest: %d continents: must be 1..%d", len(c.Continents), MaxContinents)
	}
	seen := map[string]bool{}
	for _, ct := range c.Continents {
		if len(ct.Hosts) > MaxHosts {
			return fmt.Errorf("netnstest: continent %q has %d hosts: at most %d", ct.Name, len(ct.Hosts), MaxHosts)
		}
		for _, h := range ct.Hosts {
			if h == "" || seen[h] {
				return fmt.Errorf("netnstest: host name %q empty or used twice", h)
			}
			seen[h] = true
		}
	}
	return nil
}

// Node is one namespace of the network: a host or a router.
type Node struct {
	Name  string
	Group string     // its continent's name
	Addr  netip.Addr // an address every node of the network reaches it at
	ns    *tunshell.Namespace
}

// Do runs f on an OS thread inside the node's namespace: sockets f opens
// belong to the node for good.
func (n *Node) Do(f func() error) error { return n.ns.Do(f) }

// Command returns a command that Start runs inside the node's namespace,
// in a process group of its own and killed if the test process dies
// (Pdeathsig); the caller sets its standard streams and environment.
func (n *Node) Command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	return cmd
}

// Start starts cmd inside the node's namespace (forked from a thread in
// it). Network.Close kills it if it is still running.
func (n *Node) Start(cmd *exec.Cmd) error { return n.ns.Do(cmd.Start) }

// Pids returns the processes running in the node's namespace.
func (n *Node) Pids() []int { return n.ns.Pids() }

// Network is a running network of namespaces.
type Network struct {
	Hosts   []*Node // in Config order
	Routers []*Node // one per continent, in Config order

	hub    *tunshell.Namespace        // the first router's namespace (owned here)
	access map[string]*tunshell.Shell // by host name
	inter  []*tunshell.Shell          // per continent >= 1
	shells []*tunshell.Shell          // all, in the order they were made

	closeOnce sync.Once
	closeErr  error
}

// Supported reports why networks cannot be built here (not root, no
// /dev/net/tun), or nil.
func Supported() error { return tunshell.Supported() }

// Start builds a network for t and tears it down when t ends (including
// when it panics). Where namespaces cannot be built it skips t with the
// reason, or fails it with CI=true (internal/testenv).
func Start(t testing.TB, cfg Config) *Network {
	t.Helper()
	testenv.Need(t, "network namespaces and TUN devices", Supported())
	n, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := n.Close(); err != nil {
			t.Errorf("netnstest: Close: %v", err)
		}
	})
	return n
}

// New builds a network: the namespaces, the links with their relays
// running, addresses, routes, and forwarding in the routers. Close tears it
// down; if New fails (or panics) it tears down what it had built.
func New(cfg Config) (_ *Network, err error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if err := Supported(); err != nil {
		return nil, fmt.Errorf("netnstest: %w", err)
	}
	n := &Network{access: map[string]*tunshell.Shell{}}
	built := false
	defer func() {
		if !built {
			n.Close()
		}
	}()
	if n.hub, err = tunshell.NewNamespace(); err != nil {
		return nil, err
	}
	routerNS := []*tunshell.Namespace{n.hub}
	for c := 1; c < len(cfg.Continents); c++ {
		ct := cfg.Continents[c]
		rc := withStreams(ct.Inter, ct.Name+"/inter")
		s, err := n.shell(tunshell.Config{Relay: rc, Outer: n.hub, Subnet: subnet(interOctet, c)})
		if err != nil {
			return nil, fmt.Errorf("netnstest: inter link of continent %q: %w", ct.Name, err)
		}
		n.inter = append(n.inter, s)
		routerNS = append(routerNS, s.Namespace())
	}
	for c, ct := range cfg.Continents {
		addr := netip.Addr{}
		if c > 0 {
			addr = n.inter[c-1].Addrs().Inner
		} else if len(n.inter) > 0 {
			addr = n.inter[0].Addrs().Host
		}
		r := &Node{Name: "router-" + ct.Name, Group: ct.Name, ns: routerNS[c]}
		for h, name := range ct.Hosts {
			rc := withStreams(ct.Access, name+"/access")
			s, err := n.shell(tunshell.Config{Relay: rc, Outer: r.ns, Subnet: subnet(c, h)})
			if err != nil {
				return nil, fmt.Errorf("netnstest: access link of host %q: %w", name, err)
			}
			n.access[name] = s
			n.Hosts = append(n.Hosts, &Node{Name: name, Group: ct.Name, Addr: s.Addrs().Inner, ns: s.Namespace()})
			if !addr.IsValid() {
				addr = s.Addrs().Host
			}
		}
		r.Addr = addr
		n.Routers = append(n.Routers, r)
	}
	for _, r := range n.Routers {
		if err := r.Do(func() error { return os.WriteFile("/proc/sys/net/ipv4/ip_forward", []byte("1\n"), 0o644) }); err != nil {
			return nil, fmt.Errorf("netnstest: forwarding in %s: %w", r.Name, err)
		}
	}
	if err := n.hubRoutes(cfg); err != nil {
		return nil, err
	}
	built = true
	return n, nil
}

// shell starts a link shell and keeps it for Close.
func (n *Network) shell(cfg tunshell.Config) (*tunshell.Shell, error) {
	s, err := tunshell.Start(cfg)
	if err != nil {
		return nil, err
	}
	n.shells = append(n.shells, s)
	return s, nil
}

// hubRoutes routes, in the first router, each further continent's access
// subnets into that continent's inter link (the other routers reach
// everything beyond their own hosts by their default route, which the inter
// link's shell set).
func (n *Network) hubRoutes(cfg Config) error {
	h, err := netlink.NewHandleAt(n.hub.Handle())
	if err != nil {
		return fmt.Errorf("netnstest: netlink in the hub: %w", err)
	}
	defer h.Close()
	for c := 1; c < len(cfg.Continents); c++ {
		dev, err := h.LinkByName(n.inter[c-1].OuterName())
		if err != nil {
			return fmt.Errorf("netnstest: inter link of continent %q: %w", cfg.Continents[c].Name, err)
		}
		dst := &net.IPNet{IP: net.IPv4(10, 77, byte(c), 0).To4(), Mask: net.CIDRMask(24, 32)}
		if err := h.RouteAdd(&netlink.Route{LinkIndex: dev.Attrs().Index, Scope: netlink.SCOPE_LINK, Dst: dst}); err != nil {
			return fmt.Errorf("netnstest: route %v in the hub: %w", dst, err)
		}
	}
	return nil
}

// subnet is the /30 of link number k under 10.77.octet.0/24.
func subnet(octet, k int) netip.Prefix {
	return netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 77, byte(octet), byte(4 * k)}), 30)
}

// withStreams returns cfg with every hop's random stream named
// "PREFIX/DIR/HOP" where cfg does not name it.
func withStreams(cfg relay.Config, prefix string) relay.Config {
	for d, dir := range [2]string{"up", "down"} {
		names := make([]string, len(cfg.Hops[d]))
		for i := range names {
			if i < len(cfg.Streams[d]) && cfg.Streams[d][i] != "" {
				names[i] = cfg.Streams[d][i]
			} else {
				names[i] = fmt.Sprintf("%s/%s/%d", prefix, dir, i)
			}
		}
		cfg.Streams[d] = names
	}
	return cfg
}

// Host returns the host named name, or nil.
func (n *Network) Host(name string) *Node {
	for _, h := range n.Hosts {
		if h.Name == name {
			return h
		}
	}
	return nil
}

// Link returns the relay of the host's access link (for its counters), or
// nil.
func (n *Network) Link(host string) *relay.Relay {
	if s := n.access[host]; s != nil {
		return s.Relay()
	}
	return nil
}

// InterLink returns the relay of continent c's inter link (c >= 1), or nil.
func (n *Network) InterLink(c int) *relay.Relay {
	if c < 1 || c > len(n.inter) {
		return nil
	}
	return n.inter[c-1].Relay()
}

// Close kills every process in the network's namespaces, stops the relays,
// deletes the devices and releases the namespaces. It is safe to call more
// than once.
func (n *Network) Close() error {
	n.closeOnce.Do(func() {
		var errs []error
		// Processes first, so none sees a half-torn network.
		for _, s := range n.shells {
			s.Namespace().KillAll()
		}
		if n.hub != nil {
			n.hub.KillAll()
		}
		// Access links before the inter links whose namespaces hold their
		// outer devices.
		for i := len(n.shells) - 1; i >= 0; i-- {
			errs = append(errs, n.shells[i].Close())
		}
		if n.hub != nil {
			errs = append(errs, n.hub.Close())
		}
		n.closeErr = errors.Join(errs...)
	})
	return n.closeErr
}
