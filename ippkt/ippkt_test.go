package ippkt

import (
	"bytes"
	"encoding/binary"
	"errors"
	"net"
	"net/netip"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"cclab/ecn"
	"cclab/qdisc"
)

// build serializes layers with lengths and checksums computed by gopacket
// (an independent implementation of the header formats).
func build(t testing.TB, ls ...gopacket.SerializableLayer) []byte {
	t.Helper()
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, ls...); err != nil {
		t.Fatal(err)
	}
	return append([]byte(nil), buf.Bytes()...)
}

var (
	src4 = net.IPv4(10, 1, 2, 3).To4()
	dst4 = net.IPv4(192, 0, 2, 9).To4()
	src6 = net.ParseIP("fd00::1")
	dst6 = net.ParseIP("2001:db8::77")
)

func v4(proto layers.IPProtocol, tos uint8) *layers.IPv4 {
	return &layers.IPv4{Version: 4, IHL: 5, TOS: tos, TTL: 64, Protocol: proto, SrcIP: src4, DstIP: dst4, Flags: layers.IPv4DontFragment}
}

func v6(next layers.IPProtocol, tc uint8) *layers.IPv6 {
	return &layers.IPv6{Version: 6, TrafficClass: tc, HopLimit: 64, NextHeader: next, SrcIP: src6, DstIP: dst6}
}

func tcp(net gopacket.NetworkLayer) *layers.TCP {
	l := &layers.TCP{SrcPort: 40000, DstPort: 5201, Seq: 1, ACK: true, Window: 1000}
	_ = l.SetNetworkLayerForChecksum(net)
	return l
}

func udp(net gopacket.NetworkLayer) *layers.UDP {
	l := &layers.UDP{SrcPort: 5353, DstPort: 9000}
	_ = l.SetNetworkLayerForChecksum(net)
	return l
}

