package netio

import (
	"encoding/binary"
	"net/netip"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"cclab/ecn"
)

// batchMax is the largest batch handed to one recvmmsg/sendmmsg call.
const batchMax = 64

// sizeofTimespec is the size of the platform's struct timespec, bytes.
const sizeofTimespec = int(unsafe.Sizeof(unix.Timespec{}))

// oobSize is the control-message space per datagram: one TOS/TCLASS cmsg,
// on a socket with GRO one UDP_GRO cmsg (an int), and on a socket with
// receive timestamps (EnableRxTimestamps) one SCM_TIMESTAMPNS cmsg (a
// struct timespec).
var oobSize = 2*unix.CmsgSpace(4) + unix.CmsgSpace(sizeofTimespec)

// mmsgState is the preallocated scratch of one direction (read or write).
type mmsgState struct {
	hdrs  [batchMax]unix.Mmsghdr
	iovs  [batchMax]unix.Iovec
	names [batchMax]unix.RawSockaddrInet6
	oob   []byte
	n     int
	err   error
	call  func(fd uintptr) bool
	try   func(fd uintptr) bool // reads: call without waiting (TryReadBatch)
	count int                   // messages to process in this call
}

type sysState struct {
	rc syscall.RawConn
	r  mmsgState
	w  mmsgState
}

func (u *UDPConn) sysInit() error {
	rc, err := u.c.SyscallConn()
	if err != nil {
		return err
	}
	u.sys.rc = rc
	var fam int
	var serr error
	if err := rc.Control(func(fd uintptr) {
		sa, e := unix.Getsockname(int(fd))
		if e != nil {
			serr = e
			return
		}
		if _, ok := sa.(*unix.SockaddrInet6); ok {
			fam = unix.AF_INET6
		} else {
			fam = unix.AF_INET
		}
		// Ask for the TOS / traffic class of each received datagram (ECN).
		if fam == unix.AF_INET6 {
			_ = unix.SetsockoptInt(int(fd), unix.IPPROTO_IPV6, unix.IPV6_RECVTCLASS, 1)
		}
		// IPv4 datagrams (also on a dual-stack IPv6 socket) report IP_TOS.
		_ = unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_RECVTOS, 1)
	}); err != nil {
		return err
	}
	if serr != nil {
		return serr
	}
	u.v6 = fam == unix.AF_INET6
	for _, st := range []*mmsgState{&u.sys.r, &u.sys.w} {
		st.oob = make([]byte, batchMax*oobSize)
	}
	u.sys.r.call = u.recvF
	u.sys.r.try = u.tryF
	u.sys.w.call = u.sendF
	return nil
}

func (u *UDPConn) recvF(fd uintptr) bool {
	st := &u.sys.r
	var ok bool
	st.n, ok, st.err = mmsg(unix.SYS_RECVMMSG, fd, st.hdrs[:st.count])
	return ok
}

// tryF is recvF that never asks the RawConn to wait: a read that would
// block ends with no datagrams (st.n 0).
func (u *UDPConn) tryF(fd uintptr) bool {
	st := &u.sys.r
	st.n, _, st.err = mmsg(unix.SYS_RECVMMSG, fd, st.hdrs[:st.count])
	return true
}

func (u *UDPConn) sendF(fd uintptr) bool {
	st := &u.sys.w
	var ok bool
	st.n, ok, st.err = mmsg(unix.SYS_SENDMMSG, fd, st.hdrs[:st.count])
	return ok
}

// mmsg makes one recvmmsg or sendmmsg (trap) system call on fd for hdrs,
// as the callback of a syscall.RawConn. ok is false when the socket would
// block or the call was interrupted (the RawConn then waits and calls
// again); otherwise n is the number of messages, or err the call's error.
func mmsg(trap, fd uintptr, hdrs []unix.Mmsghdr) (n int, ok bool, err error) {
	r, _, e := unix.Syscall6(trap, fd, uintptr(unsafe.Pointer(unsafe.SliceData(hdrs))), uintptr(len(hdrs)), 0, 0, 0)
	switch {
	case e == unix.EAGAIN || e == unix.EWOULDBLOCK || e == unix.EINTR:
		return 0, false, nil
	case e != 0:
		return 0, true, e
	}
	return int(r), true, nil
}

// ReadBatch blocks until at least one datagram arrives and fills up to
// len(ms) (at most 64 per call) messages.
func (u *UDPConn) ReadBatch(ms []Message) (int, error) {
	return u.readBatch(ms, u.sys.r.call)
}

// TryReadBatch is ReadBatch without blocking: one recvmmsg (on the
// non-blocking socket); 0, nil if no datagram is ready.
func (u *UDPConn) TryReadBatch(ms []Message) (int, error) {
	return u.readBatch(ms, u.sys.r.try)
}

