package netio

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
)

// UDPConn is a UDP socket with batched I/O and per-datagram ECN. On Linux it
// uses recvmmsg/sendmmsg directly with preallocated headers (no per-datagram
// allocation); elsewhere it uses golang.org/x/net's ReadBatch/WriteBatch.
// One goroutine may read while another writes; concurrent readers (or
// concurrent writers) must be serialized by the caller.
type UDPConn struct {
	c         *net.UDPConn
	local     netip.AddrPort
	connected bool
	v6        bool           // socket family is AF_INET6
	remote    netip.AddrPort // connected peer, if connected
	sys       sysState
	closeFn   func() error // after Unpoll: closes the duplicate descriptor (nil: c.Close)
}

// ListenUDP opens an unconnected UDP socket bound to addr ("host:port", ":port").
func ListenUDP(addr string) (*UDPConn, error) {
	la, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		return nil, fmt.Errorf("netio: listen address %q: %w", addr, err)
	}
	c, err := net.ListenUDP("udp", la)
	if err != nil {
		return nil, err
	}
	return newUDPConn(c, false)
}

// DialUDP opens a UDP socket connected to remote, bound to local ("" picks
// an ephemeral port). Writes ignore Message.Addr.
func DialUDP(local, remote string) (*UDPConn, error) {
	ra, err := net.ResolveUDPAddr("udp", remote)
	if err != nil {
		return nil, fmt.Errorf("netio: remote address %q: %w", remote, err)
	}
	var la *net.UDPAddr
	if local != "" {
		if la, err = net.ResolveUDPAddr("udp", local); err != nil {
			return nil, fmt.Errorf("netio: local address %q: %w", local, err)
		}
	}
	c, err := net.DialUDP("udp", la, ra)
	if err != nil {
		return nil, err
	}
	return newUDPConn(c, true)
}

func newUDPConn(c *net.UDPConn, connected bool) (*UDPConn, error) {
	u := &UDPConn{c: c, connected: connected}
	u.local = c.LocalAddr().(*net.UDPAddr).AddrPort()
	u.remote = u.RemoteAddr()
	// Generous socket buffers: a bottleneck relay or a fast sender bursts.
	_ = c.SetReadBuffer(8 << 20)
	_ = c.SetWriteBuffer(8 << 20)
	if err := u.sysInit(); err != nil {
		c.Close()
		return nil, err
	}
	return u, nil
}

// LocalAddr returns the bound address.
func (u *UDPConn) LocalAddr() netip.AddrPort { return u.local }

// RemoteAddr returns the connected peer, or the zero AddrPort.
func (u *UDPConn) RemoteAddr() netip.AddrPort {
	if ra, ok := u.c.RemoteAddr().(*net.UDPAddr); ok && ra != nil {
		return ra.AddrPort()
	}
	return netip.AddrPort{}
}

// Close closes the socket; blocked reads return ErrClosed.
func (u *UDPConn) Close() error {
	if u.closeFn != nil {
		return mapClosed(u.closeFn())
	}
	return u.c.Close()
}

// Raw returns the underlying socket (for deadlines and options); after
// Unpoll it is closed.
func (u *UDPConn) Raw() *net.UDPConn { return u.c }

func mapClosed(err error) error {
	if errors.Is(err, net.ErrClosed) {
		return ErrClosed
	}
	return err
}
