package transport

import "encoding/binary"

// Wire format constants (docs/wire.md).
const (
	// WireVersion is the only wire version this package speaks; it is the
	// first byte of every datagram. Version 1 had no Retry and no path
	// validation (docs/wire.md "Versions"); its datagrams are rejected.
	WireVersion = 2
	// MaxSACKBlocks is the number of SACK blocks an ACK carries at most
	// (RFC 2018 allows 3 with TCP timestamps; we have room for 4).
	MaxSACKBlocks = 4
	// MinDatagram is the smallest MaxDatagram a peer may declare, bytes.
	MinDatagram = 512
	// MaxUDPPayload is the largest UDP payload, bytes: the 16-bit UDP length
	// (RFC 768) minus the 8-byte UDP header.
	MaxUDPPayload = 65527
	// MaxRequest is the largest opaque application request an Initial
	// carries, bytes.
	MaxRequest = 256
	// MaxToken is the largest address-validation token an Initial or a
	// Retry carries, bytes.
	MaxToken = 64
	// MaxStreamOffset bounds every stream offset and final size: the varint
	// maximum 2^62-1 (RFC 9000 §16).
	MaxStreamOffset = MaxVarint
	// cidLen is the length of a connection ID on the wire, bytes.
	cidLen = 8
)

// packetType is the second byte of every datagram.
type packetType uint8

// Packet types.
const (
	typeInitial packetType = 1 // client -> server, opens a connection, padded
	typeAccept  packetType = 2 // server -> client, answers an Initial
	typeShort   packetType = 3 // everything after the handshake
	typeRetry   packetType = 5 // server -> client: an address-validation token, answers an Initial without a valid one (4 is typeDgram)
	typeReset   packetType = 7 // server -> client: stateless reset (reset.go; 6 is typePath)
)

// Short-packet flag bits.
const (
	flagACK    = 0x01 // ACK section present
	flagDATA   = 0x02 // DATA section present with a non-empty payload
	flagFIN    = 0x04 // the stream ends after this packet's payload (DATA section present)
	flagPING   = 0x08 // ack-eliciting without data
	flagECE    = 0x10 // ECN-Echo (RFC 3168 §6.1.3)
	flagCWR    = 0x20 // Congestion Window Reduced (RFC 3168 §6.1.2)
	flagCLOSE  = 0x40 // abort: CLOSE section present
	flagsKnown = 0x7f
)

// Path packet types (path.go; RFC 9000 §19.17-18; dplpmtud.go).
const (
	pathChallenge = 1
	pathResponse  = 2
	pathPMTUProbe = 3 // DPLPMTUD probe (RFC 8899 §4.1), padded to the size probed
	pathPMTUAck   = 4 // acknowledges the size probe whose data it echoes
)

// nBlocksDSACK is the bit of the ACK section's n_blocks byte that says a
// D-SACK block (RFC 2883) follows the SACK blocks.
const nBlocksDSACK = 0x80

// Handshake flag bits (Initial and Accept).
const (
	hsECN     = 0x01 // the sender is ECN-capable and wants ECN
	hsDgram   = 0x02 // datagram mode (dgram.go): the connection is a DgramConn, not a stream
	hsDSACK   = 0x04 // the sender of this handshake packet wants D-SACK blocks for the data it sends (RFC 2883)
	hsReset   = 0x08 // Initial: the client takes a stateless-reset token; Accept: the token follows hs_flags (reset.go)
	hsAuth    = 0x10 // authenticated connection (auth.go): the Initial's and the Accept's auth sections follow
	hsEncrypt = 0x20 // with hsAuth: the packets are encrypted too (Initial: asked; Accept: echoed)
	hsKnown   = 0x3f
)

// Fixed header sizes, bytes.
const (
	shortFixed   = 2 + cidLen + 1 + 4 + 4 // version, type, dcid, flags, ts, tsecr (pn varint extra)
	acceptFixed  = 2 + 2*cidLen + 4 + 4 + 1
	initialFixed = 2 + 2*cidLen + 4 + 1
)

// sackBlock is one SACK block [Start, End) in stream bytes.
type sackBlock struct{ Start, End uint64 }

