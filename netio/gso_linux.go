package netio

import (
	"encoding/binary"
	"errors"
	"net/netip"
	"os"
	"strconv"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"cclab/ecn"
)

// UDP generic segmentation offload (GSO, Linux ≥ 4.18, UDP_SEGMENT): one
// sendmmsg entry carries a run of equal-sized datagrams to one destination
// in one buffer, and the kernel splits it into datagrams as late as
// possible. On a loopback path this divides the per-datagram kernel cost
// several times; it is what lets quic-go reach multi-Gbit/s on loopback.
// GSOWriter is a write-side fast path for *UDPConn sockets; receiving stays
// on ReadBatch.

// gsoMaxSegments is the kernel's limit of segments per GSO send
// (UDP_MAX_SEGMENTS, 64 before Linux 6.?; 64 is safe everywhere).
const gsoMaxSegments = 64

// gsoMaxBytes bounds a GSO run's payload: it must fit one IP datagram's
// 16-bit length with the UDP and IPv6 headers.
const gsoMaxBytes = 65535 - 8 - 40

// gsoOOB is the control-message space per entry: UDP_SEGMENT (uint16) and
// IP_TOS / IPV6_TCLASS (int).
var gsoOOB = unix.CmsgSpace(2) + unix.CmsgSpace(4)

// GSOWriter sends batches of datagrams with UDP GSO. It is not safe for
// concurrent use (one writer per socket, as WriteBatch).
type GSOWriter struct {
	rc        syscall.RawConn
	v6        bool
	connected bool
	remote    netip.AddrPort

	hdrs  [batchMax]unix.Mmsghdr
	iovs  [batchMax]unix.Iovec
	names [batchMax]unix.RawSockaddrInet6
	oob   []byte
	segs  []unix.Iovec // WriteMessages: one iovec per datagram
	first int          // first entry of the current sendmmsg call
	count int
	n     int
	err   error
	call  func(fd uintptr) bool
}

// NewGSOWriter returns a GSO writer for c, or nil if c is not a UDP socket,
// the kernel lacks UDP_SEGMENT, or the environment variable CCLAB_NO_GSO is
// set to a true value.
func NewGSOWriter(c Conn) *GSOWriter {
	if off, _ := strconv.ParseBool(os.Getenv("CCLAB_NO_GSO")); off {
		return nil
	}
	u, ok := c.(*UDPConn)
	if !ok {
		return nil
	}
	rc := u.sys.rc // the runtime's, or Unpoll's
	g := &GSOWriter{rc: rc, remote: u.RemoteAddr(), oob: make([]byte, batchMax*gsoOOB)}
	g.connected = g.remote.IsValid()
	supported := false
	_ = rc.Control(func(fd uintptr) {
		if _, err := unix.GetsockoptInt(int(fd), unix.IPPROTO_UDP, unix.UDP_SEGMENT); err != nil {
			return
		}
		sa, err := unix.Getsockname(int(fd))
		if err != nil {
			return
		}
		_, g.v6 = sa.(*unix.SockaddrInet6)
		supported = true
	})
	if !supported {
		return nil
	}
	g.call = g.sendF
	return g
}

func (g *GSOWriter) sendF(fd uintptr) bool {
	var ok bool
	g.n, ok, g.err = mmsg(unix.SYS_SENDMMSG, fd, g.hdrs[g.first:g.first+g.count])
	return ok
}

// WriteBatch sends ms, whose buffers are laid out back to back in one arena
// (offs[i] is the offset of ms[i]), coalescing runs of equal-sized
// datagrams to the same destination with the same ECN codepoint into GSO
// entries. It returns the number of datagrams sent and the system calls
// made; an error wrapping ErrGSOUnsupported means the kernel or the device
// refused GSO and the caller should fall back to Conn.WriteBatch.
func (g *GSOWriter) WriteBatch(ms []Message, offs []int) (sent, calls int, err error) {
	return g.write(ms, offs)
}

// WriteMessages sends ms, each datagram in its own buffer, coalescing runs
// of consecutive datagrams to the same destination with the same ECN
// codepoint, all of one size but the last, which may be shorter, into GSO
// entries of one iovec per datagram (the kernel concatenates them and cuts
// the result at the segment size, so no copy is needed). It returns the
// number of datagrams sent and the system calls made; an error wrapping
// ErrGSOUnsupported means the kernel or the device refused GSO and the
// caller should fall back to Conn.WriteBatch. It does not allocate once its
// iovec table has grown to the largest batch.
func (g *GSOWriter) WriteMessages(ms []Message) (sent, calls int, err error) {
	if cap(g.segs) < len(ms) {
		g.segs = make([]unix.Iovec, len(ms))
	}
	return g.write(ms, nil)
}

