// Package ecn names the two-bit Explicit Congestion Notification field of the
// IP header (RFC 3168 §5).
package ecn

// Codepoint is the ECN field of an IPv4 TOS / IPv6 traffic-class octet (its
// two low-order bits).
type Codepoint uint8

// ECN codepoints, RFC 3168 §5.
const (
	NotECT Codepoint = 0b00 // Not ECN-Capable Transport
	ECT1   Codepoint = 0b01 // ECN-Capable Transport (1)
	ECT0   Codepoint = 0b10 // ECN-Capable Transport (0)
	CE     Codepoint = 0b11 // Congestion Experienced
)

// Mask selects the ECN bits of a TOS / traffic-class octet.
const Mask = 0b11

// Capable reports whether the codepoint marks an ECN-capable packet (ECT(0),
// ECT(1) or CE), i.e. one a router may mark instead of dropping.
func (c Codepoint) Capable() bool { return c != NotECT }

// FromTOS extracts the ECN codepoint from a TOS / traffic-class octet.
func FromTOS(tos int) Codepoint { return Codepoint(tos & Mask) }

// String returns the RFC 3168 name of the codepoint.
func (c Codepoint) String() string {
	switch c & Mask {
	case ECT1:
		return "ECT(1)"
	case ECT0:
		return "ECT(0)"
	case CE:
		return "CE"
	}
	return "Not-ECT"
}
