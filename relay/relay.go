// Package relay is the engine of cmd/bottleneck: a userspace UDP relay that
// forwards datagrams between clients and a target through link models
// (package link) in both directions, in real time.
//
// Threading: one reader goroutine per socket (the listening socket and one
// upstream socket per client) and one scheduler goroutine (on a locked OS
// thread with Config.LockThread). All link state is guarded by one mutex. A
// reader that receives a batch offers it to the first hop, writing what
// falls due between its messages, then itself delivers whatever is already
// due (so an unshaped path forwards without a hand-off); the scheduler sleeps
// (sleeper: ppoll with 1 ns timer slack on Linux, which a reader interrupts
// when its packets fall due sooner) until a lead before the next modelled
// instant, learned from how late its sleeps wake (wakeLead), then polls the
// clock (not on one CPU or one P: there it sleeps to the instant), so
// packets leave at their modelled instants rather than at the machine's
// wake-up latency. With Config.BusyPoll one loop on one locked OS thread
// does all of it instead, never sleeping (poll.go); with Config.WaitPoll the
// same loop blocks in epoll when it has nothing to do (wait.go).
package relay

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"cclab/clock"
	"cclab/ecn"
	"cclab/event"
	"cclab/internal/hostlimit"
	"cclab/internal/mix"
	"cclab/link"
	"cclab/netio"
	"cclab/qdisc"
	"cclab/traffic"
)

const batchSize = 64

// Counters are relay-wide counters outside the links.
type Counters struct {
	Received      [2]int64 `json:"received"`       // datagrams read, per direction
	ReceivedBytes [2]int64 `json:"received_bytes"` // bytes read, per direction
	Sent          [2]int64 `json:"sent"`           // datagrams written, per direction
	SentBytes     [2]int64 `json:"sent_bytes"`     // bytes written, per direction
	SendErrors    int64    `json:"send_errors"`    // datagrams a WriteBatch failed to send
	ReadErrors    int64    `json:"read_errors"`    // transient read errors (e.g. ICMP port unreachable on an upstream socket)
	Truncated     int64    `json:"truncated"`      // datagrams that filled the whole receive buffer (probably truncated)
	ClientLimit   int64    `json:"client_limit"`   // datagrams dropped because MaxClients sessions exist, none idle for EvictIdle
	DialErrors    int64    `json:"dial_errors"`    // upstream sockets that could not be opened
	Clients       int64    `json:"clients"`        // client sessions opened
	Expired       int64    `json:"expired"`        // client sessions closed after ClientTimeout
	Evicted       int64    `json:"evicted"`        // client sessions replaced by a new client (MaxClientsPerHost, or MaxClients and EvictIdle)
	Orphans       int64    `json:"orphans"`        // packets whose client session ended while they were in the links
	Malformed     int64    `json:"malformed"`      // packet mode: packets that are not IPv4 or IPv6 (dropped)
	ReadCalls     int64    `json:"read_calls"`     // batched reads that returned datagrams (recvmmsg calls on UDP sockets)
	WriteCalls    int64    `json:"write_calls"`    // batched writes (sendmmsg calls on UDP sockets: up to 64 entries, each a datagram or a GSO run)
	GROReads      int64    `json:"gro_reads"`      // reads that held several datagrams coalesced by the kernel (UDP GRO)
	// Lateness of writes against the modelled instants (write time minus
	// modelled arrival at the far end of the last hop): a histogram with
	// bucket upper bounds LateBuckets, and the maximum.
	Late    [len(LateBuckets) + 1]int64 `json:"late"`
	LateMax time.Duration               `json:"late_max_ns"` // largest lateness, ns
	// The same lateness in fine-grained buckets (within 6.25 %), and its
	// median, 99th and 99.9th percentiles read from them (upper bounds of
	// their buckets), set in every snapshot (Relay.Counters, stats lines).
	LateHist LateHist      `json:"-"`
	LateP50  time.Duration `json:"late_p50_ns"`
	LateP99  time.Duration `json:"late_p99_ns"`
	LateP999 time.Duration `json:"late_p999_ns"`
	// Read lateness: when the reader got a datagram (recvmmsg returned)
	// minus when the kernel received it (SO_TIMESTAMPNS, where the socket
	// has stamps: UDP sockets on Linux), per received message (with GRO,
	// against its first datagram); its histogram, percentiles (set in
	// every snapshot, like LatePxx) and maximum. The arrival instants the
	// links see are the read times, so this is the part of the emulation
	// error before the links, as the write lateness is the part after.
	ReadLateHist LateHist      `json:"-"`
	ReadLateP50  time.Duration `json:"read_late_p50_ns"`
	ReadLateP99  time.Duration `json:"read_late_p99_ns"`
	ReadLateP999 time.Duration `json:"read_late_p999_ns"`
	ReadLateMax  time.Duration `json:"read_late_max_ns"`
	// Sleep lateness: how late the scheduler's sleeps woke against the
	// instant each asked for (the machine's wake-up latency at the time,
	// timer slack included), per sleep that ran to its end; its histogram
	// and percentiles (set in every snapshot). Lead is how long before an
	// instant the scheduler stops sleeping (Config.Spin 0: learned from
	// these, see wakeLead; else Spin; 0 where it does not poll: one CPU or
	// one P, Config.Realtime), as of the latest snapshot.
	SleepLateHist LateHist      `json:"-"`
	SleepLateP50  time.Duration `json:"sleep_late_p50_ns"`
	SleepLateP99  time.Duration `json:"sleep_late_p99_ns"`
	SleepLateP999 time.Duration `json:"sleep_late_p999_ns"`
	Lead          time.Duration `json:"lead_ns"`
	// Lock wait: how long the scheduler, awake, waited for the relay's
	// lock (held by a reader handling a read); histogram and percentiles.
	LockWaitHist LateHist      `json:"-"`
	LockWaitP50  time.Duration `json:"lock_wait_p50_ns"`
	LockWaitP99  time.Duration `json:"lock_wait_p99_ns"`
	LockWaitP999 time.Duration `json:"lock_wait_p999_ns"`
	// Send time: how long each batched write to one socket took (its
	// sendmmsg calls; on loopback they also carry the datagrams into the
	// receiving socket), after the write lateness; histogram and
	// percentiles.
	SendTimeHist LateHist      `json:"-"`
	SendTimeP50  time.Duration `json:"send_time_p50_ns"`
	SendTimeP99  time.Duration `json:"send_time_p99_ns"`
	SendTimeP999 time.Duration `json:"send_time_p999_ns"`
	// Loop: with Config.BusyPoll or Config.WaitPoll, the length of each
	// pass of the polling loop (from one look at the clock to the next: a
	// non-blocking read of every socket, relaying what they held, and the
	// writes that fell due; with WaitPoll from the end of a wait, if the
	// pass follows one),
	// the most the loop itself holds a write back beyond its instant
	// (besides Coalesce); histogram and percentiles.
	LoopHist LateHist      `json:"-"`
	LoopP50  time.Duration `json:"loop_p50_ns"`
	LoopP99  time.Duration `json:"loop_p99_ns"`
	LoopP999 time.Duration `json:"loop_p999_ns"`
	// LoopWaits counts the times the loop blocked (Config.WaitPoll; its
	// overshoots go to SleepLateHist), LoopRests the rests a real-time
	// loop took after a long stretch with little blocking (waitRestAfter,
	// waitRest: wait.go).
	LoopWaits int64 `json:"loop_waits"`
	LoopRests int64 `json:"loop_rests"`
}

