package netnstest

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"cclab/internal/testenv"
	"cclab/link"
	"cclab/relay"
)

// Two continents of two hosts: access links of 2.5 ms each way, an inter
// link of 45 ms each way, so intra-continental round trips are 4 × 2.5 =
// 10 ms and inter-continental ones 10 + 2 × 45 = 100 ms.
const (
	accessDelay = 2500 * time.Microsecond
	interDelay  = 45 * time.Millisecond
	intraRTT    = 4 * accessDelay
	interRTT    = intraRTT + 2*interDelay
)

func twoContinents() Config {
	access := relay.Config{Hops: [2][]link.Config{{{Rate: 50e6, Delay: accessDelay}}, {{Rate: 50e6, Delay: accessDelay}}}}
	inter := relay.Config{Hops: [2][]link.Config{{{Rate: 20e6, Delay: interDelay}}, {{Rate: 20e6, Delay: interDelay}}}}
	return Config{Continents: []Continent{
		{Name: "eu", Hosts: []string{"h1", "h2"}, Access: access},
		{Name: "na", Hosts: []string{"h3", "h4"}, Access: access, Inter: inter},
	}}
}

// helperEnv makes the test binary run TestHelperPanics' child.
const helperEnv = "CCLAB_NETNSTEST_HELPER"

