package netnstest

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"sync/atomic"
	"time"

	"golang.org/x/net/icmp"
	"golang.org/x/net/ipv4"
)

// pingIDs numbers the pings of this process (with the process ID, the
// echo requests' identifier).
var pingIDs atomic.Uint32

// protocolICMP is ICMP's IP protocol number (RFC 792), for icmp.ParseMessage.
const protocolICMP = 1

// Ping sends count ICMP echo requests (RFC 792) of 56 data bytes, as
// ping(8) does, from the node to dst, one at a time, each waiting up to
// timeout for its reply (the destination's kernel answers). It returns the
// round-trip times of the answered ones in send order and how many were not
// answered in time (lost on a lossy link).
func (n *Node) Ping(dst netip.Addr, count int, timeout time.Duration) (rtts []time.Duration, lost int, err error) {
	if !dst.Is4() {
		return nil, 0, fmt.Errorf("netnstest: ping %v: IPv4 only", dst)
	}
	var c *icmp.PacketConn
	if err := n.Do(func() (err error) {
		c, err = icmp.ListenPacket("ip4:icmp", "0.0.0.0")
		return err
	}); err != nil {
		return nil, 0, fmt.Errorf("netnstest: ping from %s: %w", n.Name, err)
	}
	defer c.Close()
	id := (os.Getpid() ^ int(pingIDs.Add(1))<<8) & 0xffff
	to := &net.IPAddr{IP: dst.AsSlice()}
	buf := make([]byte, 1500)
	for seq := 0; seq < count; seq++ {
		msg := icmp.Message{Type: ipv4.ICMPTypeEcho, Body: &icmp.Echo{ID: id, Seq: seq, Data: make([]byte, 56)}}
		b, err := msg.Marshal(nil)
		if err != nil {
			return rtts, lost, err
		}
		t0 := time.Now()
		if _, err := c.WriteTo(b, to); err != nil {
			return rtts, lost, fmt.Errorf("netnstest: ping %v from %s: %w", dst, n.Name, err)
		}
		if err := c.SetReadDeadline(t0.Add(timeout)); err != nil {
			return rtts, lost, err
		}
		for {
			k, from, err := c.ReadFrom(buf)
			if errors.Is(err, os.ErrDeadlineExceeded) {
				lost++
				break
			}
			if err != nil {
				return rtts, lost, fmt.Errorf("netnstest: ping %v from %s: %w", dst, n.Name, err)
			}
			m, err := icmp.ParseMessage(protocolICMP, buf[:k])
			if err != nil || m.Type != ipv4.ICMPTypeEchoReply {
				continue
			}
			e, ok := m.Body.(*icmp.Echo)
			if ip, _ := from.(*net.IPAddr); ok && e.ID == id && e.Seq == seq && ip != nil && ip.IP.Equal(to.IP) {
				rtts = append(rtts, time.Since(t0))
				break
			}
		}
	}
	return rtts, lost, nil
}
