package transport

// The receiving half of a datagram connection (DgramConn): received data
// datagrams for the application, and the Ack Vector and acknowledgement
// fields of the ACKs we send (RFC 4340 §11.4, RFC 4341 §6).

import (
	"time"

	"cclab/clock"
	"cclab/event"
)

// Recv copies the oldest received datagram into p and returns its length;
// ok is false when the receive queue is empty. A datagram longer than p is
// truncated.
func (c *DgramConn) Recv(p []byte) (n int, ok bool) {
	n, _, ok = c.RecvAt(p)
	return n, ok
}

// RecvAt is Recv that also returns the instant the datagram arrived.
func (c *DgramConn) RecvAt(p []byte) (n int, at clock.Time, ok bool) {
	c.touch() // the scheduler asks it at the next Transmit (sched.go)
	if c.rq.n == 0 {
		return 0, clock.Never, false
	}
	at = c.rq.frontAt()
	n = copy(p, c.rq.front())
	c.rq.pop()
	c.stats.RecvRead++
	return n, at, true
}

// Readable returns the number of datagrams waiting in the receive queue.
func (c *DgramConn) Readable() int { return c.rq.n }

// onData queues a datagram and runs the Ack Ratio rule (RFC 4341 §6.1).
func (c *DgramConn) onData(now clock.Time, ce bool, p *dgramPacket) {
	if ce {
		c.stats.RecvCE++
	}
	if b := c.rq.room(len(p.data)); b == nil {
		c.stats.RecvDropped++
	} else {
		n := copy(b, p.data)
		c.rq.pushAt(n, now)
		c.stats.RecvDelivered++
		c.stats.RecvBytes += uint64(len(p.data))
		c.emit(event.Event{Time: now, Kind: event.Delivered, Seq: p.seq, Bytes: len(p.data)})
	}
	if c.tfrcOnData(now, ce, p) {
		return // a TFRC receiver acknowledges with its reports
	}
	c.ackDue = true
	c.sinceAck++
	if c.sinceAck >= c.peerRatio {
		c.ackNow = true
	} else if c.ackAt == clock.Never {
		c.ackAt = now.Add(c.cfg.AckDelay)
	}
}

// addAck adds the ACK section (Ack Vector of up to room bytes).
func (c *DgramConn) addAck(now clock.Time, room int) {
	if !c.vec.any {
		return
	}
	room = min(room, MaxAckVector)
	if room < 1 {
		return
	}
	n, low := c.vec.encode(c.vecBuf[:room])
	c.out.flags |= dflagACK
	c.out.ackNo = c.vec.hi
	c.out.ackDelay = uint64(now.Sub(c.hiArrive) / time.Microsecond)
	c.out.vec = c.vecBuf[:n]
	c.vec.sent(c.out.seq, c.vec.hi, low)
}

func (c *DgramConn) ackSent() {
	c.ackDue, c.ackNow = false, false
	c.ackAt = clock.Never
	c.sinceAck = 0
	c.stats.AcksSent++
}
