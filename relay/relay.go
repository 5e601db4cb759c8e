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
	"net"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"cclab/clock"
	"cclab/internal/hostlimit"
	"cclab/internal/mix"
	"cclab/link"
	"cclab/netio"
	"cclab/qdisc"
)

const batchSize = 64

type hop struct {
	l     *link.Link
	dir   int
	idx   int
	mtu   int // the hop's configured MTU, bytes: larger packets are dropped (0: none configured, no limit)
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
	iv       [2]hostIv // host-limit evidence since the last statistics line (HostLine)
	pcapOut  *pcapFile
	pcapDrop *pcapFile
	nextStat clock.Time
	lastStat clock.Time
	// lastWrite is the instant of the latest timed write (serviceTimed;
	// Config.Coalesce).
	lastWrite clock.Time
	// serviceNow is the instant service was called with, for lateness.
	serviceNow clock.Time
	// readNow is when the latest read returned: the links may be moved on
	// to an earlier instant (a datagram's kernel receive stamp, handle),
	// but what they deliver then is written no earlier than this.
	readNow clock.Time
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

// EntryReceiveDrops returns the datagrams the kernel dropped at
// Config.Entries[i]'s socket because its receive buffer was full, and
// whether that is known (netio.ReceiveDrops).
func (r *Relay) EntryReceiveDrops(i int) (uint64, bool) { return netio.ReceiveDrops(r.entries[i]) }

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
	// The links start now: no datagram enters them earlier, even one
	// the kernel received before (handle's arrival floor).
	r.serviceNow = now
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
