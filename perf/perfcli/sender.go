package perfcli

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
	"cclab/internal/hostlimit"
	"cclab/internal/units"
	"cclab/perf"
	"cclab/transport"
)

// byteFlag is a flag.Value parsed with units.ParseBytes ("100M", "1GiB");
// s keeps the text (for -iperf3-units).
type byteFlag struct {
	n int64
	s string
}

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
	b.n, b.s = n, s
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

// opts are the sender's flags.
type opts struct {
	addr, cc, recovery, mode, qlogDir, drop, pskFile string
	pskEncrypt                                       bool
	port, parallel, size, queue                      int
	bidir, jsonOut, reverse, ecn, udp, verbose       bool
	iperfUnits                                       bool
	seed                                             uint64
	verify                                           string
	nBytes                                           byteFlag
	dur, omit, interval, minRTO, timeout, on, off    durFlag
	pacingQuantum                                    durFlag
	rate                                             float64
	recv                                             transport.Config
}

// newFlags registers the sender's flags, with iperf3's names as aliases.
func newFlags(stdout, stderr io.Writer) (*flag.FlagSet, *opts) {
	fs := flag.NewFlagSet("sender", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := &opts{interval: durFlag{time.Second}, pacingQuantum: durFlag{transport.DefaultLivePacingQuantum}}
	fs.StringVar(&o.addr, "c", "", "receiver address host[:port] (default port 5301)")
	fs.StringVar(&o.cc, "cc", transport.DefaultCC, "congestion controller spec NAME[:key=value,...] at the sending side: "+strings.Join(ccalgo.Registry.Names(), ", "))
	fs.StringVar(&o.recovery, "recovery", transport.DefaultRecovery, "stream mode: loss-recovery strategy NAME[:key=value,...] at the sending side: "+strings.Join(transport.Recoveries.Names(), ", "))
	fs.IntVar(&o.port, "p", 0, "receiver port (default 5301, or the port in -c)")
	fs.IntVar(&o.parallel, "P", 1, "stream mode: parallel flows, each its own connection (summed and per-flow results)")
	fs.BoolVar(&o.bidir, "bidir", false, "stream mode: also as many flows in the other direction at once (the receiver must allow reverse flows)")
	fs.BoolVar(&o.jsonOut, "J", false, "print the result as JSON in iperf3's schema (start, intervals, end; cclab's own fields under cclab)")
	fs.StringVar(&o.qlogDir, "qlog", "", "write a qlog JSON-SEQ trace of the flow into this directory")
	fs.BoolVar(&o.reverse, "R", false, "stream mode: reverse mode: the receiver sends (it must run with -allow-reverse, and -psk-file unless on loopback)")
	fs.BoolVar(&o.ecn, "ecn", false, "negotiate ECN: send ECT(0) and react to ECN-Echo (RFC 3168)")
	fs.IntVar(&o.size, "size", 0, "datagram (UDP payload) size, bytes, fixed (default: discovered from 1200 up to the route's MTU, RFC 8899)")
	fs.Uint64Var(&o.seed, "seed", 0, "stream mode: seed of the generated stream (0: random)")
	fs.StringVar(&o.verify, "verify", perf.VerifyPattern, "stream mode: how the receiving side verifies the stream: pattern (compare every byte with the pattern) or sha256 (digests)")
	fs.StringVar(&o.mode, "mode", "stream", "stream (reliable, TCP-like) or datagram (unreliable, DCCP-like; see docs/dccp.md)")
	fs.BoolVar(&o.udp, "udp", false, "datagram mode, as iperf3's -u (same as -mode datagram)")
	fs.IntVar(&o.queue, "queue", 0, "datagram mode: send queue limit, datagrams (default 64)")
	fs.StringVar(&o.drop, "drop", "newest", "datagram mode: which datagram a full send queue drops, newest or oldest")
	fs.StringVar(&o.pskFile, "psk-file", "", "pre-shared key file: the first key authenticates the flows (AES-128-GMAC on every packet, both modes) and, with -R, answers the receiver's challenge (see docs/security.md)")
	fs.BoolVar(&o.pskEncrypt, "psk-encrypt", false, "with -psk-file: encrypt the packets too (AES-128-GCM), not only authenticate them")
	fs.BoolVar(&o.verbose, "verbose", false, "print the version, the host and progress messages on stderr, as iperf3's -V")
	fs.BoolVar(&o.iperfUnits, "iperf3-units", false, "-n's K, M, G, T are powers of 2^10, as iperf3's (-n 20M = 20 MiB); without it they are powers of 10^3")
	fs.Var(cli.Rate(&o.rate), "rate", "datagram mode: application rate, payload bits/s with units (10Mbit), 0: greedy, needed by -cc none; stream mode: a cap on the sending application's rate, as iperf3's -b for TCP")
	fs.Var(&o.on, "on", "datagram mode: ON period of an ON/OFF source (with -off)")
	fs.Var(&o.off, "off", "datagram mode: OFF period of an ON/OFF source (with -on)")
	fs.Var(&o.pacingQuantum, "pacing-quantum", "datagram mode: release at one wake-up, and send in one batch, every datagram due within this time (as iperf3's --pacing-timer); 0: one wake-up per datagram; at most "+transport.MaxPacingQuantum.String())
	fs.Var(&o.nBytes, "n", "stream mode: bytes to send, with units (100M, 1G, 256MiB); overrides -t")
	fs.Var(&o.dur, "t", "seconds (or a duration such as 30s) to send if -n is not given (default 10s)")
	fs.Var(&o.interval, "i", "interval report every INTERVAL (e.g. 1s, 0.5); in text and -J; 0: none")
	fs.Var(&o.omit, "O", "stream mode: omit the first N seconds (or a duration) from the summary's goodput; their intervals are marked omitted")
	fs.Var(&o.minRTO, "min-rto", "stream mode: minimum retransmission timeout, e.g. 200ms (default: transport's 200ms)")
	perf.ReceiveFlags(fs, &o.recv, "window", transport.DefaultMaxDatagram)
	fs.Var(&o.timeout, "connect-timeout", "give up if the receiver does not answer within this time (default 10s)")
	cli.AddVersion(fs, stdout)
	for name, aliases := range map[string][]string{
		"c": {"client"}, "p": {"port"}, "P": {"parallel"}, "R": {"reverse"}, "J": {"json"}, "t": {"time"}, "n": {"bytes"},
		"i": {"interval"}, "O": {"omit"}, "udp": {"u"}, "rate": {"b", "bitrate"}, "size": {"l", "length"}, "window": {"w"},
		"verbose": {"V"}, "version": {"v"},
	} {
		cli.Alias(fs, name, aliases...)
	}
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: sender -c HOST[:PORT] [-n BYTES | -t DURATION] [flags]\n\nflags:\n")
		fs.PrintDefaults()
	}
	return fs, o
}

