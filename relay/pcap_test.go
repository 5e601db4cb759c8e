package relay

import (
	"encoding/binary"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"cclab/ecn"
	"cclab/event"
	"cclab/link"
)

func TestPcapReadable(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "out.pcap")
	tn := memNet()
	dst := newSink(t, tn, false)
	cnt := newCounter()
	r := startRelay(t, tn, Config{Target: dst.conn.LocalAddr().String(), Pcap: file, Sink: cnt,
		Hops: [2][]link.Config{{mkHop(t, "rate=50kbit,queue=droptail:2p")}}})
	c := dial(t, tn, r.Addr())
	c.WriteBatch(datagrams(0, 10, 300, ecn.ECT1))
	if !cnt.waitUntil(func() bool { return cnt.get(0, event.Departure)+cnt.get(0, event.Drop) == 10 }, 5*time.Second) {
		t.Fatalf("the hop accounted for %d of 10 datagrams", cnt.get(0, event.Departure)+cnt.get(0, event.Drop))
	}
	r.Close()
	check := func(name string, want int) {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		rd, err := pcapgo.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		src := gopacket.NewPacketSource(rd, layers.LayerTypeIPv4)
		for p := range src.Packets() {
			ip, _ := p.Layer(layers.LayerTypeIPv4).(*layers.IPv4)
			udp, _ := p.Layer(layers.LayerTypeUDP).(*layers.UDP)
			if ip == nil || udp == nil {
				t.Fatalf("%s: packet %d does not decode as IPv4/UDP", name, n)
			}
			if int(udp.DstPort) != int(dst.conn.LocalAddr().Port()) || int(udp.SrcPort) != int(c.LocalAddr().Port()) {
				t.Errorf("%s: ports %d→%d, want %d→%d", name, udp.SrcPort, udp.DstPort, c.LocalAddr().Port(), dst.conn.LocalAddr().Port())
			}
			if len(udp.Payload) != 300 || ip.TOS&3 != uint8(ecn.ECT1) {
				t.Errorf("%s: payload %d bytes tos %#x, want 300 bytes with ECT(1)", name, len(udp.Payload), ip.TOS)
			}
			if err := udp.SetNetworkLayerForChecksum(ip); err == nil {
				// Recompute the UDP checksum over the decoded packet and compare.
				buf := gopacket.NewSerializeBuffer()
				u2 := *udp
				if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{ComputeChecksums: true}, &u2, gopacket.Payload(udp.Payload)); err == nil && u2.Checksum != udp.Checksum {
					t.Errorf("%s: UDP checksum %#x, want %#x", name, udp.Checksum, u2.Checksum)
				}
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

func TestCIDFlow(t *testing.T) {
	short := []byte{1, 3, 0, 0, 0, 0, 0, 0, 0, 42, 0xff}
	other := []byte{1, 3, 0, 0, 0, 0, 0, 0, 0, 43}
	k1, ok1 := cidFlow(short)
	k2, ok2 := cidFlow(other)
	if !ok1 || !ok2 || k1 == k2 {
		t.Errorf("cidFlow: got (%x,%v) (%x,%v), want two distinct keys", k1, ok1, k2, ok2)
	}
	for _, b := range [][]byte{nil, {1, 3, 0}, {2, 3, 0, 0, 0, 0, 0, 0, 0, 0}, {1, 9, 0, 0, 0, 0, 0, 0, 0, 0}} {
		if _, ok := cidFlow(b); ok {
			t.Errorf("cidFlow(%v) accepted a non-cclab datagram", b)
		}
	}
}

func TestPcapIPv6Checksums(t *testing.T) {
	// Synthesized IPv6/UDP and IPv4/UDP headers decode and carry valid checksums.
	for _, pair := range [][2]string{{"[2001:db8::1]:5000", "[2001:db8::2]:6000"}, {"10.0.0.1:5000", "10.0.0.2:6000"}} {
		name := filepath.Join(t.TempDir(), "x.pcap")
		pf, err := newPcap(name, 0, false)
		if err != nil {
			t.Fatal(err)
		}
		src, dst := netip.MustParseAddrPort(pair[0]), netip.MustParseAddrPort(pair[1])
		payload := []byte("hello, checksum!!")
		pf.write(time.Unix(1, 0), src, dst, uint8(ecn.CE), payload)
		if err := pf.close(); err != nil {
			t.Fatal(err)
		}
		f, _ := os.Open(name)
		rd, err := pcapgo.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		data, _, err := rd.ReadPacketData()
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		first := layers.LayerTypeIPv4
		if src.Addr().Is6() {
			first = layers.LayerTypeIPv6
		}
		p := gopacket.NewPacket(data, first, gopacket.Default)
		udp, _ := p.Layer(layers.LayerTypeUDP).(*layers.UDP)
		if udp == nil || string(udp.Payload) != string(payload) || udp.SrcPort != 5000 || udp.DstPort != 6000 {
			t.Fatalf("%s: decoded %v", pair[0], p)
		}
		var nl gopacket.NetworkLayer
		if ip6, ok := p.Layer(layers.LayerTypeIPv6).(*layers.IPv6); ok {
			nl = ip6
			if ip6.TrafficClass&3 != uint8(ecn.CE) {
				t.Errorf("IPv6 traffic class %#x, want CE", ip6.TrafficClass)
			}
		} else {
			ip4 := p.Layer(layers.LayerTypeIPv4).(*layers.IPv4)
			nl = ip4
			// Recompute the IPv4 header checksum.
			c := ip4.Checksum
			buf := gopacket.NewSerializeBuffer()
			ip4c := *ip4
			ip4c.Checksum = 0
			gopacket.SerializeLayers(buf, gopacket.SerializeOptions{ComputeChecksums: true}, &ip4c)
			if got := binary.BigEndian.Uint16(buf.Bytes()[10:]); got != c {
				t.Errorf("IPv4 header checksum %#x, want %#x", c, got)
			}
		}
		u2 := *udp
		u2.SetNetworkLayerForChecksum(nl)
		buf := gopacket.NewSerializeBuffer()
		if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{ComputeChecksums: true}, &u2, gopacket.Payload(payload)); err != nil {
			t.Fatal(err)
		}
		if got := binary.BigEndian.Uint16(buf.Bytes()[6:]); got != udp.Checksum {
			t.Errorf("%s: UDP checksum %#x, want %#x", pair[0], udp.Checksum, got)
		}
	}
}