// TestNetworkRTT pings every ordered pair of hosts, and each router from a
// host of the other continent, and checks that every one answers, that no
// round trip is shorter than its path's configured delays (the link model
// never delivers early) and that inter-continental round trips are more
// than twice the intra-continental ones: loose bounds, for a loaded machine.
func TestNetworkRTT(t *testing.T) {
	n := Start(t, twoContinents())
	if len(n.Hosts) != 4 || len(n.Routers) != 2 {
		t.Fatalf("got %d hosts and %d routers, want 4 and 2", len(n.Hosts), len(n.Routers))
	}
	var intra, inter []time.Duration
	for _, a := range n.Hosts {
		for _, b := range n.Hosts {
			if a == b {
				continue
			}
			rtts, lost, err := a.Ping(b.Addr, 5, 3*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if len(rtts) == 0 {
				t.Errorf("%s → %s (%v): no reply of %d", a.Name, b.Name, b.Addr, lost)
				continue
			}
			want := interRTT
			if a.Group == b.Group {
				want = intraRTT
				intra = append(intra, rtts...)
			} else {
				inter = append(inter, rtts...)
			}
			if m := slices.Min(rtts); m < want {
				t.Errorf("%s → %s: minimum RTT %v, below the configured %v", a.Name, b.Name, m, want)
			}
			t.Logf("%s → %s: RTTs %v, %d lost", a.Name, b.Name, rtts, lost)
		}
	}
	for _, tc := range []struct {
		from, router string
		want         time.Duration
	}{{"h1", "router-na", intraRTT/2 + 2*interDelay}, {"h3", "router-eu", intraRTT/2 + 2*interDelay}} {
		var r *Node
		for _, x := range n.Routers {
			if x.Name == tc.router {
				r = x
			}
		}
		if r == nil {
			t.Fatalf("no router %s among %v", tc.router, n.Routers)
		}
		rtts, _, err := n.Host(tc.from).Ping(r.Addr, 3, 3*time.Second)
		if err != nil || len(rtts) == 0 || slices.Min(rtts) < tc.want {
			t.Errorf("%s → %s (%v): RTTs %v, %v; want replies of at least %v", tc.from, tc.router, r.Addr, rtts, err, tc.want)
		}
	}
	if len(intra) > 0 && len(inter) > 0 {
		slices.Sort(intra)
		slices.Sort(inter)
		mi, me := intra[len(intra)/2], inter[len(inter)/2]
		t.Logf("median RTT intra %v, inter %v (configured %v and %v)", mi, me, intraRTT, interRTT)
		if me <= 2*mi {
			t.Errorf("median inter-continental RTT %v is not above twice the intra-continental %v", me, mi)
		}
	}
	// Every probe crossed the link model: each access link relayed the
	// host's 9 × 5 requests and replies at least, the inter link the 8
	// inter-continental pairs' 40 and the router pings' 6.
	for _, h := range n.Hosts {
		c := n.Link(h.Name).Counters()
		if c.Sent[relay.Fwd] < 30 || c.Sent[relay.Rev] < 30 {
			t.Errorf("access link of %s: relayed %d up and %d down, want at least 30 each", h.Name, c.Sent[relay.Fwd], c.Sent[relay.Rev])
		}
	}
	if c := n.InterLink(1).Counters(); c.Sent[relay.Fwd] < 43 || c.Sent[relay.Rev] < 43 {
		t.Errorf("inter link: relayed %v, want at least 43 each way", c.Sent)
	}
}

// TestNetworkLeavesMachineAlone checks that building a network adds no
// device or address to the machine's own namespace and leaves its
// forwarding sysctl as it was.
func TestNetworkLeavesMachineAlone(t *testing.T) {
	before, err := os.ReadFile("/proc/sys/net/ipv4/ip_forward")
	if err != nil {
		t.Fatal(err)
	}
	n := Start(t, twoContinents())
	if after, _ := os.ReadFile("/proc/sys/net/ipv4/ip_forward"); !bytes.Equal(before, after) {
		t.Errorf("the machine's ip_forward changed from %q to %q", before, after)
	}
	var fwd []byte
	if err := n.Routers[1].Do(func() (err error) {
		fwd, err = os.ReadFile("/proc/sys/net/ipv4/ip_forward")
		return err
	}); err != nil || string(fwd) != "1\n" {
		t.Errorf("ip_forward in %s: %q, %v; want 1", n.Routers[1].Name, fwd, err)
	}
	links, err := netlink.LinkList()
	if err != nil {
		t.Fatal(err)
	}
	ours := fmt.Sprintf("cc%dt", os.Getpid()%10000000)
	for _, l := range links {
		if strings.HasPrefix(l.Attrs().Name, ours) {
			t.Errorf("device %s of this process in the machine's namespace", l.Attrs().Name)
		}
	}
	addrs, err := netlink.AddrList(nil, netlink.FAMILY_V4)
	if err != nil {
		t.Fatal(err)
	}
	_, plan, _ := net.ParseCIDR("10.77.0.0/16")
	for _, a := range addrs {
		if plan.Contains(a.IP) {
			t.Errorf("address %v of the network's plan in the machine's namespace", a.IP)
		}
	}
}

// TestCloseKillsEverything starts processes in a host and a router and
// checks that Close kills them and may be called twice.
func TestCloseKillsEverything(t *testing.T) {
	n := Start(t, twoContinents())
	var cmds []*exec.Cmd
	for _, node := range []*Node{n.Host("h3"), n.Routers[0]} {
		cmd := node.Command("sleep", "300")
		if err := node.Start(cmd); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
		if pids := node.Pids(); !slices.Contains(pids, cmd.Process.Pid) {
			t.Errorf("%s: processes %v, want %d among them", node.Name, pids, cmd.Process.Pid)
		}
	}
	if err := n.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	for _, cmd := range cmds {
		if err := cmd.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
			t.Errorf("%v ended with %v, want killed", cmd.Args, err)
		}
	}
	if err := n.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// TestHelperPanics is the child of TestPanicLeavesNothing: it builds a
// network, starts a process in a host, prints its PID and panics.
func TestHelperPanics(t *testing.T) {
	if os.Getenv(helperEnv) != "1" {
		t.Skip("the child of TestPanicLeavesNothing (runs only with " + helperEnv + "=1)")
	}
	n := Start(t, twoContinents())
	cmd := n.Host("h4").Command("sleep", "300")
	if err := n.Host("h4").Start(cmd); err != nil {
		t.Fatal(err)
	}
	fmt.Printf("pid %d\n", cmd.Process.Pid)
	panic("netnstest: a test that panics")
}

// TestPanicLeavesNothing runs a test that panics with a network up and a
// process in it, and checks that the process did not survive.
func TestPanicLeavesNothing(t *testing.T) {
	if os.Getenv(helperEnv) == "1" {
		t.Skip("inside the helper")
	}
	testenv.Need(t, "network namespaces and TUN devices", Supported())
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperPanics$", "-test.v")
	cmd.Env = append(os.Environ(), helperEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "a test that panics") {
		t.Fatalf("helper: %v, want a panic; output:\n%s", err, out)
	}
	var pid int
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if p, ok := strings.CutPrefix(sc.Text(), "pid "); ok {
			pid, _ = strconv.Atoi(p)
		}
	}
	if pid == 0 {
		t.Fatalf("helper printed no PID:\n%s", out)
	}
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			break // gone
		}
		if i := bytes.LastIndexByte(b, ')'); i > 0 && i+2 < len(b) && b[i+2] == 'Z' {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("process %d started in the panicking test's network still runs", pid)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	many := make([]string, MaxHosts+1)
	for i := range many {
		many[i] = fmt.Sprint("h", i)
	}
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{}, "0 continents"},
		{Config{Continents: make([]Continent, MaxContinents+1)}, "201 continents"},
		{Config{Continents: []Continent{{Name: "a", Hosts: many}}}, "at most 64"},
		{Config{Continents: []Continent{{Hosts: []string{"x"}}, {Hosts: []string{"x"}}}}, `"x" empty or used twice`},
		{Config{Continents: []Continent{{Hosts: []string{""}}}}, `"" empty`},
		{twoContinents(), ""},
	} {
		err := tc.cfg.validate()
		if got := fmt.Sprint(err); (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(got, tc.want)) {
			t.Errorf("validate(%d continents): got %v, want %q", len(tc.cfg.Continents), err, tc.want)
		}
	}
}
