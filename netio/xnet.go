package netio

import (
	"net"
	"net/netip"

	"golang.org/x/net/ipv4"
)

// XNetConn does batched UDP I/O through golang.org/x/net/ipv4's
// ReadBatch/WriteBatch. It is the portable implementation (used by UDPConn on
// platforms other than Linux) and the reference the Linux implementation is
// benchmarked against: x/net allocates a *net.UDPAddr per received datagram,
// which is why Linux uses recvmmsg directly. It does not report received ECN
// (x/net's IPv4 control messages carry no TOS); sent ECN is set per socket.
type XNetConn struct {
	c     *net.UDPConn
	p     *ipv4.PacketConn
	rmsgs []ipv4.Message
	wmsgs []ipv4.Message
	addrs map[netip.AddrPort]*net.UDPAddr
	tos   int
}

// NewXNetConn wraps an IPv4 UDP socket.
func NewXNetConn(c *net.UDPConn) *XNetConn {
	x := &XNetConn{c: c, p: ipv4.NewPacketConn(c), addrs: map[netip.AddrPort]*net.UDPAddr{}}
	x.rmsgs = make([]ipv4.Message, batchLimit)
	x.wmsgs = make([]ipv4.Message, batchLimit)
	for i := range x.rmsgs {
		x.rmsgs[i].Buffers = make([][]byte, 1)
		x.wmsgs[i].Buffers = make([][]byte, 1)
	}
	return x
}

// batchLimit bounds one x/net batch call.
const batchLimit = 64

// ReadBatch receives up to len(ms) datagrams.
func (x *XNetConn) ReadBatch(ms []Message) (int, error) {
	k := min(len(ms), batchLimit)
	for i := 0; i < k; i++ {
		x.rmsgs[i].Buffers[0] = ms[i].Buf[:cap(ms[i].Buf)]
	}
	n, err := x.p.ReadBatch(x.rmsgs[:k], 0)
	if err != nil {
		return 0, mapClosed(err)
	}
	for i := 0; i < n; i++ {
		ms[i].N = x.rmsgs[i].N
		if ua, ok := x.rmsgs[i].Addr.(*net.UDPAddr); ok {
			ms[i].Addr = ua.AddrPort()
		}
		ms[i].ECN = 0
	}
	return n, nil
}

// WriteBatch sends ms; the ECN field of the first message with one sets the
// socket's TOS (x/net has no per-datagram TOS for IPv4).
func (x *XNetConn) WriteBatch(ms []Message) (int, error) {
	sent := 0
	for sent < len(ms) {
		k := min(len(ms)-sent, batchLimit)
		for i := 0; i < k; i++ {
			m := &ms[sent+i]
			if int(m.ECN) != x.tos {
				x.tos = int(m.ECN)
				_ = x.p.SetTOS(x.tos)
			}
			x.wmsgs[i].Buffers[0] = m.Buf[:m.N]
			x.wmsgs[i].Addr = nil
			if x.c.RemoteAddr() == nil {
				ua, ok := x.addrs[m.Addr]
				if !ok {
					ua = net.UDPAddrFromAddrPort(m.Addr)
					x.addrs[m.Addr] = ua
				}
				x.wmsgs[i].Addr = ua
			}
		}
		n, err := x.p.WriteBatch(x.wmsgs[:k], 0)
		sent += n
		if err != nil {
			return sent, mapClosed(err)
		}
	}
	return sent, nil
}

// LocalAddr returns the bound address.
func (x *XNetConn) LocalAddr() netip.AddrPort { return x.c.LocalAddr().(*net.UDPAddr).AddrPort() }

// Close closes the socket.
func (x *XNetConn) Close() error { return x.c.Close() }
