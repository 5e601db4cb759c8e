package transport

// The receiving half of a stream connection (Conn, its state in struct
// receiver), as gVisor's rcv.go: the
// application's reads, in-order and out-of-order data (RFC 5681 §4.2 ACK
// generation, RFC 7323 §4.3 TS.Recent, RFC 3168 §6.1.3 CE echo), the
// out-of-order budget, the SACK blocks of the ACKs we send (RFC 2018).

import (
	"cclab/clock"
	"cclab/ecn"
	"cclab/event"
)

// Read copies in-order received bytes into p and returns how many.
func (c *Conn) Read(p []byte) int {
	n := min(len(p), c.Readable())
	if n > 0 {
		c.rbuf.read(c.rcvRead, p[:n])
	}
	c.consume(n)
	return n
}

// consume marks the next n in-order bytes read (Read, a Consumer).
func (c *Conn) consume(n int) {
	if n <= 0 {
		return // nothing changed: no touch (a driver polls every conn)
	}
	c.touch() // the scheduler asks it at the next Transmit (sched.go)
	c.rcvRead += uint64(n)
	c.stats.BytesRead += uint64(n)
	if c.done && c.rcvRead == c.rcvHigh {
		c.releaseBuffers()
	}
	// Window update (RFC 1122 §4.2.3.3 SWS avoidance): announce a reopened
	// window when the advertised one had shrunk below half and grew by at
	// least a quarter of the buffer.
	right := c.rcvRight()
	if c.state == stOpen && c.lastRight-c.rcvNxt < uint64(c.cfg.RecvWindow/2) && right-c.lastRight >= uint64(c.cfg.RecvWindow/4) {
		c.ackNow = true
		c.ackPending = true
	}
}

// Consumer is an application that takes a connection's received stream in
// place as it becomes in order, instead of reading it (Conn.SetConsumer):
// the receiving counterpart of Source.
type Consumer interface {
	// Consume is given the stream bytes at [off, off+len(p)), in stream
	// order without gaps or repeats. p is valid only during the call (it
	// may be the received datagram itself); Consume must not keep it nor
	// call into the connection.
	Consume(off uint64, p []byte)
}

// StampConsumer is a Consumer that reads only the stamps of the stream
// (the bytes SampledSource writes: offsets k·SampleStride to
// k·SampleStride+7), such as a check against SampledSource.Equal.
type StampConsumer interface {
	Consumer
	// StampsOnly reports whether Consume reads the stamps' bytes alone.
	StampsOnly() bool
}

// SetConsumer makes c hand its in-order received bytes to k instead of
// keeping them for Read: the bytes waiting now are handed over at once,
// every later byte as soon as it is in order (during the Receive that made
// it so). Handed-over bytes count as read, as if Read had returned them
// (flow control, Stats.BytesRead). Data that arrives in order while nothing
// else is buffered goes from the datagram to k without a copy into the
// receive ring; out-of-order data waits in the ring as usual.
// A nil k returns c to Read.
//
// A StampConsumer whose StampsOnly is true, on a connection that keeps no
// digest of the received stream (Config.Digest "none"), has only the
// stamps' bytes of out-of-order data stored in the receive ring (the
// bytes between them are left as they were): data that waits for a gap to
// fill is not copied whole. Bytes stored so stay so if k is replaced later:
// a Read then returns the bytes between the stamps as they happen to be.
func (c *Conn) SetConsumer(k Consumer) {
	c.consumer = k
	s, ok := k.(StampConsumer)
	c.rbuf.stamps = ok && s.StampsOnly() && c.hashRecv == nil
	if n := c.Readable(); n > 0 && k != nil {
		a, b := c.rbuf.slices(c.rcvRead, n)
		c.handOver(a, b)
	}
}

// handOver gives the consumer the next in-order bytes, a then b, and
// consumes them.
func (c *Conn) handOver(a, b []byte) {
	c.consumer.Consume(c.rcvRead, a)
	if len(b) > 0 {
		c.consumer.Consume(c.rcvRead+uint64(len(a)), b)
	}
	c.consume(len(a) + len(b))
}

// Readable returns the bytes ready for Read.
func (c *Conn) Readable() int { return int(c.rcvNxt - c.rcvRead) }

