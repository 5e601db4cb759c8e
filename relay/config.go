package relay

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"cclab/event"
	"cclab/internal/hostlimit"
	"cclab/internal/units"
	"cclab/link"
	"cclab/netio"
	"cclab/qdisc"
)

// Direction of a path through the relay.
const (
	Fwd = 0 // client → target (data path)
	Rev = 1 // target → client (ACK path)
)

var dirNames = [2]string{"fwd", "rev"}

// Defaults of the client table (bottleneck -max-clients,
// -max-clients-per-host; docs/security.md).
const (
	DefaultMaxClients        = 1024
	DefaultMaxClientsPerHost = 256
	DefaultEvictIdle         = time.Second
)

// Config configures a Relay.
type Config struct {
	Listen string // address clients send to, e.g. ":9000"
	Target string // address the relay forwards to, e.g. "10.0.0.2:9001"
	// Network opens the relay's sockets; nil means netio.UDP (real UDP
	// sockets). Tests pass a netio.MemNet.
	Network netio.Network

	Hops  [2][]link.Config // hops in series per direction (Fwd, Rev); an empty list means one unshaped hop
	Cross []CrossConfig    // synthetic cross traffic
	// Entries are further listening addresses for flows that cross only
	// part of the path (e.g. per-hop cross flows of a chain); Listen's
	// clients cross every hop. Entries need as many reverse hops as
	// forward hops.
	Entries []Entry

	// Overhead is added to every datagram's UDP payload length to get its
	// size on the links (qdisc.Packet.Size: serialization time, byte-limited
	// queues, departure bytes and rates), bytes. 0 means the IP+UDP header
	// size of the target's address family: link.IPv4UDPOverhead (28) or
	// link.IPv6UDPOverhead (48), as the simulator counts by default.
	Overhead int
	// PayloadOnly counts the UDP payload alone (overhead 0), as the
	// simulator's Options.PayloadOnly does.
	PayloadOnly bool

	Seed uint64 // seed of every random stream (loss, jitter, queues, cross traffic)
	// Streams name the hops' random streams per direction (Fwd, Rev):
	// hop i of direction d draws from traffic.Stream(Seed, Streams[d][i]),
	// as the simulator's link of that name does (a plan gives both the
	// same names). A missing entry draws from a stream derived from Seed
	// and the hop's position.
	Streams [2][]string

	Stats    io.Writer     // per-interval JSON lines; nil = none
	Interval time.Duration // statistics interval; 0 = 1s
	Summary  io.Writer     // human-readable summary at Close; nil = none

	Pcap       string // file for departing packets; "" = none. Drops go to DropsPcapName(Pcap).
	PcapSnap   int    // bytes of payload captured per packet; 0 = all
	BufSize    int    // receive buffer per datagram, bytes; 0 = 9216 (longer datagrams are truncated)
	MaxClients int    // distinct client addresses served at once; 0 = DefaultMaxClients
	// MaxClientsPerHost bounds the sessions of one source IP address (its
	// ports); 0 = DefaultMaxClientsPerHost. A new port beyond it replaces
	// that address's idlest session, so one host cannot fill the table.
	MaxClientsPerHost int
	// EvictIdle: when the table is full (MaxClients), a new client replaces
	// the idlest session if that one has been idle at least this long
	// (otherwise the datagram is dropped and counted); 0 = DefaultEvictIdle.
	EvictIdle time.Duration
	// ClientTimeout closes a client's upstream socket after this long without
	// traffic in either direction; 0 = 2 minutes.
	ClientTimeout time.Duration
	// Spin is how long before a deadline the scheduler stops sleeping and
	// polls the clock. 0 (the default) learns it: the scheduler measures how
	// late its sleeps wake (the machine's wake-up latency, tens of µs in a
	// VM) and stops sleeping that long before each instant, polling the
	// clock only for what is left when a sleep ends early (wakeLead). A
	// positive Spin is fixed (larger is more accurate and burns more CPU).
	// Either is ignored on one CPU or one P, where polling would take the
	// readers' CPU: the scheduler sleeps to each instant. Negative never
	// polls. The waiting loop (WaitPoll) polls only with a positive Spin
	// (it learns no lead).
	Spin time.Duration
	// Coalesce is the least time between two writes of the scheduler,
	// which releases the packets of delayed or rate-limited hops: packets
	// due sooner after a write wait for the next one, so that at high
	// packet rates each write carries several datagrams (GSO runs, fewer
	// system calls and wake-ups) at the price of up to Coalesce of
	// lateness; packets further apart than Coalesce are written at their
	// instants as before. 0 means DefaultCoalesce; negative turns it off.
	Coalesce time.Duration
	// LockThread runs the scheduler on its own locked OS thread with 1 ns
	// timer slack (Linux). It helps on an otherwise idle machine and hurts
	// when CPUs are contended; off by default.
	LockThread bool
	// Realtime runs the scheduler on a locked OS thread with the SCHED_FIFO
	// real-time policy at RealtimePriority (Linux; needs root or
	// CAP_SYS_NICE: New fails otherwise), so that it runs as soon as its
	// sleep ends instead of waiting for a CPU behind other programs' threads.
	// The readers keep the normal policy. With WaitPoll the polling loop's
	// thread, which is the whole data path, gets the policy.
	Realtime bool
	// InjectWriteLate is added to the measured lateness of every write
	// (Counters.Late, LateHist, LateMax; HostReport): it makes the relay
	// look starved of CPU, for tests of the host-limited check (package
	// hostlimit). 0 in real use.
	InjectWriteLate time.Duration
	// HostCheck, if set, adds the caller's evidence to every host report
	// of the relay (HostReport, the summary's warning) before it is
	// judged: the link shell adds its TUN reader's stalls
	// (hostlimit.Report.ReadStalls). It must be safe to call from any
	// goroutine.
	HostCheck func(*hostlimit.Report)
	// KernelDrops, if set, returns the packets of direction dir (Fwd,
	// Rev) the kernel has dropped so far before the relay read them, and
	// whether that is known: the link shell's TUN devices' transmit-queue
	// drops. Unset, the relay counts its UDP sockets' receive-buffer
	// drops. Called with the relay's lock held at every statistics line
	// (HostLine.RxQueueDrops); it must not call the relay.
	KernelDrops func(dir int) (uint64, bool)
	// BusyPoll runs the whole data path as one loop on one locked OS thread
	// that never sleeps: it asks which sockets hold datagrams
	// (netio.ReadySet, one epoll_wait that does not block), reads those
	// without blocking (netio.Poller; a MemConn, which has no descriptor,
	// every pass), offers what it read to the links, and writes what is
	// due (after Coalesce), over and over, as mahimahi's link shell does
	// with its event loop. No reader goroutine, no scheduler, no sleep and
	// no lock another thread holds, so a packet is not held back by a
	// sleep's wake-up latency or a hand-off; but the loop takes a whole CPU
	// all the time, busy or idle (an idle session's socket costs a pass
	// nothing). For a relay with
	// a CPU of its own (docs/bottleneck.md). It cannot be combined with
	// Realtime (a real-time thread that never sleeps starves its CPU);
	// Spin and LockThread do not apply. Every socket must be a
	// netio.Poller (UDP on Linux, netio.MemNet): New fails otherwise.
	BusyPoll bool
	// WaitPoll runs the data path as BusyPoll's loop on one locked OS
	// thread, but a pass that read nothing, with nothing due, blocks in
	// the kernel (epoll_pwait2 on the sockets' ReadySet, a nanosecond
	// timeout at the next modelled instant, less Spin if it is a fixed
	// duration (no learned lead), woken by a datagram or Close) instead of starting the next pass, so
	// an idle relay takes no CPU (wait.go). With Realtime the thread has
	// the SCHED_FIFO policy: a datagram or a due departure preempts any
	// normal thread on its CPU at once, and since it blocks when idle it
	// is not throttled; after 10 ms in which it blocked for less than
	// 100 µs (a flood) it rests 100 µs. LockThread does not apply. The sockets must be
	// netio.Pollers, as for BusyPoll; a MemConn (no descriptor) makes
	// every wait at most 50 µs. It cannot be combined with BusyPoll.
	WaitPoll bool
	// NoOffload turns off UDP receive offload (GRO: a read may hold several
	// datagrams of one sender) and segmentation offload on writes (GSO: one
	// write entry per run of equal-sized datagrams to one destination),
	// which the relay otherwise uses where the kernel has them
	// (docs/bottleneck.md); CCLAB_NO_GRO and CCLAB_NO_GSO turn off either.
	NoOffload bool
	// ClassifyCID keys flows of cclab datagrams (docs/wire.md) by their
	// destination connection ID instead of the UDP 5-tuple; other datagrams
	// keep the 5-tuple key.
	ClassifyCID bool

	// Sink, if set, receives every hop's link events (event.Enqueue, Drop,
	// Mark, Dequeue, Departure, as package link emits them) with times on
	// the relay's clock (Relay.Now) and Event.Link from Links. It is called
	// with the relay's lock held, from whichever goroutine moves the packet
	// (a reader or the scheduler), so calls never overlap and each hop's
	// events arrive in time order; it must be quick and must not call the
	// relay's methods. Event.Flow is the packet's flow key (Config.ClassifyCID;
	// otherwise qdisc.FlowKey of the datagram's source and destination, see
	// Relay.FlowKey).
	Sink event.Sink
	// Links are the event.Event.Link indices of the hops, per direction
	// (Fwd, Rev), e.g. the simulator's link IDs of the same path; a missing
	// entry is dir*1000+hop.
	Links [2][]int32
}