// snapshot returns the counters with the lateness percentiles filled in.
// Called with mu held.
func (r *Relay) snapshot() Counters {
	c := r.cnt
	c.LateP50, c.LateP99, c.LateP999 = c.LateHist.Percentiles()
	c.ReadLateP50, c.ReadLateP99, c.ReadLateP999 = c.ReadLateHist.Percentiles()
	c.SleepLateP50, c.SleepLateP99, c.SleepLateP999 = c.SleepLateHist.Percentiles()
	c.LockWaitP50, c.LockWaitP99, c.LockWaitP999 = c.LockWaitHist.Percentiles()
	c.SendTimeP50, c.SendTimeP99, c.SendTimeP999 = c.SendTimeHist.Percentiles()
	c.LoopP50, c.LoopP99, c.LoopP999 = c.LoopHist.Percentiles()
	return c
}

// LateBuckets are the upper bounds of the Counters.Late histogram; the last
// bucket counts everything above the last bound.
var LateBuckets = [...]time.Duration{10 * time.Microsecond, 50 * time.Microsecond, 100 * time.Microsecond,
	200 * time.Microsecond, 500 * time.Microsecond, time.Millisecond, 5 * time.Millisecond}

type hop struct {
	l     *link.Link
	dir   int
	idx   int
	cross []*crossSource
	// per-interval tracking
	prev       link.Stats
	maxSojourn time.Duration
	lastDrop   qdisc.DropReason
	lastDropAt clock.Time // modelled instant of the latest drop
}

type flowStats struct {
	departures, bytes         int64
	prevDepartures, prevBytes int64
	drops                     int64
}

type client struct {
	idx, gen int
	addr     netip.AddrPort
	up       netio.Conn
	gso      *netio.GSOWriter // GSO writes on up; nil: plain batches
	entry    int              // the listening socket it sends to: -1 Listen, else its index in Config.Entries
	first    [2]int           // first hop of its path per direction
	last     [2]int           // last hop of its path per direction
	flow     [2]uint64
	lastSeen clock.Time
	out      []netio.Message // pending forward writes on up
	outPkts  []*qdisc.Packet
	dirty    bool
	fs       [2]flowStats
	rd       *reader // the reader of up
}

// Relay is a running bottleneck relay.
type Relay struct {
	cfg     Config
	net     netio.Network
	ln      netio.Conn
	entries []netio.Conn // Config.Entries' sockets
	target  netip.AddrPort
	start   time.Time // wall clock at base
	// host is the process's CPU counters when the relay started
	// (HostReport).
	host hostlimit.Snapshot
	// overhead is added to every datagram's length to get its size on the
	// links (qdisc.Packet.Size), bytes; see Config.Overhead.
	overhead int
	base     clock.Time

	// The active period, for the summary: the first datagram read and the
	// last one read or sent (guarded by mu; active false until traffic).
	active              bool
	firstAt, lastActive clock.Time

	mu       sync.Mutex
	paths    [2][]*hop
	clients  map[netip.AddrPort]*client
	perHost  map[netip.Addr]int // sessions per client IP address
	byIdx    []*client
	freeIdx  []int
	dirty    []*client
	pool     []*qdisc.Packet // free packets with smallBuf buffers
	poolBig  []*qdisc.Packet // free packets with BufSize buffers
	crossP   []*qdisc.Packet
	allocs   int64
	nextID   uint64
	lnOut    [][]netio.Message // pending reverse writes per listening socket (0: Listen, 1+i: Entries[i])
	lnPkts   [][]*qdisc.Packet
	lnGSO    []*netio.GSOWriter // GSO writes per listening socket; nil: plain batches
	cnt      Counters
	pcapOut  *pcapFile
	pcapDrop *pcapFile
	nextStat clock.Time
	lastStat clock.Time
	// lastWrite is the instant of the latest timed write (serviceTimed;
	// Config.Coalesce).
	lastWrite clock.Time
	// serviceNow is the instant service was called with, for lateness.
	serviceNow clock.Time
	// Packet mode (NewPacket): the one fixed session whose up is the
	// outer device, and the flow table for per-flow statistics.
	packet bool
	fixed  *client
	flows  flowTable

	// noSpin: the scheduler never busy-polls the clock (wait), because
	// the process has one P (polling would hold it: the readers, woken
	// by the network poller, could not run until the runtime preempted
	// the scheduler, up to 10 ms, and a read would then hold hundreds of
	// datagrams) or one CPU (polling would compete with the readers'
	// thread for it): it sleeps to the instant (sleeper).
	noSpin bool
	// realtimeErr is why the scheduler's thread did not get the real-time
	// policy (Config.Realtime), for the summary; nil if it did or was not
	// asked to.
	realtimeErr error

	// sl is the scheduler's precise, interruptible sleep; wakeAt is the
	// instant it sleeps until (clock.Never: none), which a reader whose
	// packets fall due sooner moves and wakes it (sl.wake).
	sl     *sleeper
	wakeAt atomic.Int64
	// lead is the learned wake-up lateness of the scheduler's sleeps
	// (Config.Spin 0: it sleeps that much less and polls the rest).
	lead wakeLead
	// loop: the data path is one polling loop (Config.BusyPoll or
	// Config.WaitPoll, poll.go) instead of readers and a scheduler.
	loop bool
	// The polling loop's sockets (only the loop
	// touches these once it has started, poll.go): watched are those it
	// reads when ready reports them (by key; nil: a free key, in
	// freeKeys), polled those it reads every pass (no ReadySet, or not a
	// socket: MemConn).
	polled   []*reader
	ready    *netio.ReadySet
	watched  []*reader
	freeKeys []int32
	readyBuf []int32
	// pollReads counts the loop's reads (tests: an idle socket costs
	// none), pollPasses its passes.
	pollReads  atomic.Uint64
	pollPasses atomic.Uint64
	wg         sync.WaitGroup
	closed     atomic.Bool
}

