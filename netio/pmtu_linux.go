package netio

import "golang.org/x/sys/unix"

// Header sizes that separate a path MTU from the largest UDP payload, bytes.
const (
	ipv4Header = 20 // RFC 791, without options
	ipv6Header = 40 // RFC 8200
	udpHeader  = 8  // RFC 768
)

// PathMaxPayload prepares a connected UDP socket for datagram size
// discovery (RFC 8899) and returns the largest UDP payload its route
// carries, bytes: the route's MTU (IP_MTU / IPV6_MTU: the interface's, or
// the kernel's cached path MTU) less the IP and UDP headers; 0 if unknown
// (not a connected UDP socket, or not Linux). It sets IP_PMTUDISC_PROBE
// (and its IPv6 twin): datagrams are sent with Don't Fragment, so that a
// probe larger than the path is lost instead of fragmented, and the
// kernel's path MTU cache does not cap them (the transport discovers the
// size itself).
func PathMaxPayload(c Conn) int {
	u, ok := c.(*UDPConn)
	if !ok || !u.connected {
		return 0
	}
	v6 := u.local.Addr().Is6() && !u.local.Addr().Is4In6()
	n := 0
	_ = u.sys.rc.Control(func(fd uintptr) {
		if v6 {
			_ = unix.SetsockoptInt(int(fd), unix.IPPROTO_IPV6, unix.IPV6_MTU_DISCOVER, unix.IPV6_PMTUDISC_PROBE)
			if mtu, err := unix.GetsockoptInt(int(fd), unix.IPPROTO_IPV6, unix.IPV6_MTU); err == nil {
				n = mtu - ipv6Header - udpHeader
			}
			return
		}
		_ = unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_MTU_DISCOVER, unix.IP_PMTUDISC_PROBE)
		if mtu, err := unix.GetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_MTU); err == nil {
			n = mtu - ipv4Header - udpHeader
		}
	})
	return max(0, min(n, MaxDatagram-ipv4Header-udpHeader))
}
