// Command sender is cclab's bulk-transfer client (like iperf3 -c): it opens a
// connection to a cmd/receiver, sends a generated stream for -n bytes or -t
// seconds with the chosen congestion controller and loss-recovery strategy,
// and reports goodput, retransmissions, RTTs and whether the receiver's
// digest of the delivered stream equals the sender's. See docs/sender.md.
//
// Exit status: 0 on a verified transfer, 1 when the receiver is unreachable,
// refuses, the transfer fails or verification fails, 2 on bad flags.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

	"cclab/ccalgo"
	"cclab/internal/buildinfo"
	"cclab/internal/cli"
	"cclab/internal/units"
	"cclab/perf"
	"cclab/transport"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// byteFlag is a flag.Value parsed with units.ParseBytes ("100M", "1GiB").
type byteFlag struct{ n int64 }

func (b *byteFlag) String() string {
	if b == nil || b.n == 0 {
		return ""
	}
	return units.FormatBytes(b.n)
}

func (b *byteFlag) Set(s string) error {
	n, err := units.ParseBytes(s)
	if err != nil {
		return err
	}
	if n <= 0 {
		return errors.New("must be positive")
	}
	b.n = n
	return nil
}

// durFlag is a flag.Value parsed with units.ParseDuration; a bare number is seconds.
type durFlag struct{ d time.Duration }

func (d *durFlag) String() string {
	if d == nil || d.d == 0 {
		return ""
	}
	return d.d.String()
}

func (d *durFlag) Set(s string) error {
	var f float64
	if _, err := fmt.Sscanf(s, "%g", &f); err == nil && fmt.Sprint(f) == s {
		d.d = time.Duration(f * float64(time.Second))
		return nil
	}
	v, err := units.ParseDuration(s)
	if err != nil {
		return err
	}
	d.d = v
	return nil
}

