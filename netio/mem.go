package netio

import (
	"fmt"
	"net/netip"
	"sync"
	"sync/atomic"

	"cclab/ecn"
)

// MemCapacity is the number of datagrams a MemConn buffers before it drops
// (like a socket receive buffer).
const MemCapacity = 4096

// MemConn is an in-memory datagram socket, for tests: one end of a pipe
// (MemPair) or a socket on a MemNet. Datagrams are copied into preallocated
// slots, so steady-state use does not allocate; when the receiver's buffer is
// full further datagrams are dropped and counted, as a UDP socket would.
type MemConn struct {
	local  netip.AddrPort
	peer   *MemConn       // MemPair: the other end
	net    *MemNet        // MemNet: where writes are routed
	remote netip.AddrPort // MemNet: the connected peer (writes ignore Message.Addr), if valid

	mu      sync.Mutex
	cond    *sync.Cond
	slots   [][]byte
	meta    []memMeta
	head, n int
	closed  bool
	dropped uint64
}

type memMeta struct {
	n    int
	from netip.AddrPort
	ecn  ecn.Codepoint
}

// MaxDatagram is the largest datagram the in-memory and UDP implementations carry, bytes.
const MaxDatagram = 65535

// MemPair returns two connected in-memory ends with the given (synthetic) local addresses.
func MemPair(a, b netip.AddrPort) (*MemConn, *MemConn) {
	x, y := newMem(a), newMem(b)
	x.peer, y.peer = y, x
	return x, y
}

func newMem(local netip.AddrPort) *MemConn {
	m := &MemConn{local: local, slots: make([][]byte, MemCapacity), meta: make([]memMeta, MemCapacity)}
	m.cond = sync.NewCond(&m.mu)
	return m
}

// ReadBatch blocks until at least one datagram is queued, then returns as many as fit in ms.
func (m *MemConn) ReadBatch(ms []Message) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for m.n == 0 && !m.closed {
		m.cond.Wait()
	}
	return m.take(ms)
}

// TryReadBatch returns as many queued datagrams as fit in ms, or 0, nil
// at once if none is queued (netio.Poller).
func (m *MemConn) TryReadBatch(ms []Message) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.n == 0 && !m.closed {
		return 0, nil
	}
	return m.take(ms)
}

// take moves queued datagrams into ms; ErrClosed if none is queued (the
// connection is closed). Called with mu held.
func (m *MemConn) take(ms []Message) (int, error) {
	if m.n == 0 {
		return 0, ErrClosed
	}
	k := 0
	for k < len(ms) && m.n > 0 {
		md := m.meta[m.head]
		ms[k].N = copy(ms[k].Buf[:cap(ms[k].Buf)], m.slots[m.head][:md.n])
		ms[k].Addr, ms[k].ECN = md.from, md.ecn
		m.head = (m.head + 1) % MemCapacity
		m.n--
		k++
	}
	return k, nil
}

// WriteBatch copies ms into the receivers' queues (the peer of a pipe, the
// connected peer, or the socket bound to each message's address on a
// MemNet), dropping those that do not fit or have no receiver.
func (m *MemConn) WriteBatch(ms []Message) (int, error) {
	m.mu.Lock()
	closed := m.closed
	m.mu.Unlock()
	if closed {
		return 0, ErrClosed
	}
	if m.peer != nil {
		m.peer.deliver(m.local, ms)
		return len(ms), nil
	}
	// Each run of messages to one address is delivered at once, as a
	// MemPair delivers a whole batch: a reader then sees a burst whole, not
	// spread over the time this goroutine takes (a test of a queue's exact
	// drops depends on it).
	dest := func(i int) netip.AddrPort {
		if m.remote.IsValid() {
			return m.remote
		}
		return ms[i].Addr
	}
	for i := 0; i < len(ms); {
		to := dest(i)
		j := i + 1
		for j < len(ms) && dest(j) == to {
			j++
		}
		if p := m.net.lookup(to); p != nil {
			p.deliver(m.local, ms[i:j])
		} else {
			m.net.lost.Add(int64(j - i))
		}
		i = j
	}
	return len(ms), nil
}