func TestParse(t *testing.T) {
	payload := gopacket.Payload(bytes.Repeat([]byte{0xab}, 100))
	ip4t := v4(layers.IPProtocolTCP, 0x02) // ECT(0)
	ip4u := v4(layers.IPProtocolUDP, 0x03) // CE
	ip6t := v6(layers.IPProtocolTCP, 0x01) // ECT(1)
	ip6u := v6(layers.IPProtocolUDP, 0)
	ip6h := v6(layers.IPProtocolIPv6HopByHop, 0x02)
	hbh := &layers.IPv6HopByHop{}
	hbh.NextHeader = layers.IPProtocolTCP
	hbh.Options = []*layers.IPv6HopByHopOption{{OptionType: 1, OptionLength: 4, OptionData: []byte{0, 0, 0, 0}}}
	ip4i := v4(layers.IPProtocolICMPv4, 0)
	ip4opt := v4(layers.IPProtocolUDP, 0)
	ip4opt.Options = []layers.IPv4Option{{OptionType: 1}, {OptionType: 1}, {OptionType: 1}, {OptionType: 0}} // NOPs, end: 4 bytes
	tests := []struct {
		name string
		pkt  []byte
		want Info
	}{
		{"ipv4 tcp", build(t, ip4t, tcp(ip4t), payload), Info{Version: 4, Proto: ProtoTCP, SrcPort: 40000, DstPort: 5201, ECN: ecn.ECT0, Len: 20 + 20 + 100, Offset: 20}},
		{"ipv4 udp", build(t, ip4u, udp(ip4u), payload), Info{Version: 4, Proto: ProtoUDP, SrcPort: 5353, DstPort: 9000, ECN: ecn.CE, Len: 20 + 8 + 100, Offset: 20}},
		{"ipv4 options", build(t, ip4opt, udp(ip4opt), payload), Info{Version: 4, Proto: ProtoUDP, SrcPort: 5353, DstPort: 9000, Len: 24 + 8 + 100, Offset: 24}},
		{"ipv4 icmp", build(t, ip4i, &layers.ICMPv4{TypeCode: layers.CreateICMPv4TypeCode(8, 0), Id: 7}, payload), Info{Version: 4, Proto: ProtoICMP, Len: 20 + 8 + 100, Offset: 20}},
		{"ipv6 tcp", build(t, ip6t, tcp(ip6t), payload), Info{Version: 6, Proto: ProtoTCP, SrcPort: 40000, DstPort: 5201, ECN: ecn.ECT1, Len: 40 + 20 + 100, Offset: 40}},
		{"ipv6 udp", build(t, ip6u, udp(ip6u), payload), Info{Version: 6, Proto: ProtoUDP, SrcPort: 5353, DstPort: 9000, Len: 40 + 8 + 100, Offset: 40}},
		{"ipv6 hop-by-hop tcp", build(t, ip6h, hbh, tcp(ip6h), payload), Info{Version: 6, Proto: ProtoTCP, SrcPort: 40000, DstPort: 5201, ECN: ecn.ECT0, Len: 40 + 8 + 20 + 100, Offset: 48}},
	}
	for _, tc := range tests {
		got, err := Parse(tc.pkt)
		if err != nil {
			t.Errorf("%s: Parse: %v", tc.name, err)
			continue
		}
		want := tc.want
		if want.Version == 4 {
			want.Src, want.Dst = netip.AddrFrom4([4]byte(src4)), netip.AddrFrom4([4]byte(dst4))
		} else {
			want.Src, want.Dst = netip.MustParseAddr("fd00::1"), netip.MustParseAddr("2001:db8::77")
		}
		if got != want {
			t.Errorf("%s: got %+v, want %+v", tc.name, got, want)
		}
		// Cross-check with gopacket's decoder.
		first := layers.LayerTypeIPv4
		if want.Version == 6 {
			first = layers.LayerTypeIPv6
		}
		p := gopacket.NewPacket(tc.pkt, first, gopacket.Default)
		if tl := p.TransportLayer(); tl != nil && got.SrcPort != 0 {
			f := tl.TransportFlow()
			if s, d := binary.BigEndian.Uint16(f.Src().Raw()), binary.BigEndian.Uint16(f.Dst().Raw()); s != got.SrcPort || d != got.DstPort {
				t.Errorf("%s: ports got %d→%d, gopacket says %d→%d", tc.name, got.SrcPort, got.DstPort, s, d)
			}
		}
		if got, want := got.FlowKey(), qdisc.FlowKey5(got.Source(), got.Destination(), got.Proto); got != want {
			t.Errorf("%s: FlowKey got %x, want %x", tc.name, got, want)
		}
	}
}

// TestFlowKeyMatchesRelay checks that a UDP packet's key equals the UDP
// relay's key for the same 5-tuple (qdisc.FlowKey), and that the two
// directions of one connection differ.
func TestFlowKeyMatchesRelay(t *testing.T) {
	ip := v4(layers.IPProtocolUDP, 0)
	in, err := Parse(build(t, ip, udp(ip)))
	if err != nil {
		t.Fatal(err)
	}
	s := netip.MustParseAddrPort("10.1.2.3:5353")
	d := netip.MustParseAddrPort("192.0.2.9:9000")
	if got, want := in.FlowKey(), qdisc.FlowKey(s, d); got != want {
		t.Errorf("FlowKey got %x, want qdisc.FlowKey %x", got, want)
	}
	if in.FlowKey() == qdisc.FlowKey(d, s) {
		t.Errorf("FlowKey equals the reverse direction's key")
	}
}

