package transport

import (
	"math/bits"
	"unsafe"
)

// Per-connection buffers (the send and receive rings' bytes, the scoreboard's
// segments) are recycled across connections through free lists, one per
// power-of-two size, and so are the connections themselves once the
// application has released them (Conn.Release): a simulation of many short transfers (ON/OFF flows, a
// new connection per ON period) otherwise allocates and clears several KiB
// per connection and leaves them to the garbage collector. A connection takes
// a buffer when it first needs one, grows it by doubling (returning the
// smaller one) and returns it once it is empty after the connection finished
// (Conn.releaseBuffers).
//
// The free lists belong to a Buffers value that the driver hands to its
// endpoints (EndpointConfig.Buffers): like everything in this package it is
// not safe for concurrent use, so endpoints share one only when one
// goroutine drives them all (every host of a simulation shares the
// simulation's); an endpoint without one makes its own. A Buffers keeps at
// most MaxPooledBytes; what is returned beyond that is left to the
// collector.
//
// A recycled buffer holds stale bytes of an earlier connection; nothing reads
// a ring's byte or a scoreboard's segment before writing it, so results do
// not depend on what the free lists return (a transfer's event trace is the
// same with fresh buffers and with pooled garbage: TestBufPoolDeterministic).

// Size classes: rings from minRing bytes, scoreboards from minSegs segments,
// each class twice the previous; larger buffers are not pooled.
const (
	minRing     = 4096
	minSegs     = 64
	poolClasses = 11 // up to 4 MiB rings, 65,536-segment scoreboards
)

// MaxPooledBytes is how many bytes of idle buffers a Buffers keeps at most
// (rings and scoreboards together).
const MaxPooledBytes = 64 << 20

// Buffers recycles connection buffers between the connections of the
// endpoints that share it. The zero value is ready to use; a nil *Buffers
// recycles nothing (every buffer is freshly allocated).
type Buffers struct {
	rings bufPool[byte]    // send and receive rings
	segs  bufPool[Segment] // scoreboards
	held  int              // bytes held in both, at most MaxPooledBytes
	conns []*Conn          // released and removed connections (Conn.Release), cleared when handed out again (Conn.clear), at most MaxPooledConns
	// rx and tx are the packet scratch of every endpoint sharing b: the
	// datagram being received (decodePacket) and the short packet being
	// sent (packet.setShort). Neither is used beyond one call into an
	// endpoint, and one goroutine drives all the endpoints that share b,
	// so one pair serves them all: ten thousand endpoints of a simulation
	// write the same ~750 bytes, which stay in the cache, instead of each
	// its own, which a packet to an endpoint not seen for a while finds
	// out of it.
	rx, tx packet
	// ack is the ACK being processed (Conn.onAck's steps, with its
	// AckInfo for the strategy), written whole for every ACK and read only
	// until onAck returns: for the same reason as rx and tx, one serves
	// every connection of the endpoints sharing b (issue #29: in each
	// connection, its ~230 bytes were lines written per ACK and out of the
	// cache at the next one when connections are many).
	ack ackProgress
}

// MaxPooledConns is how many idle connections (Conn.Release) a Buffers
// keeps at most.
const MaxPooledConns = 1024

// conn returns a zero Conn: a released one if b has one, else a new one.
func (b *Buffers) conn() *Conn {
	if b != nil {
		if n := len(b.conns); n > 0 {
			c := b.conns[n-1]
			b.conns[n-1] = nil
			b.conns = b.conns[:n-1]
			c.clear() // released (as it was while it waited) no longer
			return c
		}
	}
	return new(Conn)
}

// putConn recycles a removed connection the application has released: its
// buffers go back to the free lists, and the Conn to b's list of idle
// connections while the bound allows (else it is cleared for the
// collector). A waiting Conn is cleared only when conn hands it out again,
// just before the next connection's set-up writes it: clearing the ~3 KiB
// at once here, when the connection ends after its drain period, wrote
// lines long out of the cache that the set-up then found out of it again.
// It stays marked released while it waits, so that a stale Release panics
// at once (ErrReleasedTwice) instead of marking the next connection built
// in it.
func (b *Buffers) putConn(c *Conn) {
	c.sb.release()
	c.sbuf.release()
	c.rbuf.release()
	if b == nil || len(b.conns) >= MaxPooledConns {
		*c = Conn{released: true}
		return
	}
	b.conns = append(b.conns, c)
}