// deliver queues ms from address from.
func (p *MemConn) deliver(from netip.AddrPort, ms []Message) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := range ms {
		if p.closed || p.n == MemCapacity {
			p.dropped++
			continue
		}
		j := (p.head + p.n) % MemCapacity
		if cap(p.slots[j]) < ms[i].N {
			p.slots[j] = make([]byte, max(ms[i].N, 2048))
		}
		p.slots[j] = p.slots[j][:cap(p.slots[j])]
		copy(p.slots[j], ms[i].Buf[:ms[i].N])
		p.meta[j] = memMeta{n: ms[i].N, from: from, ecn: ms[i].ECN}
		p.n++
	}
	p.cond.Signal()
}

// LocalAddr returns the synthetic local address.
func (m *MemConn) LocalAddr() netip.AddrPort { return m.local }

// Dropped returns how many datagrams sent to this end were dropped because its queue was full.
func (m *MemConn) Dropped() uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.dropped
}

// Close wakes blocked readers; further reads and writes fail with
// ErrClosed. A socket on a MemNet releases its address.
func (m *MemConn) Close() error {
	m.mu.Lock()
	m.closed = true
	m.mu.Unlock()
	m.cond.Broadcast()
	if m.net != nil {
		m.net.release(m)
	}
	return nil
}

// MemNet is an in-memory datagram network for tests: sockets bind
// addresses on it, and a datagram goes to the socket bound to its
// destination (or is lost, as UDP to a closed port). It implements Network.
type MemNet struct {
	mu    sync.Mutex
	conns map[netip.AddrPort]*MemConn
	port  uint16       // last ephemeral port handed out
	lost  atomic.Int64 // datagrams sent to an address nobody had bound
}

// NewMemNet returns an empty in-memory network.
func NewMemNet() *MemNet { return &MemNet{conns: map[netip.AddrPort]*MemConn{}, port: 49151} }

// Listen binds a socket to addr; port 0 picks a free ephemeral port.
func (n *MemNet) Listen(addr netip.AddrPort) (*MemConn, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if addr.Port() == 0 {
		for {
			n.port++
			if n.port == 0 {
				n.port = 49152
			}
			a := netip.AddrPortFrom(addr.Addr(), n.port)
			if n.conns[a] == nil {
				addr = a
				break
			}
		}
	}
	if n.conns[addr] != nil {
		return nil, fmt.Errorf("netio: memory address %v in use", addr)
	}
	m := newMem(addr)
	m.net = n
	n.conns[addr] = m
	return m, nil
}

// Dial binds a socket to local (port 0: ephemeral) connected to remote:
// its writes go to remote whatever their Message.Addr.
func (n *MemNet) Dial(local, remote netip.AddrPort) (*MemConn, error) {
	m, err := n.Listen(local)
	if err != nil {
		return nil, err
	}
	m.remote = remote
	return m, nil
}

// Lost returns how many datagrams were sent to an address no socket had bound.
func (n *MemNet) Lost() int64 { return n.lost.Load() }

// ListenPacket implements Network.
func (n *MemNet) ListenPacket(addr string) (Conn, error) {
	a, err := netip.ParseAddrPort(addr)
	if err != nil {
		return nil, fmt.Errorf("netio: memory address %q: %w", addr, err)
	}
	return n.Listen(a)
}

// DialPacket implements Network: local "" means the remote's address
// family's unspecified address with an ephemeral port.
func (n *MemNet) DialPacket(local, remote string) (Conn, error) {
	ra, err := netip.ParseAddrPort(remote)
	if err != nil {
		return nil, fmt.Errorf("netio: memory address %q: %w", remote, err)
	}
	la := netip.AddrPortFrom(ra.Addr(), 0)
	if local != "" {
		if la, err = netip.ParseAddrPort(local); err != nil {
			return nil, fmt.Errorf("netio: memory address %q: %w", local, err)
		}
	}
	return n.Dial(la, ra)
}

func (n *MemNet) lookup(a netip.AddrPort) *MemConn {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.conns[a]
}

func (n *MemNet) release(m *MemConn) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.conns[m.local] == m {
		delete(n.conns, m.local)
	}
}
