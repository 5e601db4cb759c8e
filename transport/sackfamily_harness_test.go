package transport

import "testing"

// sackFamily lists every SACK-based strategy spec the harness must carry.
var sackFamily = []string{
	"sack", "sack:lostretx", "fack", "fack:lostretx", "ratehalving", "ratehalving:lostretx",
	"prr", "prr:bound=crb", "prr:lostretx",
	// the options and their combinations (docs/recovery.md)
	"rack", "rack:tlp=false", "sack:rack", "fack:rack,undo", "ratehalving:rack", "sack:adaptive,undo",
	"prr:adaptive,undo,lostretx", "sack:frto", "sack:frto,undo,adaptive",
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
				checkTransfer(t, cli, srv, size, tc.loss)
				cs := cli.Stats()
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
