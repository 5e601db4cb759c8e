package netio

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// RaiseReceiveBuffer asks for a socket receive buffer of at least want
// bytes: first SO_RCVBUF (capped by net.core.rmem_max), then, if that fell
// short, SO_RCVBUFFORCE (needs CAP_NET_ADMIN), as quic-go does. It returns
// the buffer the kernel reports (which counts per-datagram overhead, and is
// twice what was granted), or 0 if c is not a UDP socket.
func RaiseReceiveBuffer(c Conn, want int) int {
	u, ok := c.(*UDPConn)
	if !ok {
		return 0
	}
	got := 0
	_ = u.sys.rc.Control(func(fd uintptr) {
		cur, _ := unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUF)
		if cur >= 2*want {
			got = cur
			return
		}
		_ = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUF, want)
		if cur, _ = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUF); cur < 2*want {
			_ = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, want)
			cur, _ = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUF)
		}
		got = cur
	})
	return got
}

// ReceiveDrops returns the number of datagrams the kernel dropped because
// c's receive buffer was full (SO_MEMINFO's SK_MEMINFO_DROPS, the drops
// column of /proc/net/udp), and whether it is known (a UDP socket on Linux).
func ReceiveDrops(c Conn) (uint64, bool) {
	u, ok := c.(*UDPConn)
	if !ok {
		return 0, false
	}
	var mem [unix.SK_MEMINFO_VARS]uint32
	var drops uint64
	known := false
	_ = u.sys.rc.Control(func(fd uintptr) {
		n := uint32(len(mem) * 4)
		_, _, e := unix.Syscall6(unix.SYS_GETSOCKOPT, fd, unix.SOL_SOCKET, unix.SO_MEMINFO,
			uintptr(unsafe.Pointer(&mem[0])), uintptr(unsafe.Pointer(&n)), 0)
		if e == 0 && n >= (unix.SK_MEMINFO_DROPS+1)*4 {
			drops, known = uint64(mem[unix.SK_MEMINFO_DROPS]), true
		}
	})
	return drops, known
}
