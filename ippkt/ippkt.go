// Package ippkt reads and edits the IP headers of whole IPv4 and IPv6
// packets, as a TUN device hands them over (docs/shell.md): the addresses,
// the transport protocol and ports that key a flow for the flow-aware queue
// disciplines, the ECN field, and the packet's length. It is sans-I/O and
// allocation-free.
//
// Header layouts: IPv4 RFC 791 (ECN field RFC 3168 §5), IPv6 RFC 8200 with
// its extension headers (§4), the ports of TCP (RFC 9293), UDP (RFC 768),
// UDP-Lite (RFC 3828), DCCP (RFC 4340) and SCTP (RFC 9260), all of which
// start with a 16-bit source and a 16-bit destination port.
package ippkt

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"

	"cclab/ecn"
	"cclab/qdisc"
)

// Header sizes, bytes.
const (
	IPv4MinHeader = 20 // IPv4 header without options (RFC 791 §3.1, IHL 5)
	IPv6Header    = 40 // IPv6 fixed header (RFC 8200 §3)
)

// IP protocol numbers (IANA "Assigned Internet Protocol Numbers") that the
// parser knows: transport protocols with ports, and IPv6 extension headers
// it skips (RFC 8200 §4, RFC 4302 for AH).
const (
	ProtoHopByHop = 0   // IPv6 Hop-by-Hop Options (RFC 8200 §4.3)
	ProtoICMP     = 1   // ICMP (RFC 792)
	ProtoTCP      = 6   // TCP (RFC 9293)
	ProtoUDP      = 17  // UDP (RFC 768)
	ProtoDCCP     = 33  // DCCP (RFC 4340)
	ProtoRouting  = 43  // IPv6 Routing header (RFC 8200 §4.4)
	ProtoFragment = 44  // IPv6 Fragment header (RFC 8200 §4.5)
	ProtoAH       = 51  // Authentication Header (RFC 4302 §2.2: length in 4-octet units minus 2)
	ProtoICMPv6   = 58  // ICMPv6 (RFC 4443)
	ProtoNoNext   = 59  // IPv6 No Next Header (RFC 8200 §4.7)
	ProtoDstOpts  = 60  // IPv6 Destination Options (RFC 8200 §4.6)
	ProtoSCTP     = 132 // SCTP (RFC 9260)
	ProtoUDPLite  = 136 // UDP-Lite (RFC 3828)
	ProtoMobility = 135 // IPv6 Mobility header (RFC 6275 §6.1)
	ProtoHIP      = 139 // Host Identity Protocol (RFC 7401 §5.1)
	ProtoShim6    = 140 // Shim6 (RFC 5533 §5)
)

// maxExtHeaders bounds the IPv6 extension-header chain the parser follows
// (a packet cannot have more headers than bytes, but a bound keeps the
// work per packet small; RFC 8200 §4.1 recommends each header at most once,
// Destination Options at most twice).
const maxExtHeaders = 16

// Errors of Parse.
var (
	ErrShort   = errors.New("ippkt: packet shorter than its IP header")
	ErrVersion = errors.New("ippkt: IP version is neither 4 nor 6")
	ErrLength  = errors.New("ippkt: header length or total length field inconsistent with the packet")
)

// Info is what Parse reads from a packet's headers.
type Info struct {
	Version int           // 4 or 6
	Src     netip.Addr    // source address
	Dst     netip.Addr    // destination address
	Proto   uint8         // transport protocol (after IPv6 extension headers); ProtoNoNext if none
	SrcPort uint16        // transport source port; 0 for protocols without ports and for fragments
	DstPort uint16        // transport destination port; 0 likewise
	ECN     ecn.Codepoint // the IP ECN field
	Len     int           // packet length by its IP header (total length, or 40 + payload length), bytes
	Offset  int           // offset of the transport header (after IP options and extension headers), bytes
	// Fragment is true for any fragment of a fragmented datagram (IPv4 MF
	// set or offset non-zero; an IPv6 Fragment header). Its ports are 0
	// even in the first fragment, so that every fragment of one datagram
	// has the same flow key (as Linux's flow dissector does by default).
	Fragment bool
}

