package relay

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"cclab/ecn"
	"cclab/event"
	"cclab/ippkt"
	"cclab/link"
	"cclab/netio"
)

// ipPacket builds an IPv4 or IPv6 packet carrying TCP (proto 6) or UDP
// (17) from port sport to dport with size bytes of payload and ECN field cp.
func ipPacket(t testing.TB, v6 bool, proto layers.IPProtocol, sport, dport uint16, size int, cp ecn.Codepoint) []byte {
	t.Helper()
	var nl gopacket.NetworkLayer
	var ipl gopacket.SerializableLayer
	if v6 {
		ip := &layers.IPv6{Version: 6, TrafficClass: uint8(cp), HopLimit: 64, NextHeader: proto,
			SrcIP: net.ParseIP("fd00:cc::2"), DstIP: net.ParseIP("fd00:cc::1")}
		nl, ipl = ip, ip
	} else {
		ip := &layers.IPv4{Version: 4, IHL: 5, TOS: uint8(cp), TTL: 64, Protocol: proto, Flags: layers.IPv4DontFragment,
			SrcIP: net.IPv4(100, 64, 0, 2).To4(), DstIP: net.IPv4(100, 64, 0, 1).To4()}
		nl, ipl = ip, ip
	}
	var tl gopacket.SerializableLayer
	switch proto {
	case layers.IPProtocolTCP:
		l := &layers.TCP{SrcPort: layers.TCPPort(sport), DstPort: layers.TCPPort(dport), ACK: true, Window: 100}
		_ = l.SetNetworkLayerForChecksum(nl)
		tl = l
	default:
		l := &layers.UDP{SrcPort: layers.UDPPort(sport), DstPort: layers.UDPPort(dport)}
		_ = l.SetNetworkLayerForChecksum(nl)
		tl = l
	}
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true},
		ipl, tl, gopacket.Payload(bytes.Repeat([]byte{0x5a}, size))); err != nil {
		t.Fatal(err)
	}
	return append([]byte(nil), buf.Bytes()...)
}

// collector reads everything arriving at one end of a MemConn pair.
type collector struct {
	mu   sync.Mutex
	got  [][]byte
	ecn  []ecn.Codepoint
	done chan struct{}
}

func collect(t *testing.T, c *netio.MemConn) *collector {
	col := &collector{done: make(chan struct{})}
	go func() {
		defer close(col.done)
		ms := NewBatch(64, 2048)
		for {
			n, err := c.ReadBatch(ms)
			if err != nil {
				return
			}
			col.mu.Lock()
			for _, m := range ms[:n] {
				col.got = append(col.got, append([]byte(nil), m.Buf[:m.N]...))
				col.ecn = append(col.ecn, m.ECN)
			}
			col.mu.Unlock()
		}
	}()
	t.Cleanup(func() { c.Close(); <-col.done })
	return col
}

