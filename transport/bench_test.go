package transport

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"testing"
	"time"

	"cclab/clock"
	"cclab/event"
)

// BenchmarkTransfer moves a bulk stream between two Endpoints in memory
// (zero delay, no loss); one op is one data datagram sent and received plus
// the ACKs it causes. Reports allocs/op (steady state should be 0) and
// goodput in MB/s of CPU time.
func BenchmarkTransfer(b *testing.B) {
	for _, digest := range []string{"sha256", "crc32c", "none"} {
		b.Run(digest, func(b *testing.B) { benchTransfer(b, Config{Digest: digest, Sink: event.Discard}) })
	}
	b.Run("sha256+ecn", func(b *testing.B) { benchTransfer(b, Config{ECN: true, Sink: event.Discard}) })
	// With a sink that takes every event, as the simulator's (the others
	// drop them unbuilt, as the live path does without metrics).
	b.Run("none+events", func(b *testing.B) { benchTransfer(b, Config{Digest: "none", Sink: new(countSink)}) })
	b.Run("none+loss1%", func(b *testing.B) {
		benchTransfer(b, Config{Digest: "none", Sink: event.Discard, RecvWindow: 1 << 20}, 100)
	})
}

// BenchmarkAuthTransfer is BenchmarkTransfer's lossless transfer without a
// digest, unauthenticated and authenticated (GMAC; GCM: encrypted), at the
// base datagram size and at 9000 bytes: the authenticated hot path's cost
// per packet (sealing every data packet and ACK, opening them), and its
// allocations (steady state should be 0).
func BenchmarkAuthTransfer(b *testing.B) {
	for _, size := range []int{DefaultMaxDatagram, 9000} {
		for _, v := range []struct {
			name    string
			psk     []byte
			encrypt bool
		}{{"plain", nil, false}, {"gmac", authKey, false}, {"gcm", authKey, true}} {
			b.Run(fmt.Sprintf("%s/%d", v.name, size), func(b *testing.B) {
				benchTransfer(b, Config{Digest: "none", Sink: event.Discard, MaxDatagram: size, PSK: v.psk, PSKName: "k1", Encrypt: v.encrypt})
			})
		}
	}
}

// benchTransfer runs the transfer; with dropEvery > 0 every dropEvery-th
// client datagram is lost (recovery paths in steady state).
func benchTransfer(b *testing.B, cfg Config, dropEvery ...int) {
	drop := 0
	if len(dropEvery) > 0 {
		drop = dropEvery[0]
	}
	sent := 0
	now := clock.Start
	ca := netip.MustParseAddrPort("10.0.0.1:1")
	sa := netip.MustParseAddrPort("10.0.0.2:2")
	dial := Config{PSK: cfg.PSK, PSKName: cfg.PSKName, Encrypt: cfg.Encrypt} // (not taken from Defaults)
	cli := NewEndpoint(EndpointConfig{Defaults: cfg, Rand: rand.New(rand.NewPCG(1, 1))})
	srvCfg := EndpointConfig{Server: true, Defaults: cfg, Rand: rand.New(rand.NewPCG(2, 2))}
	if cfg.PSK != nil {
		srvCfg.PSK = keyring
	}
	srv := NewEndpoint(srvCfg)
	c, err := cli.Dial(now, sa, dial)
	if err != nil {
		b.Fatal(err)
	}
	c.SetSource(NewPatternSource(1), -1)
	buf := make([]byte, 65536)
	rbuf := make([]byte, 1<<16)
	var s *Conn
	// pump moves at most max data datagrams client->server, and every
	// server datagram back; it returns the data datagrams moved.
	pump := func(max int) int {
		moved := 0
		for moved < max {
			n, _, cp := cli.Transmit(now, buf)
			if n == 0 {
				break
			}
			moved++
			sent++
			if drop > 0 && sent%drop == 0 {
				continue
			}
			srv.Receive(now, ca, cp, buf[:n])
			if s == nil {
				s = srv.Accept()
			}
			if s != nil {
				for s.Read(rbuf) > 0 {
				}
			}
			for {
				n, _, cp := srv.Transmit(now, buf)
				if n == 0 {
					break
				}
				cli.Receive(now, sa, cp, buf[:n])
			}
		}
		now = now.Add(10 * time.Microsecond)
		if d := cli.Deadline(); d != clock.Never && d <= now {
			cli.OnDeadline(now)
		}
		if d := srv.Deadline(); d != clock.Never && d <= now {
			srv.OnDeadline(now)
		}
		return moved
	}
	for i := 0; i < 20000; i++ { // warm up: grow rings and scoreboard
		pump(1)
	}
	start := c.Stats().BytesSent
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; {
		done += pump(b.N - done)
	}
	b.StopTimer()
	b.SetBytes(int64(c.Stats().BytesSent-start) / int64(max(b.N, 1)))
	st := c.Stats()
	b.ReportMetric(float64(st.Retransmits)/float64(b.N), "retx/op")
	b.ReportMetric(float64(st.RTOs), "rtos")
	if s == nil || s.Stats().BytesDelivered == 0 {
		b.Fatal("nothing delivered")
	}
}

// countSink counts events (a sink that takes every one).
type countSink struct{ n int }

func (s *countSink) Record(*event.Event) { s.n++ }