// New opens the listening socket and builds the links; Run starts relaying.
func New(cfg Config) (*Relay, error) {
	tua, err := net.ResolveUDPAddr("udp", cfg.Target)
	if err != nil {
		return nil, fmt.Errorf("target %q: %v (want host:port)", cfg.Target, err)
	}
	target := tua.AddrPort()
	for i, en := range cfg.Entries {
		if en.Target == "" {
			continue
		}
		if _, err := net.ResolveUDPAddr("udp", en.Target); err != nil {
			return nil, fmt.Errorf("entry %d: target %q: %v (want host:port)", i, en.Target, err)
		}
	}
	r, err := build(cfg, link.UDPOverhead(target.Addr()), false)
	if err != nil {
		return nil, err
	}
	r.target = target
	ln, err := r.net.ListenPacket(cfg.Listen)
	if err != nil {
		r.discard()
		return nil, fmt.Errorf("listen %q: %v", cfg.Listen, err)
	}
	r.ln = ln
	if err := r.checkPoll("the listening socket", ln); err != nil {
		r.closeSockets()
		r.discard()
		return nil, err
	}
	setupSocket(ln)
	r.lnOut = make([][]netio.Message, 1+len(cfg.Entries))
	r.lnPkts = make([][]*qdisc.Packet, 1+len(cfg.Entries))
	r.lnGSO = make([]*netio.GSOWriter, 1+len(cfg.Entries))
	r.lnGSO[0] = r.gsoWriter(ln)
	for i, en := range cfg.Entries {
		c, err := r.net.ListenPacket(en.Listen)
		if err != nil {
			r.closeSockets()
			r.discard()
			return nil, fmt.Errorf("entry %d: listen %q: %v", i, en.Listen, err)
		}
		r.entries = append(r.entries, c)
		if err := r.checkPoll(fmt.Sprintf("entry %d's socket", i), c); err != nil {
			r.closeSockets()
			r.discard()
			return nil, err
		}
		setupSocket(c)
		r.lnGSO[1+i] = r.gsoWriter(c)
	}
	return r, nil
}

// gsoWriter returns a GSO writer for c, or nil (not a UDP socket, no kernel
// support, Config.NoOffload or CCLAB_NO_GSO).
func (r *Relay) gsoWriter(c netio.Conn) *netio.GSOWriter {
	if r.cfg.NoOffload {
		return nil
	}
	return netio.NewGSOWriter(c)
}

// build applies cfg's defaults and builds the links, the cross-traffic
// sources and the capture files of a relay (in packet mode if packet) whose
// per-packet overhead is auto when cfg.Overhead is 0; the caller attaches
// the endpoints.
func build(cfg Config, auto int, packet bool) (*Relay, error) {
	cfg = cfg.withDefaults()
	if err := cfg.checkModes(); err != nil {
		return nil, err
	}
	r := &Relay{
		cfg: cfg, net: cfg.Network, clients: map[netip.AddrPort]*client{}, perHost: map[netip.Addr]int{},
		start: time.Now(), base: clock.Start, packet: packet, loop: cfg.BusyPoll || cfg.WaitPoll, host: hostlimit.Take(),
	}
	r.overhead = cfg.Overhead
	if r.overhead == 0 {
		r.overhead = auto
	}
	if cfg.PayloadOnly {
		r.overhead = 0
	}
	if r.net == nil {
		r.net = netio.UDP
	}
	if err := r.buildPaths(); err != nil {
		return nil, err
	}
	if err := r.addCross(); err != nil {
		return nil, err
	}
	if err := r.checkEntries(); err != nil {
		return nil, err
	}
	if err := r.openCaptures(); err != nil {
		return nil, err
	}
	var err error
	if r.sl, err = newSleeper(cfg.LockThread || cfg.Realtime, cfg.Realtime); err != nil {
		r.discard()
		return nil, fmt.Errorf("scheduler: %v", err)
	}
	return r, nil
}

// withDefaults returns cfg with its zero settings replaced by their
// defaults.
func (cfg Config) withDefaults() Config {
	if cfg.Interval <= 0 {
		cfg.Interval = time.Second
	}
	if cfg.BufSize <= 0 {
		cfg.BufSize = 9216
	}
	if cfg.BufSize > netio.MaxDatagram {
		cfg.BufSize = netio.MaxDatagram
	}
	if cfg.MaxClients <= 0 {
		cfg.MaxClients = DefaultMaxClients
	}
	if cfg.MaxClientsPerHost <= 0 {
		cfg.MaxClientsPerHost = DefaultMaxClientsPerHost
	}
	if cfg.EvictIdle <= 0 {
		cfg.EvictIdle = DefaultEvictIdle
	}
	if cfg.ClientTimeout <= 0 {
		cfg.ClientTimeout = 2 * time.Minute
	}
	if cfg.Coalesce == 0 {
		cfg.Coalesce = DefaultCoalesce
	}
	return cfg
}

// checkModes checks the overhead and that the scheduling modes asked for
// go together and work on this kernel.
func (cfg Config) checkModes() error {
	if cfg.Overhead < 0 || cfg.Overhead > 65535 {
		return fmt.Errorf("overhead %d: must be 0..65535 bytes", cfg.Overhead)
	}
	if cfg.BusyPoll && cfg.WaitPoll {
		return errPollBoth
	}
	if cfg.BusyPoll && cfg.Realtime {
		return errPollRealtime
	}
	if cfg.WaitPoll {
		if err := netio.CheckWait(); err != nil {
			return fmt.Errorf("the waiting loop cannot block in the kernel: %w", err)
		}
	}
	if cfg.Realtime {
		return checkRealtime()
	}
	return nil
}

// buildPaths builds the links of both directions (one default hop where
// a direction has none), each with its random stream.
func (r *Relay) buildPaths() error {
	cfg := r.cfg
	seed := rand.New(rand.NewPCG(cfg.Seed, 0x62746c6e)) // "btln"
	for dir := 0; dir < 2; dir++ {
		hops := cfg.Hops[dir]
		if len(hops) == 0 {
			hops = []link.Config{{}}
		}
		for i, hc := range hops {
			rnd := rand.New(rand.NewPCG(seed.Uint64(), seed.Uint64()))
			if i < len(cfg.Streams[dir]) && cfg.Streams[dir][i] != "" {
				rnd = traffic.Stream(cfg.Seed, cfg.Streams[dir][i])
			}
			h, err := r.newHop(dir, i, hc, rnd)
			if err != nil {
				return err
			}
			r.paths[dir] = append(r.paths[dir], h)
		}
	}
	return nil
}

// newHop builds hop i of direction dir: its link, whose events update the
// hop's per-interval drop and sojourn tracking before Config.Sink sees them.
func (r *Relay) newHop(dir, i int, hc link.Config, rnd *rand.Rand) (*hop, error) {
	h := &hop{dir: dir, idx: i}
	index := int32(dir*1000 + i)
	if i < len(r.cfg.Links[dir]) {
		index = r.cfg.Links[dir][i]
	}
	ext := r.cfg.Sink
	sink := event.Func(func(e *event.Event) {
		switch e.Kind {
		case event.Drop:
			h.lastDrop = qdisc.DropReason(e.Reason)
			h.lastDropAt = e.Time
		case event.Dequeue:
			if e.Sojourn > h.maxSojourn {
				h.maxSojourn = e.Sojourn
			}
		}
		if ext != nil {
			ext.Record(e)
		}
	})
	l, err := link.New(hc, link.Env{
		Rand:  rnd,
		Sink:  sink,
		Index: index,
		Free:  func(p *qdisc.Packet) { r.dropped(h, p) },
	})
	if err != nil {
		return nil, fmt.Errorf("%s hop %d: %v", dirNames[dir], i, err)
	}
	h.l = l
	return h, nil
}

