package main

import (
	"encoding/binary"
	"time"

	"golang.org/x/net/ipv4"
	"golang.org/x/sys/unix"

	"cclab/netio"
)

// arrivalReader reads the receiver child's socket and stamps each datagram
// twice: when the receiving application got it (CLOCK_MONOTONIC after the
// read returned) and when the kernel received it (SO_TIMESTAMPNS, taken as
// the datagram entered the receiving socket's stack, mapped onto
// CLOCK_MONOTONIC). The difference is the receiver's own wake-up and
// read latency, which is not the relay's error.
type arrivalReader struct {
	p      *ipv4.PacketConn
	ms     []ipv4.Message
	offset time.Duration // CLOCK_REALTIME − CLOCK_MONOTONIC
	stamps bool          // the kernel stamps datagrams
}

func newArrivalReader(c *netio.UDPConn, gro bool) *arrivalReader {
	r := &arrivalReader{p: ipv4.NewPacketConn(c.Raw())}
	n, bufSize := 64, 2048
	if gro {
		n, bufSize = 16, netio.GROBufSize
	}
	r.ms = make([]ipv4.Message, n)
	for i := range r.ms {
		r.ms[i].Buffers = [][]byte{make([]byte, bufSize)}
		r.ms[i].OOB = make([]byte, 256)
	}
	// The control-message parsing below assumes 64-bit Linux's layout.
	if rc, err := c.Raw().SyscallConn(); err == nil && unix.SizeofCmsghdr == 16 {
		_ = rc.Control(func(fd uintptr) {
			r.stamps = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1) == nil
		})
	}
	var rt, mono unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_REALTIME, &rt)
	_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &mono)
	r.offset = time.Duration(rt.Nano() - mono.Nano())
	return r
}

// read blocks for a batch and appends (application arrival, kernel
// arrival, sequence number) for every datagram of at least 16 bytes in it
// (splitting GRO reads by the UDP_GRO segment size).
func (r *arrivalReader) read(rec []uint64) ([]uint64, error) {
	n, err := r.p.ReadBatch(r.ms, 0)
	if err != nil {
		return rec, err
	}
	app := uint64(monotonic())
	for i := range r.ms[:n] {
		m := &r.ms[i]
		kern, seg := app, 0
		for oob := m.OOB[:m.NN]; len(oob) >= unix.CmsgLen(0); {
			hl := int(binary.NativeEndian.Uint64(oob)) // Cmsghdr.Len (64-bit Linux)
			if hl < unix.CmsgLen(0) || hl > len(oob) {
				break
			}
			level := int32(binary.NativeEndian.Uint32(oob[8:]))
			typ := int32(binary.NativeEndian.Uint32(oob[12:]))
			data := oob[unix.CmsgLen(0):hl]
			switch {
			case level == unix.SOL_SOCKET && typ == unix.SCM_TIMESTAMPNS && len(data) >= 16:
				real := time.Duration(int64(binary.NativeEndian.Uint64(data))*1e9 + int64(binary.NativeEndian.Uint64(data[8:])))
				kern = uint64(real - r.offset)
			case level == unix.SOL_UDP && typ == unix.UDP_GRO && len(data) >= 4:
				seg = int(binary.NativeEndian.Uint32(data))
			}
			oob = oob[min(unix.CmsgSpace(hl-unix.CmsgLen(0)), len(oob)):]
		}
		data := m.Buffers[0][:m.N]
		if seg <= 0 {
			seg = len(data)
		}
		for off := 0; off < len(data); off += seg {
			if d := data[off:min(off+seg, len(data))]; len(d) >= 16 {
				rec = append(rec, app, kern, binary.BigEndian.Uint64(d[8:]))
			}
		}
	}
	return rec, nil
}
