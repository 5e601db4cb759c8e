package link

import (
	"net/netip"
	"testing"
)

func TestUDPOverhead(t *testing.T) {
	tests := []struct {
		addr string
		want int
	}{
		{"10.0.0.1", 20 + 8},        // RFC 791 + RFC 768
		{"::ffff:10.0.0.1", 20 + 8}, // IPv4-mapped: carried as IPv4
		{"2001:db8::1", 40 + 8},     // RFC 8200 + RFC 768
		{"", 20 + 8},                // unknown: IPv4
	}
	for _, tc := range tests {
		var a netip.Addr
		if tc.addr != "" {
			a = netip.MustParseAddr(tc.addr)
		}
		if got := UDPOverhead(a); got != tc.want {
			t.Errorf("UDPOverhead(%q) got %d, want %d", tc.addr, got, tc.want)
		}
	}
}