// readBatch fills ms with one recvmmsg made by call (recvF: waits until a
// datagram is ready; tryF: does not).
func (u *UDPConn) readBatch(ms []Message, call func(fd uintptr) bool) (int, error) {
	st := &u.sys.r
	k := min(len(ms), batchMax)
	for i := 0; i < k; i++ {
		b := ms[i].Buf[:cap(ms[i].Buf)]
		st.iovs[i] = unix.Iovec{Base: unsafe.SliceData(b)}
		st.iovs[i].SetLen(len(b))
		h := &st.hdrs[i].Hdr
		h.Name = (*byte)(unsafe.Pointer(&st.names[i]))
		h.Namelen = unix.SizeofSockaddrInet6
		h.Iov = &st.iovs[i]
		h.SetIovlen(1)
		h.Control = &st.oob[i*oobSize]
		h.SetControllen(oobSize)
		h.Flags = 0
		st.hdrs[i].Len = 0
	}
	st.count = k
	if err := u.sys.rc.Read(call); err != nil {
		return 0, mapClosed(err)
	}
	if st.err != nil {
		return 0, st.err
	}
	for i := 0; i < st.n; i++ {
		h := &st.hdrs[i]
		ms[i].N = int(h.Len)
		ms[i].Addr = sockaddrToAddrPort(&st.names[i], h.Hdr.Namelen)
		ms[i].ECN, ms[i].Seg, ms[i].RxTime = parseCmsgs(st.oob[i*oobSize : i*oobSize+int(h.Hdr.Controllen)])
	}
	return st.n, nil
}

// WriteBatch sends up to len(ms) datagrams (64 per system call), each with
// its own destination and ECN field, and returns how many were sent.
func (u *UDPConn) WriteBatch(ms []Message) (int, error) {
	sent := 0
	for sent < len(ms) {
		n, err := u.writeSome(ms[sent:])
		sent += n
		if err != nil {
			return sent, err
		}
	}
	return sent, nil
}

func (u *UDPConn) writeSome(ms []Message) (int, error) {
	st := &u.sys.w
	k := min(len(ms), batchMax)
	for i := 0; i < k; i++ {
		b := ms[i].Buf[:ms[i].N]
		st.iovs[i] = unix.Iovec{}
		if len(b) > 0 {
			st.iovs[i].Base = unsafe.SliceData(b)
		}
		st.iovs[i].SetLen(len(b))
		h := &st.hdrs[i].Hdr
		*h = unix.Msghdr{}
		h.Iov = &st.iovs[i]
		h.SetIovlen(1)
		if !u.connected {
			h.Name = (*byte)(unsafe.Pointer(&st.names[i]))
			h.Namelen = putSockaddr(&st.names[i], ms[i].Addr, u.v6)
		}
		if ms[i].ECN != ecn.NotECT {
			oob := st.oob[i*oobSize : (i+1)*oobSize]
			h.Control = &oob[0]
			h.SetControllen(u.putTOS(oob, ms[i].Addr, ms[i].ECN))
		}
	}
	st.count = k
	if err := u.sys.rc.Write(st.call); err != nil {
		return 0, mapClosed(err)
	}
	if st.err != nil {
		// A datagram the kernel refuses (e.g. EMSGSIZE, unreachable) must not
		// wedge the batch: report it and let the caller decide.
		return st.n, st.err
	}
	return st.n, nil
}

// putTOS writes the ECN control message of a datagram to to (the peer, if
// connected) and returns its length, bytes.
func (u *UDPConn) putTOS(oob []byte, to netip.AddrPort, cp ecn.Codepoint) int {
	if u.connected {
		to = u.remote
	}
	return putTOS(oob, to, u.v6, cp)
}

// putTOS writes into oob (at least unix.CmsgSpace(4) bytes) one IP_TOS
// (IPv4 destination, also via a dual-stack socket) or IPV6_TCLASS (IPv6
// destination on an AF_INET6 socket, v6) control message carrying cp, and
// returns the space it takes (bytes, unix.CmsgSpace(4)).
func putTOS(oob []byte, to netip.AddrPort, v6 bool, cp ecn.Codepoint) int {
	h := (*unix.Cmsghdr)(unsafe.Pointer(&oob[0]))
	if v6 && !to.Addr().Unmap().Is4() {
		h.Level, h.Type = unix.IPPROTO_IPV6, unix.IPV6_TCLASS
	} else {
		h.Level, h.Type = unix.IPPROTO_IP, unix.IP_TOS
	}
	h.SetLen(unix.CmsgLen(4))
	binary.NativeEndian.PutUint32(oob[unix.CmsgLen(0):], uint32(cp))
	return unix.CmsgSpace(4)
}

