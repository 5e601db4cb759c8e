package relay

import (
	"bufio"
	"encoding/binary"
	"net/netip"
	"os"
	"time"

	"cclab/ippkt"
)

// pcapFile writes relayed datagrams as raw IP (LINKTYPE_RAW) packets with
// synthesized IPv4 or IPv6 and UDP headers, so tshark/wireshark decode them;
// in packet mode it writes the IP packets as they are (writeRaw).
type pcapFile struct {
	f       *os.File
	bw      *bufio.Writer
	snap    int
	scratch []byte
	err     error
}

// maxRawHeaders is the most header bytes writeRaw keeps before the
// snapshot's payload bytes: an IPv6 header with extension headers and a
// TCP header with options (60 bytes, RFC 9293 §3.1), bytes.
const maxRawHeaders = 256

// newPcap creates a capture file keeping snap payload bytes per packet (0:
// all) after the headers: the synthesized IP and UDP headers (48 bytes at
// most), or in packet mode (raw) the packet's own headers.
func newPcap(name string, snap int, raw bool) (*pcapFile, error) {
	f, err := os.Create(name)
	if err != nil {
		return nil, err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	headers := 48
	if raw {
		headers = maxRawHeaders
	}
	capLen := 65535 + headers
	if snap > 0 {
		capLen = snap + headers
	}
	var h [24]byte // the pcap file header (draft-ietf-opsawg-pcap §4), little-endian
	binary.LittleEndian.PutUint32(h[0:], pcapMagicNanos)
	binary.LittleEndian.PutUint16(h[4:], 2) // version 2.4
	binary.LittleEndian.PutUint16(h[6:], 4)
	binary.LittleEndian.PutUint32(h[16:], uint32(capLen))
	binary.LittleEndian.PutUint32(h[20:], linkTypeRaw)
	if _, err := bw.Write(h[:]); err != nil {
		f.Close()
		return nil, err
	}
	return &pcapFile{f: f, bw: bw, snap: snap, scratch: make([]byte, 65535+48)}, nil
}

// pcapMagicNanos is the pcap file's magic number for timestamps in
// nanoseconds, and linkTypeRaw LINKTYPE_RAW, packets that begin with an IPv4
// or IPv6 header (draft-ietf-opsawg-pcap §4 and draft-ietf-opsawg-pcaplinktype).
// The file is written here rather than with gopacket's pcapgo, whose layers
// package would link 5 MiB of pointer tables into every binary that imports
// the relay (the simulator's too), scanned at every collection.
const (
	pcapMagicNanos = 0xa1b23c4d
	linkTypeRaw    = 101
)

// record writes one packet record: its header (draft-ietf-opsawg-pcap §5:
// seconds, nanoseconds, captured and original length) and b.
func (p *pcapFile) record(ts time.Time, b []byte, length int) {
	var h [16]byte
	binary.LittleEndian.PutUint32(h[0:], uint32(ts.Unix()))
	binary.LittleEndian.PutUint32(h[4:], uint32(ts.Nanosecond()))
	binary.LittleEndian.PutUint32(h[8:], uint32(len(b)))
	binary.LittleEndian.PutUint32(h[12:], uint32(length))
	if _, p.err = p.bw.Write(h[:]); p.err == nil {
		_, p.err = p.bw.Write(b)
	}
}

// write records one UDP datagram from src to dst with the given IP ECN bits.
func (p *pcapFile) write(ts time.Time, src, dst netip.AddrPort, tos uint8, payload []byte) {
	if p == nil || p.err != nil {
		return
	}
	v4 := src.Addr().Unmap().Is4() && dst.Addr().Unmap().Is4()
	hl := 28
	if !v4 {
		hl = 48
	}
	if len(payload) > 65535-hl {
		payload = payload[:65535-hl]
	}
	total := hl + len(payload)
	b := p.scratch[:total]
	udp := b[hl-8 : hl]
	ulen := 8 + len(payload)
	binary.BigEndian.PutUint16(udp[0:], src.Port())
	binary.BigEndian.PutUint16(udp[2:], dst.Port())
	binary.BigEndian.PutUint16(udp[4:], uint16(ulen))
	udp[6], udp[7] = 0, 0
	copy(b[hl:], payload)
	var sum uint32
	if v4 {
		s, d := src.Addr().Unmap().As4(), dst.Addr().Unmap().As4()
		ip := b[:20]
		ip[0] = 0x45
		ip[1] = tos
		binary.BigEndian.PutUint16(ip[2:], uint16(total))
		ip[4], ip[5], ip[6], ip[7] = 0, 0, 0x40, 0 // no ID, DF
		ip[8] = 64
		ip[9] = 17
		ip[10], ip[11] = 0, 0
		copy(ip[12:16], s[:])
		copy(ip[16:20], d[:])
		binary.BigEndian.PutUint16(ip[10:], ^fold(sumBytes(0, ip)))
		sum = sumBytes(0, s[:])
		sum = sumBytes(sum, d[:])
		sum += 17 + uint32(ulen)
	} else {
		s, d := src.Addr().As16(), dst.Addr().As16()
		ip := b[:40]
		binary.BigEndian.PutUint32(ip[0:], 6<<28|uint32(tos)<<20)
		binary.BigEndian.PutUint16(ip[4:], uint16(ulen))
		ip[6] = 17
		ip[7] = 64
		copy(ip[8:24], s[:])
		copy(ip[24:40], d[:])
		sum = sumBytes(0, s[:])
		sum = sumBytes(sum, d[:])
		sum += 17 + uint32(ulen)
	}
	sum = sumBytes(sum, b[hl-8:])
	c := ^fold(sum)
	if c == 0 {
		c = 0xffff
	}
	binary.BigEndian.PutUint16(udp[6:], c)
	capt := total
	if p.snap > 0 && capt > hl+p.snap {
		capt = hl + p.snap
	}
	p.record(ts, b[:capt], total)
}

// writeRaw records IP packet b as it is, keeping its headers and snap
// bytes of its transport payload (all if snap is 0).
func (p *pcapFile) writeRaw(ts time.Time, b []byte) {
	if p == nil || p.err != nil {
		return
	}
	capt := len(b)
	if p.snap > 0 {
		capt = min(capt, payloadStart(b)+p.snap)
	}
	p.record(ts, b[:capt], len(b))
}

// payloadStart returns the offset of IP packet b's transport payload: after
// the IP header (with options or extension headers) and the TCP (data
// offset, RFC 9293 §3.1) or UDP header, at most maxRawHeaders; len(b) if b
// does not parse.
func payloadStart(b []byte) int {
	in, err := ippkt.Parse(b)
	if err != nil {
		return len(b)
	}
	off := in.Offset
	switch {
	case in.Fragment:
	case in.Proto == ippkt.ProtoTCP && off+13 <= len(b):
		off += int(b[off+12]>>4) * 4
	case in.Proto == ippkt.ProtoUDP || in.Proto == ippkt.ProtoUDPLite:
		off += 8
	}
	return min(off, len(b), maxRawHeaders)
}

func sumBytes(sum uint32, b []byte) uint32 {
	n := len(b) &^ 1
	for i := 0; i < n; i += 2 {
		sum += uint32(b[i])<<8 | uint32(b[i+1])
	}
	if len(b)&1 == 1 {
		sum += uint32(b[len(b)-1]) << 8
	}
	return sum
}

func fold(sum uint32) uint16 {
	for sum>>16 != 0 {
		sum = sum&0xffff + sum>>16
	}
	return uint16(sum)
}

func (p *pcapFile) close() error {
	if p == nil {
		return nil
	}
	err := p.bw.Flush()
	if cerr := p.f.Close(); err == nil {
		err = cerr
	}
	if p.err != nil {
		return p.err
	}
	return err
}
