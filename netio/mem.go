package netio

import (
	"net/netip"
	"sync"

	"cclab/ecn"
)

// MemCapacity is the number of datagrams a MemConn buffers before it drops
// (like a socket receive buffer).
const MemCapacity = 4096

// MemConn is one end of an in-memory datagram pipe, for tests. Datagrams are
// copied into preallocated slots, so steady-state use does not allocate;
// when the peer's buffer is full further datagrams are dropped and counted,
// as a UDP socket would.
type MemConn struct {
	local netip.AddrPort
	peer  *MemConn

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

// WriteBatch copies ms into the peer's queue, dropping those that do not fit.
func (m *MemConn) WriteBatch(ms []Message) (int, error) {
	p := m.peer
	m.mu.Lock()
	closed := m.closed
	m.mu.Unlock()
	if closed {
		return 0, ErrClosed
	}
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
		p.meta[j] = memMeta{n: ms[i].N, from: m.local, ecn: ms[i].ECN}
		p.n++
	}
	p.cond.Signal()
	return len(ms), nil
}

// LocalAddr returns the synthetic local address.
func (m *MemConn) LocalAddr() netip.AddrPort { return m.local }

// Dropped returns how many datagrams sent to this end were dropped because its queue was full.
func (m *MemConn) Dropped() uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.dropped
}

// Close wakes blocked readers; further reads and writes fail with ErrClosed.
func (m *MemConn) Close() error {
	m.mu.Lock()
	m.closed = true
	m.mu.Unlock()
	m.cond.Broadcast()
	return nil
}
