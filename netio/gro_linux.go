package netio

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// UDP generic receive offload (GRO, Linux ≥ 5.0, the UDP_GRO socket
// option): the kernel may hand a socket several datagrams of one sender in
// one read, back to back, all of one size but the last, which may be
// shorter (Message.Seg, Message.Count, Message.Datagram). It coalesces only
// datagrams that arrived in one burst from the same source with the same IP
// header fields but the length — TOS or traffic class included, so every
// coalesced datagram has the message's ECN codepoint — at most 64 of them
// (UDP_GRO_CNT_MAX) and 64 KiB in all. A GSO send (GSOWriter) to a socket
// with GRO on the same host arrives whole, as one read, without ever being
// split into datagrams: the counterpart that makes loopback paths cheap per
// datagram.

// GROBufSize is the read buffer a Message needs on a socket with GRO,
// bytes: the largest coalesced read (64 KiB). A smaller buffer truncates
// (N == len(Buf)) and the datagrams past it are lost.
const GROBufSize = MaxDatagram

// EnableGRO turns on receive offload for c and reports whether it is on:
// false if c is not a UDP socket, the kernel lacks UDP_GRO, or the
// environment variable CCLAB_NO_GRO is set to a true value. With GRO on,
// every read buffer must hold GROBufSize bytes.
func EnableGRO(c Conn) bool {
	if off, _ := strconv.ParseBool(os.Getenv("CCLAB_NO_GRO")); off {
		return false
	}
	return setFlag(c, unix.IPPROTO_UDP, unix.UDP_GRO)
}

// setFlag turns on the boolean socket option level/opt of c and reports
// whether it is on: false if c is not a UDP socket or the kernel refuses.
func setFlag(c Conn, level, opt int) bool {
	u, ok := c.(*UDPConn)
	if !ok {
		return false
	}
	var serr error
	if err := u.sys.rc.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), level, opt, 1)
	}); err != nil {
		return false
	}
	return serr == nil
}