// clear zeroes a recycled Conn for its next connection but for what it
// keeps: its loss-recovery strategy and congestion controller, in which the
// next connection's strategy and controller of the same types are built
// (overwritten whole then: RecoveryEnv.reuse, ccalgo.Env.Reuse), and its
// D-SACK and timeout records' arrays and out-of-order list (emptied). The
// Conn keeps no reference to its sink or peer.
func (c *Conn) clear() {
	rec, cc := c.rec, c.cc
	if rec == nil { // never established: keep the ones it had
		rec, cc = c.spareRec, c.spareCC
	}
	retx, pend, ooo := c.dsk.retx, c.rtoW.pend, c.ooo[:0]
	*c = Conn{}
	c.spareRec, c.spareCC = rec, cc
	// The arrays a connection takes at its first retransmission and
	// first timeout, and its out-of-order list's room, serve the next one
	// too: each is read only up to its count (retxN, rtoW.n, len(ooo)),
	// which starts at zero, so the stale entries are never read.
	c.dsk.retx, c.rtoW.pend, c.ooo = retx, pend, ooo
}

// NewBuffers returns an empty Buffers.
func NewBuffers() *Buffers { return &Buffers{} }

// Held returns the bytes of idle buffers b keeps.
func (b *Buffers) Held() int {
	if b == nil {
		return 0
	}
	return b.held
}

// bufPool is one free list per size class of buffers of T, min<<class long.
type bufPool[T any] struct {
	class [poolClasses][][]T
}

// segmentBytes is the memory of one Segment, bytes.
const segmentBytes = int(unsafe.Sizeof(Segment{}))

// poolClass returns the class of a buffer of n units, n = min<<class, or -1
// if n is not a pooled size.
func poolClass(n, min int) int {
	if n < min || n%min != 0 || bits.OnesCount(uint(n/min)) != 1 {
		return -1
	}
	if c := bits.Len(uint(n/min)) - 1; c < poolClasses {
		return c
	}
	return -1
}

// ring returns a ring buffer of n bytes (a power-of-two multiple of
// minRing) with unspecified contents.
func (b *Buffers) ring(n int) []byte {
	if b == nil {
		return make([]byte, n)
	}
	return get(&b.rings, n, minRing, 1, &b.held)
}

// putRing recycles a ring buffer its owner no longer uses.
func (b *Buffers) putRing(r []byte) {
	if b != nil {
		put(&b.rings, r, minRing, 1, &b.held)
	}
}

// segments returns a scoreboard buffer of n segments (a power-of-two
// multiple of minSegs) with unspecified contents.
func (b *Buffers) segments(n int) []Segment {
	if b == nil {
		return make([]Segment, n)
	}
	return get(&b.segs, n, minSegs, segmentBytes, &b.held)
}

// putSegments recycles a scoreboard buffer its owner no longer uses.
func (b *Buffers) putSegments(s []Segment) {
	if b != nil {
		put(&b.segs, s, minSegs, segmentBytes, &b.held)
	}
}

// get takes a buffer of n units of unit bytes from p, or allocates one.
func get[T any](p *bufPool[T], n, min, unit int, held *int) []T {
	if c := poolClass(n, min); c >= 0 {
		if l := p.class[c]; len(l) > 0 {
			v := l[len(l)-1]
			l[len(l)-1] = nil
			p.class[c] = l[:len(l)-1]
			*held -= n * unit
			return v
		}
	}
	return make([]T, n)
}

// put keeps v in p if it is of a pooled size and the bound allows.
func put[T any](p *bufPool[T], v []T, min, unit int, held *int) {
	if c := poolClass(len(v), min); c >= 0 && *held+len(v)*unit <= MaxPooledBytes {
		p.class[c] = append(p.class[c], v)
		*held += len(v) * unit
	}
}
