//go:build linux

// Command shellbench compares kernel TCP with cclab's own transport over the
// same emulated link: for each path and each congestion controller it
// builds a link shell (bottleneck -tun, docs/shell.md), runs one bulk
// transfer through it with iperf3 (kernel TCP, the controller chosen with
// -C) and one with cclab's sender per loss-recovery strategy (package
// perf, in process, its socket opened inside the shell's namespace), and
// for reference one cclab transfer through the UDP relay (cmd/bottleneck
// without -tun) on loopback with the same link model; it prints a
// Markdown table of goodput against the path's capacity, retransmissions
// and the bottleneck queue's statistics (docs/compat.md). It needs root,
// /dev/net/tun and iperf3.
//
// Usage:
//
//	go run ./cmd/bottleneck/shellbench [-t 10s] [-cc reno,cubic] [-recovery newreno,prr:lostretx] [-stacks kernel,cclab,relay] [-path SPEC]...
//
// A path SPEC is "rate/rtt/queue[/loss]", e.g. 20Mbit/40ms/droptail:100p or
// 20Mbit/40ms/droptail:100p/0.005: the rate in both directions, the RTT
// split evenly between them, the queue discipline of both directions, and
// random loss on the uplink (data) direction.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"cclab/internal/units"
	"cclab/link"
	"cclab/perf"
	"cclab/relay"
	"cclab/transport"
	"cclab/transport/udp"
	"cclab/tunshell"
)

// Path is one emulated path, the same in both directions except for loss.
type Path struct {
	Rate  float64       // bits/s, each direction
	RTT   time.Duration // base round-trip time, split evenly
	Queue string        // qdisc spec of both directions
	Loss  float64       // random loss probability of the uplink
}

// String formats the path as a SPEC.
func (p Path) String() string {
	s := fmt.Sprintf("%s/%v/%s", units.FormatRate(p.Rate), p.RTT, p.Queue)
	if p.Loss > 0 {
		s += "/" + strconv.FormatFloat(p.Loss, 'g', -1, 64)
	}
	return s
}

// ParsePath parses a SPEC "rate/rtt/queue[/loss]".
func ParsePath(s string) (Path, error) {
	f := strings.Split(s, "/")
	if len(f) < 3 || len(f) > 4 {
		return Path{}, fmt.Errorf("path %q: want rate/rtt/queue[/loss], e.g. 20Mbit/40ms/droptail:100p", s)
	}
	var p Path
	var err error
	if p.Rate, err = units.ParseRate(f[0]); err != nil || p.Rate <= 0 {
		return p, fmt.Errorf("path %q: rate %q: want a rate > 0 such as 20Mbit", s, f[0])
	}
	if p.RTT, err = units.ParseDuration(f[1]); err != nil || p.RTT < 0 {
		return p, fmt.Errorf("path %q: rtt %q: want a duration >= 0 such as 40ms", s, f[1])
	}
	p.Queue = f[2]
	if len(f) == 4 {
		if p.Loss, err = strconv.ParseFloat(f[3], 64); err != nil || p.Loss < 0 || p.Loss >= 1 {
			return p, fmt.Errorf("path %q: loss %q: want a probability in [0, 1)", s, f[3])
		}
	}
	if _, err := p.Shell(); err != nil {
		return p, fmt.Errorf("path %q: %v", s, err)
	}
	return p, nil
}

// Shell returns the link shell configuration of the path.
func (p Path) Shell() (tunshell.Config, error) {
	var hops [2][]link.Config
	for d := range hops {
		h := link.Config{Rate: p.Rate, Delay: p.RTT / 2, Queue: p.Queue}
		if d == relay.Fwd && p.Loss > 0 {
			h.Loss = strconv.FormatFloat(p.Loss, 'g', -1, 64)
		}
		if err := relay.ValidateHop(h); err != nil {
			return tunshell.Config{}, err
		}
		hops[d] = []link.Config{h}
	}
	return tunshell.Config{Relay: relay.Config{Hops: hops, Seed: 1}}, nil
}

