// Command bottleneck is a userspace UDP relay that behaves like a configured
// bottleneck link: clients send to -listen, the relay forwards to -target
// through a model of the forward path (rate, delay, jitter, loss, queue
// discipline, several hops, cross traffic) and relays replies back through a
// separately configured reverse path. See docs/bottleneck.md.
//
// With -tun it is a link shell instead (docs/shell.md): it runs a program
// (or an interactive shell) in a network namespace whose traffic crosses the
// same link model as whole IP packets, uplink = forward path, downlink =
// reverse path.
package main

import (
	"flag"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"cclab/internal/cli"
	"cclab/internal/units"
	"cclab/link"
	"cclab/netio"
	"cclab/relay"
	"cclab/tunshell"
)

func main() {
	relay.TwoProcs() // pinned to one CPU, the relay still wants two Ps (relay.TwoProcs)
	relay.QuietGC()  // no collection while the packet pools fill (relay.QuietGC)
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr, nil))
}

// listFlag collects a repeated flag.
type listFlag struct {
	vals  []string
	check func(string) error
}

// String joins the collected values.
func (l *listFlag) String() string { return strings.Join(l.vals, " ") }

// Set validates and appends one value.
func (l *listFlag) Set(s string) error {
	if err := l.check(s); err != nil {
		return err
	}
	l.vals = append(l.vals, s)
	return nil
}

// hopFlag sets one field of a single-hop configuration.
type hopFlag struct {
	cfg *link.Config
	key string
	val string
}

// String returns the value last set.
func (h *hopFlag) String() string { return h.val }

// Set parses the value into the hop's field.
func (h *hopFlag) Set(s string) error {
	if err := relay.SetHopField(h.cfg, h.key, s); err != nil {
		return err
	}
	h.val = s
	return nil
}

// IsBoolFlag lets -reorder be given without a value.
func (h *hopFlag) IsBoolFlag() bool { return h.key == "reorder" }

type durFlag struct{ d *time.Duration }

// String formats the duration.
func (d durFlag) String() string {
	if d.d == nil {
		return ""
	}
	return d.d.String()
}

// Set parses a non-negative duration.
func (d durFlag) Set(s string) error {
	v, err := units.ParseDuration(s)
	if err != nil {
		return err
	}
	if v < 0 {
		return fmt.Errorf("must not be negative")
	}
	*d.d = v
	return nil
}

// spinFlag is -spin: auto (relay.Config.Spin 0: learned), off or 0
// (negative: never poll), or a positive duration.
type spinFlag struct{ d *time.Duration }

// String formats the setting.
func (f spinFlag) String() string {
	switch {
	case f.d == nil || *f.d == 0:
		return "auto"
	case *f.d < 0:
		return "off"
	}
	return f.d.String()
}

// Set parses auto, off or a non-negative duration (0 = off).
func (f spinFlag) Set(s string) error {
	switch s {
	case "auto":
		*f.d = 0
		return nil
	case "off":
		*f.d = -1
		return nil
	}
	v, err := units.ParseDuration(s)
	if err != nil || v < 0 {
		return fmt.Errorf("%q: want auto, off or a duration >= 0 such as 150us (0 = off)", s)
	}
	if v == 0 {
		v = -1
	}
	*f.d = v
	return nil
}

type bytesFlag struct{ n *int }

// String formats the size in bytes.
func (b bytesFlag) String() string {
	if b.n == nil {
		return ""
	}
	return fmt.Sprint(*b.n)
}

// Set parses a size (1500, 9KiB) of at most 65535 bytes.
func (b bytesFlag) Set(s string) error {
	v, err := units.ParseBytes(s)
	if err != nil {
		return err
	}
	if v > 65535 {
		return fmt.Errorf("at most 65535 bytes")
	}
	*b.n = int(v)
	return nil
}

// overheadFlag sets the per-datagram overhead: "auto" (the IP+UDP header
// size of the target's address family), or a number of bytes, 0 meaning the
// UDP payload alone.
type overheadFlag struct{ cfg *relay.Config }

// String formats the setting.
func (o overheadFlag) String() string {
	switch {
	case o.cfg == nil || o.cfg.Overhead == 0 && !o.cfg.PayloadOnly:
		return "auto"
	case o.cfg.PayloadOnly:
		return "0"
	}
	return fmt.Sprint(o.cfg.Overhead)
}

