package perfcli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"cclab/internal/buildinfo"
	"cclab/internal/cli"
	"cclab/perf"
	"cclab/transport"
	"cclab/transport/udp"
)

// receiverOpts are the receiver's flags.
type receiverOpts struct {
	listen, qlogDir, pskFile, reverseCC                         string
	port, maxRevFlows                                           int
	once, jsonOut, allowReverse, quiet, reverseCCP, allowUnauth bool
	oneGoroutine                                                bool // -one-goroutine: udp.Config.OneGoroutine
	verbose                                                     *bool
	resetKeyFile                                                *string
	maxRevBytes                                                 int64
	maxRevDur                                                   time.Duration
	interval                                                    durFlag
	defaults                                                    transport.Config
	limits                                                      transport.EndpointConfig // admission limits (docs/security.md)
}

// newReceiverFlags registers the receiver's flags, with iperf3's names as
// aliases.
func newReceiverFlags(stdout, stderr io.Writer) (*flag.FlagSet, *receiverOpts) {
	fs := flag.NewFlagSet("receiver", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := &receiverOpts{maxRevBytes: perf.DefaultMaxReverseBytes, maxRevDur: perf.DefaultMaxReverseDuration, interval: durFlag{time.Second}}
	fs.StringVar(&o.listen, "listen", fmt.Sprintf(":%d", perf.DefaultPort), "UDP address to listen on")
	fs.IntVar(&o.port, "p", 0, "UDP port to listen on (sets the port of -listen; default 5301)")
	fs.BoolVar(&o.once, "1", false, "exit after serving one test (one flow, or every flow of a sender's -P/--bidir test)")
	fs.BoolVar(&o.jsonOut, "J", false, "print one JSON object per finished test (iperf3 -s -J's schema)")
	fs.BoolVar(&o.allowReverse, "allow-reverse", false, "serve reverse (-R) requests, i.e. send to clients that ask")
	fs.StringVar(&o.qlogDir, "qlog", "", "write a qlog JSON-SEQ trace per flow into this directory")
	fs.BoolVar(&o.quiet, "q", false, "do not print progress messages on stderr")
	fs.StringVar(&o.pskFile, "psk-file", "", "pre-shared keys: every flow must be authenticated with one of them (AES-128-GCM data path) and a reverse request must prove one (HMAC-SHA256 challenge); without it, flows are unauthenticated and reverse flows are served only to loopback clients")
	fs.BoolVar(&o.allowUnauth, "allow-unauthenticated", false, "with -psk-file: also serve flows without a key (unauthenticated) beside the authenticated ones")
	fs.IntVar(&o.maxRevFlows, "max-reverse-flows", perf.DefaultMaxReverseFlows, "reverse flows served at once, 1..1024")
	fs.StringVar(&o.reverseCC, "reverse-cc", "", "comma-separated controllers a reverse request may name (default: every registered one)")
	fs.BoolVar(&o.reverseCCP, "reverse-cc-params", false, "let a reverse request set controller parameters (e.g. reno:iw=20); off: names only")
	fs.Var(cli.Bytes(&o.maxRevBytes), "max-reverse-bytes", "largest reverse transfer a request may ask for, bytes with units (1GiB)")
	fs.Var(cli.Duration(&o.maxRevDur), "max-reverse-seconds", "longest reverse flow, a duration (60s) up to 3600s; a bytes request running longer is aborted")
	fs.BoolVar(&o.oneGoroutine, "one-goroutine", false, "run the socket driver in one goroutine that reads, runs the timers and writes (Linux; far fewer context switches per datagram batch, e.g. datagram mode at a fixed rate, but no reader/writer parallelism for fast stream flows); CCLAB_ONE_GOROUTINE=1 or 0 overrides it")
	fs.Var(&o.interval, "i", "interval report of each flow every INTERVAL seconds (e.g. 1, 0.5, 500ms), in text and -J's intervals; 0: none")
	o.defaults = transport.DefaultConfig()
	// Accept what the sender chooses with -size: a connection uses the
	// smaller of the two ends' MaxDatagram.
	o.defaults.MaxDatagram = perf.MaxSize
	perf.ReceiveFlags(fs, &o.defaults, "window", perf.MaxSize)
	perf.AdmissionFlags(fs, &o.limits)
	o.resetKeyFile = perf.ResetKeyFlag(fs)
	cli.AddVersion(fs, stdout)
	o.verbose = iperfFlags(fs)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: receiver [-listen ADDR] [-1] [-J] [-i SECONDS] [-allow-reverse [-psk-file FILE]] [-qlog DIR]\n\nflags:\n")
		fs.PrintDefaults()
	}
	return fs, o
}