// TestFragments checks that every fragment of a datagram has the same flow
// key (ports 0), for IPv4 (MF / offset) and IPv6 (Fragment header).
func TestFragments(t *testing.T) {
	payload := gopacket.Payload(bytes.Repeat([]byte{1}, 40))
	first := v4(layers.IPProtocolUDP, 0)
	first.Flags = layers.IPv4MoreFragments
	later := v4(layers.IPProtocolUDP, 0)
	later.FragOffset = 100
	a, err := Parse(build(t, first, udp(first), payload))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Parse(build(t, later, payload))
	if err != nil {
		t.Fatal(err)
	}
	if !a.Fragment || !b.Fragment || a.SrcPort != 0 || a.FlowKey() != b.FlowKey() {
		t.Errorf("IPv4 fragments: got %+v and %+v, want both fragments with ports 0 and one key", a, b)
	}
	ip6 := v6(layers.IPProtocolIPv6Fragment, 0)
	fr := &layers.IPv6Fragment{NextHeader: layers.IPProtocolUDP, MoreFragments: true, Identification: 9}
	c, err := Parse(build(t, ip6, fr, udp(ip6), payload))
	if err != nil {
		t.Fatal(err)
	}
	if !c.Fragment || c.Proto != ProtoUDP || c.SrcPort != 0 || c.Offset != 48 {
		t.Errorf("IPv6 fragment: got %+v, want a UDP fragment at offset 48 with ports 0", c)
	}
}

func TestParseErrors(t *testing.T) {
	ip := v4(layers.IPProtocolTCP, 0)
	good := build(t, ip, tcp(ip))
	ip6 := v6(layers.IPProtocolTCP, 0)
	good6 := build(t, ip6, tcp(ip6))
	mut := func(b []byte, f func([]byte)) []byte { b = append([]byte(nil), b...); f(b); return b }
	tests := []struct {
		name string
		pkt  []byte
		want error
	}{
		{"empty", nil, ErrShort},
		{"version 5", mut(good, func(b []byte) { b[0] = 0x55 }), ErrVersion},
		{"ipv4 short", good[:19], ErrShort},
		{"ipv4 ihl 4", mut(good, func(b []byte) { b[0] = 0x44 }), ErrLength},
		{"ipv4 total > packet", mut(good, func(b []byte) { binary.BigEndian.PutUint16(b[2:], 100) }), ErrLength},
		{"ipv4 total < ihl", mut(good, func(b []byte) { binary.BigEndian.PutUint16(b[2:], 10) }), ErrLength},
		{"ipv6 short", good6[:39], ErrShort},
		{"ipv6 payload > packet", mut(good6, func(b []byte) { binary.BigEndian.PutUint16(b[4:], 1000) }), ErrLength},
		{"ipv6 ext header past end", mut(good6, func(b []byte) { b[6] = ProtoDstOpts; b[41] = 200 }), ErrLength},
	}
	for _, tc := range tests {
		if _, err := Parse(tc.pkt); !errors.Is(err, tc.want) {
			t.Errorf("%s: got error %v, want %v", tc.name, err, tc.want)
		}
	}
	// A transport header cut short parses with ports 0; padding after the
	// IP length is ignored.
	short := mut(good, func(b []byte) { binary.BigEndian.PutUint16(b[2:], 22) })
	if in, err := Parse(short); err != nil || in.SrcPort != 0 || in.Len != 22 {
		t.Errorf("cut TCP header: got %+v, %v; want ports 0 and Len 22", in, err)
	}
	padded := append(append([]byte(nil), good...), 0, 0, 0, 0)
	if in, err := Parse(padded); err != nil || in.Len != len(good) {
		t.Errorf("padded: got %+v, %v; want Len %d", in, err, len(good))
	}
}

