package tunshell

import (
	"errors"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"cclab/link"
	"cclab/netio"
	"cclab/relay"
)

// BenchmarkShellForward measures the link shell's packet path: UDP
// datagrams of 1472 bytes (1500-byte IP packets) sent in sendmmsg batches
// from a socket inside the namespace to a socket on the host, through the
// inner TUN device, the relay in packet mode (a link of unlimited rate and
// 1 ms delay, so the relay rather than the model sets the pace) and the
// outer device. "bare" replaces the relay by one goroutine per direction
// that copies packets from one device to the other (ReadBatch →
// WriteBatch), the least any TUN-based shell does; the ratio of the two
// rates is the relay's cost. The sender keeps at most 1024 packets in
// flight, so nothing is dropped. It reports packets/s and the allocations
// per packet of the whole process (sender and sink use netio's
// allocation-free batches).
func BenchmarkShellForward(b *testing.B) {
	for _, mode := range []string{"relay", "bare"} {
		b.Run(mode, func(b *testing.B) { benchShell(b, mode) })
	}
}

func benchShell(b *testing.B, mode string) {
	if err := Supported(); err != nil {
		b.Skipf("link shell unavailable: %v", err)
	}
	var s *Shell
	var err error
	if mode == "relay" {
		s, err = Start(Config{Relay: relay.Config{Hops: [2][]link.Config{{{Delay: time.Millisecond, Queue: "droptail:10000p"}}, {}}}})
	} else {
		s, err = build(Config{})
		if err == nil {
			go copyPackets(s.inner, s.outer)
			go copyPackets(s.outer, s.inner)
		}
	}
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	sink, err := netio.ListenUDP(netip.AddrPortFrom(s.Addrs().Host, 0).String())
	if err != nil {
		b.Fatal(err)
	}
	defer sink.Close()
	var got atomic.Int64
	go func() {
		ms := relay.NewBatch(64, 2048)
		for {
			n, err := sink.ReadBatch(ms)
			if err != nil {
				return
			}
			got.Add(int64(n))
		}
	}()
	var src *netio.UDPConn
	if err := s.Do(func() (err error) {
		src, err = netio.DialUDP("", sink.LocalAddr().String())
		return err
	}); err != nil {
		b.Fatal(err)
	}
	defer src.Close()
	const size, window = 1472, 1024
	batch := relay.NewBatch(32, size)
	for i := range batch {
		batch[i].N = size
	}
	b.SetBytes(size + 28)
	b.ReportAllocs()
	b.ResetTimer()
	t0 := time.Now()
	sent := 0
	for sent < b.N {
		for int64(sent)-got.Load() > window-int64(len(batch)) {
			time.Sleep(20 * time.Microsecond)
		}
		k := min(len(batch), b.N-sent)
		n, err := src.WriteBatch(batch[:k])
		if err != nil {
			b.Fatal(err)
		}
		sent += n
	}
	for end := time.Now().Add(10 * time.Second); got.Load() < int64(b.N); time.Sleep(20 * time.Microsecond) {
		if time.Now().After(end) {
			b.Fatalf("received %d of %d packets", got.Load(), b.N)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/time.Since(t0).Seconds(), "pkts/s")
}

// copyPackets forwards every packet from one device to the other until
// either is closed.
func copyPackets(from, to *Device) {
	ms := relay.NewBatch(64, 9216)
	for {
		n, err := from.ReadBatch(ms)
		if err != nil {
			return
		}
		if _, err := to.WriteBatch(ms[:n]); errors.Is(err, netio.ErrClosed) {
			return
		}
	}
}
