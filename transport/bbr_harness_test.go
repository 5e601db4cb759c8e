package transport

import (
	"testing"
	"time"

	"cclab/ccalgo"
	"cclab/clock"
)

// TestImpairedTransfersBBR: BBR (paced, delivery-rate driven, governing
// cwnd during recovery) completes byte-for-byte transfers under every
// recovery strategy at 0/1/5/20% loss with reordering and duplication.
func TestImpairedTransfersBBR(t *testing.T) {
	recs := append([]string{"newreno", "reno"}, sackFamily...)
	for _, rec := range recs {
		for _, tc := range lossCases {
			t.Run(rec+"/"+tc.name, func(t *testing.T) {
				// 512 KiB even under -short: at 1% loss a 128 KiB transfer
				// (about 90 segments) lost nothing with this seed, and the
				// check that loss caused retransmissions then failed.
				size := min(tc.size, 512<<10)
				h := newHarness(t, 7, impairedPath(tc.loss), impairedPath(tc.loss), Config{CC: "bbr", Recovery: rec})
				cli, srv, ok := h.transfer(size, 2*time.Hour)
				if !ok {
					t.Fatalf("transfer did not finish by %v (client done=%v err=%v)", h.now, cli.Done(), cli.Err())
				}
				checkTransfer(t, cli, srv, size, tc.loss)
				b := cli.Controller().(*ccalgo.BBR)
				cs := cli.Stats()
				t.Logf("%v: retx %d rtos %d, state %s btlbw %.2f Mbit/s rtprop %v", h.now.Sub(clock.Start), cs.Retransmits, cs.RTOs,
					b.StateName(), b.BtlBw()/1e6, b.RTprop())
			})
		}
	}
}