// write sends ms in GSO runs: with offs, runs of datagrams contiguous in
// one arena, one iovec per run; without, one iovec per datagram (g.segs).
// A run is consecutive non-empty datagrams to one destination with one ECN
// codepoint, all of the first one's size but the last, which may be
// shorter, at most gsoMaxSegments and gsoMaxBytes.
func (g *GSOWriter) write(ms []Message, offs []int) (sent, calls int, err error) {
	var firsts [batchMax + 1]int // firsts[e]: index in ms of entry e's first datagram
	i := 0
	for i < len(ms) {
		e := 0
		for i < len(ms) && e < batchMax {
			seg := ms[i].N
			j := i + 1
			total := seg
			for j < len(ms) && j-i < gsoMaxSegments && ms[j].Addr == ms[i].Addr && ms[j].ECN == ms[i].ECN &&
				ms[j].N <= seg && ms[j].N > 0 && total+ms[j].N <= gsoMaxBytes &&
				(offs == nil || offs[j] == offs[j-1]+ms[j-1].N) {
				total += ms[j].N
				j++
				if ms[j-1].N < seg {
					break // a shorter datagram ends a run
				}
			}
			if offs != nil {
				g.entry(e, ms[i].Buf[:total], ms[i].Addr, ms[i].ECN, seg, j-i > 1)
			} else {
				for k := i; k < j; k++ {
					g.segs[k] = unix.Iovec{}
					if ms[k].N > 0 {
						g.segs[k].Base = unsafe.SliceData(ms[k].Buf)
					}
					g.segs[k].SetLen(ms[k].N)
				}
				g.header(e, &g.segs[i], j-i, ms[i].Addr, ms[i].ECN, seg, j-i > 1)
			}
			firsts[e] = i
			e++
			i = j
		}
		firsts[e] = i
		for done := 0; done < e; {
			g.first, g.count = done, e-done
			if werr := g.rc.Write(g.call); werr != nil {
				return sent, calls, werr
			}
			calls++
			if g.err != nil {
				if g.err == unix.EIO || g.err == unix.EINVAL || g.err == unix.EOPNOTSUPP {
					return sent, calls, ErrGSOUnsupported
				}
				return sent, calls, g.err
			}
			if g.n <= 0 {
				return sent, calls, errors.New("netio: sendmmsg sent nothing")
			}
			done += g.n
			sent = firsts[done]
		}
	}
	return sent, calls, nil
}

// entry fills sendmmsg entry e with one buffer.
func (g *GSOWriter) entry(e int, b []byte, to netip.AddrPort, cp ecn.Codepoint, seg int, gso bool) {
	g.iovs[e] = unix.Iovec{Base: unsafe.SliceData(b)}
	g.iovs[e].SetLen(len(b))
	g.header(e, &g.iovs[e], 1, to, cp, seg, gso)
}

// header fills sendmmsg entry e: niov iovecs from iov to to, with the
// segment size seg if gso, and the ECN codepoint cp.
func (g *GSOWriter) header(e int, iov *unix.Iovec, niov int, to netip.AddrPort, cp ecn.Codepoint, seg int, gso bool) {
	g.hdrs[e] = unix.Mmsghdr{}
	h := &g.hdrs[e].Hdr
	h.Iov = iov
	h.SetIovlen(niov)
	if !g.connected {
		h.Name = (*byte)(unsafe.Pointer(&g.names[e]))
		h.Namelen = putSockaddr(&g.names[e], to, g.v6)
	}
	oob := g.oob[e*gsoOOB : (e+1)*gsoOOB]
	used := 0
	if gso {
		ch := (*unix.Cmsghdr)(unsafe.Pointer(&oob[0]))
		ch.Level, ch.Type = unix.IPPROTO_UDP, unix.UDP_SEGMENT
		ch.SetLen(unix.CmsgLen(2))
		binary.NativeEndian.PutUint16(oob[unix.CmsgLen(0):], uint16(seg))
		used = unix.CmsgSpace(2)
	}
	if cp != ecn.NotECT {
		if g.connected {
			to = g.remote
		}
		used += putTOS(oob[used:], to, g.v6, cp)
	}
	if used > 0 {
		h.Control = &oob[0]
		h.SetControllen(used)
	}
}