// streamOnly and dgramOnly are the flags of one mode; given in the other,
// each is an error naming it.
var (
	streamOnly = []string{"n", "P", "R", "bidir", "recovery", "min-rto", "O", "seed", "verify", "ack-every", "delayed-ack", "window", "iperf3-units"}
	dgramOnly  = []string{"on", "off", "queue", "drop", "pacing-quantum"}
)

// Sender runs the sender (cmd/sender, cclab perf -c) with its command-line
// arguments and returns the exit status: 0 on a verified transfer, 1 when
// the receiver is unreachable, refuses, the transfer fails or verification
// fails, 2 on bad flags.
func Sender(args []string, stdout, stderr io.Writer) int {
	fs, o := newFlags(stdout, stderr)
	if code, ok := cli.Parse(fs, args); !ok {
		return code
	}
	if err := o.check(fs); err != nil {
		fmt.Fprintf(stderr, "sender: %v\n", err)
		return 2
	}
	if o.verbose {
		fmt.Fprintln(stderr, buildinfo.Read().Line("sender"))
	}
	var keys *perf.Keys
	if o.pskEncrypt && o.pskFile == "" {
		fmt.Fprintln(stderr, "sender: -psk-encrypt needs -psk-file (the key that authenticates and encrypts)")
		return 2
	}
	if o.pskFile != "" {
		var err error
		if keys, err = perf.LoadKeyFile(o.pskFile); err != nil {
			fmt.Fprintf(stderr, "sender: %v\n", err)
			return 2
		}
	}
	if o.mode == "datagram" {
		ccSpec := o.cc
		if !cli.IsSet(fs, "cc") {
			ccSpec = transport.DefaultDgramCC
		}
		return runDgram(perf.DgramClientConfig{Addr: o.addr, Duration: o.dur.d, CC: ccSpec, Size: o.size, Rate: o.rate,
			On: o.on.d, Off: o.off.d, SendQueue: o.queue, DropPolicy: o.drop, ECN: o.ecn, Interval: o.interval.d, Timeout: o.timeout.d,
			PacingQuantum: o.pacingQuantum.d, QlogDir: o.qlogDir, Keys: keys, Encrypt: o.pskEncrypt},
			o.jsonOut, stdout, stderr)
	}
	cfg := perf.ClientConfig{
		Addr: o.addr, Bytes: o.nBytes.n, Duration: o.dur.d, CC: o.cc, Recovery: o.recovery, RateCap: o.rate,
		MinRTO: o.minRTO.d, ECN: o.ecn, Size: o.size, Reverse: o.reverse, Seed: o.seed, Verify: o.verify, Receive: o.recv,
		Interval: o.interval.d, Omit: o.omit.d, QlogDir: o.qlogDir, Timeout: o.timeout.d, Keys: keys, Encrypt: o.pskEncrypt,
	}
	if o.verbose {
		cfg.Logf = func(format string, args ...any) { fmt.Fprintf(stderr, "sender: "+format+"\n", args...) }
	}
	if err := cfg.Validate(); err != nil {
		fmt.Fprintf(stderr, "sender: %v\n", err)
		return 2
	}
	return runStream(perf.TestConfig{Flow: cfg, Parallel: o.parallel, Bidir: o.bidir}, o.jsonOut, stdout, stderr)
}

