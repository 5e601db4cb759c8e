package qdisc

import (
	"encoding/binary"
	"net/netip"

	"cclab/internal/mix"
)

// ProtoUDP is the IP protocol number of UDP (RFC 768), the protocol FlowKey
// assumes.
const ProtoUDP = 17

// FlowKey returns a 64-bit flow key for the UDP 5-tuple (src, dst, UDP). It
// is deterministic across runs and processes (no random seed), allocation-free,
// and treats an IPv4 address and its IPv4-mapped IPv6 form as the same.
func FlowKey(src, dst netip.AddrPort) uint64 { return FlowKey5(src, dst, ProtoUDP) }

// FlowKey5 returns a 64-bit flow key for the 5-tuple (src, dst, proto): the
// addresses' 16-byte forms, the ports and the protocol mixed with the
// SplitMix64/MurmurHash3 finalizer. Direction matters: FlowKey5(a, b, p) and
// FlowKey5(b, a, p) differ.
func FlowKey5(src, dst netip.AddrPort, proto uint8) uint64 {
	s, d := src.Addr().Unmap().As16(), dst.Addr().Unmap().As16()
	h := uint64(mix.Golden) ^ uint64(proto)
	h = mix.SplitMix64(h ^ binary.LittleEndian.Uint64(s[0:8]))
	h = mix.SplitMix64(h ^ binary.LittleEndian.Uint64(s[8:16]))
	h = mix.SplitMix64(h ^ binary.LittleEndian.Uint64(d[0:8]))
	h = mix.SplitMix64(h ^ binary.LittleEndian.Uint64(d[8:16]))
	return mix.SplitMix64(h ^ (uint64(src.Port())<<16 | uint64(dst.Port())))
}