// packet is a decoded datagram. Slices point into the received buffer.
type packet struct {
	typ   packetType
	dcid  uint64
	scid  uint64 // Initial, Accept
	flags uint8  // short packets
	pn    uint64 // short packets: packet number
	ts    uint32 // sender timestamp, µs
	tsecr uint32 // echoed timestamp (0: none)

	// handshake parameters (Initial, Accept)
	maxDatagram uint64
	recvWindow  uint64
	hsFlags     uint8
	request     []byte
	token       []byte              // Initial, Retry: address-validation token
	odcid       uint64              // Retry: the dcid of the Initial it answers
	resetTok    [resetTokenLen]byte // Accept with hsReset, Reset: the stateless-reset token (masked in an authenticated Accept)

	// auth section (Initial, Accept with hsAuth; auth.go)
	keyName []byte             // Initial: the pre-shared key's name
	nonce   [authNonceLen]byte // the sender's hello nonce
	hsTag   [hsTagLen]byte     // the handshake packet's tag
	authEnd int                // offset of hsTag in the datagram: the tag covers everything before it

	// ACK section
	cumAck   uint64
	window   uint64
	nBlocks  int
	blocks   [MaxSACKBlocks]sackBlock
	dsack    sackBlock // D-SACK block (RFC 2883), valid if hasDSACK
	hasDSACK bool      // the ACK section carries a D-SACK block (bit nBlocksDSACK of n_blocks)

	// CLOSE section
	closeCode uint64

	// Path packets
	pathType uint8
	pathData uint64

	// DATA section (present when flags has DATA or FIN)
	off  uint64
	data []byte
}

// setShort makes p a short packet with the given header fields and no
// sections. It sets every field a short packet uses (blocks beyond nBlocks
// excepted, which nothing reads) instead of zeroing the whole ~290-byte
// struct: the handshake and path fields must be zero already (p held a short
// packet or is new). The packet path reuses one packet for receiving
// (decodePacket) and one for sending (Endpoint.txPkt), shared by the
// endpoints that share a Buffers.
func (p *packet) setShort(dcid, pn uint64, ts, tsecr uint32) {
	p.typ, p.dcid, p.flags, p.pn, p.ts, p.tsecr = typeShort, dcid, 0, pn, ts, tsecr
	p.cumAck, p.window, p.nBlocks, p.hasDSACK, p.dsack = 0, 0, 0, false, sackBlock{}
	p.closeCode, p.off, p.data = 0, 0, nil
}

// hasData reports whether the DATA section is present.
func (p *packet) hasData() bool { return p.flags&(flagDATA|flagFIN) != 0 }

// reader is a bounds-checked cursor over a datagram. A read that does not
// fit marks it bad and consumes nothing. Its methods are small enough to be
// inlined into the decoders (an index, not a re-sliced b, moves).
type reader struct {
	b   []byte
	off int // bytes of b consumed
	bad bool
}

// left returns the number of bytes not yet consumed.
func (r *reader) left() int { return len(r.b) - r.off }

// rest consumes and returns every byte left.
func (r *reader) rest() []byte {
	v := r.b[r.off:]
	r.off = len(r.b)
	return v
}

// bytes returns the next n bytes, or nil (marking r bad) if fewer remain.
func (r *reader) bytes(n uint64) []byte {
	if uint64(r.left()) < n {
		r.bad = true
		return nil
	}
	i := r.off
	r.off += int(n)
	return r.b[i:r.off:r.off]
}

func (r *reader) u8() uint8 {
	if r.off >= len(r.b) {
		r.bad = true
		return 0
	}
	r.off++
	return r.b[r.off-1]
}

func (r *reader) u32() uint32 {
	if r.left() < 4 {
		r.bad = true
		return 0
	}
	r.off += 4
	return binary.BigEndian.Uint32(r.b[r.off-4:])
}

func (r *reader) u64() uint64 {
	if r.left() < 8 {
		r.bad = true
		return 0
	}
	r.off += 8
	return binary.BigEndian.Uint64(r.b[r.off-8:])
}

func (r *reader) varint() uint64 {
	v, off := varintAt(r.b, r.off)
	if off < 0 {
		r.bad = true
		return 0
	}
	r.off = off
	return v
}

// head reads the part of a short or datagram packet header after the dcid:
// flags, packet (sequence) number, ts, tsecr.
func (r *reader) head() (flags uint8, pn uint64, ts, tsecr uint32) {
	return r.u8(), r.varint(), r.u32(), r.u32()
}

// putHead writes the fixed header that short and datagram packets share
// (version, type, dcid, flags, packet or sequence number, ts, tsecr) into b
// and returns its length, bytes.
func putHead(b []byte, typ packetType, dcid uint64, flags uint8, pn uint64, ts, tsecr uint32) int {
	b[0] = WireVersion
	b[1] = byte(typ)
	binary.BigEndian.PutUint64(b[2:], dcid)
	b[10] = flags
	n := 11
	n += putVarint(b[n:], pn)
	binary.BigEndian.PutUint32(b[n:], ts)
	binary.BigEndian.PutUint32(b[n+4:], tsecr)
	return n + 8
}