// Parse reads the IP header of packet b (which starts with the IP version
// nibble). Bytes after the length the header gives (link padding) are
// ignored; a packet shorter than that is an error. A transport header cut
// short leaves the ports 0.
func Parse(b []byte) (Info, error) {
	var in Info
	if len(b) < 1 {
		return in, ErrShort
	}
	switch b[0] >> 4 {
	case 4:
		return parse4(b)
	case 6:
		return parse6(b)
	}
	return in, ErrVersion
}

func parse4(b []byte) (Info, error) {
	in := Info{Version: 4}
	if len(b) < IPv4MinHeader {
		return in, ErrShort
	}
	ihl := int(b[0]&0x0f) * 4
	total := int(binary.BigEndian.Uint16(b[2:4]))
	if ihl < IPv4MinHeader || total < ihl || total > len(b) {
		return in, ErrLength
	}
	in.ECN = ecn.Codepoint(b[1] & ecn.Mask)
	in.Len = total
	in.Offset = ihl
	in.Proto = b[9]
	in.Src = netip.AddrFrom4([4]byte(b[12:16]))
	in.Dst = netip.AddrFrom4([4]byte(b[16:20]))
	frag := binary.BigEndian.Uint16(b[6:8])
	in.Fragment = frag&0x2000 != 0 || frag&0x1fff != 0 // MF, or fragment offset
	in.ports(b[:total])
	return in, nil
}

func parse6(b []byte) (Info, error) {
	in := Info{Version: 6}
	if len(b) < IPv6Header {
		return in, ErrShort
	}
	total := IPv6Header + int(binary.BigEndian.Uint16(b[4:6]))
	if total > len(b) {
		return in, ErrLength
	}
	// Jumbograms (payload length 0 with a Hop-by-Hop jumbo option,
	// RFC 2675) do not cross a TUN device of ordinary MTU; a zero payload
	// length is taken at its word.
	in.ECN = ecn.Codepoint(b[1]>>4) & ecn.Mask
	in.Len = total
	in.Src = netip.AddrFrom16([16]byte(b[8:24]))
	in.Dst = netip.AddrFrom16([16]byte(b[24:40]))
	b = b[:total]
	next, off := b[6], IPv6Header
	for range maxExtHeaders {
		var hlen int
		switch next {
		case ProtoHopByHop, ProtoRouting, ProtoDstOpts, ProtoMobility, ProtoHIP, ProtoShim6:
			if off+2 > len(b) {
				return in, ErrLength
			}
			hlen = (int(b[off+1]) + 1) * 8 // RFC 8200 §4.3: Hdr Ext Len in 8-octet units, not counting the first 8
		case ProtoAH:
			if off+2 > len(b) {
				return in, ErrLength
			}
			hlen = (int(b[off+1]) + 2) * 4
		case ProtoFragment:
			hlen = 8
			in.Fragment = true
		default:
			in.Proto, in.Offset = next, off
			in.ports(b)
			return in, nil
		}
		if off+hlen > len(b) {
			return in, ErrLength
		}
		next, off = b[off], off+hlen
	}
	return in, fmt.Errorf("%w: more than %d IPv6 extension headers", ErrLength, maxExtHeaders)
}

// hasPorts reports whether protocol p's header starts with 16-bit source
// and destination ports.
func hasPorts(p uint8) bool {
	switch p {
	case ProtoTCP, ProtoUDP, ProtoUDPLite, ProtoDCCP, ProtoSCTP:
		return true
	}
	return false
}

// ports fills SrcPort and DstPort from the transport header of b (cut at
// the IP packet's length), if the protocol has ports and this is not a
// fragment.
func (in *Info) ports(b []byte) {
	if in.Fragment || !hasPorts(in.Proto) || in.Offset+4 > len(b) {
		return
	}
	in.SrcPort = binary.BigEndian.Uint16(b[in.Offset:])
	in.DstPort = binary.BigEndian.Uint16(b[in.Offset+2:])
}