// addCross attaches Config.Cross's generators to their hops.
func (r *Relay) addCross() error {
	for i, cc := range r.cfg.Cross {
		d := Fwd
		if cc.Dir == "rev" {
			d = Rev
		}
		if cc.Hop >= len(r.paths[d]) {
			return fmt.Errorf("cross traffic %d: hop=%d but the %s path has %d hop(s) (0..%d)", i, cc.Hop, dirNames[d], len(r.paths[d]), len(r.paths[d])-1)
		}
		stream, flow := cc.Stream, cc.Flow
		if stream == "" {
			stream = crossStreamName(i)
		}
		if flow == 0 {
			flow = uint64(0xC0000000 + i)
		}
		g, err := newCrossGen(cc.Gen, r.cfg.Seed, stream)
		if err != nil {
			return fmt.Errorf("cross traffic %d: %v", i, err)
		}
		h := r.paths[d][cc.Hop]
		h.cross = append(h.cross, &crossSource{gen: g, flow: flow})
	}
	return nil
}

// checkEntries checks Config.Entries against the paths built.
func (r *Relay) checkEntries() error {
	entries := r.cfg.Entries
	if len(entries) > 0 && len(r.paths[Fwd]) != len(r.paths[Rev]) {
		return fmt.Errorf("entries need as many reverse hops as forward hops (got %d and %d)", len(r.paths[Rev]), len(r.paths[Fwd]))
	}
	for i, en := range entries {
		if en.First < 0 || en.Last < en.First || en.Last >= len(r.paths[Fwd]) {
			return fmt.Errorf("entry %d: hops %d-%d outside 0..%d", i, en.First, en.Last, len(r.paths[Fwd])-1)
		}
	}
	if r.packet && len(entries) > 0 {
		return fmt.Errorf("entries: a packet-mode relay has no listening sockets")
	}
	return nil
}

// openCaptures opens Config.Pcap's capture files (sent and dropped).
func (r *Relay) openCaptures() error {
	if r.cfg.Pcap == "" {
		return nil
	}
	var err error
	if r.pcapOut, err = newPcap(r.cfg.Pcap, r.cfg.PcapSnap, r.packet); err != nil {
		return fmt.Errorf("pcap: %v", err)
	}
	if r.pcapDrop, err = newPcap(DropsPcapName(r.cfg.Pcap), r.cfg.PcapSnap, r.packet); err != nil {
		r.discard()
		return fmt.Errorf("pcap: %v", err)
	}
	return nil
}

// discard releases what build opened for a relay that will not run: its
// capture files and the scheduler's sleeper (an eventfd on Linux).
func (r *Relay) discard() {
	_ = r.pcapOut.close()
	_ = r.pcapDrop.close()
	if r.sl != nil {
		r.sl.close()
	}
}

// closeSockets closes the listening sockets (a failed New).
func (r *Relay) closeSockets() {
	r.ln.Close()
	for _, c := range r.entries {
		c.Close()
	}
}

// DefaultCoalesce is Config.Coalesce's default: at most 50 µs of added
// lateness, and at 1 Gbit/s of 1500-byte datagrams (one every 12 µs) about
// four datagrams per write.
const DefaultCoalesce = 50 * time.Microsecond

// SocketBuffer is the socket send buffer size the relay asks for, bytes
// (the kernel caps it at net.core.wmem_max).
const SocketBuffer = 4 << 20

// ReceiveBuffer is the socket receive buffer size the relay asks for,
// bytes: about 100 ms of 1.5 Gbit/s, so that a reader that waits for a CPU
// on a busy machine does not lose datagrams (netio.RaiseReceiveBuffer: past
// net.core.rmem_max with CAP_NET_ADMIN).
const ReceiveBuffer = 16 << 20

// setupSocket prepares a new UDP socket of the relay: big buffers, and
// kernel receive stamps (read lateness) from the start,
// so that datagrams queued before its reader runs are stamped too.
func setupSocket(c netio.Conn) {
	if u, ok := c.(*netio.UDPConn); ok {
		netio.RaiseReceiveBuffer(u, ReceiveBuffer)
		_ = u.Raw().SetWriteBuffer(SocketBuffer)
		netio.EnableRxTimestamps(u)
	}
}

// Overhead returns the bytes added to every datagram's length to get its
// size on the links (see Config.Overhead).
func (r *Relay) Overhead() int { return r.overhead }

// Addr returns the listening address.
func (r *Relay) Addr() netip.AddrPort { return r.ln.LocalAddr() }

// EntryAddr returns the listening address of Config.Entries[i].
func (r *Relay) EntryAddr(i int) netip.AddrPort { return r.entries[i].LocalAddr() }

// now reads the relay's clock.
func (r *Relay) now() clock.Time { return r.base.Add(time.Since(r.start)) }

// Now returns the relay's clock: the time base of the events it gives
// Config.Sink.
func (r *Relay) Now() clock.Time { return r.now() }

// FlowKey returns the flow key (qdisc.Packet.Flow, event.Event.Flow) the
// relay gives the datagrams of the client at addr in direction dir (Fwd:
// client → target, Rev: target → client) when they are keyed by their UDP
// 5-tuple (always, unless Config.ClassifyCID recognises them).
func (r *Relay) FlowKey(addr netip.AddrPort, dir int) uint64 {
	if dir == Rev {
		return qdisc.FlowKey(r.target, addr)
	}
	return qdisc.FlowKey(addr, r.target)
}

// wall converts a modelled instant to wall-clock time (for pcap timestamps).
func (r *Relay) wall(t clock.Time) time.Time { return r.start.Add(t.Sub(r.base)) }

// Start starts the reader and scheduler goroutines.
func (r *Relay) Start() {
	now := r.now()
	r.mu.Lock()
	for d := 0; d < 2; d++ {
		for _, h := range r.paths[d] {
			for _, g := range h.cross {
				g.start(now)
			}
		}
	}
	r.lastStat = now
	r.nextStat = now.Add(r.cfg.Interval)
	r.mu.Unlock()
	if r.loop {
		// Without epoll (not Linux) the loop reads every socket each pass.
		r.ready, _ = netio.NewReadySet()
	}
	// Offloads are switched on before any reader runs: a datagram the
	// kernel queues before UDP_GRO is set arrives segmented.
	r.addReader(r.newReader(r.ln, nil, -1, r.offload(r.ln)))
	for i, c := range r.entries {
		r.addReader(r.newReader(c, nil, i, r.offload(c)))
	}
	if r.packet {
		r.addReader(r.newReader(r.fixed.up, r.fixed, -1, r.offload(r.fixed.up)))
	}
	r.wg.Add(1)
	if r.loop {
		go r.pollLoop()
	} else {
		go r.schedule()
	}
}

// addReader starts relaying what rd's socket receives: a reader goroutine
// (readLoop), or with the polling loop (Config.BusyPoll, WaitPoll) one
// more socket it
// reads (pollLoop, which alone touches its socket lists: the loop itself
// opens the sessions whose sockets it adds, and Start adds the first ones
// before the loop starts).
func (r *Relay) addReader(rd *reader) {
	if r.loop {
		r.watch(rd)
		return
	}
	r.wg.Add(1)
	go r.readLoop(rd)
}

// NewBatch returns n messages with size-byte buffers, ready for ReadBatch.
func NewBatch(n, size int) []netio.Message {
	ms := make([]netio.Message, n)
	for i := range ms {
		ms[i].Buf = make([]byte, size)
	}
	return ms
}

// pop removes and returns the last element of a free list; ok is false if
// the list is empty.
func pop[T any](list *[]T) (v T, ok bool) {
	n := len(*list)
	if n == 0 {
		return v, false
	}
	v = (*list)[n-1]
	*list = (*list)[:n-1]
	return v, true
}

