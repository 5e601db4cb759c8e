package transport

import (
	"testing"

	"cclab/event"
)

// BenchmarkTransferRecovery: BenchmarkTransfer's lossy case (every 100th
// data datagram dropped) for each SACK-based strategy: recovery episodes in
// steady state must not allocate (allocs/op 0).
func BenchmarkTransferRecovery(b *testing.B) {
	for _, rec := range []string{"newreno", "sack", "sack:lostretx", "fack", "ratehalving", "prr", "prr:bound=crb,lostretx"} {
		b.Run(rec, func(b *testing.B) {
			benchTransfer(b, Config{Digest: "none", Sink: event.Discard, RecvWindow: 1 << 20, Recovery: rec}, 100)
		})
	}
}