// run is main with its environment passed in, for tests.
func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("sender", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		addr     = fs.String("c", "", "receiver address host[:port] (default port 5301)")
		nBytes   byteFlag
		dur      durFlag
		cc       = fs.String("cc", transport.DefaultCC, "congestion controller spec NAME[:key=value,...] at the sending side: "+strings.Join(ccalgo.Registry.Names(), ", "))
		recovery = fs.String("recovery", transport.DefaultRecovery, "loss-recovery strategy NAME[:key=value,...] at the sending side: "+strings.Join(transport.Recoveries.Names(), ", "))
		port     = fs.Int("p", 0, "receiver port (default 5301, or the port in -c)")
		parallel = fs.Int("P", 1, "parallel flows, each its own connection (summed and per-flow results)")
		bidir    = fs.Bool("bidir", false, "also as many flows in the other direction at once (the receiver must allow reverse flows)")
		omit     durFlag
		interval durFlag
		jsonOut  = fs.Bool("J", false, "print the result as JSON (start, intervals, end)")
		qlogDir  = fs.String("qlog", "", "write a qlog JSON-SEQ trace of the flow into this directory")
		reverse  = fs.Bool("R", false, "reverse mode: the receiver sends (it must run with -allow-reverse, and -psk-file unless on loopback)")
		ecnOn    = fs.Bool("ecn", false, "negotiate ECN: send ECT(0) and react to ECN-Echo (RFC 3168)")
		size     = fs.Int("size", 0, "max datagram (UDP payload) size, bytes (default 1200)")
		minRTO   durFlag
		timeout  durFlag
		seed     = fs.Uint64("seed", 0, "seed of the generated stream (0: random)")
		mode     = fs.String("mode", "stream", "stream (reliable, TCP-like) or datagram (unreliable, DCCP-like; see docs/dccp.md)")
		rate     float64
		on, off  durFlag
		queue    = fs.Int("queue", 0, "datagram mode: send queue limit, datagrams (default 64)")
		drop     = fs.String("drop", "newest", "datagram mode: which datagram a full send queue drops, newest or oldest")
		pskFile  = fs.String("psk-file", "", "reverse mode: pre-shared key file; the first key answers the receiver's challenge (see docs/security.md)")
	)
	fs.Var(cli.Rate(&rate), "rate", "datagram mode: application rate, payload bits/s with units (10Mbit); 0: greedy; needed by -cc none")
	fs.Var(&on, "on", "datagram mode: ON period of an ON/OFF source (with -off)")
	fs.Var(&off, "off", "datagram mode: OFF period of an ON/OFF source (with -on)")
	fs.Var(&nBytes, "n", "bytes to send, with units (100M, 1G, 256MiB); overrides -t")
	fs.Var(&dur, "t", "seconds (or a duration such as 30s) to send if -n is not given (default 10s)")
	interval.d = time.Second
	fs.Var(&interval, "i", "interval report every INTERVAL (e.g. 1s, 0.5); in text and -J; 0: none")
	fs.Var(&omit, "O", "omit the first N seconds (or a duration) from the summary's goodput; their intervals are marked omitted")
	fs.Var(&minRTO, "min-rto", "minimum retransmission timeout, e.g. 200ms (default: transport's 200ms)")
	var recvCfg transport.Config
	perf.ReceiveFlags(fs, &recvCfg, "window", transport.DefaultMaxDatagram)
	fs.Var(&timeout, "connect-timeout", "give up if the receiver does not answer within this time (default 10s)")
	cli.AddVersion(fs, stdout)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: sender -c HOST[:PORT] [-n BYTES | -t DURATION] [flags]\n\nflags:\n")
		fs.PrintDefaults()
	}
	if code, ok := cli.Parse(fs, args); !ok {
		return code
	}
	if err := checkFlags(fs, dur.d, timeout.d, interval.d, minRTO.d, *queue); err != nil {
		fmt.Fprintf(stderr, "sender: %v\n", err)
		return 2
	}
	switch *mode {
	case "stream":
	case "datagram":
		ccSpec := *cc
		if !cli.IsSet(fs, "cc") {
			ccSpec = transport.DefaultDgramCC
		}
		return runDgram(perf.DgramClientConfig{Addr: *addr, Duration: dur.d, CC: ccSpec, Size: *size, Rate: rate,
			On: on.d, Off: off.d, SendQueue: *queue, DropPolicy: *drop, ECN: *ecnOn, Interval: interval.d, Timeout: timeout.d,
			QlogDir: *qlogDir},
			*jsonOut, stdout, stderr)
	default:
		fmt.Fprintf(stderr, "sender: -mode %q: want stream or datagram\n", *mode)
		return 2
	}
	if cli.IsSet(fs, "p") {
		a, err := cli.WithPort("p", *addr, *port)
		if err != nil {
			fmt.Fprintf(stderr, "sender: %v\n", err)
			return 2
		}
		*addr = a
	}
	if *parallel < 1 || *parallel > perf.MaxFlows/2 {
		fmt.Fprintf(stderr, "sender: -P %d: want 1..%d flows\n", *parallel, perf.MaxFlows/2)
		return 2
	}
	cfg := perf.ClientConfig{
		Addr: *addr, Bytes: nBytes.n, Duration: dur.d, CC: *cc, Recovery: *recovery,
		MinRTO: minRTO.d, ECN: *ecnOn, Size: *size, Reverse: *reverse, Seed: *seed, Receive: recvCfg,
		Interval: interval.d, Omit: omit.d, QlogDir: *qlogDir, Timeout: timeout.d,
	}
	if err := cfg.Validate(); err != nil {
		fmt.Fprintf(stderr, "sender: %v\n", err)
		return 2
	}
	if *pskFile != "" {
		keys, err := perf.LoadKeyFile(*pskFile)
		if err != nil {
			fmt.Fprintf(stderr, "sender: %v\n", err)
			return 2
		}
		cfg.Keys = keys
	}
	tc := perf.TestConfig{Flow: cfg, Parallel: *parallel, Bidir: *bidir}
	several := *parallel > 1 || *bidir
	if !*jsonOut && cfg.Interval > 0 {
		header := false
		tc.OnInterval = func(flow int, reverse bool, iv perf.Interval) {
			label := ""
			if several {
				label = perf.FlowLabel(flow, reverse != cfg.Reverse)
			}
			if !header {
				perf.WriteIntervalHeaderLabel(stdout, label)
				header = true
			}
			perf.WriteIntervalLabel(stdout, label, iv)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if !*jsonOut {
		what := fmt.Sprintf("%v", cfg.Duration)
		if cfg.Bytes > 0 {
			what = units.FormatBytes(cfg.Bytes)
		}
		dir := "sending"
		if cfg.Reverse {
			dir = "receiving (reverse)"
		}
		if *bidir {
			dir += " and the other way (bidir)"
		}
		flows := ""
		if *parallel > 1 {
			flows = fmt.Sprintf(", %d parallel flows", *parallel)
		}
		fmt.Fprintf(stdout, "cclab sender: %s %s to %s, cc=%s recovery=%s%s\n", dir, what, cfg.Addr, cfg.CC, cfg.Recovery, flows)
	}
	host := perf.HostSince(hostVersion(), buildinfo.Read().System())
	res, err := perf.RunTest(ctx, tc)
	if *jsonOut {
		if res != nil {
			writeJSON(stdout, perf.ToIperf3(res, host(), err))
		} else {
			writeJSON(stdout, jsonError{err.Error()}) // failed before the transfer started (as iperf3 -J: an error object)
		}
	} else if res != nil && err == nil {
		writeSummaries(stdout, res, several)
	}
	if err != nil {
		fmt.Fprintf(stderr, "sender: %v\n", err)
		return 1
	}
	return 0
}

// Bounds of the sender's durations and counts (docs/sender.md).
const (
	maxDuration       = 24 * time.Hour   // -t
	maxConnectTimeout = 10 * time.Minute // -connect-timeout
	maxMinRTO         = time.Minute      // -min-rto
	maxQueue          = 1 << 16          // -queue, datagrams
)

// checkFlags refuses durations and counts out of their ranges, including
// explicit zeros that would otherwise mean the default (-t 0 is not 10 s).
func checkFlags(fs *flag.FlagSet, t, connect, interval, minRTO time.Duration, queue int) error {
	switch {
	case cli.IsSet(fs, "t") && (t <= 0 || t > maxDuration):
		return fmt.Errorf("-t %v: must be positive and at most %v", t, maxDuration)
	case cli.IsSet(fs, "connect-timeout") && (connect <= 0 || connect > maxConnectTimeout):
		return fmt.Errorf("-connect-timeout %v: must be positive and at most %v", connect, maxConnectTimeout)
	case interval < 0 || interval > maxDuration:
		return fmt.Errorf("-i %v: must be between 0 (off) and %v", interval, maxDuration)
	case cli.IsSet(fs, "min-rto") && (minRTO <= 0 || minRTO > maxMinRTO):
		return fmt.Errorf("-min-rto %v: must be positive and at most %v", minRTO, maxMinRTO)
	case cli.IsSet(fs, "queue") && (queue < 1 || queue > maxQueue):
		return fmt.Errorf("-queue %d: must be between 1 and %d datagrams", queue, maxQueue)
	}
	return nil
}

// jsonError is -J's output when the test did not start.
type jsonError struct {
	Error string `json:"error"`
}

// writeJSON writes v indented, as iperf3 -J does.
func writeJSON(w io.Writer, v any) {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

// hostVersion is -J's start.version.
func hostVersion() string { return "cclab " + buildinfo.Short() }

// writeSummaries prints the end summary: per flow and the sums with
// several flows, as iperf3 does.
func writeSummaries(w io.Writer, res *perf.Result, several bool) {
	if !several {
		perf.WriteSummary(w, res.End)
		return
	}
	for i, f := range res.Flows {
		perf.WriteSummaryLabel(w, perf.FlowLabel(i+1, false), f.End)
	}
	perf.WriteSummaryLabel(w, perf.FlowLabel(0, false), res.End)
	if res.BidirReverse != nil {
		perf.WriteSummaryLabel(w, perf.FlowLabel(0, true), res.BidirReverse.End)
	}
}
