//go:build !linux

package netio

// RaiseReceiveBuffer asks for a socket receive buffer of want bytes (as
// far as the system allows) and returns 0: the granted size is not known
// here.
func RaiseReceiveBuffer(c Conn, want int) int {
	if u, ok := c.(*UDPConn); ok {
		_ = u.Raw().SetReadBuffer(want)
	}
	return 0
}

// ReceiveDrops returns 0, false: the kernel's receive-buffer drop count is
// read on Linux only.
func ReceiveDrops(c Conn) (uint64, bool) { return 0, false }