// Set parses "auto" or 0..65535 bytes.
func (o overheadFlag) Set(s string) error {
	if s == "auto" {
		o.cfg.Overhead, o.cfg.PayloadOnly = 0, false
		return nil
	}
	v, err := units.ParseBytes(s)
	if err != nil || v < 0 || v > 65535 {
		return fmt.Errorf("%q: want auto or 0..65535 bytes (28 = IPv4+UDP headers, 48 = IPv6+UDP, 0 = UDP payload only)", s)
	}
	o.cfg.Overhead, o.cfg.PayloadOnly = int(v), v == 0
	return nil
}

// udpOnlyFlags are the flags of the UDP relay that a link shell (-tun)
// refuses.
var udpOnlyFlags = []string{"listen", "target", "entry", "max-clients", "max-clients-per-host", "client-timeout", "buf", "no-offload"}

// maxClients is the upper bound of -max-clients and -max-clients-per-host
// (each session holds a socket).
const maxClients = 65536

// prefixFlag is an IP prefix such as 100.64.0.0/10.
type prefixFlag struct{ p *netip.Prefix }

// String formats the prefix ("" if unset).
func (f prefixFlag) String() string {
	if f.p == nil || !f.p.IsValid() {
		return ""
	}
	return f.p.String()
}

// Set parses a prefix.
func (f prefixFlag) Set(s string) error {
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return fmt.Errorf("%q is not an IP prefix (example: 100.64.0.0/10)", s)
	}
	*f.p = p
	return nil
}

var hopFields = []struct{ key, help string }{
	{"rate", "link rate, e.g. 16Mbit, 1.5Gbit, 500kbit; 0 = unlimited (default 0)"},
	{"delay", "one-way propagation delay, e.g. 7.5ms (default 0)"},
	{"jitter", "delay jitter: each packet's delay is delay ± uniform(jitter) (default 0)"},
	{"reorder", "let jitter reorder packets (default false: never reorder)"},
	{"loss", "random loss: 0.02, bernoulli:p=0.02 or ge:p=0.01,r=0.3,h=0,k=1 (default none)"},
	{"queue", "queue discipline spec, e.g. droptail:20p, red:min=5,max=15,maxp=0.1,ecn, drr:quantum=1500, codel (default droptail)"},
	{"trace", "Mahimahi trace file of delivery opportunities (instead of -rate)"},
	{"mtu", "bytes per trace delivery opportunity and mean packet size for the queue (default 1500); when given, also the path MTU: a packet larger on the link (UDP payload plus IP/UDP overhead) is dropped"},
}

// hopFlagName names the hop flag a link error is about ("link: Rate ..." with
// prefix "rev-" is -rev-rate), or the flag group when it names no field.
func hopFlagName(prefix string, err error) string {
	msg := strings.ToLower(strings.TrimPrefix(err.Error(), "link: "))
	for _, f := range hopFields {
		if strings.HasPrefix(msg, f.key) {
			return "-" + prefix + f.key
		}
	}
	return "-" + prefix + "rate/delay/jitter/loss/queue/trace/mtu"
}

// options are the command line's settings.
type options struct {
	cfg                              relay.Config
	fwd, rev                         link.Config
	fwdHops, revHops, cross, entries *listFlag
	statsFile, poll, classify        *string
	coalesce, duration               time.Duration
	quiet, tun                       *bool
	sh                               tunshell.Config
	set                              map[string]bool // the flags given
}

