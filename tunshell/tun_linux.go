package tunshell

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"cclab/internal/hostlimit"
	"cclab/ippkt"
	"cclab/netio"
)

// Device is a TUN device (IFF_TUN | IFF_NO_PI: every read and write is one
// whole IP packet, no packet-information prefix) opened non-blocking on
// Go's poller. It implements netio.Conn for relay.NewPacket: ReadBatch
// returns every packet ready, up to the batch size, each from one read(2)
// (a TUN device has no recvmmsg), after a single wait for readiness;
// WriteBatch writes each packet with one write(2). Message.ECN is read
// from and written into the IP header; Message.Addr is not used. Neither
// allocates.
//
// The device has none of the TUN offload features (TUNSETOFFLOAD is never
// called, IFF_VNET_HDR is not set), so the kernel segments TCP and UDP GSO
// batches and computes checksums before a packet reaches the device: every
// packet read is at most the device's MTU (docs/shell.md, "MTU and
// offloads").
//
// One goroutine may read while another writes.
type Device struct {
	f    *os.File
	rc   syscall.RawConn
	name string

	// ReadBatch state, used by readSome (a method value made once, so that
	// RawConn.Read does not allocate a closure per call).
	rms    []netio.Message
	rn     int
	rerr   error
	readFn func(fd uintptr) bool
	// rwaited is set when the batch's first read found the device empty
	// (the reader then waited for readiness); gaps measures the reader's
	// time away before reads that found packets waiting (readGaps).
	rwaited bool
	gaps    readGaps

	wms     []netio.Message
	wn      int
	werr    error
	writeFn func(fd uintptr) bool
}

// ifReq is struct ifreq for TUNSETIFF: the name and the flags.
type ifReq struct {
	name  [unix.IFNAMSIZ]byte
	flags uint16
	_     [22]byte
}

// OpenTUN creates a TUN device in the calling thread's network namespace
// (so call it on a thread locked into the namespace that should hold the
// device). name may contain one "%d", which the kernel replaces with the
// lowest free number. The device is deleted when it is closed.
func OpenTUN(name string) (*Device, error) {
	if len(name) >= unix.IFNAMSIZ {
		return nil, fmt.Errorf("tun: device name %q longer than %d bytes", name, unix.IFNAMSIZ-1)
	}
	fd, err := unix.Open("/dev/net/tun", unix.O_RDWR|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("tun: open /dev/net/tun: %w", err)
	}
	var req ifReq
	copy(req.name[:], name)
	req.flags = unix.IFF_TUN | unix.IFF_NO_PI
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.TUNSETIFF, uintptr(unsafe.Pointer(&req))); e != 0 {
		unix.Close(fd)
		return nil, fmt.Errorf("tun: TUNSETIFF %q: %w", name, e)
	}
	n := 0
	for n < len(req.name) && req.name[n] != 0 {
		n++
	}
	d := &Device{name: string(req.name[:n])}
	d.f = os.NewFile(uintptr(fd), "/dev/net/tun:"+d.name)
	if d.rc, err = d.f.SyscallConn(); err != nil {
		d.f.Close()
		return nil, fmt.Errorf("tun: %v", err)
	}
	d.readFn = d.readSome
	d.writeFn = d.writeSome
	return d, nil
}

// Name returns the device's interface name.
func (d *Device) Name() string { return d.name }

// ReadBatch waits until at least one packet is ready, then reads as many as
// are ready into ms (each into Buf, up to its capacity) and returns how
// many. A packet longer than the buffer is truncated to it (the relay
// counts a filled buffer as truncated).
func (d *Device) ReadBatch(ms []netio.Message) (int, error) {
	if len(ms) == 0 {
		return 0, nil
	}
	d.rms, d.rn, d.rerr, d.rwaited = ms, 0, nil, false
	err := d.rc.Read(d.readFn)
	n := d.rn
	d.rms = nil
	if n > 0 {
		d.gaps.read(monoNow(), d.rwaited)
		return n, nil
	}
	if err == nil {
		err = d.rerr
	}
	return 0, mapClosed(err)
}

// readSome is the RawConn.Read callback: it reads until the batch is full
// or the device has nothing more; false asks the poller to wait.
func (d *Device) readSome(fd uintptr) bool {
	for d.rn < len(d.rms) {
		m := &d.rms[d.rn]
		n, err := unix.Read(int(fd), m.Buf[:cap(m.Buf)])
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			if d.rn == 0 {
				d.rwaited = true
			}
			return d.rn > 0
		case err != nil:
			d.rerr = err
			return true
		}
		m.N = n
		m.Addr = netip.AddrPort{}
		m.ECN = ippkt.ECN(m.Buf[:n])
		d.rn++
	}
	return true
}

// WriteBatch writes the packets of ms in order, after writing each one's
// Message.ECN into its IP header, and returns how many were written. It
// stops at a packet the kernel refuses (e.g. one that is not IP) and
// returns the error with the count of those before it, as
// netio.UDPConn.WriteBatch does.
func (d *Device) WriteBatch(ms []netio.Message) (int, error) {
	d.wms, d.wn, d.werr = ms, 0, nil
	err := d.rc.Write(d.writeFn)
	n := d.wn
	d.wms = nil
	if err == nil {
		err = d.werr
	}
	return n, mapClosed(err)
}

// writeSome is the RawConn.Write callback.
func (d *Device) writeSome(fd uintptr) bool {
	for d.wn < len(d.wms) {
		m := &d.wms[d.wn]
		b := m.Buf[:m.N]
		ippkt.SetECN(b, m.ECN)
		_, err := unix.Write(int(fd), b)
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			return false
		case err != nil:
			d.werr = fmt.Errorf("tun %s: write: %w", d.name, err)
			return true
		}
		d.wn++
	}
	return true
}

// ReadStalls returns the reader's gaps before reads that found packets
// waiting (readGaps), counted against the limit SetStallLimit set.
func (d *Device) ReadStalls() hostlimit.Stalls { return d.gaps.stalls() }

// SetStallLimit sets the gap above which a read that found packets
// waiting counts as a stall (the bottleneck queue's drain time; 0: none).
func (d *Device) SetStallLimit(limit time.Duration) { d.gaps.setLimit(limit) }

// epoch is the origin of monoNow.
var epoch = time.Now()

// monoNow returns the monotonic time since epoch, ns, at least 1.
func monoNow() int64 { return int64(time.Since(epoch)) + 1 }

// LocalAddr returns the zero AddrPort: a TUN device has no address of its
// own at this level.
func (d *Device) LocalAddr() netip.AddrPort { return netip.AddrPort{} }

// Close closes the device (deleting the interface); blocked reads return
// netio.ErrClosed.
func (d *Device) Close() error { return d.f.Close() }

func mapClosed(err error) error {
	if errors.Is(err, os.ErrClosed) {
		return netio.ErrClosed
	}
	return err
}