// EOF reports whether the peer's FIN arrived and every byte was read.
func (c *Conn) EOF() bool { return c.peerFin && c.rcvRead == c.peerFinOff }

// onData handles the DATA section (RFC 5681 §4.2 ACK generation, RFC 7323
// §4.3 TS.Recent, RFC 3168 §6.1.3 CE echo).
func (c *Conn) onData(now clock.Time, ce ecn.Codepoint, p *packet) RejectReason {
	end := p.off + uint64(len(p.data))
	if p.flags&flagFIN != 0 {
		if (c.peerFin && c.peerFinOff != end) || end < c.rcvNxt {
			return RejectFinalSize
		}
		if end < c.rcvHigh {
			// Out-of-order data beyond the final size cannot be part of the
			// stream (a forged or corrupt segment): drop it, counted. (A
			// forged FIN gains nothing: one at rcvHigh would end the stream
			// there just as well.)
			c.trimOOO(end)
		}
	}
	if c.peerFin && end > c.peerFinOff {
		return RejectFinalSize
	}
	if c.ecnOn {
		switch ce {
		case ecn.CE:
			c.eceOn = true
			c.stats.CEReceived++
		case ecn.ECT0, ecn.ECT1:
			c.stats.ECTReceived++
		}
	}
	// RFC 7323 §4.3: TS.Recent <- SEG.TSval if SEG.SEQ <= Last.ACK.sent.
	if p.off <= c.lastAckSent && int32(p.ts-c.tsRecent) >= 0 {
		c.tsRecent = p.ts
	}
	c.ackPending = true
	c.ackFirstData(p)
	newFin := false
	if p.flags&flagFIN != 0 && !c.peerFin {
		c.peerFin = true
		c.peerFinOff = end
		newFin = true
	}
	data := p.data
	off := p.off
	// Flow control: keep only what fits in the window we advertised.
	right := c.rcvRight()
	if end > right {
		c.stats.DroppedBeyondWindow++
		c.ep.stats.Rejects[RejectWindow]++
		c.ackNow = true
		if off >= right {
			return RejectNone
		}
		data = data[:right-off]
		end = right
	}
	if len(data) > 0 {
		c.noteDuplicate(off, end)
	}
	if end <= c.rcvNxt {
		if len(data) > 0 {
			c.stats.DupSegments++
		}
		c.ackNow = true // duplicate: ACK at once (RFC 9293 §3.10.7.4)
	} else if off > c.rcvNxt {
		if lim := c.oooLimit(end); end > lim {
			// Over the endpoint's out-of-order budget: the farthest data
			// (this segment's part beyond the limit) is dropped, counted;
			// the sender retransmits it.
			drop := end - max(off, lim)
			c.stats.OOOBytesDropped += drop
			c.ep.stats.OOOBytesDropped += drop
			data = data[:len(data)-int(drop)]
			end -= drop
		}
		if len(data) > 0 {
			c.storeData(off, data)
			c.insertOOO(off, end)
		}
		c.ackNow = true // out of order: immediate duplicate ACK (RFC 5681 §4.2)
	} else {
		data = data[c.rcvNxt-off:]
		off = c.rcvNxt
		// A consumer that has taken every earlier byte takes this data
		// straight from the datagram: nothing to keep in the ring.
		direct := c.consumer != nil && c.rcvRead == off && len(c.ooo) == 0
		if direct {
			c.rcvHigh = max(c.rcvHigh, end)
			c.stats.BytesReceived += uint64(len(data))
		} else {
			c.storeData(off, data)
			data = nil
		}
		holes := len(c.ooo) > 0
		prev := c.rcvNxt
		c.rcvNxt = end
		k := 0 // the blocks the new data joins, removed with one copy
		for k < len(c.ooo) && c.ooo[k].Start <= c.rcvNxt {
			c.rcvNxt = max(c.rcvNxt, c.ooo[k].End)
			k++
		}
		if k > 0 {
			c.ooo = c.ooo[:copy(c.ooo, c.ooo[k:])]
		}
		if holes {
			c.ackNow = true // fills a gap: immediate ACK (RFC 5681 §4.2)
		}
		c.deliver(now, prev, data)
		if len(p.data) >= c.mss {
			c.fullSinceAck++
		}
		if c.fullSinceAck >= c.cfg.AckEvery || c.cfg.DelayedAck == NoDelayedAck {
			c.ackNow = true
		} else if c.ackAt == clock.Never {
			c.ackAt = now.Add(c.cfg.DelayedAck)
		}
	}
	if newFin || (c.peerFin && c.rcvNxt == c.peerFinOff) {
		c.ackNow = true // the FIN (now or once it becomes in order) is acknowledged at once
	}
	c.recharge()
	return RejectNone
}