// Receiver runs the receiver (cmd/receiver, cclab perf -s) with its
// command-line arguments until it is interrupted (or, with -1, has served
// one test) and returns the exit status: 0, 1 on a failure to listen or
// serve, 2 on bad flags. ready (if not nil) receives the bound address once
// listening.
func Receiver(args []string, stdout, stderr io.Writer, ready chan<- string) int {
	fs, o := newReceiverFlags(stdout, stderr)
	if code, ok := cli.Parse(fs, args); !ok {
		return code
	}
	if *o.verbose {
		fmt.Fprintln(stderr, buildinfo.Read().Line("receiver"))
	}
	keys, err := o.check(fs)
	if err != nil {
		fmt.Fprintf(stderr, "receiver: %v\n", err)
		return 2
	}
	out := &receiverOutput{stdout: stdout, stderr: stderr, json: o.jsonOut, js: newReceiverJSON(stdout)}
	srv, err := perf.NewServer(o.serverConfig(keys, out))
	if err != nil {
		fmt.Fprintf(stderr, "receiver: %v\n", err)
		if errors.Is(err, perf.ErrConfig) {
			return 2
		}
		return 1
	}
	defer srv.Close()
	if !o.quiet {
		fmt.Fprintln(stderr, listening(srv, o.allowReverse, keys))
	}
	if ready != nil {
		ready <- srv.Addr().String()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := srv.Serve(ctx); err != nil {
		fmt.Fprintf(stderr, "receiver: %v\n", err)
		return 1
	}
	return 0
}

// check validates the flags once parsed (ranges, -p into -listen), loads
// the reset key into the limits and returns the pre-shared keys of
// -psk-file (nil without it).
func (o *receiverOpts) check(fs *flag.FlagSet) (*perf.Keys, error) {
	if cli.IsSet(fs, "p") {
		a, err := cli.WithPort("p", o.listen, o.port)
		if err != nil {
			return nil, err
		}
		o.listen = a
	}
	switch d := o.maxRevDur; {
	case o.maxRevBytes <= 0:
		return nil, fmt.Errorf("-max-reverse-bytes %d: must be positive", o.maxRevBytes)
	case d <= 0 || d > perf.MaxReverseSeconds*time.Second:
		return nil, fmt.Errorf("-max-reverse-seconds %v: must be between 1ns and %ds", d, perf.MaxReverseSeconds)
	case o.maxRevFlows < 1 || o.maxRevFlows > 1024:
		return nil, fmt.Errorf("-max-reverse-flows %d: must be between 1 and 1024", o.maxRevFlows)
	case o.interval.d < 0 || o.interval.d > maxDuration:
		return nil, fmt.Errorf("-i %v: must be between 0 (off) and %v", o.interval.d, maxDuration)
	}
	if err := perf.CheckLimits(o.limits); err != nil {
		return nil, err
	}
	resetKey, err := perf.LoadResetKey(*o.resetKeyFile)
	if err != nil {
		return nil, err
	}
	o.limits.ResetKey = resetKey
	if o.pskFile == "" {
		return nil, nil
	}
	return perf.LoadKeyFile(o.pskFile)
}

// serverConfig is the server's configuration from the flags, reporting
// to out.
func (o *receiverOpts) serverConfig(keys *perf.Keys, out *receiverOutput) perf.ServerConfig {
	var ccList []string
	if o.reverseCC != "" {
		ccList = strings.Split(o.reverseCC, ",")
	}
	cfg := perf.ServerConfig{
		Listen: o.listen, Defaults: o.defaults, AllowReverse: o.allowReverse, Once: o.once, QlogDir: o.qlogDir,
		Keys: keys, AllowUnauthenticated: o.allowUnauth, MaxReverseBytes: o.maxRevBytes, MaxReverseDuration: o.maxRevDur, MaxReverseFlows: o.maxRevFlows,
		ReverseCC: ccList, ReverseCCParams: o.reverseCCP, Driver: udp.Config{Endpoint: o.limits, OneGoroutine: o.oneGoroutine},
		Interval: o.interval.d, OnFlow: out.flow, OnTest: out.test, OnInterval: out.interval,
	}
	if !o.quiet {
		cfg.Logf = out.logf
	}
	return cfg
}

// receiverOutput writes the receiver's reports, text or -J's JSON, one at
// a time (the server calls it from the flows' goroutines).
type receiverOutput struct {
	mu             sync.Mutex
	stdout, stderr io.Writer
	json           bool
	js             *receiverJSON
}

func (r *receiverOutput) flow(s perf.FlowSummary) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if msg := s.Host.Warning(); msg != "" {
		fmt.Fprintf(r.stderr, "receiver: [%s] %s\n", s.ConnID, msg)
	}
	if r.json {
		r.js.flow(s)
		return
	}
	writeSummary(r.stdout, s)
}

func (r *receiverOutput) test(t perf.TestSummary) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.json {
		r.js.test(t)
		return
	}
	writeTestSummary(r.stdout, t)
}

// interval prints a flow's interval report (text only: -J's are in the
// test's document).
func (r *receiverOutput) interval(iv perf.FlowInterval) {
	if r.json {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	writeInterval(r.stdout, iv)
}

func (r *receiverOutput) logf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	fmt.Fprintf(r.stderr, "receiver: "+format+"\n", args...)
}