// Result is one transfer's outcome.
type Result struct {
	Path      Path
	Stack     string  // "kernel" (iperf3 in the shell), "cclab" (in the shell) or "relay" (cclab through the UDP relay)
	CC        string  // congestion controller
	Recovery  string  // cclab's loss-recovery strategy ("" for kernel TCP: Linux's SACK, RACK and PRR)
	Goodput   float64 // application bytes delivered per second ×8, bits/s
	MSS       int     // payload bytes per full-size packet
	Retrans   int64   // retransmitted packets
	Drops     int64   // packets the uplink dropped (queue and loss)
	QueueMean float64 // mean sojourn in the uplink queue, ms
	// Host is the relay's host-limited verdict (docs/metrics.md,
	// "Host-limited runs"): the failed checks' codes, "" if none; through
	// a shell it includes read_stall (docs/shell.md).
	Host string
	// Stalls counts the shell's TUN reads after a gap longer than the
	// queue's drain time; StallMax is the longest gap (0 through the UDP
	// relay).
	Stalls   uint64
	StallMax time.Duration
}

// Capacity is the goodput a transfer filling the link with full-size
// packets of MSS payload bytes (in MTU-byte IP packets) would reach, bits/s.
func (r Result) Capacity() float64 {
	return r.Path.Rate * float64(r.MSS) / float64(tunshell.DefaultMTU)
}

// Fraction is Goodput / Capacity.
func (r Result) Fraction() float64 { return r.Goodput / r.Capacity() }

// Measure runs one transfer of stack with controller cc (and, for cclab,
// loss-recovery strategy rec) for dur through a fresh link of path p:
// "kernel" (iperf3) and "cclab" through a link shell, "relay" (cclab)
// through the UDP relay on loopback.
func Measure(ctx context.Context, p Path, stack, cc, rec string, dur time.Duration) (Result, error) {
	cfg, err := p.Shell()
	if err != nil {
		return Result{}, err
	}
	res := Result{Path: p, Stack: stack, CC: cc, Recovery: rec}
	var r *relay.Relay
	switch stack {
	case "kernel", "cclab":
		s, err := tunshell.Start(cfg)
		if err != nil {
			return res, err
		}
		defer s.Close()
		r = s.Relay()
		if stack == "kernel" {
			res.Recovery = ""
			err = runIperf3(ctx, s, cc, dur, &res)
		} else {
			err = runCclab(ctx, s.Addrs().Host, s.Do, cc, rec, dur, &res)
		}
		if err != nil {
			return res, err
		}
	case "relay":
		if r, err = runRelay(ctx, cfg.Relay, cc, rec, dur, &res); err != nil {
			return res, err
		}
		defer r.Close()
	default:
		return res, fmt.Errorf("stack %q: want kernel, cclab or relay", stack)
	}
	h := r.HostReport()
	res.Host = h.Codes()
	if h.ReadStalls != nil {
		res.Stalls, res.StallMax = h.ReadStalls.Stalls, h.ReadStalls.Max
	}
	st := r.HopStats(relay.Fwd)[0]
	res.Drops = st.TotalDrops()
	if st.Dequeues > 0 {
		res.QueueMean = float64(st.QueueDelaySum/time.Duration(st.Dequeues)) / 1e6
	}
	return res, nil
}