// smallBuf is the buffer size of the small packet pool, bytes: datagrams up
// to this size (nearly all) are copied into small buffers so that queued
// packets do not each hold a BufSize buffer.
const smallBuf = 2048

// getPkt returns a pooled packet whose buffer holds size bytes.
func (r *Relay) getPkt(size int) *qdisc.Packet {
	pool, capacity := &r.pool, smallBuf
	if size > smallBuf {
		pool, capacity = &r.poolBig, r.cfg.BufSize
	}
	if p, ok := pop(pool); ok {
		return p
	}
	r.allocs++
	return &qdisc.Packet{Buf: make([]byte, capacity)}
}

func (r *Relay) putPkt(p *qdisc.Packet) {
	if p.Ctx == 0 {
		r.crossP = append(r.crossP, p)
		return
	}
	p.Buf = p.Buf[:cap(p.Buf)]
	if cap(p.Buf) > smallBuf {
		r.poolBig = append(r.poolBig, p)
	} else {
		r.pool = append(r.pool, p)
	}
}

// ctx encodes (generation, client index, direction) into Packet.Ctx; 0 is
// cross traffic.
func ctxOf(c *client, dir int) uintptr {
	return uintptr(uint64(c.gen)<<32 | uint64(c.idx+1)<<1 | uint64(dir))
}

func (r *Relay) clientOf(ctx uintptr) (*client, int) {
	v := uint64(ctx)
	idx := int(v>>1&0x7fffffff) - 1
	gen := int(v >> 32)
	if idx < 0 || idx >= len(r.byIdx) {
		return nil, 0
	}
	c := r.byIdx[idx]
	if c == nil || c.gen != gen {
		return nil, 0
	}
	return c, int(v & 1)
}

// offload switches receive offload (UDP GRO) on for conn unless the
// configuration forbids it, and says whether it is on.
func (r *Relay) offload(conn netio.Conn) bool {
	return !r.cfg.NoOffload && netio.EnableGRO(conn)
}

// reader is one socket's read state: a listening socket (c == nil,
// forward direction; entry is its index in Config.Entries, -1 for Listen)
// or client c's upstream socket (reverse direction), and its read buffers.
// A reader goroutine (readLoop) or the busy-polling loop (pollLoop) owns it.
type reader struct {
	conn  netio.Conn
	poll  netio.Poller // conn, when it is polled (the polling loop)
	key   int32        // pollLoop: its key in Relay.ready, -1 if polled every pass
	c     *client
	entry int
	dir   int
	ms    []netio.Message
	full  int  // messages per read when the batch has grown
	size  int  // bytes per message buffer
	grow  bool // the last read filled the batch: grow it before the next
}

// newReader prepares the reads of conn (see reader); gro says whether
// conn has receive offload on (offload).
func (r *Relay) newReader(conn netio.Conn, c *client, entry int, gro bool) *reader {
	rd := &reader{conn: conn, c: c, entry: entry}
	if c != nil {
		rd.dir = Rev
	}
	rd.poll, _ = conn.(netio.Poller)
	// The read buffers belong to this reader; each datagram is copied into
	// a pooled packet of the right size class. With GRO a read may hold
	// several datagrams of one sender (netio.Message.Count): fewer, larger
	// buffers.
	rd.full, rd.size = batchSize, r.cfg.BufSize
	if gro {
		rd.full, rd.size = groBatch, netio.GROBufSize
	}
	if r.loop {
		// The polling loop comes back to the socket within µs: smaller
		// reads bound how long one recvmmsg holds up the writes that are
		// due (a full GRO batch after a stall is up to 1024 datagrams,
		// 1.5 MB to copy, 100-300 µs).
		rd.full = pollBatch
		if gro {
			rd.full = pollGROBatch
		}
	}
	// A client session's reader starts with one buffer and doubles its
	// batch whenever a read fills it, up to the full batch: an idle or
	// one-datagram session (e.g. one of a flood of ports) holds one buffer,
	// not the full batch (64 × 9 KiB, or 16 × 64 KiB with GRO), so the
	// sessions' memory stays bounded by their traffic (docs/security.md).
	if c != nil {
		rd.ms = NewBatch(1, rd.size)
	} else {
		rd.ms = NewBatch(rd.full, rd.size)
	}
	return rd
}

// read reads one batch, blocking (ReadBatch) or not (try: TryReadBatch,
// 0 if nothing is ready), growing the batch first if the last read filled
// it.
func (rd *reader) read(try bool) (int, error) {
	if rd.grow {
		rd.ms = append(rd.ms, NewBatch(min(len(rd.ms), rd.full-len(rd.ms)), rd.size)...)
	}
	var n int
	var err error
	if try {
		n, err = rd.poll.TryReadBatch(rd.ms)
	} else {
		n, err = rd.conn.ReadBatch(rd.ms)
	}
	rd.grow = err == nil && n == len(rd.ms) && len(rd.ms) < rd.full
	return n, err
}

// readLoop reads batches from rd's socket and relays them (handle) until
// the socket closes; it wakes the scheduler when the packets of a read
// fall due before the instant it sleeps to.
func (r *Relay) readLoop(rd *reader) {
	defer r.wg.Done()
	for {
		n, err := rd.read(false)
		if err != nil {
			if errors.Is(err, netio.ErrClosed) || r.closed.Load() {
				return
			}
			r.mu.Lock()
			r.cnt.ReadErrors++
			r.mu.Unlock()
			continue
		}
		t := time.Now()
		r.mu.Lock()
		r.handle(rd, n, t)
		d := r.deadline()
		r.mu.Unlock()
		if d != clock.Never {
			// Wake the scheduler if it sleeps past d; the swap keeps
			// other readers from waking it again for later instants.
			if w := clock.Time(r.wakeAt.Load()); (w == clock.Never || d < w) && r.wakeAt.CompareAndSwap(int64(w), int64(d)) {
				r.sl.wake()
			}
		}
	}
}

// handle relays the n messages rd's read returned: it offers their
// datagrams to the first hop of their path, writing what falls due
// between the messages, then writes whatever is already due; t is when
// the read returned. Called with mu held.
func (r *Relay) handle(rd *reader, n int, t time.Time) {
	now := r.base.Add(t.Sub(r.start))
	wallNs := t.UnixNano() // for the kernel's stamps, which are on the wall clock
	r.cnt.ReadCalls++
	due := r.writeDue()
	for i := 0; i < n; i++ {
		if i > 0 && due != clock.Never {
			// A large batch (with GRO up to 16 × 64 datagrams, hundreds
			// of µs of copying and queueing) would hold back the writes
			// that fall due meanwhile, and the scheduler waits for the
			// lock: write them between the batch's messages, and take
			// the rest of the batch as arriving now (the instant the
			// reader got to it; the links treat earlier instants as
			// this one anyway).
			if t := r.now(); t >= due {
				now = t
				r.serviceTimed(now)
				due = r.writeDue()
			}
		}
		m := &rd.ms[i]
		if m.RxTime != 0 { // the socket has kernel receive stamps (setupSocket)
			r.readLate(time.Duration(wallNs - m.RxTime))
		}
		cl := rd.c
		if cl == nil {
			cl = r.clientFor(m.Addr, now, rd.entry)
			if cl == nil {
				continue
			}
		}
		if cl.up == nil { // session expired while we were reading
			continue
		}
		cl.lastSeen = now
		if m.N >= len(m.Buf) {
			r.cnt.Truncated++
		}
		k := m.Count()
		if k > 1 {
			r.cnt.GROReads++
		}
		for j := 0; j < k; j++ {
			r.receive(cl, rd.dir, m.Datagram(j), m.ECN, now)
		}
	}
	r.service(now)
}

