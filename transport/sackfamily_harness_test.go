package transport

import (
	"crypto/sha256"
	"testing"
)

// sackFamily lists every SACK-based strategy spec the harness must carry.
var sackFamily = []string{
	"sack", "sack:lostretx", "fack", "fack:lostretx", "ratehalving", "ratehalving:lostretx",
	"prr", "prr:bound=crb", "prr:lostretx",
}

// TestImpairedTransfersSACKFamily: as TestImpairedTransfers, for the
// SACK-based strategies: at 0/1/5/20% loss with reordering and duplication,
// every transfer completes byte-for-byte, deterministically.
func TestImpairedTransfersSACKFamily(t *testing.T) {
	for _, rec := range sackFamily {
		for _, tc := range lossCases {
			t.Run(rec+"/"+tc.name, func(t *testing.T) {
				size := tc.size
				if testing.Short() {
					size = min(size, 256<<10)
				}
				h1, cli, srv := runImpaired(t, 7, tc.loss, size, rec)
				cs, ss := cli.Stats(), srv.Stats()
				if cli.Err() != nil || srv.Err() != nil {
					t.Fatalf("errors: client %v server %v", cli.Err(), srv.Err())
				}
				if ss.BytesDelivered != uint64(size) || cs.BytesAcked != uint64(size) {
					t.Errorf("delivered %d acked %d, want %d", ss.BytesDelivered, cs.BytesAcked, size)
				}
				want := sha256.New()
				data := make([]byte, size)
				NewPatternSource(42).Fill(0, data)
				want.Write(data)
				if ss.RecvDigest != cs.SentDigest || string(ss.RecvDigest[:]) != string(want.Sum(nil)) {
					t.Errorf("digest mismatch: receiver %x sender %x", ss.RecvDigest[:4], cs.SentDigest[:4])
				}
				if tc.loss > 0 && cs.Retransmits == 0 {
					t.Errorf("loss %v but no retransmissions", tc.loss)
				}
				if got := cli.Recovery().Name(); got != rec[:len(got)] {
					t.Errorf("strategy got %q, want %q", got, rec)
				}
				h2, _, _ := runImpaired(t, 7, tc.loss, size, rec)
				if h1.traceHash() != h2.traceHash() {
					t.Errorf("same seed, different traces")
				}
				t.Logf("%s %s: retx %d rtos %d %v spurious %d recoveries %d", rec, tc.name, cs.Retransmits, cs.RTOs, cs.RTOCauses, cs.SpuriousRetransmits, cs.Recoveries)
			})
		}
	}
}