// freePort returns a TCP port free on addr at the moment.
func freePort(addr netip.Addr) (int, error) {
	l, err := net.Listen("tcp", netip.AddrPortFrom(addr, 0).String())
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// iperf3Report is the part of iperf3's -J output used here.
type iperf3Report struct {
	Start struct {
		MSS int `json:"tcp_mss_default"`
	} `json:"start"`
	End struct {
		SumSent struct {
			Retransmits int64 `json:"retransmits"`
		} `json:"sum_sent"`
		SumReceived struct {
			BitsPerSecond float64 `json:"bits_per_second"`
		} `json:"sum_received"`
	} `json:"end"`
	Error string `json:"error"`
}

// runIperf3 runs an iperf3 server on the host's end of the shell and an
// iperf3 client inside it, sending for dur with controller cc.
func runIperf3(ctx context.Context, s *tunshell.Shell, cc string, dur time.Duration, res *Result) error {
	host := s.Addrs().Host
	port, err := freePort(host)
	if err != nil {
		return err
	}
	srv := exec.CommandContext(ctx, "iperf3", "-s", "-1", "--forceflush", "-B", host.String(), "-p", strconv.Itoa(port))
	out, err := srv.StdoutPipe()
	if err != nil {
		return err
	}
	if err := srv.Start(); err != nil {
		return fmt.Errorf("iperf3 server: %v", err)
	}
	defer func() { srv.Process.Kill(); srv.Wait() }()
	br := bufio.NewReader(out)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return fmt.Errorf("iperf3 server did not start listening: %v", err)
		}
		if strings.Contains(line, "Server listening") {
			break
		}
	}
	go io.Copy(io.Discard, br)
	cli := s.Command("iperf3", "-c", host.String(), "-p", strconv.Itoa(port), "-C", cc,
		"-t", strconv.FormatFloat(dur.Seconds(), 'f', -1, 64), "-J")
	var stdout strings.Builder
	cli.Stdout = &stdout
	if err := s.StartCommand(cli); err != nil {
		return fmt.Errorf("iperf3 client: %v", err)
	}
	werr := cli.Wait()
	var rep iperf3Report
	if err := json.Unmarshal([]byte(stdout.String()), &rep); err != nil {
		return fmt.Errorf("iperf3 client (%v): output is not its JSON report: %v", werr, err)
	}
	if rep.Error != "" || werr != nil {
		return fmt.Errorf("iperf3 client: %v %s", werr, rep.Error)
	}
	res.Goodput = rep.End.SumReceived.BitsPerSecond
	res.Retrans = rep.End.SumSent.Retransmits
	res.MSS = rep.Start.MSS
	if res.MSS == 0 {
		res.MSS = tunshell.DefaultMTU - 52 // IPv4 20 + TCP 20 + timestamps 12
	}
	return nil
}

// runRelay runs a cclab transfer through a UDP relay (the link model of
// rc) on loopback and returns the relay, still open for its statistics.
func runRelay(ctx context.Context, rc relay.Config, cc, rec string, dur time.Duration, res *Result) (*relay.Relay, error) {
	srv, stop, err := startServer(ctx, netip.MustParseAddr("127.0.0.1"))
	if err != nil {
		return nil, err
	}
	defer stop()
	rc.Listen, rc.Target = "127.0.0.1:0", srv.Addr().String()
	r, err := relay.New(rc)
	if err != nil {
		return nil, err
	}
	r.Start()
	if err := runClient(ctx, r.Addr().String(), nil, cc, rec, dur, res); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// startServer starts a cclab receiver (perf server) for one flow on addr.
func startServer(ctx context.Context, addr netip.Addr) (*perf.Server, func(), error) {
	srv, err := perf.NewServer(perf.ServerConfig{Listen: netip.AddrPortFrom(addr, 0).String(), Once: true})
	if err != nil {
		return nil, nil, err
	}
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(sctx) }()
	return srv, func() { cancel(); <-done; srv.Close() }, nil
}

// runCclab runs a cclab receiver on the host's end of the shell (address
// host) and a cclab sender whose socket do opens inside the shell.
func runCclab(ctx context.Context, host netip.Addr, do func(func() error) error, cc, rec string, dur time.Duration, res *Result) error {
	srv, stop, err := startServer(ctx, host)
	if err != nil {
		return err
	}
	defer stop()
	var ep *udp.Endpoint
	if err := do(func() (err error) {
		ep, err = udp.DialSocket(srv.Addr().String(), udp.Config{})
		return err
	}); err != nil {
		return err
	}
	defer ep.Close()
	return runClient(ctx, srv.Addr().String(), ep, cc, rec, dur, res)
}

// runClient runs a cclab sender to addr (on ep, or a socket of its own if
// ep is nil) with datagrams that fill MTU-sized IPv4 packets.
func runClient(ctx context.Context, addr string, ep *udp.Endpoint, cc, rec string, dur time.Duration, res *Result) error {
	r, err := perf.Run(ctx, perf.ClientConfig{Addr: addr, Duration: dur, CC: cc, Recovery: rec,
		Size: tunshell.DefaultMTU - 28, Endpoint: ep}) // IPv4 20 + UDP 8
	if err != nil {
		return err
	}
	if !r.End.Verified {
		return errors.New("cclab transfer: receiver's digest differs from the sender's")
	}
	res.Goodput = r.End.ThroughputBps
	res.Retrans = r.End.Retransmits
	res.MSS = r.End.MSS
	return nil
}