// RealtimePriority is the SCHED_FIFO priority of the scheduler's thread
// (or the waiting loop's, Config.WaitPoll) with Config.Realtime (Linux real-time priorities are 1..99; chrt's
// examples and most audio and network daemons use low ones, which leave
// the kernel's own real-time threads (priority 50 and up) ahead of it).
const RealtimePriority = 10

// Entry is a listening address whose clients cross only the forward hops
// First..Last (0-based, inclusive) and, backwards, the reverse hops of the
// same span (reverse hops K-1-Last..K-1-First of K): a flow that enters the
// path before hop First and leaves it after hop Last.
type Entry struct {
	Listen      string // address, e.g. "127.0.0.1:0"
	First, Last int
	// Target, if set, is where this entry's clients' datagrams go instead
	// of Config.Target (host:port), e.g. a separate receiver of raw UDP
	// flows (backend/live). Their flow keys (Relay.FlowKey) and pcap
	// records still name Config.Target.
	Target string
}

// ParseEntry parses an entry spec "ADDR=FIRST-LAST" (or "ADDR=HOP" for one
// hop), e.g. "127.0.0.1:9001=1-2": clients of that address cross the
// forward hops FIRST..LAST (0-based) and the reverse hops of the same span.
func ParseEntry(s string) (Entry, error) {
	addr, span, ok := strings.Cut(s, "=")
	if !ok || strings.TrimSpace(addr) == "" {
		return Entry{}, fmt.Errorf("entry %q: want ADDR=FIRST-LAST, e.g. 127.0.0.1:9001=1-2 (0-based hops)", s)
	}
	a, b, isRange := strings.Cut(span, "-")
	if !isRange {
		b = a
	}
	first, err1 := strconv.Atoi(strings.TrimSpace(a))
	last, err2 := strconv.Atoi(strings.TrimSpace(b))
	if err1 != nil || err2 != nil || first < 0 || last < first {
		return Entry{}, fmt.Errorf("entry %q: hops %q: want FIRST-LAST with 0 <= FIRST <= LAST, or one hop", s, span)
	}
	return Entry{Listen: strings.TrimSpace(addr), First: first, Last: last}, nil
}