// ackFirstData applies Config.AckFirst: the first data segment, whatever
// its place, is acknowledged at once (ns-3.37's m_delAckCount =
// m_delAckMaxCount at the handshake's end, tcp-socket-base.cc:2404-2406);
// an out-of-order or duplicate one would be anyway, and either way that ACK
// spends the rule.
func (c *Conn) ackFirstData(p *packet) {
	if c.firstDataDue && len(p.data) > 0 {
		c.firstDataDue = false
		c.ackNow = true
	}
}

// oooLimit returns the stream offset out-of-order data arriving with right
// edge end may reach. The endpoint's out-of-order memory (the receive-ring
// span beyond each connection's in-order point, rcvHigh - rcvNxt) is bounded
// by EndpointConfig.MaxOOOBytes: while the total stays within it any
// connection may use its whole window; beyond it a connection's span may
// grow only up to its share, MaxOOOBytes / live connections. Data nearer
// than rcvHigh never grows the span and is always kept (nothing already
// SACKed is ever dropped: no reneging). The total thus stays below twice
// MaxOOOBytes: what connections took while it was under the budget, plus at
// most a share each.
func (c *Conn) oooLimit(end uint64) uint64 {
	if end <= c.rcvHigh {
		return end
	}
	e := c.ep
	budget := uint64(e.cfg.MaxOOOBytes)
	if e.oooUsed-c.oooCharge+(end-c.rcvNxt) <= budget {
		return end
	}
	return max(c.rcvHigh, c.rcvNxt+budget/uint64(max(1, len(e.sch.conns))))
}

// recharge updates the connection's share of the endpoint's out-of-order
// memory after its in-order point or highest received byte moved.
func (c *Conn) recharge() {
	n := c.rcvHigh - c.rcvNxt
	c.ep.oooUsed += n - c.oooCharge
	c.oooCharge = n
}

// trimOOO forgets out-of-order data at and beyond off (> rcvNxt).
func (c *Conn) trimOOO(off uint64) {
	j := 0
	for _, b := range c.ooo {
		if b.Start >= off {
			c.stats.OOOBytesDropped += b.End - b.Start
			continue
		}
		if b.End > off {
			c.stats.OOOBytesDropped += b.End - off
			b.End = off
		}
		c.ooo[j] = b
		j++
	}
	c.ooo = c.ooo[:j]
	c.rcvHigh = off
	c.recharge()
}

// storeData copies data at off into the receive ring.
func (c *Conn) storeData(off uint64, data []byte) {
	end := off + uint64(len(data))
	if end > c.rcvHigh {
		keep := int(c.rcvHigh - c.rcvRead)
		c.rbuf.ensure(c.rcvRead, keep, int(end-c.rcvRead))
		c.rcvHigh = end
	}
	c.rbuf.write(off, data)
	c.stats.BytesReceived += uint64(len(data))
}

// deliver hashes and reports the bytes [prev, rcvNxt) that became in order
// and hands them to the consumer, if any. direct holds them when they were
// not stored in the ring (nil: they are in the ring).
func (c *Conn) deliver(now clock.Time, prev uint64, direct []byte) {
	n := int(c.rcvNxt - prev)
	if n <= 0 {
		return
	}
	a, b := direct, []byte(nil)
	if direct == nil {
		a, b = c.rbuf.slices(prev, n)
	}
	if c.hashRecv != nil {
		c.hashRecv.Write(a)
		c.hashRecv.Write(b)
	}
	c.stats.BytesDelivered += uint64(n)
	if e := c.event(now, event.Delivered); e != nil {
		e.Seq, e.Bytes = c.rcvNxt, n
		c.sink.Record(e)
	}
	if c.consumer != nil {
		c.handOver(a, b) // rcvRead == prev: the consumer took every earlier byte
	}
}