// header is the Markdown table's header.
const header = "| path (rate/RTT/queue/loss) | stack | cc | recovery | goodput | of capacity | retransmits | uplink drops | queue delay | host-limited | reader stalls (longest gap) |\n" +
	"| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n"

// stackNames are the table's names of the stacks.
var stackNames = map[string]string{"kernel": "kernel TCP (shell)", "cclab": "cclab (shell)", "relay": "cclab (UDP relay)"}

// row formats one result as a table row.
func row(r Result) string {
	rec := r.Recovery
	if r.Stack == "kernel" {
		rec = "Linux (SACK, RACK, PRR)"
	}
	host := r.Host
	if host == "" {
		host = "no"
	}
	return fmt.Sprintf("| %v | %s | %s | %s | %.2f Mbit/s | %.1f%% | %d | %d | %.1f ms | %s | %d (%.1f ms) |\n",
		r.Path, stackNames[r.Stack], r.CC, rec, r.Goodput/1e6, 100*r.Fraction(), r.Retrans, r.Drops, r.QueueMean,
		host, r.Stalls, float64(r.StallMax)/1e6)
}

// defaultPaths are the paths of docs/compat.md's table: a buffer of 1.5
// and of 0.3 bandwidth-delay products, a long thin path, and random loss.
var defaultPaths = []string{"20Mbit/40ms/droptail:100p", "20Mbit/40ms/droptail:20p", "10Mbit/100ms/droptail:84p", "20Mbit/40ms/droptail:100p/0.005"}

func main() {
	var paths []string
	flag.Func("path", "a path rate/rtt/queue[/loss] (repeatable; default: "+strings.Join(defaultPaths, ", ")+")", func(s string) error {
		if _, err := ParsePath(s); err != nil {
			return err
		}
		paths = append(paths, s)
		return nil
	})
	dur := flag.Duration("t", 10*time.Second, "duration of each transfer")
	ccs := flag.String("cc", "reno,cubic", "congestion controllers, comma-separated (names both iperf3 -C and cclab know)")
	stacks := flag.String("stacks", "kernel,cclab,relay", "stacks, comma-separated: kernel (iperf3 in the shell), cclab (package perf in the shell), relay (cclab through the UDP relay on loopback)")
	recs := flag.String("recovery", "newreno,prr:lostretx", "cclab's loss-recovery strategies, comma-separated (docs/recovery.md; a strategy's own parameters may follow it, as in newreno,rack:echo=cum,rtorearm); each gives a cclab row")
	flag.Parse()
	if len(paths) == 0 {
		paths = defaultPaths
	}
	for _, rec := range transport.Recoveries.SplitList(*recs) {
		if _, err := transport.ParseRecoverySpec(rec); err != nil {
			fmt.Fprintf(os.Stderr, "shellbench: -recovery: %v\n", err)
			os.Exit(2)
		}
	}
	if err := tunshell.Supported(); err != nil {
		fmt.Fprintf(os.Stderr, "shellbench: %v\n", err)
		os.Exit(1)
	}
	fmt.Print(header)
	failed := false
	for _, ps := range paths {
		p, _ := ParsePath(ps)
		for _, cc := range strings.Split(*ccs, ",") {
			for _, st := range strings.Split(*stacks, ",") {
				rl := transport.Recoveries.SplitList(*recs)
				if st == "kernel" {
					rl = rl[:1]
				}
				for _, rec := range rl {
					r, err := Measure(context.Background(), p, st, cc, rec, *dur)
					if err != nil {
						fmt.Fprintf(os.Stderr, "shellbench: %v %s %s %s: %v\n", p, st, cc, rec, err)
						failed = true
						continue
					}
					fmt.Print(row(r))
				}
			}
		}
	}
	if failed {
		os.Exit(1)
	}
}