// readLate counts a read d after the kernel received the datagram. Called
// with mu held.
func (r *Relay) readLate(d time.Duration) {
	r.cnt.ReadLateHist.Add(d)
	r.cnt.ReadLateMax = max(r.cnt.ReadLateMax, d)
}

// groBatch is the number of messages per read on a socket with GRO: each
// buffer holds up to 64 datagrams (netio.GROBufSize).
const groBatch = 16

// pollBatch and pollGROBatch are the messages per read of the busy-polling
// loop (Config.BusyPoll, WaitPoll), without and with GRO: at most 16 datagrams, or 2
// GRO messages of up to 64 (about 190 KB of 1500-byte datagrams, some 20 µs
// of copying), so that one read never holds up the due writes for long.
const (
	pollBatch    = 16
	pollGROBatch = 2
)

// receive offers datagram b of client cl, read at now in direction dir, to
// the first hop of its path. Called with mu held.
func (r *Relay) receive(cl *client, dir int, b []byte, cp ecn.Codepoint, now clock.Time) {
	size := len(b)
	if !r.active {
		r.active, r.firstAt = true, now
	}
	r.lastActive = max(r.lastActive, now)
	r.cnt.Received[dir]++
	r.cnt.ReceivedBytes[dir] += int64(size)
	var key uint64
	if r.packet {
		var ok bool
		if key, ok = r.classify(b, dir, now); !ok {
			r.cnt.Malformed++
			return
		}
	}
	p := r.getPkt(size)
	p.Buf = p.Buf[:size]
	copy(p.Buf, b)
	p.Size = size + r.overhead
	p.ECN = cp
	p.Flow = cl.flow[dir]
	if r.packet {
		p.Flow = key
	} else if r.cfg.ClassifyCID {
		if k, ok := cidFlow(p.Buf); ok {
			p.Flow = k
		}
	}
	p.Ctx = ctxOf(cl, dir)
	p.Enqueued = clock.Never
	p.Label = 0
	r.nextID++
	p.ID = r.nextID
	r.sendHop(r.paths[dir][cl.first[dir]], now, p)
}

// clientFor finds or opens the session for a client address that sent to
// the listening socket of entry (-1: Listen). Called with mu held.
func (r *Relay) clientFor(addr netip.AddrPort, now clock.Time, entry int) *client {
	if r.packet {
		return r.fixed
	}
	if c, ok := r.clients[addr]; ok {
		return c
	}
	if r.closed.Load() {
		// Close has already closed every session it found under mu: a
		// session opened now would never be closed, and Close would wait
		// for its reader for ever.
		return nil
	}
	host := addr.Addr().Unmap()
	switch {
	case r.perHost[host] >= r.cfg.MaxClientsPerHost:
		// A host's new port replaces its own idlest session.
		r.evict(r.idlest(func(c *client) bool { return c.addr.Addr().Unmap() == host }))
	case len(r.clients) >= r.cfg.MaxClients:
		v := r.idlest(nil)
		if v == nil || now.Sub(v.lastSeen) < r.cfg.EvictIdle {
			r.cnt.ClientLimit++
			return nil
		}
		r.evict(v)
	}
	dst := r.cfg.Target
	if entry >= 0 && r.cfg.Entries[entry].Target != "" {
		dst = r.cfg.Entries[entry].Target
	}
	up, err := r.net.DialPacket("", dst)
	if err != nil {
		r.cnt.DialErrors++
		return nil
	}
	if r.checkPoll("a session's upstream socket", up) != nil {
		up.Close()
		r.cnt.DialErrors++
		return nil
	}
	setupSocket(up)
	gso := r.gsoWriter(up)
	idx, ok := pop(&r.freeIdx)
	if !ok {
		idx = len(r.byIdx)
		r.byIdx = append(r.byIdx, nil)
	}
	c := &client{idx: idx, addr: addr, up: up, gso: gso, lastSeen: now, gen: int(r.cnt.Clients & 0x7fffffff)}
	c.entry = entry
	c.last = [2]int{len(r.paths[Fwd]) - 1, len(r.paths[Rev]) - 1}
	if entry >= 0 {
		en, k := r.cfg.Entries[entry], len(r.paths[Fwd])
		c.first = [2]int{en.First, k - 1 - en.Last}
		c.last = [2]int{en.Last, k - 1 - en.First}
	}
	c.flow[Fwd] = r.FlowKey(addr, Fwd)
	c.flow[Rev] = r.FlowKey(addr, Rev)
	r.byIdx[idx] = c
	r.clients[addr] = c
	r.perHost[host]++
	r.cnt.Clients++
	c.rd = r.newReader(up, c, -1, r.offload(up))
	r.addReader(c.rd)
	return c
}

// runCross injects every cross-traffic datagram due at or before now into h.
func (r *Relay) runCross(h *hop, now clock.Time) {
	for _, g := range h.cross {
		for g.next != clock.Never && g.next <= now {
			p, ok := pop(&r.crossP)
			if !ok {
				p = &qdisc.Packet{}
			}
			*p = qdisc.Packet{Size: g.size + r.overhead, Flow: g.flow, ECN: 0}
			r.nextID++
			p.ID = r.nextID
			h.l.Inject(g.next, p)
			g.advance()
		}
	}
}

func (r *Relay) sendHop(h *hop, at clock.Time, p *qdisc.Packet) {
	r.runCross(h, at)
	h.l.Send(at, p)
}

// serviceTimed is service at a write the coalescing bound counts from (the
// scheduler's, and a reader's between the messages of a batch): a write
// moves lastWrite to now. Called with mu held.
func (r *Relay) serviceTimed(now clock.Time) {
	if r.service(now) {
		r.lastWrite = now
	}
}

// service moves every packet due at now along the paths and writes the
// packets that leave the last hops; it reports whether it wrote any.
// Called with mu held.
func (r *Relay) service(now clock.Time) bool {
	r.serviceNow = now
	for dir := 0; dir < 2; dir++ {
		hops := r.paths[dir]
		for i, h := range hops {
			r.runCross(h, now)
			for {
				p, at := h.l.DeliverAt(now)
				if p == nil {
					break
				}
				if p.Ctx == 0 {
					r.putPkt(p)
					continue
				}
				if c, _ := r.clientOf(p.Ctx); c != nil && i < c.last[dir] {
					r.sendHop(hops[i+1], at, p)
					continue
				}
				r.output(dir, p, at)
			}
		}
	}
	return r.flush()
}