// decodePacket parses b into p. It returns RejectNone or the reason b is
// malformed; it never panics and never allocates.
func decodePacket(b []byte, p *packet) RejectReason {
	if len(b) < 2+cidLen {
		return RejectTooShort
	}
	if b[0] != WireVersion {
		return RejectVersion
	}
	if packetType(b[1]) == typeShort && p.typ == typeShort {
		// p holds a short packet (the endpoint reuses one): only its
		// fields can be set, and decodeShort resets them (setShort).
		return decodeShort(b, p)
	}
	*p = packet{typ: packetType(b[1])}
	if p.typ == typeShort {
		return decodeShort(b, p)
	}
	r := reader{b: b[2:]}
	p.dcid = r.u64()
	switch p.typ {
	case typeInitial:
		p.scid = r.u64()
		p.ts = r.u32()
		p.maxDatagram, p.recvWindow, p.hsFlags = r.varint(), r.varint(), r.u8()
		n := r.varint()
		if r.bad {
			return RejectTruncated
		}
		if n > MaxRequest {
			return RejectRequestSize
		}
		p.request = r.bytes(n)
		p.token = r.token()
		if r.bad {
			return RejectTruncated
		}
		if p.token == nil {
			return RejectToken
		}
		if rr := checkHandshake(p); rr != RejectNone {
			return rr
		}
		if p.hsFlags&hsAuth != 0 {
			n := r.u8()
			if n > MaxKeyName {
				return RejectParams
			}
			p.keyName = r.bytes(uint64(n))
			if rr := r.authSection(p); rr != RejectNone {
				return rr
			}
		}
		if uint64(len(b)) < p.maxDatagram {
			return RejectInitialSize // not padded to the declared datagram size: no amplification budget
		}
		return RejectNone // the rest is padding
	case typeAccept:
		p.scid = r.u64()
		p.ts = r.u32()
		p.tsecr = r.u32()
		p.maxDatagram, p.recvWindow, p.hsFlags = r.varint(), r.varint(), r.u8()
		if r.bad {
			return RejectTruncated
		}
		if rr := checkHandshake(p); rr != RejectNone {
			return rr
		}
		if p.hsFlags&hsReset != 0 {
			if tok := r.bytes(resetTokenLen); tok != nil {
				copy(p.resetTok[:], tok)
			} else {
				return RejectTruncated
			}
		}
		if p.hsFlags&hsAuth != 0 {
			if rr := r.authSection(p); rr != RejectNone {
				return rr
			}
		}
		if r.left() != 0 {
			return RejectTrailing
		}
		return RejectNone
	case typeReset:
		// The token's first 8 bytes were read as the dcid.
		if len(b) != resetLen {
			return RejectTrailing
		}
		copy(p.resetTok[:], b[2:])
		return RejectNone
	case typeRetry:
		p.odcid = r.u64()
		p.token = r.token()
		if r.bad {
			return RejectTruncated
		}
		if len(p.token) == 0 {
			return RejectToken
		}
		if r.left() != 0 {
			return RejectTrailing
		}
		return RejectNone
	case typePath:
		p.pathType, p.pathData = r.u8(), r.u64()
		if r.bad {
			return RejectTruncated
		}
		if p.pathType < pathChallenge || p.pathType > pathPMTUAck {
			return RejectFlags
		}
		if r.left() != 0 && p.pathType != pathPMTUProbe {
			return RejectTrailing // (a size probe is padded)
		}
		return RejectNone
	}
	return RejectType
}

