package tunshell

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"cclab/internal/testenv"
	"cclab/link"
	"cclab/relay"
)

// helperEnv makes the test binary act as `bottleneck -tun` (TestMain).
const helperEnv = "CCLAB_TUNSHELL_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "1" {
		// A link shell of 10 ms each way running the arguments after "--".
		i := slices.Index(os.Args, "--")
		cfg := Config{Relay: relay.Config{Summary: os.Stderr,
			Hops: [2][]link.Config{{{Delay: 10 * time.Millisecond}}, {{Delay: 10 * time.Millisecond}}}}}
		os.Exit(Run(cfg, os.Args[i+1:], Stdio{In: os.Stdin, Out: os.Stdout, Err: os.Stderr}, 0, nil))
	}
	os.Exit(m.Run())
}

// NeedShell skips the test, printing why, if link shells cannot be built
// here (not root, no /dev/net/tun); with CI=true it fails instead.
func NeedShell(t testing.TB) {
	t.Helper()
	testenv.Need(t, "the link shell", Supported())
}

func startShell(t *testing.T, cfg Config) *Shell {
	t.Helper()
	s, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// echoServer answers every UDP datagram at addr with itself.
func echoServer(t *testing.T, addr netip.Addr) netip.AddrPort {
	t.Helper()
	c, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(addr, 0)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	go func() {
		b := make([]byte, 2048)
		for {
			n, from, err := c.ReadFromUDPAddrPort(b)
			if err != nil {
				return
			}
			c.WriteToUDPAddrPort(b[:n], from)
		}
	}()
	return c.LocalAddr().(*net.UDPAddr).AddrPort()
}

// Ping measures n round trips of a 64-byte UDP probe from inside the shell
// to an echo server on the host at addr, one probe at a time.
func ping(t *testing.T, s *Shell, addr netip.Addr, n int) []time.Duration {
	t.Helper()
	dst := echoServer(t, addr)
	var c *net.UDPConn
	if err := s.Do(func() (err error) {
		c, err = net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(dst))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var rtts []time.Duration
	b, r := make([]byte, 64), make([]byte, 64)
	for i := 0; i < n; i++ {
		binary.BigEndian.PutUint64(b, uint64(i))
		t0 := time.Now()
		if _, err := c.Write(b); err != nil {
			t.Fatal(err)
		}
		c.SetReadDeadline(time.Now().Add(3 * time.Second))
		for {
			k, err := c.Read(r)
			if err != nil {
				t.Fatalf("probe %d: %v", i, err)
			}
			if k == 64 && binary.BigEndian.Uint64(r) == uint64(i) {
				break
			}
		}
		rtts = append(rtts, time.Since(t0))
	}
	slices.Sort(rtts)
	return rtts
}

// TestShellAddsConfiguredDelay measures round trips through a shell of
// 15 ms + 25 ms (IPv4 and IPv6). The model never delivers early, so the
// minimum RTT is at least 40 ms; the median must be within 20 ms above: an
// idle relay writes within about 0.2 ms of the modelled instant
// (docs/bottleneck.md, Benchmark) and namespace-to-host forwarding adds
// well under 1 ms, so the margin is for a loaded machine only.
func TestShellAddsConfiguredDelay(t *testing.T) {
	NeedShell(t)
	var stats bytes.Buffer
	cfg := Config{Relay: relay.Config{Stats: &stats, Hops: [2][]link.Config{
		{{Rate: 20e6, Delay: 15 * time.Millisecond, Queue: "droptail:20p"}}, {{Rate: 20e6, Delay: 25 * time.Millisecond}}}}}
	s := startShell(t, cfg)
	const rtt = 40 * time.Millisecond
	addrs := []netip.Addr{s.Addrs().Host}
	if s.Addrs().Host6.IsValid() {
		addrs = append(addrs, s.Addrs().Host6)
	}
	for _, a := range addrs {
		rtts := ping(t, s, a, 20)
		min, med := rtts[0], rtts[len(rtts)/2]
		t.Logf("%v: RTT min %v median %v max %v (configured %v)", a, min, med, rtts[len(rtts)-1], rtt)
		if min < rtt {
			t.Errorf("%v: minimum RTT %v is below the configured %v", a, min, rtt)
		}
		if med > rtt+20*time.Millisecond {
			t.Errorf("%v: median RTT %v, want at most %v", a, med, rtt+20*time.Millisecond)
		}
	}
	c := s.Relay().Counters()
	if c.Sent[relay.Fwd] < 20*int64(len(addrs)) || c.Sent[relay.Rev] < 20*int64(len(addrs)) || c.Malformed != 0 {
		t.Errorf("relay counters %+v: want at least %d packets each way, none malformed", c, 20*len(addrs))
	}
	// The relay's host report carries the TUN readers' stalls, judged
	// against the shorter drain time of the two directions' queues.
	h := s.Relay().HostReport()
	want := min(drainTime(cfg.Relay, relay.Fwd, DefaultMTU), drainTime(cfg.Relay, relay.Rev, DefaultMTU))
	if h.ReadStalls == nil || h.ReadStalls.Limit != want || want != 12*time.Millisecond {
		t.Errorf("host report's read stalls %+v: want limit %v (12ms: 20 packets at 20 Mbit/s)", h.ReadStalls, want)
	} else {
		t.Logf("read stalls: %+v", *h.ReadStalls)
	}
	// Every statistics line while the devices exist knows their transmit
	// drops (relay.Config.KernelDrops), none on this idle path; the final
	// line, written after the relay closed them, may not (-1).
	s.Close()
	known := 0
	for _, l := range strings.Split(strings.TrimSpace(stats.String()), "\n") {
		var sl relay.StatsLine
		if err := json.Unmarshal([]byte(l), &sl); err != nil {
			t.Fatal(err)
		}
		if sl.Final {
			continue
		}
		known++
		for _, hl := range sl.Host {
			if hl.RxQueueDrops != 0 {
				t.Errorf("stats line at %.3fs, %s: rx_queue_drops %d, want 0 (known, none)", sl.Time, hl.Dir, hl.RxQueueDrops)
			}
		}
		if len(sl.Host) != 2 {
			t.Errorf("stats line at %.3fs: %d host blocks, want 2", sl.Time, len(sl.Host))
		}
	}
	if known == 0 {
		t.Errorf("no statistics line before the final one:\n%s", stats.String())
	}
}

// TestShellCloseLeavesNothing checks that Close kills every process in the
// namespace (a child and its background grandchild) and deletes the host's
// device.
func TestShellCloseLeavesNothing(t *testing.T) {
	NeedShell(t)
	s := startShell(t, Config{})
	cmd := s.Command("sh", "-c", "sleep 300 & echo $!; exec sleep 300")
	var out testenv.Buffer
	cmd.Stdout = &out
	if err := s.StartCommand(cmd); err != nil {
		t.Fatal(err)
	}
	var pids []int
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if pids = s.ns.Pids(); len(pids) == 2 && strings.Contains(out.String(), "\n") {
			break
		}
	}
	if len(pids) != 2 {
		t.Fatalf("processes in the namespace: %v, want the shell's child and grandchild", pids)
	}
	grandchild, _ := strconv.Atoi(strings.TrimSpace(out.String()))
	if !slices.Contains(pids, cmd.Process.Pid) || !slices.Contains(pids, grandchild) {
		t.Errorf("processes in the namespace %v, want %d and %d", pids, cmd.Process.Pid, grandchild)
	}
	outer := s.OuterName()
	if _, err := netlink.LinkByName(outer); err != nil {
		t.Fatalf("host device %s missing while the shell runs: %v", outer, err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	cmd.Wait()
	if ws := cmd.ProcessState.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Errorf("child ended with %v, want killed by SIGKILL", cmd.ProcessState)
	}
	waitGone(t, grandchild)
	if _, err := netlink.LinkByName(outer); err == nil {
		t.Errorf("host device %s still exists after Close", outer)
	}
}

// waitGone waits until process pid has ended (gone or a zombie).
func waitGone(t *testing.T, pid int) {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return
		}
		// The state follows the parenthesised command name.
		if i := bytes.LastIndexByte(b, ')'); i > 0 && i+2 < len(b) && b[i+2] == 'Z' {
			return
		}
	}
	t.Errorf("process %d still running", pid)
}