// newFlagSet defines the flags.
func newFlagSet(stdout, stderr io.Writer) (*flag.FlagSet, *options) {
	fs := flag.NewFlagSet("bottleneck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := &options{coalesce: relay.DefaultCoalesce}
	cfg := &o.cfg
	fs.StringVar(&cfg.Listen, "listen", ":9000", "address clients send to (host:port)")
	fs.StringVar(&cfg.Target, "target", "", "address to relay to (host:port; required)")
	for _, f := range hopFields {
		fs.Var(&hopFlag{cfg: &o.fwd, key: f.key}, f.key, "forward path: "+f.help)
		fs.Var(&hopFlag{cfg: &o.rev, key: f.key}, "rev-"+f.key, "reverse path: "+f.help)
	}
	o.fwdHops = &listFlag{check: func(s string) error { _, err := relay.ParseHop(s); return err }}
	o.revHops = &listFlag{check: func(s string) error { _, err := relay.ParseHop(s); return err }}
	o.cross = &listFlag{check: func(s string) error { _, err := relay.ParseCross(s); return err }}
	fs.Var(o.fwdHops, "hop", "a forward hop (repeat for hops in series): rate=10Mbit,delay=5ms,queue=red:min=5,max=15,loss=0.01,jitter=1ms,reorder,mtu=1500,trace=FILE")
	fs.Var(o.revHops, "rev-hop", "a reverse hop (repeat for hops in series), same syntax as -hop")
	fs.Var(o.cross, "cross", "cross traffic into a hop's queue (repeatable): a traffic datagram generator (docs/traffic.md) such as cbr:rate=5Mbit,size=1000 or udponoff:rate=5Mbit,on=exp(100ms),off=exp(100ms) (rate and size of UDP payload; -overhead is added on the link), or the older onoff:rate=5Mbit,size=1000,on=100ms,off=100ms; add hop=N,dir=fwd|rev")
	o.entries = &listFlag{check: func(s string) error { _, err := relay.ParseEntry(s); return err }}
	fs.Var(o.entries, "entry", "a further listening address whose clients cross only some hops (repeatable): ADDR=FIRST-LAST, e.g. 127.0.0.1:9001=1-2 (0-based; the reverse path crosses the same hops; needs as many -rev-hop as -hop)")
	fs.Var(overheadFlag{cfg}, "overhead", fmt.Sprintf("bytes added to every datagram's UDP payload to get its size on the links (rate, queue limits, statistics), as the simulator does: auto = %d for an IPv4 target, %d for IPv6; 0 = UDP payload only", link.IPv4UDPOverhead, link.IPv6UDPOverhead))
	fs.Uint64Var(&cfg.Seed, "seed", 1, "seed for loss, jitter, queue and cross-traffic randomness")
	o.statsFile = fs.String("stats", "", "write per-interval statistics as JSON lines to FILE (- = stdout)")
	cfg.Interval = time.Second
	fs.Var(durFlag{&cfg.Interval}, "interval", "statistics interval")
	fs.StringVar(&cfg.Pcap, "pcap", "", "write departing packets to FILE (pcap, raw IP with synthesized IPv4/IPv6+UDP headers); drops go to FILE with .drops.pcap")
	fs.Var(bytesFlag{&cfg.PcapSnap}, "pcap-snaplen", "payload bytes captured per packet (0 = all)")
	cfg.BufSize = 9216
	fs.Var(bytesFlag{&cfg.BufSize}, "buf", "receive buffer per datagram, 1..65535 bytes; longer datagrams are truncated")
	fs.IntVar(&cfg.MaxClients, "max-clients", relay.DefaultMaxClients, "client addresses served at once (each gets its own upstream socket), 1..65536; when full, a new client replaces one idle for 1s")
	fs.IntVar(&cfg.MaxClientsPerHost, "max-clients-per-host", relay.DefaultMaxClientsPerHost, "client sessions (ports) of one IP address at once, 1..65536; a new port beyond it replaces that address's idlest session")
	cfg.ClientTimeout = 2 * time.Minute
	fs.Var(durFlag{&cfg.ClientTimeout}, "client-timeout", "close a client's upstream socket after this long idle")
	fs.Var(spinFlag{&cfg.Spin}, "spin", "poll the clock for this long before each modelled instant instead of sleeping: auto (learn the machine's wake-up lateness and stop sleeping that much early), a duration, or off (sleep to each instant)")
	fs.Var(durFlag{&o.coalesce}, "coalesce", "least time between two writes of delayed or rate-limited packets: packets due sooner wait for the next write, up to this late, so that fast links write several per system call (0 = write each at its instant)")
	fs.BoolVar(&cfg.NoOffload, "no-offload", false, "no UDP GRO on reads and no GSO on writes (by default used where the kernel has them)")
	fs.BoolVar(&cfg.LockThread, "lock-thread", false, "run the scheduler on a locked OS thread with 1ns timer slack (Linux; best on an idle machine)")
	fs.BoolVar(&cfg.Realtime, "realtime", false, fmt.Sprintf("run the scheduler on a locked OS thread with the SCHED_FIFO real-time policy, priority %d (Linux; needs root or CAP_SYS_NICE)", relay.RealtimePriority))
	o.poll = fs.String("poll", "sleep", "how the relay waits for packets and modelled instants: sleep (reader goroutines and a scheduler that sleeps to each instant), busy (one loop on one locked thread that never sleeps and takes a whole CPU; for a relay pinned to a CPU of its own) or wait (that loop, blocking in epoll when it has nothing to do; with -realtime its thread is SCHED_FIFO)")
	o.classify = fs.String("classify", "5tuple", "flow classification for flow-aware queues: 5tuple, or cid (cclab connection ID, falling back to the 5-tuple)")
	fs.Var(durFlag{&o.duration}, "duration", "stop after this long (0 = until SIGINT/SIGTERM)")
	o.quiet = fs.Bool("quiet", false, "do not print the summary at exit")
	o.tun = fs.Bool("tun", false, "link shell: run the command after the flags (default: $SHELL) in a network namespace whose traffic crosses the link model through TUN devices; forward path = uplink, reverse = downlink (docs/shell.md)")
	fs.IntVar(&o.sh.MTU, "tun-mtu", tunshell.DefaultMTU, fmt.Sprintf("with -tun: MTU of the TUN devices, bytes (%d..%d)", tunshell.MinMTU, tunshell.MaxMTU))
	fs.Var(prefixFlag{&o.sh.Subnet}, "tun-net", "with -tun: IPv4 range the shell's /30 comes from (default "+tunshell.DefaultSubnet.String()+")")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: bottleneck -listen ADDR -target ADDR [flags]\n       bottleneck -tun [flags] [--] [command [args...]]\n")
		fmt.Fprintf(stderr, "\nFlags (see docs/bottleneck.md):\n")
		fs.PrintDefaults()
	}
	cli.AddVersion(fs, stdout)
	return fs, o
}