// hopKeys are the keys of a -hop spec.
var hopKeys = []string{"rate", "trace", "delay", "jitter", "reorder", "loss", "queue", "mtu"}

const hopHelp = "hop syntax: rate=10Mbit,delay=5ms,jitter=1ms,reorder,loss=0.01,queue=red:min=5,max=15,mtu=1500,trace=FILE " +
	"(keys: " + "rate, trace, delay, jitter, reorder, loss, queue, mtu; a token that is not one of these keys continues the previous value, " +
	"so queue and loss specs keep their commas; wrap a value in [ ] to be explicit)"

// ParseHop parses a hop spec such as
// "rate=10Mbit,delay=5ms,queue=red:min=5,max=15,maxp=0.1,ecn,loss=ge:p=0.01,r=0.3".
// Tokens are split at commas; a token that does not start with a hop key
// followed by '=' (or is not the bare flag "reorder") continues the previous
// value, so qdisc and loss specs keep their own commas. A value may also be
// wrapped in brackets: "queue=[red:min=5,max=15]".
func ParseHop(s string) (link.Config, error) {
	var cfg link.Config
	vals := map[string]string{}
	var order []string
	last := ""
	for _, tok := range splitTop(s) {
		tok = strings.TrimSpace(tok)
		k, v, eq := strings.Cut(tok, "=")
		k = strings.ToLower(strings.TrimSpace(k))
		if eq && isHopKey(k) || !eq && k == "reorder" {
			if _, dup := vals[k]; dup {
				return cfg, fmt.Errorf("hop %q: %s given twice", s, k)
			}
			vals[k] = v
			order = append(order, k)
			last = k
			continue
		}
		if last == "" {
			return cfg, fmt.Errorf("hop %q: unknown key in %q (%s)", s, tok, hopHelp)
		}
		vals[last] += "," + tok
	}
	for _, k := range order {
		v := strings.TrimSpace(vals[k])
		if strings.HasPrefix(v, "[") && strings.HasSuffix(v, "]") {
			v = v[1 : len(v)-1]
		}
		if err := setHop(&cfg, k, v, true); err != nil {
			return cfg, fmt.Errorf("hop %q: %v", s, err)
		}
	}
	return cfg, ValidateHop(cfg)
}

