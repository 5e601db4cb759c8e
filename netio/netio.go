// Package netio is cclab's edge I/O: a small batch interface for sending and
// receiving datagrams (docs/architecture.md), with a UDP implementation (batched
// recvmmsg/sendmmsg, per-packet ECN) and an in-memory implementation for tests.
// Only drivers (transport's socket driver, cmd/bottleneck) use it; the
// sans-I/O core never does.
package netio

import (
	"errors"
	"net/netip"

	"cclab/ecn"
)

// Message is one datagram in a batch; on a read from a socket with receive
// offload (EnableGRO), possibly several datagrams of one sender coalesced by
// the kernel.
type Message struct {
	Buf  []byte         // on read: buffer to fill (capacity used); on write: the datagram is Buf[:N]
	N    int            // datagram length, bytes (on read with GRO: all the coalesced datagrams)
	Addr netip.AddrPort // on read: the sender; on write: the destination (ignored on a connected socket)
	ECN  ecn.Codepoint  // on read: received ECN field (the same for every coalesced datagram); on write: ECN field to send
	// Seg, on read from a socket with GRO, is the size of the coalesced
	// datagrams in Buf[:N], bytes: each is Seg bytes but the last, which
	// may be shorter. 0 means Buf[:N] is one datagram. Count and Datagram
	// split a message either way.
	Seg int
	// RxTime, on read from a socket with receive timestamps
	// (EnableRxTimestamps), is when the kernel received the datagram, ns
	// since the Unix epoch (CLOCK_REALTIME, SO_TIMESTAMPNS); with GRO, when
	// it received the first of the coalesced datagrams. 0 means unknown.
	RxTime int64
}

// Count returns the number of datagrams in a received message: 1, or with
// GRO (Seg > 0) the number of Seg-byte pieces of N, the last possibly
// shorter.
func (m *Message) Count() int {
	if m.Seg <= 0 || m.N <= m.Seg {
		return 1
	}
	return (m.N + m.Seg - 1) / m.Seg
}

// Datagram returns the i-th datagram (0 <= i < Count()) of a received
// message, a slice of Buf.
func (m *Message) Datagram(i int) []byte {
	if m.Seg <= 0 || m.N <= m.Seg {
		return m.Buf[:m.N]
	}
	lo := i * m.Seg
	return m.Buf[lo:min(lo+m.Seg, m.N)]
}

// Conn sends and receives batches of datagrams.
type Conn interface {
	// ReadBatch blocks until at least one datagram arrives, then fills as
	// many of ms as are ready and returns how many.
	ReadBatch(ms []Message) (int, error)
	// WriteBatch sends ms and returns how many were sent.
	WriteBatch(ms []Message) (int, error)
	// LocalAddr is the address the connection is bound to.
	LocalAddr() netip.AddrPort
	// Close unblocks pending reads with ErrClosed.
	Close() error
}

// Poller is a Conn that can also be read without blocking, for a driver that
// polls its sockets in a loop of its own instead of parking a goroutine on
// each (relay.Config.BusyPoll). UDPConn (on Linux) and MemConn are Pollers.
type Poller interface {
	Conn
	// TryReadBatch fills as many of ms as datagrams are ready, like
	// ReadBatch, but returns 0, nil at once when none is.
	TryReadBatch(ms []Message) (int, error)
}

// ErrClosed is returned by reads and writes on a closed Conn.
var ErrClosed = errors.New("netio: use of closed connection")

// ErrGSOUnsupported says the kernel or the device refused a GSO send
// (GSOWriter); the caller falls back to plain batches.
var ErrGSOUnsupported = errors.New("netio: GSO send refused")

// Network opens datagram sockets: UDP, the operating system's (the default
// of the drivers that take one), or MemNet, an in-memory network for tests.
type Network interface {
	// ListenPacket opens a socket bound to addr ("host:port"; port 0 picks
	// one) that sends to each message's address.
	ListenPacket(addr string) (Conn, error)
	// DialPacket opens a socket bound to local ("" picks an address)
	// connected to remote: writes ignore Message.Addr.
	DialPacket(local, remote string) (Conn, error)
}

// UDP is the operating system's UDP network (ListenUDP, DialUDP).
var UDP Network = udpNetwork{}

type udpNetwork struct{}

func (udpNetwork) ListenPacket(addr string) (Conn, error) {
	c, err := ListenUDP(addr)
	if err != nil {
		return nil, err
	}
	return c, nil
}

func (udpNetwork) DialPacket(local, remote string) (Conn, error) {
	c, err := DialUDP(local, remote)
	if err != nil {
		return nil, err
	}
	return c, nil
}