// run is main with injectable streams; stop (if non-nil) ends the run like a signal.
func run(args []string, stdout, stderr io.Writer, stop <-chan struct{}) int {
	fs, o := newFlagSet(stdout, stderr)
	if code, ok := cli.ParseArgs(fs, args); !ok {
		return code
	}
	o.set = map[string]bool{}
	fs.Visit(func(f *flag.Flag) { o.set[f.Name] = true })
	if err := o.check(fs.Args()); err != nil {
		fmt.Fprintf(stderr, "bottleneck: %v\n", err)
		return 2
	}
	closeStats, err := o.openStats(stdout)
	if err != nil {
		fmt.Fprintf(stderr, "bottleneck: -stats: %v\n", err)
		return 1
	}
	defer closeStats()
	if !*o.quiet {
		o.cfg.Summary = stderr
	}
	if *o.tun {
		o.sh.Relay = o.cfg
		return tunshell.Run(o.sh, fs.Args(), tunshell.Stdio{In: os.Stdin, Out: stdout, Err: stderr}, o.duration, stop)
	}
	return serve(o.cfg, o.duration, stderr, stop)
}

// check checks the flags against each other and builds the relay's
// configuration from them; an error is a usage error (exit status 2).
func (o *options) check(args []string) error {
	cfg := &o.cfg
	cfg.Coalesce = o.coalesce
	if o.coalesce == 0 {
		cfg.Coalesce = -1 // off
	}
	if err := o.checkMode(args); err != nil {
		return err
	}
	if err := o.checkPoll(); err != nil {
		return err
	}
	switch *o.classify {
	case "5tuple":
	case "cid":
		cfg.ClassifyCID = true
	default:
		return fmt.Errorf("-classify %q: allowed values are 5tuple and cid", *o.classify)
	}
	if cfg.MaxClients < 1 || cfg.MaxClients > maxClients {
		return fmt.Errorf("-max-clients %d: must be between 1 and %d", cfg.MaxClients, maxClients)
	}
	if cfg.MaxClientsPerHost < 1 || cfg.MaxClientsPerHost > maxClients {
		return fmt.Errorf("-max-clients-per-host %d: must be between 1 and %d", cfg.MaxClientsPerHost, maxClients)
	}
	if cfg.BufSize < 1 || cfg.BufSize > netio.MaxDatagram {
		return fmt.Errorf("-buf %d: must be between 1 and %d bytes", cfg.BufSize, netio.MaxDatagram)
	}
	var err error
	if cfg.Hops[relay.Fwd], err = o.hops("", o.fwd, o.fwdHops); err != nil {
		return err
	}
	if cfg.Hops[relay.Rev], err = o.hops("rev-", o.rev, o.revHops); err != nil {
		return err
	}
	for _, s := range o.cross.vals {
		c, _ := relay.ParseCross(s)
		cfg.Cross = append(cfg.Cross, c)
	}
	for _, s := range o.entries.vals {
		e, _ := relay.ParseEntry(s)
		cfg.Entries = append(cfg.Entries, e)
	}
	return nil
}

