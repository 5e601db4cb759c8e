package netio

import (
	"testing"
	"time"

	"cclab/ecn"
)

// TestGSORuns sends a mix of datagram sizes, destinations' ECN codepoints
// and run lengths through the GSO path and checks that the receiver sees
// exactly the datagrams that were produced, in order, with their ECN.
func TestGSORuns(t *testing.T) {
	rx, err := ListenUDP("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer rx.Close()
	for _, connected := range []bool{false, true} {
		var tx *UDPConn
		if connected {
			tx, err = DialUDP("", rx.LocalAddr().String())
		} else {
			tx, err = ListenUDP("127.0.0.1:0")
		}
		if err != nil {
			t.Fatal(err)
		}
		g := NewGSOWriter(tx)
		if g == nil {
			tx.Close()
			t.Skip("kernel without UDP GSO")
		}
		type dg struct {
			n  int
			cp ecn.Codepoint
		}
		var want []dg
		for i := 0; i < 70; i++ { // longer than one GSO run (64 segments)
			want = append(want, dg{1200, ecn.ECT0})
		}
		want = append(want, dg{500, ecn.ECT0}, dg{1200, ecn.ECT0}, dg{1200, ecn.NotECT}, dg{1200, ecn.NotECT},
			dg{800, ecn.CE}, dg{800, ecn.CE}, dg{900, ecn.CE}, dg{100, ecn.ECT1})
		arena := make([]byte, 128*1500)
		ms := make([]Message, len(want))
		offs := make([]int, len(want))
		off := 0
		for i, w := range want {
			b := arena[off : off+w.n]
			for j := range b {
				b[j] = byte(i)
			}
			ms[i] = Message{Buf: b, N: w.n, Addr: rx.LocalAddr(), ECN: w.cp}
			offs[i] = off
			off += w.n
		}
		// GSO batches are limited to batchMax messages by the writer.
		for start := 0; start < len(ms); start += batchMax {
			end := min(start+batchMax, len(ms))
			sent, _, err := g.WriteBatch(ms[start:end], offs[start:end])
			if err != nil || sent != end-start {
				t.Fatalf("send: got %d, %v; want %d, nil", sent, err, end-start)
			}
		}
		got := 0
		rm := make([]Message, 64)
		for i := range rm {
			rm[i].Buf = make([]byte, 2048)
		}
		deadline := time.Now().Add(10 * time.Second)
		_ = rx.Raw().SetReadDeadline(deadline)
		for got < len(want) {
			n, err := rx.ReadBatch(rm)
			if err != nil {
				t.Fatalf("read after %d datagrams: %v", got, err)
			}
			for _, m := range rm[:n] {
				w := want[got]
				if m.N != w.n || m.Buf[0] != byte(got) || m.ECN != w.cp {
					t.Errorf("datagram %d (connected=%v): got len %d tag %d ECN %v, want %d %d %v",
						got, connected, m.N, m.Buf[0], m.ECN, w.n, byte(got), w.cp)
				}
				got++
			}
		}
		tx.Close()
	}
}
