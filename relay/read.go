package relay

import (
	"errors"
	"net/netip"
	"time"

	"cclab/clock"
	"cclab/ecn"
	"cclab/netio"
	"cclab/qdisc"
)

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
	r.readNow = now
	wallNs := t.UnixNano() // for the kernel's stamps, which are on the wall clock
	r.cnt.ReadCalls++
	due := r.writeDue()
	for i := 0; i < n; i++ {
		m := &rd.ms[i]
		if m.RxTime != 0 { // the socket has kernel receive stamps (setupSocket)
			late := time.Duration(wallNs - m.RxTime)
			r.readLate(late)
			// The datagram reaches the links at the instant the kernel
			// received it, not when this reader got to it: a reader
			// that the host kept off the CPU for milliseconds would
			// otherwise offer everything that waited in the socket as
			// one burst, and the links' queues would drop what a paced
			// sender never sent back to back. The links are first moved
			// on to that instant (the departures meanwhile).
			if at := arrivalAt(now, late, r.serviceNow); at < now {
				if due != clock.Never && at >= due {
					r.serviceTimed(at)
					due = r.writeDue()
				}
				r.receiveAll(rd, m, at)
				continue
			}
		}
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
		r.receiveAll(rd, m, now)
	}
	r.service(now)
}

// arrivalAt is the instant a datagram read at now reached the relay's
// socket, late before the read (from the kernel's receive stamp), but no
// earlier than floor, the instant the links were last moved on to (they
// take no packet in their past).
func arrivalAt(now clock.Time, late time.Duration, floor clock.Time) clock.Time {
	if late <= 0 {
		return now
	}
	return min(now, max(now.Add(-late), floor))
}

// receiveAll offers the datagrams of message m (several with GRO), read
// by rd, to the first hop of their path as arriving at now. Called with mu
// held.
func (r *Relay) receiveAll(rd *reader, m *netio.Message, now clock.Time) {
	cl := rd.c
	if cl == nil {
		cl = r.clientFor(m.Addr, now, rd.entry)
		if cl == nil {
			return
		}
	}
	if cl.up == nil { // session expired while we were reading
		return
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

// readLate counts a read d after the kernel received the datagram. Called
// with mu held.
func (r *Relay) readLate(d time.Duration) {
	r.cnt.ReadLate.Add(d)
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
	if size > r.cfg.BufSize {
		r.cnt.Oversize++ // (read whole from a GRO buffer, larger than any packet buffer)
		return
	}
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