// check validates the flags once parsed: ranges, the mode, the flags of
// the other mode (an error naming the flag), -p into the address (both
// modes), and -n in iperf3's units.
func (o *opts) check(fs *flag.FlagSet) error {
	if err := checkFlags(fs, o.dur.d, o.timeout.d, o.interval.d, o.minRTO.d, o.queue); err != nil {
		return err
	}
	if o.udp {
		if cli.IsSet(fs, "mode") && o.mode != "datagram" {
			return fmt.Errorf("-u with -mode %s: -u is datagram mode", o.mode)
		}
		o.mode = "datagram"
	}
	switch o.mode {
	case "stream":
		if err := cli.Refuse(fs, "datagram mode only (-u or -mode datagram)", dgramOnly...); err != nil {
			return err
		}
	case "datagram":
		if err := cli.Refuse(fs, "stream mode only, not in datagram mode", streamOnly...); err != nil {
			return err
		}
	default:
		return fmt.Errorf("-mode %q: want stream or datagram", o.mode)
	}
	if cli.IsSet(fs, "p") {
		a, err := cli.WithPort("p", o.addr, o.port)
		if err != nil {
			return err
		}
		o.addr = a
	}
	if o.parallel < 1 || o.parallel > perf.MaxFlows/2 {
		return fmt.Errorf("-P %d: want 1..%d flows", o.parallel, perf.MaxFlows/2)
	}
	if o.iperfUnits && o.nBytes.s != "" {
		n, err := units.ParseBytesIEC(o.nBytes.s)
		if err != nil {
			return fmt.Errorf("-n %s: %v", o.nBytes.s, err)
		}
		o.nBytes.n = n
	}
	return nil
}

// runStream runs a stream-mode test and prints its intervals and summary,
// or its JSON.
func runStream(tc perf.TestConfig, jsonOut bool, stdout, stderr io.Writer) int {
	cfg := tc.Flow
	several := tc.Parallel > 1 || tc.Bidir
	if !jsonOut && cfg.Interval > 0 {
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
	if !jsonOut {
		fmt.Fprintln(stdout, startLine(tc))
	}
	host := perf.HostSince(hostVersion(), buildinfo.Read().System())
	res, err := perf.RunTest(ctx, tc)
	if jsonOut {
		if res != nil {
			writeJSON(stdout, perf.ToIperf3(res, host(), err))
		} else {
			writeJSON(stdout, jsonError{err.Error()}) // failed before the transfer started (as iperf3 -J: an error object)
		}
	} else if res != nil && (err == nil || several) {
		// With several flows, one failing does not hide the others: each
		// flow's line, the failed ones' errors, and the sums.
		writeSummaries(stdout, res, several)
	}
	if res != nil {
		warnHost(stderr, res.End.Host)
	}
	if err != nil {
		fmt.Fprintf(stderr, "sender: %v\n", err)
		return 1
	}
	return 0
}

// startLine is the text output's first line.
func startLine(tc perf.TestConfig) string {
	cfg := tc.Flow
	what := fmt.Sprintf("%v", cfg.Duration)
	if cfg.Bytes > 0 {
		what = perf.FormatSize(cfg.Bytes)
	}
	dir := "sending"
	if cfg.Reverse {
		dir = "receiving (reverse)"
	}
	if tc.Bidir {
		dir += " and the other way (bidir)"
	}
	flows := ""
	if tc.Parallel > 1 {
		flows = fmt.Sprintf(", %d parallel flows", tc.Parallel)
	}
	if cfg.RateCap > 0 {
		flows += ", at most " + units.FormatRate(cfg.RateCap)
	}
	return fmt.Sprintf("cclab sender: %s %s to %s, cc=%s recovery=%s%s", dir, what, cfg.Addr, cfg.CC, cfg.Recovery, flows)
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

// warnHost prints the one-line warning of a host-limited run
// (docs/sender.md, "Host-limited runs"), nothing otherwise.
func warnHost(w io.Writer, h *hostlimit.Report) {
	if msg := h.Warning(); msg != "" {
		fmt.Fprintf(w, "sender: %s\n", msg)
	}
}

// writeSummaries prints the end summary: per flow and the sums with
// several flows, as iperf3 does; a failed flow's line (if it connected: what
// it measured) is followed by its error.
func writeSummaries(w io.Writer, res *perf.Result, several bool) {
	if !several {
		perf.WriteSummary(w, res.End)
		return
	}
	for i, f := range res.Flows {
		label := perf.FlowLabel(i+1, false)
		if f.Start.ConnID != "" || f.End.Error == "" {
			perf.WriteSummaryLabel(w, label, f.End)
		}
		if f.End.Error != "" {
			fmt.Fprintf(w, "%serror: %s\n", label, f.End.Error)
		}
	}
	perf.WriteSummaryLabel(w, perf.FlowLabel(0, false), res.End)
	if res.BidirReverse != nil {
		perf.WriteSummaryLabel(w, perf.FlowLabel(0, true), res.BidirReverse.End)
	}
}
