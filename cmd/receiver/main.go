// Command receiver is cclab's bulk-transfer server (like iperf3 -s): it
// accepts many concurrent flows from cmd/sender, reads each stream to its end,
// reports the stream's SHA-256 digest back so the sender can verify the
// transfer, and prints a summary line (or a JSON object with -J) per flow.
// With -allow-reverse it also serves reverse (-R) requests by sending. See
// docs/receiver.md.
package main

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

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr, nil))
}

// run is main with its environment passed in; ready (if not nil) receives
// the bound address once listening, for tests.
func run(args []string, stdout, stderr io.Writer, ready chan<- string) int {
	fs := flag.NewFlagSet("receiver", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		listen       = fs.String("listen", fmt.Sprintf(":%d", perf.DefaultPort), "UDP address to listen on")
		port         = fs.Int("p", 0, "UDP port to listen on (sets the port of -listen; default 5301)")
		once         = fs.Bool("1", false, "exit after serving one test (one flow, or every flow of a sender's -P/--bidir test)")
		jsonOut      = fs.Bool("J", false, "print one JSON object per finished flow")
		allowReverse = fs.Bool("allow-reverse", false, "serve reverse (-R) requests, i.e. send to clients that ask")
		qlogDir      = fs.String("qlog", "", "write a qlog JSON-SEQ trace per flow into this directory")
		quiet        = fs.Bool("q", false, "do not print progress messages on stderr")
		pskFile      = fs.String("psk-file", "", "pre-shared keys a reverse request must prove (HMAC-SHA256 challenge); without it, reverse flows are served only to loopback clients")
		maxRevBytes  = int64(perf.DefaultMaxReverseBytes)
		maxRevDur    = perf.DefaultMaxReverseDuration
		maxRevFlows  = fs.Int("max-reverse-flows", perf.DefaultMaxReverseFlows, "reverse flows served at once, 1..1024")
		reverseCC    = fs.String("reverse-cc", "", "comma-separated controllers a reverse request may name (default: every registered one)")
		reverseCCP   = fs.Bool("reverse-cc-params", false, "let a reverse request set controller parameters (e.g. reno:iw=20); off: names only")
	)
	fs.Var(cli.Bytes(&maxRevBytes), "max-reverse-bytes", "largest reverse transfer a request may ask for, bytes with units (1GiB)")
	fs.Var(cli.Duration(&maxRevDur), "max-reverse-seconds", "longest reverse flow, a duration (60s) up to 3600s; a bytes request running longer is aborted")
	defaults := transport.DefaultConfig()
	// Accept what the sender chooses with -size: a connection uses the
	// smaller of the two ends' MaxDatagram.
	defaults.MaxDatagram = perf.MaxSize
	perf.ReceiveFlags(fs, &defaults, "window", perf.MaxSize)
	var limits transport.EndpointConfig // admission limits (docs/security.md)
	perf.AdmissionFlags(fs, &limits)
	resetKeyFile := perf.ResetKeyFlag(fs)
	cli.AddVersion(fs, stdout)
	verbose := iperfFlags(fs)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: receiver [-listen ADDR] [-1] [-J] [-allow-reverse [-psk-file FILE]] [-qlog DIR]\n\nflags:\n")
		fs.PrintDefaults()
	}
	if code, ok := cli.Parse(fs, args); !ok {
		return code
	}
	if *verbose {
		fmt.Fprintln(stderr, buildinfo.Read().Line("receiver"))
	}
	if cli.IsSet(fs, "p") {
		a, err := cli.WithPort("p", *listen, *port)
		if err != nil {
			fmt.Fprintf(stderr, "receiver: %v\n", err)
			return 2
		}
		*listen = a
	}
	if maxRevBytes <= 0 {
		fmt.Fprintf(stderr, "receiver: -max-reverse-bytes %d: must be positive\n", maxRevBytes)
		return 2
	}
	if d := maxRevDur; d <= 0 || d > perf.MaxReverseSeconds*time.Second {
		fmt.Fprintf(stderr, "receiver: -max-reverse-seconds %v: must be between 1ns and %ds\n", d, perf.MaxReverseSeconds)
		return 2
	}
	if *maxRevFlows < 1 || *maxRevFlows > 1024 {
		fmt.Fprintf(stderr, "receiver: -max-reverse-flows %d: must be between 1 and 1024\n", *maxRevFlows)
		return 2
	}
	if err := perf.CheckLimits(limits); err != nil {
		fmt.Fprintf(stderr, "receiver: %v\n", err)
		return 2
	}
	resetKey, err := perf.LoadResetKey(*resetKeyFile)
	if err != nil {
		fmt.Fprintf(stderr, "receiver: %v\n", err)
		return 2
	}
	limits.ResetKey = resetKey
	var keys *perf.Keys
	if *pskFile != "" {
		var err error
		if keys, err = perf.LoadKeyFile(*pskFile); err != nil {
			fmt.Fprintf(stderr, "receiver: %v\n", err)
			return 2
		}
	}
	var ccList []string
	if *reverseCC != "" {
		ccList = strings.Split(*reverseCC, ",")
	}
	var outMu sync.Mutex
	js := newJSONOut(stdout)
	cfg := perf.ServerConfig{
		Listen: *listen, Defaults: defaults, AllowReverse: *allowReverse, Once: *once, QlogDir: *qlogDir,
		Keys: keys, MaxReverseBytes: maxRevBytes, MaxReverseDuration: maxRevDur, MaxReverseFlows: *maxRevFlows,
		ReverseCC: ccList, ReverseCCParams: *reverseCCP, Driver: udp.Config{Endpoint: limits},
		OnFlow: func(s perf.FlowSummary) {
			outMu.Lock()
			defer outMu.Unlock()
			if msg := s.Host.Warning(); msg != "" {
				fmt.Fprintf(stderr, "receiver: [%s] %s\n", s.ConnID, msg)
			}
			if *jsonOut {
				js.flow(s)
				return
			}
			writeSummary(stdout, s)
		},
		OnTest: func(t perf.TestSummary) {
			outMu.Lock()
			defer outMu.Unlock()
			if *jsonOut {
				js.test(t)
				return
			}
			writeTestSummary(stdout, t)
		},
	}
	if !*quiet {
		cfg.Logf = func(format string, args ...any) {
			outMu.Lock()
			defer outMu.Unlock()
			fmt.Fprintf(stderr, "receiver: "+format+"\n", args...)
		}
	}
	srv, err := perf.NewServer(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "receiver: %v\n", err)
		if errors.Is(err, perf.ErrConfig) {
			return 2
		}
		return 1
	}
	defer srv.Close()
	if !*quiet {
		fmt.Fprintln(stderr, listening(srv, *allowReverse, keys))
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

// listening is the line that says the receiver is ready.
func listening(srv *perf.Server, allowReverse bool, keys *perf.Keys) string {
	rev := ""
	switch {
	case allowReverse && keys != nil:
		rev = fmt.Sprintf(" (reverse mode allowed to holders of %d pre-shared key(s))", keys.Len())
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
		"s": {"server"}, "p": {"port"}, "J": {"json"}, "1": {"one-off"}, "verbose": {"V"}, "version": {"v"},
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
	fmt.Fprintf(w, "[%s] %s %s %s in %.3fs = %.2f Mbit/s digest=%s%s\n", s.ConnID, s.Peer, dir,
		perf.FormatSize(s.Bytes), s.Seconds, s.ThroughputBps/1e6, digest, extra)
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