// insertOOO records the out-of-order range [s, e) and its recency for SACK.
func (r *receiver) insertOOO(s, e uint64) {
	i := r.oooFrom(s)
	j := i
	for j < len(r.ooo) && r.ooo[j].Start <= e {
		s = min(s, r.ooo[j].Start)
		e = max(e, r.ooo[j].End)
		j++
	}
	if i == j {
		r.ooo = append(r.ooo, sackBlock{})
		copy(r.ooo[i+1:], r.ooo[i:])
	} else {
		r.ooo = append(r.ooo[:i+1], r.ooo[j:]...)
	}
	r.ooo[i] = sackBlock{s, e}
	// RFC 2018 §4: the first block reports the most recent arrival.
	var recent [MaxSACKBlocks]uint64
	recent[0] = s
	n := 1
	for k := 0; k < r.nRecent && n < MaxSACKBlocks; k++ {
		if r.recent[k] < s || r.recent[k] >= e {
			recent[n] = r.recent[k]
			n++
		}
	}
	r.recent, r.nRecent = recent, n
}

// rcvRight is the right edge of the window we advertise: the application's
// read point plus the receive window (Config.RecvWindow).
func (c *Conn) rcvRight() uint64 { return c.rcvRead + uint64(c.cfg.RecvWindow) }

// buildAck fills the ACK section of p.
func (c *Conn) buildAck(p *packet) {
	p.flags |= flagACK
	p.cumAck = c.rcvNxt
	if c.peerFin && c.rcvNxt == c.peerFinOff {
		p.cumAck++ // the FIN occupies one unit of acknowledgement space
	}
	p.window = c.rcvRight() - c.rcvNxt
	if c.eceOn {
		p.flags |= flagECE
	}
	p.nBlocks = 0
	c.addDSACK(p)
	// Most recently reported blocks first (RFC 2018 §4), then the lowest others.
	for k := 0; k < c.nRecent; k++ {
		if b, ok := c.oooContaining(c.recent[k]); ok && !hasBlock(p, b) {
			p.blocks[p.nBlocks] = b
			p.nBlocks++
		}
	}
	for k := 0; k < len(c.ooo) && p.nBlocks < MaxSACKBlocks; k++ {
		if !hasBlock(p, c.ooo[k]) {
			p.blocks[p.nBlocks] = c.ooo[k]
			p.nBlocks++
		}
	}
}

func hasBlock(p *packet, b sackBlock) bool {
	for i := 0; i < p.nBlocks; i++ {
		if p.blocks[i] == b {
			return true
		}
	}
	return false
}

// oooContaining returns the out-of-order block that holds stream offset off
// (off < MaxStreamOffset), if any.
func (r *receiver) oooContaining(off uint64) (sackBlock, bool) {
	if i := r.oooFrom(off + 1); i < len(r.ooo) && r.ooo[i].Start <= off {
		return r.ooo[i], true
	}
	return sackBlock{}, false
}

// oooFrom returns the index of the first out-of-order block that ends at or
// after stream offset x (len(r.ooo) if none) by binary search: the blocks
// are sorted and disjoint (insertOOO merges touching ones), so their ends
// increase. (A receiver with a lossy path holds tens of blocks; a linear
// scan per arrival and per ACK cost more than the rest of the ACK.)
func (r *receiver) oooFrom(x uint64) int {
	lo, hi := 0, len(r.ooo)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if r.ooo[m].End < x {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// ackSent records that an ACK section went out.
func (c *Conn) ackSent(p *packet) {
	c.ackPending, c.ackNow = false, false
	if p.hasDSACK {
		c.dsackDue = false
	}
	c.ackAt = clock.Never
	c.fullSinceAck = 0
	c.lastAckSent = c.rcvNxt
	c.lastRight = c.rcvRight() // buildAck advertised it (the FIN's unit is in cumAck, not the window)
	c.stats.AcksSent++
}