func (r *Relay) output(dir int, p *qdisc.Packet, at clock.Time) {
	c, _ := r.clientOf(p.Ctx)
	if c == nil || c.up == nil {
		r.cnt.Orphans++
		r.putPkt(p)
		return
	}
	r.lastActive = max(r.lastActive, at)
	late := r.serviceNow.Sub(at) + r.cfg.InjectWriteLate
	b := 0
	for b < len(LateBuckets) && late > LateBuckets[b] {
		b++
	}
	r.cnt.Late[b]++
	r.cnt.LateHist.Add(late)
	if late > r.cnt.LateMax {
		r.cnt.LateMax = late
	}
	fs := &c.fs[dir]
	fs.departures++
	fs.bytes += int64(p.Size)
	m := netio.Message{Buf: p.Buf, N: len(p.Buf), ECN: p.ECN}
	if r.packet {
		r.outputPacket(p, at)
	} else if dir == Fwd {
		r.pcapOut.write(r.wall(at), c.addr, r.target, uint8(p.ECN), p.Buf)
	} else {
		r.pcapOut.write(r.wall(at), r.target, c.addr, uint8(p.ECN), p.Buf)
	}
	if dir == Fwd {
		c.out = append(c.out, m)
		c.outPkts = append(c.outPkts, p)
		if !c.dirty {
			c.dirty = true
			r.dirty = append(r.dirty, c)
		}
		return
	}
	m.Addr = c.addr
	r.lnOut[c.entry+1] = append(r.lnOut[c.entry+1], m)
	r.lnPkts[c.entry+1] = append(r.lnPkts[c.entry+1], p)
}

// flush writes pending batches and reports whether there were any. Called
// with mu held.
func (r *Relay) flush() bool {
	wrote := len(r.dirty) > 0
	for _, c := range r.dirty {
		r.write(c.up, &c.gso, Fwd, c.out, c.outPkts)
		clear(c.out)
		c.out = c.out[:0]
		c.outPkts = c.outPkts[:0]
		c.dirty = false
	}
	clear(r.dirty)
	r.dirty = r.dirty[:0]
	for i, out := range r.lnOut {
		if len(out) == 0 {
			continue
		}
		ln := r.ln
		if i > 0 {
			ln = r.entries[i-1]
		}
		r.write(ln, &r.lnGSO[i], Rev, out, r.lnPkts[i])
		clear(out)
		r.lnOut[i] = out[:0]
		r.lnPkts[i] = r.lnPkts[i][:0]
		wrote = true
	}
	return wrote
}

// write sends ms on conn, with GSO runs if *gso is not nil (falling back to
// plain batches for good if the kernel refuses GSO), and recycles their
// packets. Called with mu held.
func (r *Relay) write(conn netio.Conn, gso **netio.GSOWriter, dir int, ms []netio.Message, pk []*qdisc.Packet) {
	start := time.Now()
	sent := 0
	for sent < len(ms) {
		var n, calls int
		var err error
		if *gso != nil {
			n, calls, err = (*gso).WriteMessages(ms[sent:])
			if errors.Is(err, netio.ErrGSOUnsupported) {
				*gso, err = nil, nil // plain batches from now on, starting with the rest of these
				if n == 0 {
					continue
				}
			}
		} else {
			n, err = conn.WriteBatch(ms[sent:])
			calls = (n + batchSize - 1) / batchSize // netio writes up to 64 datagrams per sendmmsg
		}
		r.cnt.WriteCalls += int64(calls)
		for _, m := range ms[sent : sent+n] {
			r.cnt.SentBytes[dir] += int64(m.N)
		}
		r.cnt.Sent[dir] += int64(n)
		sent += n
		if err != nil || n == 0 {
			// Skip the datagram that failed (e.g. ICMP-reported refusal) and go on.
			r.cnt.SendErrors++
			sent++
		}
	}
	r.cnt.SendTimeHist.Add(time.Since(start))
	for i, p := range pk {
		r.putPkt(p)
		pk[i] = nil
	}
}

// dropped is every link's Env.Free. Called with mu held.
func (r *Relay) dropped(h *hop, p *qdisc.Packet) {
	if p.Ctx != 0 {
		if c, dir := r.clientOf(p.Ctx); c != nil {
			c.fs[dir].drops++
			if r.packet {
				r.droppedPacket(h, p)
			} else if r.pcapDrop != nil {
				src, dst := c.addr, r.target
				if dir == Rev {
					src, dst = dst, src
				}
				r.pcapDrop.write(r.wall(h.lastDropAt), src, dst, uint8(p.ECN), p.Buf)
			}
		}
	}
	r.putPkt(p)
}

// deadline is the earliest instant any hop or generator needs control.
func (r *Relay) deadline() clock.Time {
	d := clock.Never
	for dir := 0; dir < 2; dir++ {
		for _, h := range r.paths[dir] {
			d = clock.Earliest(d, h.l.Deadline())
			for _, g := range h.cross {
				d = clock.Earliest(d, g.next)
			}
		}
	}
	return d
}

// writeDue is the earliest instant a packet reaches the far end of a hop
// (a write, or a hand-over to the next hop), not before the coalescing
// bound after the scheduler's last write (Config.Coalesce); clock.Never if
// none is in flight. Called with mu held.
func (r *Relay) writeDue() clock.Time {
	d := clock.Never
	for dir := 0; dir < 2; dir++ {
		for _, h := range r.paths[dir] {
			d = clock.Earliest(d, h.l.DeliveryDeadline())
		}
	}
	return coalesce(d, r.lastWrite, r.cfg.Coalesce)
}

// schedule is the real-time driver: it wakes at every deadline.
func (r *Relay) schedule() {
	defer r.wg.Done()
	if r.cfg.LockThread || r.cfg.Realtime {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		netio.PreciseTimers()
	}
	if r.cfg.Realtime {
		defer r.goRealtime()()
	}
	r.noSpin = runtime.GOMAXPROCS(0) == 1 || runtime.NumCPU() == 1
	nextExpire := r.now().Add(time.Second)
	over := time.Duration(-1)
	for {
		if r.closed.Load() {
			return
		}
		// The instant is read once the lock is held: a reader may hold it
		// for a while (a large read), and the packets that fell due
		// meanwhile go out in this write, not the next.
		woke := r.now()
		r.mu.Lock()
		now := r.now()
		r.cnt.LockWaitHist.Add(now.Sub(woke))
		if over >= 0 {
			r.cnt.SleepLateHist.Add(over)
		}
		r.cnt.Lead, _ = r.sleepLead()
		r.serviceTimed(now)
		r.housekeep(now, &nextExpire)
		d := r.nextWake(nextExpire)
		r.wakeAt.Store(int64(d))
		r.mu.Unlock()
		over = r.wait(d)
	}
}

// goRealtime gives the calling goroutine's locked OS thread the real-time
// policy (Config.Realtime; New checked that it is allowed: checkRealtime)
// and returns what gives the policy back, to be deferred. The thread gets
// its policy back before it is unlocked; if it could not, it stays locked
// (a second lock, never undone) and ends with its goroutine, so no other
// goroutine runs on it real-time. If the policy could not be set, the
// summary says why (realtimeErr).
func (r *Relay) goRealtime() (undo func()) {
	restore, err := setRealtime()
	if err != nil {
		r.mu.Lock()
		r.realtimeErr = err
		r.mu.Unlock()
		return func() {}
	}
	return func() {
		if !restore() {
			runtime.LockOSThread()
		}
	}
}

