package transport

// Datagram-mode packets (docs/wire.md "Datagram mode"): after an
// Initial/Accept handshake with the hsDgram bit, both sides send packets of
// type 4 (Data), each with its own sequence number (RFC 4340 §7), never
// retransmitted.

// typeDgram is the packet type of every datagram-mode packet after the
// handshake.
const typeDgram packetType = 4

// Datagram packet flag bits.
const (
	dflagACK    = 0x01 // ACK section: ack_no, ack_delay, Ack Vector
	dflagDATA   = 0x02 // the rest of the packet is an application datagram
	dflagACKACK = 0x04 // ACKACK section: the highest ACK-carrying packet received from the peer
	dflagRATIO  = 0x08 // RATIO section: the Ack Ratio the peer must use
	dflagPING   = 0x10 // ack-eliciting, no data (address validation)
	dflagCLOSE  = 0x20 // close request (RFC 4340 §8.3 Close)
	dflagRESET  = 0x40 // connection ended (RFC 4340 §8.3 Reset): answers CLOSE, or aborts
	dflagTFRC   = 0x80 // TFRC section (CCID3): the sender's RTT estimate, and the receiver's report if its low bit is set
	dflagsKnown = 0xff
)

const (
	// dgramFixed is the fixed part of a datagram packet header, bytes:
	// version, type, dcid, flags, ts, tsecr (the seq varint is extra), laid
	// out as a short packet's (putHead).
	dgramFixed = shortFixed
	// maxDgramOverhead is the largest datagram header without an ACK
	// section, bytes: fixed part, 8-byte seq, ACKACK and RATIO varints.
	maxDgramOverhead = dgramFixed + 8 + 8 + 4
	// MaxAckRatio bounds the Ack Ratio on the wire, packets.
	MaxAckRatio = 1 << 16
)

// dgramPacket is a decoded datagram-mode packet. data points into the
// received buffer.
type dgramPacket struct {
	dcid  uint64
	flags uint8
	seq   uint64 // sequence number, per direction from 0, +1 per packet (RFC 4340 §7.1)
	ts    uint32 // sender timestamp, µs
	tsecr uint32 // echo of the ts of the packet ackNo (0: none)

	// ACK section
	ackNo    uint64 // Acknowledgement Number: highest sequence number received (RFC 4340 §5.1)
	ackDelay uint64 // µs between receiving ackNo and sending this ACK
	vec      []byte // Ack Vector (RFC 4340 §11.4)

	ackAck   uint64 // ACKACK section
	ackRatio uint64 // RATIO section, packets

	// TFRC section (RFC 5348 §3.2, as RFC 4342 §8 options): a varint
	// rtt<<1 | fb, then, if fb, the report's two varints.
	tfrcRTT uint64 // the sender's RTT estimate R, µs (RFC 5348 §3.2.1; 0: none yet)
	tfrcFb  bool   // a receiver report follows (RFC 5348 §3.2.2)
	xRecv   uint64 // receive rate X_recv since the last report, bytes/s (RFC 4342 §8.3)
	invP    uint64 // ceil(1/p), the Loss Event Rate option of RFC 4342 §8.5; 0: no loss event yet

	closeCode uint64 // RESET: why the connection ended (the stream CLOSE's close_code; RFC 4340 §5.6 Reset Code)

	data []byte // DATA: the application datagram (may be empty)
}

