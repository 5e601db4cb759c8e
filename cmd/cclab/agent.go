package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/crypto/ssh"

	"cclab/agent"
	"cclab/ccalgo"
	"cclab/internal/cli"
)

func init() {
	register("agent", "run the per-host measurement agent (or: agent keygen -out FILE); docs/campaigns.md", func(args []string) int {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		return runAgent(ctx, args, os.Stderr, nil)
	})
}

// runAgent is cclab agent with its environment passed in: it serves until
// ctx ends; ready (if not nil) receives the control address once listening,
// for tests.
func runAgent(ctx context.Context, args []string, stderr io.Writer, ready chan<- string) int {
	if len(args) > 0 && args[0] == "keygen" {
		return runAgentKeygen(args[1:], stderr)
	}
	fs := flag.NewFlagSet("cclab agent", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		listen        = fs.String("listen", ":"+strconv.Itoa(agent.DefaultPort), "control address (TCP) the scheduler connects to")
		dataPort      = fs.Int("data-port", 5311, "UDP port of the transfer receiver, on -listen's host (0: ephemeral, which a firewall cannot open in advance)")
		pskFile       = fs.String("psk-file", "", "pre-shared keys (receiver -psk-file format, mode 0600) a scheduler must prove")
		identity      = fs.String("identity", "", "this agent's Ed25519 private key (cclab agent keygen, or ssh-keygen -t ed25519; mode 0600)")
		authorized    = fs.String("authorized-keys", "", "public keys of the schedulers this agent accepts (\"ssh-ed25519 BASE64 NAME\" lines)")
		maxBytes      = int64(agent.DefaultMaxBytes)
		maxDur        = agent.DefaultMaxDuration
		maxRate       = float64(agent.DefaultMaxRate)
		maxTransfers  = fs.Int("max-transfers", agent.DefaultMaxTransfers, "transfers at once, sending and receiving, 1..1024")
		qlogMax       = int64(agent.DefaultQlogMax)
		maxConns      = fs.Int("max-conns", agent.DefaultMaxConns, "control connections at once, 1..4096")
		maxHandshakes = fs.Int("max-handshakes", agent.DefaultMaxHandshakes, "control connections not yet authenticated, 1..-max-conns")
		maxHSSource   = fs.Int("max-handshakes-per-source", 0, fmt.Sprintf("of those, from one source address, 1..-max-handshakes (default %d, or -max-handshakes if lower)", agent.DefaultMaxHandshakesPerSource))
		quiet         = fs.Bool("q", false, "do not log connections and transfers on stderr")
	)
	fs.Var(cli.Bytes(&maxBytes), "max-bytes", "largest transfer a request may ask for, bytes with units (1GiB)")
	fs.Var(cli.Rate(&maxRate), "max-rate", "fastest path probe (cc probe) a request may ask for, bits/s with units (100Mbit) up to 10Gbit")
	fs.Var(cli.Duration(&maxDur), "max-seconds", "longest transfer, a duration (120s) up to 3600s; a bytes transfer running longer is aborted")
	fs.Var(cli.Bytes(&qlogMax), "qlog-max", "largest qlog returned per side of a transfer, bytes with units up to 64MiB; longer ones are cut at a record boundary (0: no qlogs)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: cclab agent [-listen ADDR] [-data-port N] (-psk-file FILE | -identity FILE -authorized-keys FILE) [caps]\n       cclab agent keygen -out FILE [-name NAME]\n\nflags:\n")
		fs.PrintDefaults()
	}
	if code, ok := cli.Parse(fs, args); !ok {
		return code
	}
	if maxBytes <= 0 {
		fmt.Fprintf(stderr, "cclab agent: -max-bytes %d: must be positive\n", maxBytes)
		return 2
	}
	if !(maxRate > 0 && maxRate <= ccalgo.MaxProbeRate) {
		fmt.Fprintf(stderr, "cclab agent: -max-rate %g: must be above 0 and at most 10Gbit\n", maxRate)
		return 2
	}
	if maxDur <= 0 || maxDur > agent.MaxSpecSeconds*time.Second {
		fmt.Fprintf(stderr, "cclab agent: -max-seconds %v: must be between 1ns and %ds\n", maxDur, agent.MaxSpecSeconds)
		return 2
	}
	// Config reads 0 as "the default": a 0 given here is refused.
	for _, f := range []struct {
		name string
		v    int
	}{{"-max-transfers", *maxTransfers}, {"-max-conns", *maxConns}, {"-max-handshakes", *maxHandshakes}} {
		if f.v < 1 {
			fmt.Fprintf(stderr, "cclab agent: %s %d: must be at least 1 (%s -h gives the range)\n", f.name, f.v, fs.Name())
			return 2
		}
	}
	if qlogMax < 0 || qlogMax > agent.MaxQlog {
		fmt.Fprintf(stderr, "cclab agent: -qlog-max %d: must be between 0 and %d bytes (0: no qlogs)\n", qlogMax, agent.MaxQlog)
		return 2
	}
	if qlogMax == 0 {
		qlogMax = -1 // Config: negative is none
	}
	creds, err := agent.LoadCredentials(*pskFile, *identity, *authorized)
	if err != nil {
		fmt.Fprintf(stderr, "cclab agent: %v\n", err)
		return 2
	}
	var logMu sync.Mutex
	cfg := agent.Config{Listen: *listen, DataPort: *dataPort, Creds: creds, MaxBytes: maxBytes, MaxDuration: maxDur, MaxRate: maxRate,
		MaxTransfers: *maxTransfers, QlogMax: qlogMax, MaxConns: *maxConns, MaxHandshakes: *maxHandshakes,
		MaxHandshakesPerSource: *maxHSSource}
	if !*quiet {
		cfg.Logf = func(format string, args ...any) {
			logMu.Lock()
			defer logMu.Unlock()
			fmt.Fprintf(stderr, "cclab agent: "+format+"\n", args...)
		}
	}
	srv, err := agent.NewServer(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "cclab agent: %v\n", err)
		if errors.Is(err, agent.ErrConfig) {
			return 2
		}
		return 1
	}
	if !*quiet {
		id := ""
		if pub := creds.PublicKey(); pub != nil {
			id = ", identity " + agent.Fingerprint(pub) + keyName(*identity)
		}
		cfg.Logf("control on %v (TCP), data on %v (UDP)%s", srv.Addr(), srv.DataAddr(), id)
	}
	if ready != nil {
		ready <- srv.Addr().String()
	}
	if err := srv.Serve(ctx); err != nil {
		fmt.Fprintf(stderr, "cclab agent: %v\n", err)
		return 1
	}
	return 0
}