// TestRunEndsOnSIGINT runs the command-line shell (this test binary as a
// helper, see TestMain) with a program that would run for minutes, sends it
// SIGINT, and checks that the program got it, the shell exited with
// 128+SIGINT and the host's device is gone.
func TestRunEndsOnSIGINT(t *testing.T) {
	NeedShell(t)
	cmd := exec.Command(os.Args[0], "-test.run=^$", "--", "sh", "-c", "echo $$; exec sleep 300")
	cmd.Env = append(os.Environ(), helperEnv+"=1")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr testenv.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("helper printed no PID: %v; stderr: %s", err, stderr.String())
	}
	child, _ := strconv.Atoi(strings.TrimSpace(line))
	outer := ""
	for end := time.Now().Add(5 * time.Second); outer == "" && time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if _, rest, ok := strings.Cut(stderr.String(), "⇄ host "); ok {
			outer, _, _ = strings.Cut(rest, " ")
		}
	}
	if outer == "" {
		t.Errorf("helper's stderr names no host device: %q", stderr.String())
	} else if _, err := netlink.LinkByName(outer); err != nil {
		t.Errorf("host device %s missing while the shell runs: %v", outer, err)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 128+int(syscall.SIGINT) {
		t.Errorf("shell exit status %d (%v), want %d; stderr: %s", code, err, 128+int(syscall.SIGINT), stderr.String())
	}
	waitGone(t, child)
	if outer != "" {
		if _, err := netlink.LinkByName(outer); err == nil {
			t.Errorf("host device %s still exists after the shell exited", outer)
		}
	}
	if !strings.Contains(stderr.String(), "bottleneck summary") {
		t.Errorf("no summary on stderr: %q", stderr.String())
	}
}
