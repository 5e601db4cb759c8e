package perf

import (
	"context"
	"testing"
	"time"

	"cclab/internal/rusage"
	"cclab/transport"
)

// BenchmarkDgram100Mbit runs a 100 Mbit/s datagram-mode flow (CCID2,
// 1200-byte datagrams) for one second per iteration over loopback, sender
// and receiver in this process, with and without a pacing quantum, and
// reports the CPU seconds both ends spent per second of flow (cpu-s/s):
// docs/benchmark.md compares the same flow with iperf3 -u.
//
//	go test ./perf -run XXX -bench Dgram100Mbit -benchtime 3x
func BenchmarkDgram100Mbit(b *testing.B) {
	for _, bc := range []struct {
		name string
		q    time.Duration
	}{{"per-datagram", 0}, {"quantum=1ms", transport.DefaultLivePacingQuantum}} {
		b.Run(bc.name, func(b *testing.B) {
			srv, _ := startServer(b, ServerConfig{})
			cfg := DgramClientConfig{Addr: srv.Addr().String(), Duration: time.Second, CC: "ccid2", Rate: 100e6, PacingQuantum: bc.q}
			cpu0, _ := rusage.CPU()
			var sent uint64
			for b.Loop() {
				res, err := RunDgram(context.Background(), cfg)
				if err != nil {
					b.Fatal(err)
				}
				sent += res.Sent
			}
			cpu1, _ := rusage.CPU()
			b.ReportMetric((cpu1-cpu0).Seconds()/float64(b.N), "cpu-s/s")
			b.ReportMetric(float64(sent)/float64(b.N), "datagrams/s")
		})
	}
}