// decodeDgram parses a datagram-mode packet (b[1] == typeDgram, version
// already checked by the caller or checked here). It never panics and never
// allocates.
func decodeDgram(b []byte, p *dgramPacket) RejectReason {
	if len(b) < 2+cidLen {
		return RejectTooShort
	}
	if b[0] != WireVersion {
		return RejectVersion
	}
	if packetType(b[1]) != typeDgram {
		return RejectType
	}
	*p = dgramPacket{}
	r := reader{b: b[2:]}
	p.dcid = r.u64()
	p.flags, p.seq, p.ts, p.tsecr = r.head()
	if r.bad {
		return RejectTruncated
	}
	if p.flags&^dflagsKnown != 0 {
		return RejectFlags
	}
	if p.flags&dflagACK != 0 {
		p.ackNo = r.varint()
		p.ackDelay = r.varint()
		n := r.varint()
		if r.bad {
			return RejectTruncated
		}
		if n == 0 || n > MaxAckVector {
			return RejectSACK
		}
		p.vec = r.bytes(n)
		if r.bad {
			return RejectTruncated
		}
		if !DecodeAckVector(p.ackNo, p.vec, nil) {
			return RejectSACK
		}
	}
	if p.flags&dflagACKACK != 0 {
		p.ackAck = r.varint()
	}
	if p.flags&dflagRATIO != 0 {
		p.ackRatio = r.varint()
		if !r.bad && (p.ackRatio == 0 || p.ackRatio > MaxAckRatio) {
			return RejectParams
		}
	}
	if p.flags&dflagTFRC != 0 {
		v := r.varint()
		p.tfrcRTT, p.tfrcFb = v>>1, v&1 != 0
		if p.tfrcFb {
			p.xRecv = r.varint()
			p.invP = r.varint()
		}
	}
	if p.flags&dflagRESET != 0 {
		p.closeCode = r.varint()
	}
	if r.bad {
		return RejectTruncated
	}
	if p.flags&dflagDATA != 0 {
		p.data = r.rest()
	}
	if r.left() != 0 {
		return RejectTrailing
	}
	return RejectNone
}

// dgramHeaderLen returns the length of p's header and sections, bytes.
func dgramHeaderLen(p *dgramPacket) int {
	n := dgramFixed + varintLen(p.seq)
	if p.flags&dflagACK != 0 {
		n += varintLen(p.ackNo) + varintLen(p.ackDelay) + varintLen(uint64(len(p.vec))) + len(p.vec)
	}
	if p.flags&dflagACKACK != 0 {
		n += varintLen(p.ackAck)
	}
	if p.flags&dflagRATIO != 0 {
		n += varintLen(p.ackRatio)
	}
	if p.flags&dflagTFRC != 0 {
		n += varintLen(tfrcWord(p))
		if p.tfrcFb {
			n += varintLen(p.xRecv) + varintLen(p.invP)
		}
	}
	if p.flags&dflagRESET != 0 {
		n += varintLen(p.closeCode)
	}
	return n
}

// tfrcWord is the first varint of the TFRC section: rtt<<1 | fb.
func tfrcWord(p *dgramPacket) uint64 {
	w := p.tfrcRTT << 1
	if p.tfrcFb {
		w |= 1
	}
	return w
}

// encodeDgramHeader writes p's header and sections (copying p.vec, not
// p.data) into b and returns the length; the payload goes after it.
func encodeDgramHeader(b []byte, p *dgramPacket) int {
	n := putHead(b, typeDgram, p.dcid, p.flags, p.seq, p.ts, p.tsecr)
	if p.flags&dflagACK != 0 {
		n += putVarint(b[n:], p.ackNo)
		n += putVarint(b[n:], p.ackDelay)
		n += putVarint(b[n:], uint64(len(p.vec)))
		n += copy(b[n:], p.vec)
	}
	if p.flags&dflagACKACK != 0 {
		n += putVarint(b[n:], p.ackAck)
	}
	if p.flags&dflagRATIO != 0 {
		n += putVarint(b[n:], p.ackRatio)
	}
	if p.flags&dflagTFRC != 0 {
		n += putVarint(b[n:], tfrcWord(p))
		if p.tfrcFb {
			n += putVarint(b[n:], p.xRecv)
			n += putVarint(b[n:], p.invP)
		}
	}
	if p.flags&dflagRESET != 0 {
		n += putVarint(b[n:], p.closeCode)
	}
	return n
}

// encodeDgram encodes p with its payload into b and returns the length.
// Used by tests and fuzzing.
func encodeDgram(b []byte, p *dgramPacket) int {
	n := encodeDgramHeader(b, p)
	if p.flags&dflagDATA != 0 {
		n += copy(b[n:], p.data)
	}
	return n
}