// decodeShort parses short packet b (its version, type and length up to
// the dcid checked) into p, whose fields other than a short packet's are
// zero (setShort resets those). The packet path's
// decoder: it reads b by a local offset (off < 0: truncated, which every
// later read keeps) instead of through reader, which the compiler keeps in
// memory.
func decodeShort(b []byte, p *packet) RejectReason {
	p.setShort(binary.BigEndian.Uint64(b[2:]), 0, 0, 0)
	off := 2 + cidLen
	if len(b) < off+2 {
		return RejectTruncated
	}
	p.flags = b[off]
	p.pn, off = varintAt(b, off+1)
	if off < 0 || len(b)-off < 8 {
		return RejectTruncated
	}
	p.ts = binary.BigEndian.Uint32(b[off:])
	p.tsecr = binary.BigEndian.Uint32(b[off+4:])
	off += 8
	if p.flags&^flagsKnown != 0 {
		return RejectFlags
	}
	if p.flags&flagACK != 0 {
		p.cumAck, off = varintAt(b, off)
		p.window, off = varintAt(b, off)
		if off < 0 || off >= len(b) {
			return RejectTruncated
		}
		nb := b[off]
		off++
		p.hasDSACK = nb&nBlocksDSACK != 0
		nb &^= nBlocksDSACK
		if nb > MaxSACKBlocks {
			return RejectSACK
		}
		for i := 0; i < int(nb); i++ {
			var gap, ln uint64
			gap, off = varintAt(b, off)
			ln, off = varintAt(b, off)
			if off < 0 {
				return RejectTruncated
			}
			if gap == 0 || ln == 0 || gap > MaxStreamOffset-p.cumAck || ln > MaxStreamOffset-p.cumAck-gap {
				return RejectSACK
			}
			s := p.cumAck + gap
			p.blocks[i] = sackBlock{Start: s, End: s + ln}
		}
		p.nBlocks = int(nb)
		if p.window > MaxStreamOffset-p.cumAck {
			return RejectRange
		}
		if p.hasDSACK {
			var s, ln uint64
			s, off = varintAt(b, off)
			ln, off = varintAt(b, off)
			if off < 0 {
				return RejectTruncated
			}
			if ln == 0 || s > MaxStreamOffset || ln > MaxStreamOffset-s {
				return RejectSACK
			}
			p.dsack = sackBlock{Start: s, End: s + ln}
		}
	}
	if p.flags&flagCLOSE != 0 {
		p.closeCode, off = varintAt(b, off)
		if off < 0 {
			return RejectTruncated
		}
	}
	if p.hasData() {
		p.off, off = varintAt(b, off)
		if off < 0 {
			return RejectTruncated
		}
		p.data = b[off:]
		off = len(b)
		if p.flags&flagDATA != 0 && len(p.data) == 0 {
			return RejectFlags
		}
		if p.flags&flagDATA == 0 && len(p.data) != 0 {
			return RejectFlags
		}
		if p.off > MaxStreamOffset || uint64(len(p.data)) > MaxStreamOffset-p.off {
			return RejectRange
		}
	}
	if off != len(b) {
		return RejectTrailing
	}
	return RejectNone
}

// checkHandshake validates the handshake fields of a decoded Initial or
// Accept: known flags, a datagram size and a receive window in range.
func checkHandshake(p *packet) RejectReason {
	if p.hsFlags&^hsKnown != 0 {
		return RejectFlags
	}
	if p.maxDatagram < MinDatagram || p.maxDatagram > MaxUDPPayload || p.recvWindow == 0 || p.recvWindow > MaxStreamOffset {
		return RejectParams
	}
	return RejectNone
}

// encodeInitial writes an Initial padded with zeros to size bytes into b
// (len(b) >= size) and returns size; with size 0 (Config.TCPHandshake)
// it is not padded and its encoded length is returned.
func encodeInitial(b []byte, p *packet, size int) int {
	b[0] = WireVersion
	b[1] = byte(typeInitial)
	binary.BigEndian.PutUint64(b[2:], p.dcid)
	binary.BigEndian.PutUint64(b[10:], p.scid)
	binary.BigEndian.PutUint32(b[18:], p.ts)
	n := 22
	n += putVarint(b[n:], p.maxDatagram)
	n += putVarint(b[n:], p.recvWindow)
	b[n] = p.hsFlags
	n++
	n += putVarint(b[n:], uint64(len(p.request)))
	n += copy(b[n:], p.request)
	n += putVarint(b[n:], uint64(len(p.token)))
	n += copy(b[n:], p.token)
	if p.hsFlags&hsAuth != 0 {
		b[n] = byte(len(p.keyName))
		n++
		n += copy(b[n:], p.keyName)
		n += copy(b[n:], p.nonce[:])
		n += copy(b[n:], p.hsTag[:])
	}
	if size <= n {
		return n
	}
	clear(b[n:size])
	return size
}

// retryLen returns the length of a Retry carrying token, bytes.
func retryLen(token []byte) int { return 2 + 2*cidLen + varintLen(uint64(len(token))) + len(token) }

// encodeRetry writes a Retry into b and returns its length.
func encodeRetry(b []byte, p *packet) int {
	b[0] = WireVersion
	b[1] = byte(typeRetry)
	binary.BigEndian.PutUint64(b[2:], p.dcid)
	binary.BigEndian.PutUint64(b[10:], p.odcid)
	n := 18
	n += putVarint(b[n:], uint64(len(p.token)))
	return n + copy(b[n:], p.token)
}

