package qdisc

import (
	"math/bits"
	"net/netip"
	"testing"
)

func TestFlowKeyFields(t *testing.T) {
	a := netip.MustParseAddrPort("10.0.0.1:5000")
	b := netip.MustParseAddrPort("10.0.0.2:443")
	base := FlowKey(a, b)
	if got := FlowKey(a, b); got != base {
		t.Errorf("same tuple: key got %x, want %x", got, base)
	}
	if got := FlowKey5(a, b, ProtoUDP); got != base {
		t.Errorf("FlowKey vs FlowKey5(UDP): got %x, want %x", got, base)
	}
	mapped := netip.AddrPortFrom(netip.AddrFrom16(a.Addr().As16()), a.Port())
	if got := FlowKey(mapped, b); got != base {
		t.Errorf("IPv4-mapped source: key got %x, want %x", got, base)
	}
	differ := []struct {
		name     string
		src, dst netip.AddrPort
		proto    uint8
	}{
		{"reversed direction", b, a, ProtoUDP},
		{"src address", netip.MustParseAddrPort("10.0.0.3:5000"), b, ProtoUDP},
		{"dst address", a, netip.MustParseAddrPort("10.0.1.2:443"), ProtoUDP},
		{"src port", netip.MustParseAddrPort("10.0.0.1:5001"), b, ProtoUDP},
		{"dst port", a, netip.MustParseAddrPort("10.0.0.2:444"), ProtoUDP},
		{"protocol", a, b, 6},
		{"ports swapped", netip.MustParseAddrPort("10.0.0.1:443"), netip.MustParseAddrPort("10.0.0.2:5000"), ProtoUDP},
		{"IPv6", netip.MustParseAddrPort("[2001:db8::1]:5000"), netip.MustParseAddrPort("[2001:db8::2]:443"), ProtoUDP},
	}
	for _, d := range differ {
		if got := FlowKey5(d.src, d.dst, d.proto); got == base {
			t.Errorf("%s: key got %x, want a different key", d.name, got)
		}
	}
}

// Keys of many similar tuples (one host, sequential ports) do not collide and
// spread evenly over the low bits a hash table would use.
func TestFlowKeyDistribution(t *testing.T) {
	dst := netip.MustParseAddrPort("192.168.1.1:9000")
	seen := map[uint64]bool{}
	const buckets = 64
	var counts [buckets]int
	n := 0
	for host := 1; host <= 16; host++ {
		for port := 1024; port < 1024+4096; port++ {
			src := netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, 0, byte(host)}), uint16(port))
			k := FlowKey(src, dst)
			if seen[k] {
				t.Fatalf("collision at %v", src)
			}
			seen[k] = true
			counts[k%buckets]++
			n++
		}
	}
	want := float64(n) / buckets
	for i, c := range counts {
		if d := float64(c) - want; d*d > 16*want { // 4 standard deviations
			t.Errorf("bucket %d: count got %d, want about %.0f", i, c, want)
		}
	}
	// Average avalanche: flipping one port bit flips about half the key bits.
	src := netip.MustParseAddrPort("10.0.0.1:5000")
	total := 0
	for bit := 0; bit < 16; bit++ {
		s2 := netip.AddrPortFrom(src.Addr(), src.Port()^(1<<bit))
		total += bits.OnesCount64(FlowKey(src, dst) ^ FlowKey(s2, dst))
	}
	if avg := float64(total) / 16; avg < 24 || avg > 40 {
		t.Errorf("avalanche: mean flipped bits got %.1f, want about 32", avg)
	}
}

func TestFlowKeyNoAlloc(t *testing.T) {
	a := netip.MustParseAddrPort("[2001:db8::1]:5000")
	b := netip.MustParseAddrPort("10.0.0.2:443")
	var sink uint64
	if got := testing.AllocsPerRun(100, func() { sink += FlowKey(a, b) }); got != 0 {
		t.Errorf("FlowKey allocations got %v, want 0", got)
	}
	_ = sink
}

func BenchmarkFlowKey(b *testing.B) {
	src := netip.MustParseAddrPort("10.0.0.1:5000")
	dst := netip.MustParseAddrPort("10.0.0.2:443")
	b.ReportAllocs()
	var sink uint64
	for i := 0; b.Loop(); i++ {
		sink += FlowKey(netip.AddrPortFrom(src.Addr(), uint16(i)), dst)
	}
	_ = sink
}