// runAgentKeygen is cclab agent keygen: a new Ed25519 key pair.
func runAgentKeygen(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("cclab agent keygen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	host, _ := os.Hostname()
	out := fs.String("out", "", "private key file to write (mode 0600; the public key goes to FILE.pub); it must not exist")
	name := fs.String("name", host, "the key's name in authorized-keys files (default: this host's name)")
	if code, ok := cli.Parse(fs, args); !ok {
		return code
	}
	if *out == "" {
		fmt.Fprintln(stderr, "cclab agent keygen: -out: want the private key file to write")
		return 2
	}
	pub, err := agent.GenerateKey(*out, *name)
	if err != nil {
		fmt.Fprintf(stderr, "cclab agent keygen: %v\n", err)
		return 2
	}
	fmt.Fprintf(stderr, "cclab agent keygen: wrote %s (private, 0600) and %s.pub (%s %s)\n", *out, *out, *name, agent.Fingerprint(pub))
	return 0
}

// keyName is the name of the identity key at path, as its public half
// path.pub (written by cclab agent keygen) names it: " (name NAME)", or ""
// without a readable .pub file.
func keyName(path string) string {
	b, err := os.ReadFile(path + ".pub")
	if err != nil {
		return ""
	}
	_, name, _, _, err := ssh.ParseAuthorizedKey(b)
	if err != nil || name == "" {
		return ""
	}
	return " (name " + name + ")"
}