// waitFor polls until n packets have arrived or the timeout passes.
func (c *collector) waitFor(n int, timeout time.Duration) [][]byte {
	end := time.Now().Add(timeout)
	for {
		c.mu.Lock()
		got := append([][]byte(nil), c.got...)
		c.mu.Unlock()
		if len(got) >= n || time.Now().After(end) {
			return got
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// packetRelay starts a packet-mode relay between two in-memory devices and
// returns it with the application's end (the inner device's peer) and the
// host's end (the outer device's peer).
func packetRelay(t *testing.T, cfg Config) (r *Relay, app, host *netio.MemConn) {
	t.Helper()
	inner, app := netio.MemPair(netip.AddrPort{}, netip.AddrPort{})
	outer, host := netio.MemPair(netip.AddrPort{}, netip.AddrPort{})
	r, err := NewPacket(cfg, inner, outer)
	if err != nil {
		t.Fatal(err)
	}
	r.Start()
	t.Cleanup(func() { r.Close() })
	return r, app, host
}

func send(t *testing.T, c *netio.MemConn, pkts ...[]byte) {
	t.Helper()
	for _, p := range pkts {
		if _, err := c.WriteBatch([]netio.Message{{Buf: p, N: len(p), ECN: ippkt.ECN(p)}}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestPacketModeFlowKeysAndSizes checks that packets cross in both
// directions unchanged, that the links see each packet's IP length (plus
// Overhead) as its size and its IP 5-tuple as its flow key, and that the
// per-flow statistics are per 5-tuple.
func TestPacketModeFlowKeysAndSizes(t *testing.T) {
	for _, overhead := range []int{0, 14} {
		var mu sync.Mutex
		enq := map[uint64][]int{} // flow key → sizes of its Enqueue events
		sink := event.Func(func(e *event.Event) {
			if e.Kind == event.Enqueue {
				mu.Lock()
				enq[e.Flow] = append(enq[e.Flow], e.Bytes)
				mu.Unlock()
			}
		})
		var stats bytes.Buffer
		r, app, host := packetRelay(t, Config{Overhead: overhead, Sink: sink, Stats: &stats, Interval: time.Hour,
			Hops: [2][]link.Config{{mkHop(t, "rate=100Mbit,delay=1ms")}, {mkHop(t, "delay=1ms")}}})
		atHost, atApp := collect(t, host), collect(t, app)
		up := [][]byte{
			ipPacket(t, false, layers.IPProtocolTCP, 40000, 5201, 1000, ecn.ECT0),
			ipPacket(t, false, layers.IPProtocolTCP, 40001, 5201, 1200, ecn.NotECT),
			ipPacket(t, true, layers.IPProtocolUDP, 5000, 9000, 300, ecn.ECT1),
		}
		down := [][]byte{ipPacket(t, false, layers.IPProtocolUDP, 5201, 40000, 50, ecn.NotECT)}
		send(t, app, up...)
		send(t, host, down...)
		gotUp, gotDown := atHost.waitFor(len(up), 3*time.Second), atApp.waitFor(len(down), 3*time.Second)
		if len(gotUp) != len(up) || len(gotDown) != len(down) {
			t.Fatalf("overhead %d: got %d uplink and %d downlink packets, want %d and %d", overhead, len(gotUp), len(gotDown), len(up), len(down))
		}
		for i := range up {
			if !bytes.Equal(gotUp[i], up[i]) {
				t.Errorf("overhead %d: uplink packet %d changed crossing the relay", overhead, i)
			}
		}
		if !bytes.Equal(gotDown[0], down[0]) {
			t.Errorf("overhead %d: downlink packet changed crossing the relay", overhead)
		}
		r.Close()
		for _, p := range append(up, down...) {
			in, err := ippkt.Parse(p)
			if err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			sizes := enq[in.FlowKey()]
			mu.Unlock()
			if len(sizes) != 1 || sizes[0] != len(p)+overhead {
				t.Errorf("overhead %d: flow %v→%v: enqueued sizes %v, want [%d] (IP length + overhead)", overhead, in.Source(), in.Destination(), sizes, len(p)+overhead)
			}
		}
		var line StatsLine
		if err := json.Unmarshal(bytes.TrimSpace(stats.Bytes()), &line); err != nil {
			t.Fatalf("stats %q: %v", stats.String(), err)
		}
		flows := map[string]FlowLine{}
		for _, f := range line.Flows {
			flows[f.Src+" "+f.Dst+" "+f.Proto+" "+f.Dir] = f
		}
		for _, want := range []struct {
			key   string
			bytes int64
		}{
			{"100.64.0.2:40000 100.64.0.1:5201 tcp fwd", int64(len(up[0]) + overhead)},
			{"100.64.0.2:40001 100.64.0.1:5201 tcp fwd", int64(len(up[1]) + overhead)},
			{"[fd00:cc::2]:5000 [fd00:cc::1]:9000 udp fwd", int64(len(up[2]) + overhead)},
			{"100.64.0.2:5201 100.64.0.1:40000 udp rev", int64(len(down[0]) + overhead)},
		} {
			if f, ok := flows[want.key]; !ok || f.Bytes != want.bytes || f.Departures != 1 {
				t.Errorf("overhead %d: flow line %q: got %+v (present %v), want 1 departure of %d bytes", overhead, want.key, f, ok, want.bytes)
			}
		}
		if len(line.Flows) != 4 {
			t.Errorf("overhead %d: %d flow lines, want 4: %+v", overhead, len(line.Flows), line.Flows)
		}
	}
}

// TestPacketModeECN checks that a marking queue's CE verdict reaches the
// departing packet's IP header, with a valid IPv4 header checksum, and that
// ECT packets the queue does not mark keep their codepoint.
func TestPacketModeECN(t *testing.T) {
	r, app, host := packetRelay(t, Config{Hops: [2][]link.Config{
		{mkHop(t, "rate=2Mbit,queue=red:min=2,max=100,maxp=0.5,wq=0.5,limit=1000p,ecn")}, {}}})
	atHost := collect(t, host)
	const n = 60
	for i := 0; i < n; i++ {
		send(t, app, ipPacket(t, i%2 == 1, layers.IPProtocolTCP, 40000, 5201, 500, ecn.ECT0))
	}
	got := atHost.waitFor(n, 5*time.Second)
	if len(got) != n {
		t.Fatalf("got %d packets, want %d (RED with ecn marks instead of dropping)", len(got), n)
	}
	ce := 0
	for i, p := range got {
		in, err := ippkt.Parse(p)
		if err != nil {
			t.Fatalf("packet %d: %v", i, err)
		}
		switch in.ECN {
		case ecn.CE:
			ce++
		case ecn.ECT0:
		default:
			t.Errorf("packet %d: ECN %v, want ECT(0) or CE", i, in.ECN)
		}
		if in.Version == 4 && ippkt.Checksum(p[:in.Offset]) != 0 {
			t.Errorf("packet %d: IPv4 header checksum does not verify after marking", i)
		}
	}
	if st := r.HopStats(Fwd)[0]; ce == 0 || st.Marks != int64(ce) {
		t.Errorf("got %d CE packets and %d marks, want the same number > 0", ce, st.Marks)
	}
}

// TestPacketModeMalformed checks that bytes that are not an IP packet are
// counted and dropped while IP packets keep flowing.
func TestPacketModeMalformed(t *testing.T) {
	r, app, host := packetRelay(t, Config{})
	atHost := collect(t, host)
	good := ipPacket(t, false, layers.IPProtocolUDP, 1, 2, 100, ecn.NotECT)
	send(t, app, []byte{0x00, 1, 2, 3}, good, []byte{0x45, 0, 0, 200, 0, 0, 0, 0, 64, 17}, []byte{0x60}, good)
	if got := atHost.waitFor(2, 3*time.Second); len(got) != 2 {
		t.Fatalf("got %d packets, want the 2 valid ones", len(got))
	}
	if c := r.Counters(); c.Malformed != 3 || c.Received[Fwd] != 5 {
		t.Errorf("counters: malformed %d of %d received, want 3 of 5", c.Malformed, c.Received[Fwd])
	}
}

// TestPacketModePcap checks that the capture files hold the IP packets as
// they left (or were dropped), decodable by gopacket, with the snapshot
// length counting payload bytes after the TCP header.
func TestPacketModePcap(t *testing.T) {
	file := filepath.Join(t.TempDir(), "shell.pcap")
	r, app, host := packetRelay(t, Config{Pcap: file, PcapSnap: 10,
		Hops: [2][]link.Config{{mkHop(t, "rate=50kbit,queue=droptail:2p")}, {}}})
	atHost := collect(t, host)
	// One write: the ten packets arrive together, so the first is sent,
	// two wait and seven are dropped however slowly this goroutine runs
	// (written one at a time, a pause of one packet's 54 ms service time
	// let a fourth in).
	burst := make([]netio.Message, 10)
	for i := range burst {
		p := ipPacket(t, false, layers.IPProtocolTCP, 40000, 5201, 300, ecn.ECT1)
		burst[i] = netio.Message{Buf: p, N: len(p), ECN: ippkt.ECN(p)}
	}
	if _, err := app.WriteBatch(burst); err != nil {
		t.Fatal(err)
	}
	// The capture records a departure (outputPacket) before the packet is
	// written to the host, and the seven drops at their arrival, before
	// the first departure: with three at the host, both files are complete.
	if got := atHost.waitFor(3, 3*time.Second); len(got) != 3 {
		t.Fatalf("got %d packets at the host, want 3", len(got))
	}
	r.Close()
	check := func(name string, want int) {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		rd, err := pcapgo.NewReader(bufio.NewReader(f))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for {
			data, ci, err := rd.ReadPacketData()
			if err != nil {
				break
			}
			p := gopacket.NewPacket(data, layers.LayerTypeIPv4, gopacket.Default)
			tcp, _ := p.Layer(layers.LayerTypeTCP).(*layers.TCP)
			if tcp == nil || tcp.SrcPort != 40000 {
				t.Fatalf("%s: packet %d does not decode as the TCP packet sent", name, n)
			}
			if ci.Length != 20+20+300 || ci.CaptureLength != 20+20+10 {
				t.Errorf("%s: packet %d: length %d captured %d, want %d and %d", name, n, ci.Length, ci.CaptureLength, 340, 50)
			}
			n++
		}
		if n != want {
			t.Errorf("%s: %d packets, want %d", name, n, want)
		}
	}
	check(file, 3)
	check(DropsPcapName(file), 7)
}

// BenchmarkPacketForward pushes 1500-byte IP packets through a packet-mode
// relay between in-memory devices (unlimited rate, so that the relay and
// not the link sets the pace; 1 ms delay, DropTail) and reports
// the allocations per packet of the whole process.
func BenchmarkPacketForward(b *testing.B) {
	inner, app := netio.MemPair(netip.AddrPort{}, netip.AddrPort{})
	outer, host := netio.MemPair(netip.AddrPort{}, netip.AddrPort{})
	r, err := NewPacket(Config{Hops: [2][]link.Config{{mkHop(b, "delay=1ms,queue=droptail:10000p")}, {}}}, inner, outer)
	if err != nil {
		b.Fatal(err)
	}
	r.Start()
	defer r.Close()
	done := make(chan int)
	go func() {
		ms := NewBatch(64, 2048)
		got := 0
		for got < b.N {
			n, err := host.ReadBatch(ms)
			if err != nil {
				break
			}
			got += n
		}
		done <- got
	}()
	pkt := ipPacket(b, false, layers.IPProtocolTCP, 40000, 5201, 1460, ecn.NotECT)
	batch := make([]netio.Message, 32)
	for i := range batch {
		batch[i] = netio.Message{Buf: pkt, N: len(pkt)}
	}
	b.SetBytes(int64(len(pkt)))
	b.ReportAllocs()
	b.ResetTimer()
	for sent := 0; sent < b.N; sent += len(batch) {
		k := min(len(batch), b.N-sent)
		app.WriteBatch(batch[:k])
		// Keep at most 2000 packets inside (below MemCapacity queued at
		// the input, where a full in-memory device drops as a socket
		// would, and below the queue's limit): the benchmark measures the
		// packet path, not drops.
		for r.Counters().Sent[Fwd] < int64(sent-2000) {
			time.Sleep(10 * time.Microsecond)
		}
	}
	select {
	case got := <-done:
		if got != b.N {
			b.Fatalf("got %d packets, want %d", got, b.N)
		}
	case <-time.After(10 * time.Second):
		b.Fatalf("timed out: %d of %d received", r.Counters().Sent[Fwd], b.N)
	}
}
