// Package tunshell is cclab's link shell (docs/shell.md), in the manner of
// Mahimahi's mm-link: a network namespace whose only way out is a TUN
// device, a second TUN device in the host namespace, and between the two a
// packet-mode relay (relay.NewPacket) that applies the same link model as
// cmd/bottleneck — rate or trace, delay, jitter, loss, queue discipline,
// hops, cross traffic, per direction — to whole IP packets. Any program run
// inside (kernel TCP with iperf3, curl, a QUIC client, cclab's own sender)
// crosses the emulated path. The uplink (from the namespace out) is the
// relay's forward direction, the downlink its reverse one.
//
// Nothing outlives the shell: the namespace is unnamed and held by a file
// descriptor, the devices are deleted when their descriptors close, and
// Close kills whatever is still running inside.
package tunshell

import (
	"fmt"
	"net/netip"
	"time"

	"cclab/relay"
)

// Defaults.
const (
	// DefaultMTU is the devices' MTU, bytes: Ethernet's 1500, so kernel TCP
	// uses a 1460-byte MSS (1448 with timestamps) as on most paths.
	DefaultMTU = 1500
	// MinMTU is the smallest MTU accepted, bytes: IPv6's minimum link MTU
	// (RFC 8200 §5), which the namespace's IPv6 address needs.
	MinMTU = 1280
	// MaxMTU is the largest MTU accepted, bytes (an IP packet's length
	// field is 16 bits).
	MaxMTU = 65535
	// TxQueueLen is the devices' transmit queue length, packets: the ring in
	// which the kernel holds packets until the relay reads them. The kernel
	// drops silently when it is full, outside the link model, so it is
	// longer than the default 500 to ride out scheduling hiccups of the
	// relay's reader (4096 packets of 1500 bytes are 49 ms at 1 Gbit/s).
	TxQueueLen = 4096
	// Grace is how long Run waits, after passing a signal (or the end of
	// -duration) on to the program, before it kills the program's process
	// group.
	Grace = 5 * time.Second
)

// DefaultSubnet is the IPv4 range the shells' point-to-point subnets (one
// /30 each) come from: the shared address space of RFC 6598, as Mahimahi
// uses, which does not clash with private networks.
var DefaultSubnet = netip.MustParsePrefix("100.64.0.0/10")

// ulaPrefix is the IPv6 unique local prefix (RFC 4193) of the shells'
// IPv6 subnets: fd + the 40-bit global ID 63:636c:6162 ("cclab"), with the
// subnet ID taken from the IPv4 subnet's number.
var ulaPrefix = [6]byte{0xfd, 0x63, 0x63, 0x6c, 0x61, 0x62}

// Config configures a link shell.
type Config struct {
	// Relay is the link model and its outputs (hops, cross traffic, seed,
	// statistics, capture, scheduling), as for cmd/bottleneck; Listen,
	// Target and MaxClients do not apply (relay.NewPacket).
	Relay relay.Config
	// MTU of both devices, bytes; 0 = DefaultMTU.
	MTU int
	// Subnet is the IPv4 range the shell's /30 comes from; the zero
	// Prefix = DefaultSubnet.
	Subnet netip.Prefix
	// Outer, if set, is the network namespace the outer ("host") device
	// goes into instead of the process's own, e.g. a router namespace of a
	// multi-host test network (internal/netnstest); the addresses are then
	// picked among those free in it. The shell does not own it: Close
	// neither kills its processes nor releases it.
	Outer *Namespace
}

func (c *Config) validate() error {
	if c.MTU == 0 {
		c.MTU = DefaultMTU
	}
	if c.MTU < MinMTU || c.MTU > MaxMTU {
		return fmt.Errorf("tun mtu %d: must be %d..%d bytes", c.MTU, MinMTU, MaxMTU)
	}
	if !c.Subnet.IsValid() {
		c.Subnet = DefaultSubnet
	}
	if !c.Subnet.Addr().Is4() || c.Subnet.Bits() > 30 {
		return fmt.Errorf("tun subnet %v: must be an IPv4 prefix of /30 or shorter", c.Subnet)
	}
	c.Subnet = c.Subnet.Masked()
	return nil
}

// Addrs are a shell's addresses: the host's end and the namespace's end of
// the point-to-point link, IPv4 and IPv6 (IPv6 ones invalid if the host has
// IPv6 disabled).
type Addrs struct {
	Host, Inner   netip.Addr // IPv4: the /30's first and second address
	Host6, Inner6 netip.Addr // IPv6: ::1 and ::2 of a /64 under fd63:636c:6162::/48
}

// Env returns the environment variables that tell a program in the shell
// where it is: CCLAB_SHELL_HOST (the host's address, where servers on the
// host are reachable), CCLAB_SHELL_ADDR (the namespace's own), the IPv6
// ones with suffix 6, and MAHIMAHI_BASE (= CCLAB_SHELL_HOST, the variable
// Mahimahi's shells set, so scripts written for them work).
func (a Addrs) Env() []string {
	env := []string{"CCLAB_SHELL_HOST=" + a.Host.String(), "CCLAB_SHELL_ADDR=" + a.Inner.String(),
		"MAHIMAHI_BASE=" + a.Host.String()}
	if a.Host6.IsValid() {
		env = append(env, "CCLAB_SHELL_HOST6="+a.Host6.String(), "CCLAB_SHELL_ADDR6="+a.Inner6.String())
	}
	return env
}

// maxTries bounds the subnets allocate examines.
const maxTries = 4096

// allocate returns the addresses of the first /30 of subnet, counting from
// block number start (modulo the number of blocks), whose IPv4 and IPv6
// addresses no prefix in used contains.
func allocate(subnet netip.Prefix, start uint32, used []netip.Prefix) (Addrs, error) {
	blocks := uint64(1) << (32 - subnet.Bits() - 2)
	base := subnet.Masked().Addr().As4()
	b0 := uint64(base[0])<<24 | uint64(base[1])<<16 | uint64(base[2])<<8 | uint64(base[3])
	taken := func(a netip.Addr) bool {
		for _, p := range used {
			if p.Contains(a) {
				return true
			}
		}
		return false
	}
	for k := uint64(0); k < min(blocks, maxTries); k++ {
		i := (uint64(start) + k) % blocks
		v := b0 + 4*i
		ip := func(off uint64) netip.Addr {
			x := v + off
			return netip.AddrFrom4([4]byte{byte(x >> 24), byte(x >> 16), byte(x >> 8), byte(x)})
		}
		var six [16]byte
		copy(six[:], ulaPrefix[:])
		// The subnet ID is the low 16 bits of the /30's number (its
		// address / 4): block i of DefaultSubnet gets subnet i (mod
		// 2^16), and /30s of different ranges get different subnets too.
		six[6], six[7] = byte(v>>10), byte(v>>2)
		six[15] = 1
		h6 := netip.AddrFrom16(six)
		six[15] = 2
		a := Addrs{Host: ip(1), Inner: ip(2), Host6: h6, Inner6: netip.AddrFrom16(six)}
		if taken(a.Host) || taken(a.Inner) || taken(a.Host6) || taken(a.Inner6) {
			continue
		}
		return a, nil
	}
	return Addrs{}, fmt.Errorf("tun subnet %v: no free /30 among %d tried (every one is in use by a route or address of the host)", subnet, min(blocks, maxTries))
}