// TestSetECN checks that rewriting the ECN field keeps the IPv4 header
// checksum correct (RFC 1624 incremental update, verified by a full RFC 1071
// recomputation) and leaves every other bit alone.
func TestSetECN(t *testing.T) {
	for _, tos := range []uint8{0x00, 0x02, 0xb8, 0xba, 0xff} {
		for cp := ecn.NotECT; cp <= ecn.CE; cp++ {
			ip := v4(layers.IPProtocolTCP, tos)
			b := build(t, ip, tcp(ip))
			changed := SetECN(b, cp)
			if got, want := changed, ecn.Codepoint(tos&3) != cp; got != want {
				t.Errorf("tos %#x → %v: changed got %v, want %v", tos, cp, got, want)
			}
			if got := ECN(b); got != cp {
				t.Errorf("tos %#x → %v: ECN got %v", tos, cp, got)
			}
			if got, want := b[1]&^3, tos&^3; got != want {
				t.Errorf("tos %#x → %v: DSCP got %#x, want %#x", tos, cp, got, want)
			}
			if c := Checksum(b[:20]); c != 0 {
				t.Errorf("tos %#x → %v: header checksum does not verify (got %#x, want 0)", tos, cp, c)
			}
			ip6 := v6(layers.IPProtocolTCP, tos)
			b6 := build(t, ip6, tcp(ip6))
			SetECN(b6, cp)
			in, err := Parse(b6)
			if err != nil || in.ECN != cp {
				t.Errorf("ipv6 tc %#x → %v: got %+v, %v", tos, cp, in, err)
			}
			if tc := uint8(binary.BigEndian.Uint32(b6[0:4]) >> 20); tc&^3 != tos&^3 {
				t.Errorf("ipv6 tc %#x → %v: traffic class got %#x, want DSCP kept", tos, cp, tc)
			}
		}
	}
	if SetECN([]byte{0x55, 0}, ecn.CE) || ECN([]byte{0x45}) != ecn.NotECT {
		t.Errorf("SetECN/ECN on a non-IP packet changed or read something")
	}
}

func TestPayload(t *testing.T) {
	ip := v4(layers.IPProtocolUDP, 0)
	b := build(t, ip, udp(ip), gopacket.Payload("hello"))
	in, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if p, ok := in.Payload(b); !ok || string(p) != "hello" {
		t.Errorf("Payload: got %q, %v; want \"hello\", true", p, ok)
	}
	ipt := v4(layers.IPProtocolTCP, 0)
	bt := build(t, ipt, tcp(ipt))
	it, _ := Parse(bt)
	if _, ok := it.Payload(bt); ok {
		t.Errorf("Payload of a TCP packet: got ok")
	}
}

func TestParseAllocs(t *testing.T) {
	ip := v6(layers.IPProtocolTCP, 0)
	b := build(t, ip, tcp(ip))
	var k uint64
	if n := testing.AllocsPerRun(100, func() {
		in, _ := Parse(b)
		k += in.FlowKey()
		SetECN(b, ecn.CE)
	}); n != 0 {
		t.Errorf("Parse+FlowKey+SetECN: got %v allocations, want 0", n)
	}
}

func BenchmarkParseFlowKey(b *testing.B) {
	ip := v4(layers.IPProtocolTCP, 0)
	pkt := build(b, ip, tcp(ip), gopacket.Payload(make([]byte, 1448)))
	var k uint64
	b.ReportAllocs()
	for b.Loop() {
		in, _ := Parse(pkt)
		k += in.FlowKey()
	}
	_ = k
}

// FuzzParse checks that any bytes parse or fail cleanly, that what parses
// is consistent (lengths within the packet, the version's header size), and
// that SetECN keeps a valid IPv4 header checksum valid.
func FuzzParse(f *testing.F) {
	ip := v4(layers.IPProtocolTCP, 2)
	f.Add(build(f, ip, tcp(ip)))
	ip6 := v6(layers.IPProtocolIPv6Fragment, 0)
	f.Add(build(f, ip6, &layers.IPv6Fragment{NextHeader: layers.IPProtocolUDP}, udp(ip6)))
	f.Add([]byte{0x60, 0, 0, 0, 0, 8, 0, 64})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		in, err := Parse(b)
		if err != nil {
			return
		}
		min := IPv4MinHeader
		if in.Version == 6 {
			min = IPv6Header
		}
		if in.Len > len(b) || in.Len < min || in.Offset < min || in.Offset > in.Len {
			t.Fatalf("accepted %x with Len %d, Offset %d", b, in.Len, in.Offset)
		}
		if in.Version == 4 && Checksum(b[:in.Offset]) == 0 {
			SetECN(b, ECN(b)^ecn.CE)
			if Checksum(b[:in.Offset]) != 0 {
				t.Fatalf("SetECN broke the checksum of %x", b)
			}
		}
	})
}