// splitTop splits at commas that are not inside brackets.
func splitTop(s string) []string {
	var out []string
	depth, startI := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[':
			depth++
		case ']':
			if depth > 0 {
				depth--
			}
		case ',':
			if depth == 0 {
				out = append(out, s[startI:i])
				startI = i + 1
			}
		}
	}
	return append(out, s[startI:])
}

func isHopKey(k string) bool {
	for _, h := range hopKeys {
		if h == k {
			return true
		}
	}
	return false
}

// SetHopField sets one field of a hop from its flag or spec value: rate,
// trace (a file name), delay, jitter, reorder, loss, queue or mtu. Errors
// name the field and its allowed values.
func SetHopField(cfg *link.Config, key, value string) error { return setHop(cfg, key, value, false) }

func setHop(cfg *link.Config, key, value string, bare bool) error {
	switch key {
	case "rate":
		r, err := units.ParseRate(value)
		if err != nil {
			return fmt.Errorf("rate: %v", err)
		}
		cfg.Rate = r
	case "trace":
		if value == "" {
			return nil
		}
		b, err := os.ReadFile(value)
		if err != nil {
			return fmt.Errorf("trace: %v (a Mahimahi trace file: one millisecond timestamp per line)", err)
		}
		tr, err := link.TraceFromReader(strings.NewReader(string(b)))
		if err != nil {
			return fmt.Errorf("trace %s: %v", value, err)
		}
		cfg.TraceData = tr
	case "delay", "jitter":
		d, err := units.ParseDuration(value)
		if err != nil || d < 0 {
			return fmt.Errorf("%s: %q is not a duration >= 0 (examples: 7.5ms, 250us, 0)", key, value)
		}
		if key == "delay" {
			cfg.Delay = d
		} else {
			cfg.Jitter = d
		}
	case "reorder":
		if value == "" && bare {
			cfg.Reorder = true
			return nil
		}
		b, err := strconv.ParseBool(value)
		if err != nil {
			return fmt.Errorf("reorder: %q is not true or false", value)
		}
		cfg.Reorder = b
	case "loss":
		if err := link.ValidateLoss(value); err != nil {
			return err
		}
		cfg.Loss = value
	case "queue":
		if err := qdisc.Registry.Validate(value); err != nil {
			return fmt.Errorf("queue: %v", err)
		}
		cfg.Queue = value
	case "mtu":
		n, err := strconv.Atoi(value)
		if err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("mtu: %q is not an integer 1..65535 (bytes)", value)
		}
		cfg.MTU = n
	default:
		return fmt.Errorf("unknown hop key %q (%s)", key, hopHelp)
	}
	return nil
}

// minMTU is the smallest hop MTU the relay takes, bytes: the datagram every
// IPv4 module must forward unfragmented (RFC 791 §3.2, 68 octets). A
// smaller one could not carry a UDP datagram with its headers in one trace
// delivery opportunity.
const minMTU = 68

// ValidateHop checks a hop by building it once, and the bounds the relay
// adds to the link's: MTU at least minMTU, Jitter at most Delay (a packet's
// delay is Delay ± Jitter; a larger Jitter would be cut at 0 and shift the
// mean delay).
func ValidateHop(cfg link.Config) error {
	if cfg.MTU != 0 && cfg.MTU < minMTU {
		return fmt.Errorf("link: MTU %d: must be %d..65536 bytes (0 = %d)", cfg.MTU, minMTU, link.DefaultMTU)
	}
	if cfg.Jitter > cfg.Delay {
		return fmt.Errorf("link: Jitter %v: must be 0..delay (%v): each packet's delay is delay ± jitter", cfg.Jitter, cfg.Delay)
	}
	_, err := link.New(cfg, link.Env{})
	return err
}

// DropsPcapName returns the drops capture file for a departures capture:
// "x.pcap" → "x.drops.pcap".
func DropsPcapName(p string) string {
	if strings.HasSuffix(p, ".pcap") {
		return strings.TrimSuffix(p, ".pcap") + ".drops.pcap"
	}
	return p + ".drops.pcap"
}
