package netio

import (
	"net"
	"testing"
)

// TestPathMaxPayloadLoopback: the loopback route's MTU (lo's, 65536 bytes
// by default) less the IPv4 and UDP headers, capped at the largest IPv4 UDP
// payload; a listening (unconnected) socket has no route: 0.
func TestPathMaxPayloadLoopback(t *testing.T) {
	lo, err := net.InterfaceByName("lo")
	if err != nil {
		t.Skipf("no interface lo: %v", err)
	}
	c, err := DialUDP("", "127.0.0.1:9")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	want := min(lo.MTU, MaxDatagram) - ipv4Header - udpHeader
	if got := PathMaxPayload(c); got != want {
		t.Errorf("PathMaxPayload(loopback) = %d, want %d (lo's MTU %d less 28, at most 65535 less 28)", got, want, lo.MTU)
	}
	l, err := ListenUDP("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if got := PathMaxPayload(l); got != 0 {
		t.Errorf("PathMaxPayload(listening socket) = %d, want 0", got)
	}
}
