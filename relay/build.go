package relay

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"time"

	"cclab/clock"
	"cclab/event"
	"cclab/internal/hostlimit"
	"cclab/link"
	"cclab/netio"
	"cclab/qdisc"
	"cclab/traffic"
)

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
	h := &hop{dir: dir, idx: i, mtu: hc.MTU}
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