// encodeAccept writes an Accept into b and returns its length.
func encodeAccept(b []byte, p *packet) int {
	b[0] = WireVersion
	b[1] = byte(typeAccept)
	binary.BigEndian.PutUint64(b[2:], p.dcid)
	binary.BigEndian.PutUint64(b[10:], p.scid)
	binary.BigEndian.PutUint32(b[18:], p.ts)
	binary.BigEndian.PutUint32(b[22:], p.tsecr)
	n := 26
	n += putVarint(b[n:], p.maxDatagram)
	n += putVarint(b[n:], p.recvWindow)
	b[n] = p.hsFlags
	n++
	if p.hsFlags&hsReset != 0 {
		n += copy(b[n:], p.resetTok[:])
	}
	if p.hsFlags&hsAuth != 0 {
		n += copy(b[n:], p.nonce[:])
		n += copy(b[n:], p.hsTag[:])
	}
	return n
}

// ackSectionLen returns the length of p's ACK section, bytes.
func ackSectionLen(p *packet) int {
	n := varintLen(p.cumAck) + varintLen(p.window) + 1
	for i := 0; i < p.nBlocks; i++ {
		n += varintLen(p.blocks[i].Start-p.cumAck) + varintLen(p.blocks[i].End-p.blocks[i].Start)
	}
	if p.hasDSACK {
		n += varintLen(p.dsack.Start) + varintLen(p.dsack.End-p.dsack.Start)
	}
	return n
}

// shortHeaderLen returns the length of everything in a short packet before
// the payload, bytes.
func shortHeaderLen(p *packet) int {
	n := shortFixed + varintLen(p.pn)
	if p.flags&flagACK != 0 {
		n += ackSectionLen(p)
	}
	if p.flags&flagCLOSE != 0 {
		n += varintLen(p.closeCode)
	}
	if p.hasData() {
		n += varintLen(p.off)
	}
	return n
}

// encodeShortHeader writes a short packet's header and sections into b, up to
// where the payload starts, and returns that length. The caller writes the
// payload (p.data is not copied).
func encodeShortHeader(b []byte, p *packet) int {
	n := putHead(b, typeShort, p.dcid, p.flags, p.pn, p.ts, p.tsecr)
	if p.flags&flagACK != 0 {
		n += putVarint(b[n:], p.cumAck)
		n += putVarint(b[n:], p.window)
		b[n] = byte(p.nBlocks)
		if p.hasDSACK {
			b[n] |= nBlocksDSACK
		}
		n++
		for i := 0; i < p.nBlocks; i++ {
			n += putVarint(b[n:], p.blocks[i].Start-p.cumAck)
			n += putVarint(b[n:], p.blocks[i].End-p.blocks[i].Start)
		}
		if p.hasDSACK {
			n += putVarint(b[n:], p.dsack.Start)
			n += putVarint(b[n:], p.dsack.End-p.dsack.Start)
		}
	}
	if p.flags&flagCLOSE != 0 {
		n += putVarint(b[n:], p.closeCode)
	}
	if p.hasData() {
		n += putVarint(b[n:], p.off)
	}
	return n
}

// authSection reads a handshake packet's nonce and tag into p (the
// reader starts at the datagram's byte 2) and records where the tag is.
func (r *reader) authSection(p *packet) RejectReason {
	copy(p.nonce[:], r.bytes(authNonceLen))
	p.authEnd = 2 + r.off
	copy(p.hsTag[:], r.bytes(hsTagLen))
	if r.bad {
		return RejectTruncated
	}
	return RejectNone
}

// token reads a token (length varint, bytes): nil if truncated or longer
// than MaxToken (marking r bad only when truncated), else a possibly empty
// slice.
func (r *reader) token() []byte {
	n := r.varint()
	if r.bad || n > MaxToken {
		return nil
	}
	if t := r.bytes(n); t != nil {
		return t
	}
	return nil
}

// encodePacket encodes p (any type) into b, copying p.data for short
// packets; Initials are padded to p.maxDatagram. It returns the length. Used
// by tests and fuzzing; the conn encodes in place.
func encodePacket(b []byte, p *packet) int {
	switch p.typ {
	case typeInitial:
		return encodeInitial(b, p, int(p.maxDatagram))
	case typeAccept:
		return encodeAccept(b, p)
	case typeRetry:
		return encodeRetry(b, p)
	case typePath:
		return encodePath(b, p.dcid, p.pathType, p.pathData)
	case typeReset:
		return encodeReset(b, &p.resetTok)
	}
	n := encodeShortHeader(b, p)
	return n + copy(b[n:], p.data)
}