// housekeep writes the statistics line when one is due and closes idle
// sessions once a second (*nextExpire: the next time). Called with mu held
// by the scheduler or the polling loop.
func (r *Relay) housekeep(now clock.Time, nextExpire *clock.Time) {
	if now >= r.nextStat {
		r.writeStats(now, false)
		for r.nextStat <= now {
			r.nextStat = r.nextStat.Add(r.cfg.Interval)
		}
	}
	if now >= *nextExpire {
		r.expire(now)
		*nextExpire = now.Add(time.Second)
	}
}

// nextWake is the next instant the scheduler or the polling loop must run
// at although nothing arrives: the links' next deadline (after Coalesce),
// the next statistics line and, while sessions or flows exist, the next
// expiry check (none is due without them). Called with mu held.
func (r *Relay) nextWake(nextExpire clock.Time) clock.Time {
	d := clock.Earliest(coalesce(r.deadline(), r.lastWrite, r.cfg.Coalesce), r.nextStat)
	if len(r.clients) > 0 || r.packet {
		d = clock.Earliest(d, nextExpire)
	}
	return d
}

// coalesce returns when the scheduler wakes for deadline d after its last
// write at lastWrite: not before lastWrite+c (Config.Coalesce), so that the
// packets due until then go out in one write.
func coalesce(d, lastWrite clock.Time, c time.Duration) clock.Time {
	if c > 0 && d != clock.Never && d < lastWrite.Add(c) {
		return lastWrite.Add(c)
	}
	return d
}

// sleepLead returns how long before an instant the scheduler stops
// sleeping and polls the clock, and whether that lead is learned
// (Config.Spin 0: wakeLead) rather than fixed (Config.Spin). On one CPU or
// one P (noSpin), for a real-time thread and with a negative Spin there is
// no lead: the polling after an early wake-up takes CPU from the readers,
// and on a shared CPU from the relay's fair share (measured pinned at load
// 8: error p99 1.8-2.2 ms with the lead at 86 % of the CPU, against
// 1.0-1.2 ms sleeping to each instant at 61-64 %).
func (r *Relay) sleepLead() (lead time.Duration, learned bool) {
	switch {
	case r.noSpin || r.cfg.Realtime || r.cfg.Spin < 0:
		return 0, false
	case r.cfg.Spin == 0:
		return r.lead.lead(), true
	}
	return r.cfg.Spin, false
}

// wait returns at d, or when woken (a reader's packets fall due sooner,
// Close). It sleeps (sleeper: precise and interruptible) until the lead
// (sleepLead) before d and polls the clock for the rest; with a learned
// lead, if d is nearer than that it sleeps once as briefly as it can, which
// takes about that long. It returns how late its last sleep woke against
// the instant asked for (the overshoot), or -1 if it did not sleep to the
// end of one.
func (r *Relay) wait(d clock.Time) time.Duration {
	over := time.Duration(-1)
	lead, adaptive := r.sleepLead()
	for {
		now := r.now()
		if now >= d || r.closed.Load() {
			return over
		}
		rem := d.Sub(now)
		if rem <= lead && (!adaptive || over >= 0) {
			// Busy-poll the clock without yielding: runtime.Gosched would put
			// the scheduler on the global run queue, behind whatever else is
			// runnable (measured: p99 lateness several ms under CPU load,
			// against under 1 ms without yielding). The window is short (the
			// lead), and the sleeps give the P back between writes.
			continue
		}
		s := max(rem-lead, time.Nanosecond)
		if r.sl.sleep(s) {
			return over
		}
		over = r.now().Sub(now.Add(s)) // negative: the sleep was cut short (EINTR)
		if adaptive && over >= 0 {
			r.lead.observe(over)
		}
	}
}

// expire closes client sessions idle for ClientTimeout (in packet mode:
// forgets flows idle that long). Called with mu held.
func (r *Relay) expire(now clock.Time) {
	r.flows.expire(now, r.cfg.ClientTimeout)
	for _, c := range r.clients {
		if now.Sub(c.lastSeen) < r.cfg.ClientTimeout {
			continue
		}
		r.closeClient(c)
		r.cnt.Expired++
	}
}

// closeClient ends a client's session: its upstream socket closes (which
// ends its reader) and its packets still on the links become orphans.
// Called with mu held.
func (r *Relay) closeClient(c *client) {
	delete(r.clients, c.addr)
	host := c.addr.Addr().Unmap()
	if r.perHost[host]--; r.perHost[host] <= 0 {
		delete(r.perHost, host)
	}
	r.byIdx[c.idx] = nil
	r.freeIdx = append(r.freeIdx, c.idx)
	if r.loop {
		r.unwatch(c.rd) // (before the close: its descriptor's number may be reused at once)
	}
	up := c.up
	c.up = nil
	up.Close()
}

// idlest returns the session seen least recently among those keep accepts
// (nil: all), or nil if there is none. Called with mu held.
func (r *Relay) idlest(keep func(*client) bool) *client {
	var v *client
	for _, c := range r.clients {
		if (keep == nil || keep(c)) && (v == nil || c.lastSeen < v.lastSeen) {
			v = c
		}
	}
	return v
}

// evict closes session c (if not nil) to make room for a new client.
// Called with mu held.
func (r *Relay) evict(c *client) {
	if c != nil {
		r.closeClient(c)
		r.cnt.Evicted++
	}
}

// Counters returns a snapshot of the relay-wide counters.
func (r *Relay) Counters() Counters {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.snapshot()
}

// HopStats returns the link counters of every hop of a direction.
func (r *Relay) HopStats(dir int) []link.Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []link.Stats
	for _, h := range r.paths[dir] {
		out = append(out, h.l.Stats())
	}
	return out
}

// Close stops relaying, writes a final statistics line and the summary,
// flushes and closes the capture files.
func (r *Relay) Close() error {
	if r.closed.Swap(true) {
		return nil
	}
	r.sl.wake()
	r.closeSockets()
	r.mu.Lock()
	for _, c := range r.clients {
		if c.up != nil {
			c.up.Close()
		}
	}
	if r.fixed != nil {
		r.fixed.up.Close()
	}
	r.mu.Unlock()
	r.wg.Wait()
	r.sl.close()
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	r.writeStats(now, true)
	r.writeSummary(now)
	var errs []error
	if err := r.pcapOut.close(); err != nil {
		errs = append(errs, err)
	}
	if err := r.pcapDrop.close(); err != nil {
		errs = append(errs, err)
	}
	if f, ok := r.cfg.Stats.(*os.File); ok {
		f.Sync()
	}
	return errors.Join(errs...)
}

// cidFlow returns a flow key from the destination connection ID of a cclab
// datagram (docs/wire.md, version 1: version byte 1, type 1..3, then the
// 8-byte dcid), or false if b does not look like one.
func cidFlow(b []byte) (uint64, bool) {
	if len(b) < 10 || b[0] != 1 || b[1] < 1 || b[1] > 3 {
		return 0, false
	}
	return mix.SplitMix64(binary.BigEndian.Uint64(b[2:10]) ^ 0x636964), true // "cid"
}
