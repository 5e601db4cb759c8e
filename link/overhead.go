package link

import "net/netip"

// Per-datagram header overhead on the wire. A link serializes, queues and
// counts whole IP packets, so a driver that knows only a datagram's UDP
// payload adds one of these to get qdisc.Packet.Size. The simulator (sim)
// and the live relay (relay, cmd/bottleneck) both use them, so that
// byte-limited queues, serialization times and rate statistics agree.
const (
	// IPv4UDPOverhead is the IPv4 header without options (RFC 791, 20 bytes)
	// plus the UDP header (RFC 768, 8 bytes), bytes.
	IPv4UDPOverhead = 20 + 8
	// IPv6UDPOverhead is the IPv6 fixed header without extension headers
	// (RFC 8200, 40 bytes) plus the UDP header (RFC 768, 8 bytes), bytes.
	IPv6UDPOverhead = 40 + 8
)

// UDPOverhead returns the header overhead of a UDP datagram carried over
// addr's IP version, bytes: IPv6UDPOverhead for an IPv6 address,
// IPv4UDPOverhead for an IPv4 or IPv4-mapped IPv6 address and for the zero
// (unknown) address.
func UDPOverhead(addr netip.Addr) int {
	if addr.Is6() && !addr.Is4In6() {
		return IPv6UDPOverhead
	}
	return IPv4UDPOverhead
}
