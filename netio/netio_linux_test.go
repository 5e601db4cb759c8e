package netio

import (
	"net/netip"
	"os"
	"testing"

	"cclab/ecn"
)

// TestParseTOSMalformed: malformed control messages yield Not-ECT, never a
// panic or an out-of-range read.
func TestParseTOSMalformed(t *testing.T) {
	for _, oob := range [][]byte{nil, {1}, make([]byte, 16), {255, 255, 255, 255, 255, 255, 255, 255, 0, 0, 0, 0, 1, 0, 0, 0}} {
		if got := parseTOS(oob); got != ecn.NotECT {
			t.Errorf("parseTOS(%v) = %v, want Not-ECT", oob, got)
		}
	}
}

// TestRaiseReceiveBuffer: the buffer does not shrink and is reported;
// not a UDP socket gives 0.
func TestRaiseReceiveBuffer(t *testing.T) {
	c, err := ListenUDP("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	before := RaiseReceiveBuffer(c, 1)
	got := RaiseReceiveBuffer(c, 8<<20)
	if got < before || got <= 0 {
		t.Errorf("receive buffer after asking for 8 MiB: got %d, want at least the %d before", got, before)
	}
	if os.Geteuid() == 0 && got < 2*(8<<20) {
		t.Logf("receive buffer as root: %d, less than the %d asked for (no CAP_NET_ADMIN for SO_RCVBUFFORCE?)", got, 2*(8<<20))
	}
	a, _ := MemPair(netip.MustParseAddrPort("10.0.0.1:1"), netip.MustParseAddrPort("10.0.0.2:2"))
	if got := RaiseReceiveBuffer(a, 1<<20); got != 0 {
		t.Errorf("RaiseReceiveBuffer(MemConn): got %d, want 0", got)
	}
}
