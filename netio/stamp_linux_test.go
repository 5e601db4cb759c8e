package netio

import (
	"net/netip"
	"testing"
	"time"
)

// TestRxTimestamps: with EnableRxTimestamps every datagram a batch reads
// carries the kernel's receive time, which lies between the send and the
// end of the read (the same clock, CLOCK_REALTIME); without it, and on a
// socket with GRO, the field is 0 or the stamp respectively.
func TestRxTimestamps(t *testing.T) {
	for _, tc := range []struct {
		name        string
		stamps, gro bool
	}{{"stamps", true, false}, {"stamps with GRO", true, true}, {"no stamps", false, false}} {
		t.Run(tc.name, func(t *testing.T) {
			rx, err := ListenUDP("127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer rx.Close()
			if tc.stamps && !EnableRxTimestamps(rx) {
				t.Fatal("EnableRxTimestamps on a UDP socket: got false, want true")
			}
			bufSize := 2048
			if tc.gro {
				EnableGRO(rx) // stamps must survive either way
				bufSize = GROBufSize
			}
			tx, err := DialUDP("", rx.LocalAddr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Close()
			const n = 8
			out := make([]Message, n)
			for i := range out {
				out[i] = Message{Buf: make([]byte, 1000), N: 1000}
			}
			before := time.Now().UnixNano()
			if _, err := tx.WriteBatch(out); err != nil {
				t.Fatal(err)
			}
			in := make([]Message, n)
			for i := range in {
				in[i].Buf = make([]byte, bufSize)
			}
			got := 0
			for got < n {
				k, err := rx.ReadBatch(in)
				if err != nil {
					t.Fatal(err)
				}
				after := time.Now().UnixNano()
				for _, m := range in[:k] {
					got += m.Count()
					switch {
					case !tc.stamps && m.RxTime != 0:
						t.Errorf("RxTime without stamps: got %d, want 0", m.RxTime)
					case tc.stamps && (m.RxTime < before || m.RxTime > after):
						t.Errorf("RxTime: got %d, want within [%d, %d] (sent, read)", m.RxTime, before, after)
					}
				}
			}
		})
	}
	a, _ := MemPair(netip.MustParseAddrPort("10.0.0.1:1"), netip.MustParseAddrPort("10.0.0.2:2"))
	if EnableRxTimestamps(a) {
		t.Error("EnableRxTimestamps(MemConn): got true, want false")
	}
}
