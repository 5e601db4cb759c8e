package transport

import (
	"cclab/ccalgo"
	"cclab/clock"
)

// Datagram size discovery in the datagram mode (DPLPMTUD, RFC 8899; the
// state machine and the probes are the stream mode's, dplpmtud.go). A
// datagram connection whose DgramConfig.PLPMTUMax is above its handshake's
// size starts at that size (BASE_PLPMTU, confirmed by the padded Initial
// and its answer), probes larger sizes with padded Path probes the peer
// acknowledges, and raises its datagram size, the largest application
// datagram (MaxPayload) and a generating source's datagrams with it; a
// black hole (MAX_PROBES consecutive timeouts with larger datagrams in
// use) brings it back to the base size. Probes are not data: they take no
// sequence number, are not in flight and their loss is no congestion
// signal (RFC 8899 §4.4).
//
// The controllers: CCID2 counts its window in packets (RFC 4341 §5), so a
// larger packet alone would raise the window in bytes; RFC 8899 §4.4
// forbids that, and CCID2's SetMSS scales cwnd and ssthresh down to the
// packets of the new size that the bytes held (ccalgo/ccid2.go). CCID3
// keeps its allowed rate X in bytes/s and takes the new size as the
// segment size s of the throughput equation (RFC 5348 §4.1).
// Window controllers counted in bytes (reno, cubic, ...) keep their window
// in bytes. A controller that cannot change its size keeps the handshake's.
//
// The peer's receive queue is counted in bytes (dgram_queue.go): its ring
// holds RecvQueue datagrams of the handshake's size, fewer larger ones.

// pmtuStart starts discovery on an established datagram connection when
// configured and the controller can change its packet size.
func (c *DgramConn) pmtuStart() {
	if c.cfg.PLPMTUMax <= c.maxDatagram {
		return
	}
	if _, ok := c.cc.(ccalgo.SegmentSizer); ok || c.cc == nil {
		c.pmtuOn = true
		c.pmtu.start(c.maxDatagram, c.cfg.PLPMTUMax, c.peer.Addr().Unmap().Is4())
	}
}

// pmtuTransmit applies a size discovery confirmed (or fell back to) and
// writes the due size probe into buf, sealed, returning its length (0:
// none due). Only an established connection whose peer's address is
// validated probes.
func (c *DgramConn) pmtuTransmit(now clock.Time, buf []byte) int {
	if !c.pmtuOn || !c.established || !c.validated || c.done {
		return 0
	}
	if c.pmtu.size != c.maxDatagram {
		c.pmtuApply()
	}
	return c.pmtuProbe(now, buf, c.rtt.current())
}

// pmtuApply makes the discovered size the connection's datagram size:
// the payload bound, the controller's packet size, pacing and the send
// queue. After a fall (a black hole) queued datagrams that no longer fit
// are dropped (QueueDropped). A controller that refuses the size ends
// discovery at the size in use.
func (c *DgramConn) pmtuApply() {
	old := c.maxDatagram
	c.maxDatagram = c.pmtu.size
	mss := c.payloadMax(maxDgramOverhead)
	if c.cc != nil && !c.cc.(ccalgo.SegmentSizer).SetMSS(mss) {
		c.maxDatagram, c.pmtuOn = old, false
		return
	}
	shrunk := mss < c.mss
	c.mss = mss
	if c.cc != nil {
		c.pace.set(c.cc, mss)
		c.updateRatio(c.lastNow)
	}
	if len(c.scratch) < mss {
		c.scratch = make([]byte, mss)
	}
	c.sq.grow(mss)
	for k := c.sq.n; shrunk && k > 0; k-- { // keep the queued datagrams that fit, in order
		b := c.sq.front()
		if len(b) > mss {
			c.sq.pop()
			c.stats.QueueDropped++
			continue
		}
		d := append([]byte(nil), b...)
		at := c.sq.frontAt()
		c.sq.pop()
		copy(c.sq.room(len(d)), d)
		c.sq.pushAt(len(d), at)
	}
}

// pmtuDeadline is when discovery's timers next need control.
func (c *DgramConn) pmtuDeadline() clock.Time {
	if !c.pmtuOn {
		return clock.Never
	}
	return c.pmtu.deadline()
}