// Source returns the source address and port.
func (in Info) Source() netip.AddrPort { return netip.AddrPortFrom(in.Src, in.SrcPort) }

// Destination returns the destination address and port.
func (in Info) Destination() netip.AddrPort { return netip.AddrPortFrom(in.Dst, in.DstPort) }

// FlowKey returns the packet's flow key, qdisc.FlowKey5 of its 5-tuple: the
// same key the UDP relay gives a datagram of the same addresses and ports
// (qdisc.FlowKey), so a flow-aware queue (DRR, FRED, CSFQ) separates the
// flows of a TUN link exactly as it does those of the UDP relay.
func (in Info) FlowKey() uint64 { return qdisc.FlowKey5(in.Source(), in.Destination(), in.Proto) }

// Payload returns the transport payload of a UDP packet b whose header in
// describes (the bytes after the 8-byte UDP header, RFC 768), or false if
// b is not an unfragmented UDP packet.
func (in Info) Payload(b []byte) ([]byte, bool) {
	if in.Proto != ProtoUDP || in.Fragment || in.Offset+8 > in.Len || in.Len > len(b) {
		return nil, false
	}
	return b[in.Offset+8 : in.Len], true
}

// ECN returns the ECN field of IP packet b, or ecn.NotECT if b is not an
// IPv4 or IPv6 packet.
func ECN(b []byte) ecn.Codepoint {
	switch {
	case len(b) >= IPv4MinHeader && b[0]>>4 == 4:
		return ecn.Codepoint(b[1] & ecn.Mask)
	case len(b) >= IPv6Header && b[0]>>4 == 6:
		return ecn.Codepoint(b[1]>>4) & ecn.Mask
	}
	return ecn.NotECT
}

// SetECN writes codepoint cp into the ECN field of IP packet b and, for
// IPv4, updates the header checksum incrementally (RFC 1624 eqn. 3). It
// reports whether b changed; b that is not an IPv4 or IPv6 packet is left
// alone.
func SetECN(b []byte, cp ecn.Codepoint) bool {
	cp &= ecn.Mask
	switch {
	case len(b) >= IPv4MinHeader && b[0]>>4 == 4:
		old := b[1]
		nw := old&^ecn.Mask | byte(cp)
		if nw == old {
			return false
		}
		b[1] = nw
		// The 16-bit word holding the TOS byte is b[0:2]; HC' = ~(~HC + ~m + m').
		m := uint32(b[0])<<8 | uint32(old)
		m2 := uint32(b[0])<<8 | uint32(nw)
		sum := uint32(^binary.BigEndian.Uint16(b[10:12])) + (^m & 0xffff) + m2
		binary.BigEndian.PutUint16(b[10:12], ^fold(sum))
		return true
	case len(b) >= IPv6Header && b[0]>>4 == 6:
		old := b[1]
		nw := old&^(ecn.Mask<<4) | byte(cp)<<4
		b[1] = nw
		return nw != old
	}
	return false
}

// fold folds a 32-bit one's-complement sum into 16 bits.
func fold(sum uint32) uint16 {
	for sum>>16 != 0 {
		sum = sum&0xffff + sum>>16
	}
	return uint16(sum)
}

// Checksum returns the Internet checksum (RFC 1071) of b: the one's
// complement of the one's-complement sum of its 16-bit words. A correct
// IPv4 header checksums to 0.
func Checksum(b []byte) uint16 {
	var sum uint32
	n := len(b) &^ 1
	for i := 0; i < n; i += 2 {
		sum += uint32(b[i])<<8 | uint32(b[i+1])
	}
	if len(b)&1 == 1 {
		sum += uint32(b[len(b)-1]) << 8
	}
	return ^fold(sum)
}