// checkMode checks the flags that apply only to the UDP relay or only to
// the link shell (-tun), and the arguments.
func (o *options) checkMode(args []string) error {
	if *o.tun {
		for _, f := range udpOnlyFlags {
			if o.set[f] {
				return fmt.Errorf("-%s does not apply with -tun (the link shell has no UDP sockets; see docs/shell.md)", f)
			}
		}
		return nil
	}
	for _, f := range []string{"tun-mtu", "tun-net"} {
		if o.set[f] {
			return fmt.Errorf("-%s needs -tun", f)
		}
	}
	if len(args) > 0 {
		return fmt.Errorf("unexpected argument %q (all settings are flags; a command to run needs -tun; see -h)", args[0])
	}
	if o.cfg.Target == "" {
		return fmt.Errorf("-target is required (host:port to relay to)")
	}
	return nil
}

// checkPoll sets the relay's loop from -poll.
func (o *options) checkPoll() error {
	cfg := &o.cfg
	switch *o.poll {
	case "sleep":
	case "busy", "wait":
		cfg.BusyPoll, cfg.WaitPoll = *o.poll == "busy", *o.poll == "wait"
		if *o.tun {
			return fmt.Errorf("-poll %s does not apply with -tun (the TUN devices are read by blocking reads; see docs/shell.md)", *o.poll)
		}
		if cfg.BusyPoll && cfg.Realtime {
			return fmt.Errorf("-poll busy cannot be combined with -realtime (a SCHED_FIFO thread that never sleeps starves its CPU; -poll wait can)")
		}
	default:
		return fmt.Errorf("-poll %q: allowed values are sleep, busy and wait", *o.poll)
	}
	return nil
}

// hops returns one direction's hops: the single hop of its -rate, -delay,
// ... flags (prefix "" or "rev-"), or its -hop flags.
func (o *options) hops(prefix string, single link.Config, hops *listFlag) ([]link.Config, error) {
	if len(hops.vals) == 0 {
		if err := relay.ValidateHop(single); err != nil {
			return nil, fmt.Errorf("%s: %v", hopFlagName(prefix, err), err)
		}
		return []link.Config{single}, nil
	}
	for _, f := range hopFields {
		if o.set[prefix+f.key] {
			return nil, fmt.Errorf("-%s%s cannot be combined with -%shop (put %s= into each -%shop)", prefix, f.key, prefix, f.key, prefix)
		}
	}
	var out []link.Config
	for _, s := range hops.vals {
		c, err := relay.ParseHop(s)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// openStats points the relay's statistics at -stats; closeStats closes
// the file.
func (o *options) openStats(stdout io.Writer) (closeStats func(), err error) {
	switch *o.statsFile {
	case "":
	case "-":
		o.cfg.Stats = stdout
	default:
		f, err := os.Create(*o.statsFile)
		if err != nil {
			return nil, err
		}
		o.cfg.Stats = f
		return func() { f.Close() }, nil
	}
	return func() {}, nil
}

// serve relays until a signal, stop or the duration ends it.
func serve(cfg relay.Config, duration time.Duration, stderr io.Writer, stop <-chan struct{}) int {
	r, err := relay.New(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "bottleneck: %v\n", err)
		return 1
	}
	r.Start()
	fmt.Fprintf(stderr, "bottleneck: relaying %s -> %s\n", r.Addr(), cfg.Target)
	for i, e := range cfg.Entries {
		fmt.Fprintf(stderr, "bottleneck: entry %s crosses hops %d-%d\n", r.EntryAddr(i), e.First, e.Last)
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sig)
	var timeout <-chan time.Time
	if duration > 0 {
		timeout = time.After(duration)
	}
	select {
	case <-sig:
	case <-stop:
	case <-timeout:
	}
	if err := r.Close(); err != nil {
		fmt.Fprintf(stderr, "bottleneck: %v\n", err)
		return 1
	}
	return 0
}