// writeInterval prints one interval line of a flow, as iperf3 -s does:
// the flow, the interval, bytes and rate; the window and RTT where this
// side sends (reverse); jitter and loss in datagram mode.
func writeInterval(w io.Writer, f perf.FlowInterval) {
	iv := f.RecvInterval
	fmt.Fprintf(w, "[%s] %7.2f-%-7.2f s %9.2f MB %9.2f Mbit/s", f.ConnID, iv.Start, iv.End, float64(iv.Bytes)/1e6, iv.BitsPerSec/1e6)
	switch {
	case f.Mode == perf.ModeDatagram:
		total := iv.Datagrams + iv.LostNetwork
		pct := 0.0
		if total > 0 {
			pct = 100 * float64(iv.LostNetwork) / float64(total)
		}
		fmt.Fprintf(w, "  jitter %.3f ms  lost %d/%d (%.2g%%)", iv.Jitterms, iv.LostNetwork, total, pct)
	case f.Reverse:
		fmt.Fprintf(w, "  sent: retrans %d  cwnd %.1f kB  srtt %.3f ms", iv.Retransmits, float64(iv.Cwnd)/1e3, iv.SRTTms)
	}
	fmt.Fprintln(w)
}

// listening is the line that says the receiver is ready.
func listening(srv *perf.Server, allowReverse bool, keys *perf.Keys) string {
	rev := ""
	switch {
	case keys != nil && allowReverse:
		rev = fmt.Sprintf(" (flows authenticated with %d pre-shared key(s); reverse mode allowed to their holders)", keys.Len())
	case keys != nil:
		rev = fmt.Sprintf(" (flows authenticated with %d pre-shared key(s))", keys.Len())
	case allowReverse:
		rev = " (reverse mode allowed to loopback clients only: no -psk-file)"
	}
	return fmt.Sprintf("receiver: listening on %v%s", srv.Addr(), rev)
}

// iperfFlags registers iperf3's server flags: -s, -V, and iperf3's names of
// the receiver's flags as aliases.
func iperfFlags(fs *flag.FlagSet) (verbose *bool) {
	fs.Bool("s", false, "server mode, as iperf3's -s (the receiver is always one; accepted for iperf3's command line)")
	verbose = fs.Bool("verbose", false, "print the version line (with the host) on stderr at the start, as iperf3's -V")
	for name, aliases := range map[string][]string{
		"s": {"server"}, "p": {"port"}, "J": {"json"}, "1": {"one-off"}, "i": {"interval"}, "verbose": {"V"}, "version": {"v"},
	} {
		cli.Alias(fs, name, aliases...)
	}
	return verbose
}

func writeSummary(w io.Writer, s perf.FlowSummary) {
	if s.Dgram != nil && s.Error == "" {
		writeDgramSummary(w, s) // a datagram-mode flow (dgram.go)
		return
	}
	dir := "received"
	if s.Reverse {
		dir = "sent"
	}
	if s.Error != "" {
		fmt.Fprintf(w, "[%s] %s %s %s in %.3fs: error: %s\n", s.ConnID, s.Peer, dir, perf.FormatSize(s.Bytes), s.Seconds, s.Error)
		perf.WriteEndpoint(w, fmt.Sprintf("[%s] ", s.ConnID), s.Endpoint)
		return
	}
	extra := ""
	if s.Reverse {
		extra = fmt.Sprintf(" cc=%s recovery=%s retransmits=%d rtos=%d min_rtt=%.3fms mean_srtt=%.3fms",
			s.CC, s.Recovery, s.Retransmits, s.RTOs, s.MinRTTms, s.MeanSRTTms)
	}
	if s.CloseNote != "" {
		extra += " (" + s.CloseNote + ")"
	}
	digest := s.Digest
	if len(digest) > 16 {
		digest = digest[:16]
	}
	check := "digest=" + digest
	if s.Verify == perf.VerifyPattern {
		check = "verify=pattern"
		if s.Mismatch != nil {
			check += fmt.Sprintf(" mismatch_at=%d", *s.Mismatch)
		}
	}
	fmt.Fprintf(w, "[%s] %s %s %s in %.3fs = %.2f Mbit/s %s%s\n", s.ConnID, s.Peer, dir,
		perf.FormatSize(s.Bytes), s.Seconds, s.ThroughputBps/1e6, check, extra)
	perf.WriteAuth(w, fmt.Sprintf("[%s] ", s.ConnID), s.Auth)
	perf.WriteEndpoint(w, fmt.Sprintf("[%s] ", s.ConnID), s.Endpoint)
}

// writeTestSummary prints the [SUM] line of a sender's several-flow test.
func writeTestSummary(w io.Writer, t perf.TestSummary) {
	fmt.Fprintf(w, "[SUM %s] %s %d flows in %.3fs:", t.Test, t.Peer, t.Flows, t.Seconds)
	if t.ReceivedBytes > 0 || t.SentBytes == 0 {
		fmt.Fprintf(w, " received %s = %.2f Mbit/s", perf.FormatSize(t.ReceivedBytes), t.ReceivedBps/1e6)
	}
	if t.SentBytes > 0 {
		fmt.Fprintf(w, " sent %s = %.2f Mbit/s", perf.FormatSize(t.SentBytes), t.SentBps/1e6)
	}
	if t.Failed > 0 {
		fmt.Fprintf(w, " failed=%d", t.Failed)
	}
	fmt.Fprintln(w)
}