// parseTOS finds the IP_TOS or IPV6_TCLASS control message and returns its ECN bits.
func parseTOS(oob []byte) ecn.Codepoint {
	cp, _, _ := parseCmsgs(oob)
	return cp
}

// parseCmsgs reads the control messages of a received datagram: the ECN
// bits of its IP_TOS or IPV6_TCLASS message (Not-ECT if there is none),
// the segment size of its UDP_GRO message (0 if there is none: one
// datagram) and the kernel receive time of its SCM_TIMESTAMPNS message
// (ns since the Unix epoch; 0 if there is none). Malformed messages end the
// parse; it never reads out of range.
func parseCmsgs(oob []byte) (cp ecn.Codepoint, seg int, rx int64) {
	hl := unix.CmsgLen(0)
	for len(oob) >= hl {
		h := (*unix.Cmsghdr)(unsafe.Pointer(&oob[0]))
		l := int(h.Len)
		if l < hl || l > len(oob) {
			return cp, seg, rx
		}
		data := oob[hl:l]
		switch {
		case h.Level == unix.IPPROTO_IP && (h.Type == unix.IP_TOS || h.Type == unix.IP_RECVTOS) && len(data) >= 1:
			cp = ecn.FromTOS(int(data[0]))
		case h.Level == unix.IPPROTO_IPV6 && h.Type == unix.IPV6_TCLASS && len(data) >= 4:
			cp = ecn.FromTOS(int(binary.NativeEndian.Uint32(data)))
		case h.Level == unix.IPPROTO_UDP && h.Type == unix.UDP_GRO && len(data) >= 4:
			seg = max(int(int32(binary.NativeEndian.Uint32(data))), 0) // the kernel's int gso_size
		case h.Level == unix.IPPROTO_UDP && h.Type == unix.UDP_GRO && len(data) >= 2:
			seg = int(binary.NativeEndian.Uint16(data))
		case h.Level == unix.SOL_SOCKET && h.Type == unix.SCM_TIMESTAMPNS && len(data) >= sizeofTimespec:
			rx = timespecNano(data)
		}
		sp := unix.CmsgSpace(l - hl)
		if sp > len(oob) {
			return cp, seg, rx
		}
		oob = oob[sp:]
	}
	return cp, seg, rx
}

// timespecNano decodes a struct timespec (the platform's layout: two longs)
// at the start of b, len(b) >= sizeofTimespec, to nanoseconds.
func timespecNano(b []byte) int64 {
	if sizeofTimespec == 16 {
		return int64(binary.NativeEndian.Uint64(b))*1e9 + int64(binary.NativeEndian.Uint64(b[8:]))
	}
	return int64(int32(binary.NativeEndian.Uint32(b)))*1e9 + int64(int32(binary.NativeEndian.Uint32(b[4:])))
}

func sockaddrToAddrPort(sa *unix.RawSockaddrInet6, n uint32) netip.AddrPort {
	switch sa.Family {
	case unix.AF_INET:
		s4 := (*unix.RawSockaddrInet4)(unsafe.Pointer(sa))
		port := binary.BigEndian.Uint16((*[2]byte)(unsafe.Pointer(&s4.Port))[:])
		return netip.AddrPortFrom(netip.AddrFrom4(s4.Addr), port)
	case unix.AF_INET6:
		port := binary.BigEndian.Uint16((*[2]byte)(unsafe.Pointer(&sa.Port))[:])
		a := netip.AddrFrom16(sa.Addr)
		if a.Is4In6() {
			a = a.Unmap()
		}
		return netip.AddrPortFrom(a, port)
	}
	return netip.AddrPort{}
}

// putSockaddr writes ap into sa for a socket of the given family (v6:
// AF_INET6, else AF_INET) and returns the address length (bytes).
func putSockaddr(sa *unix.RawSockaddrInet6, ap netip.AddrPort, v6 bool) uint32 {
	if !v6 {
		s4 := (*unix.RawSockaddrInet4)(unsafe.Pointer(sa))
		*s4 = unix.RawSockaddrInet4{Family: unix.AF_INET, Addr: ap.Addr().Unmap().As4()}
		binary.BigEndian.PutUint16((*[2]byte)(unsafe.Pointer(&s4.Port))[:], ap.Port())
		return unix.SizeofSockaddrInet4
	}
	*sa = unix.RawSockaddrInet6{Family: unix.AF_INET6, Addr: ap.Addr().As16()}
	binary.BigEndian.PutUint16((*[2]byte)(unsafe.Pointer(&sa.Port))[:], ap.Port())
	return unix.SizeofSockaddrInet6
}
