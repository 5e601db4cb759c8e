package transport

import (
	"cclab/clock"
	"cclab/ecn"
	"cclab/event"
)

// --- sending: the datagram for the driver (rules: dgram_sender.go) ---------

// header fills c.out's common fields for a new packet.
func (c *DgramConn) header(now clock.Time, flags uint8) {
	c.out = dgramPacket{dcid: c.peerCID, flags: flags, seq: c.seq, ts: c.tsNow(now)}
	if c.vec.any {
		c.out.tsecr = c.tsHi
	}
	if c.ackAckDue {
		c.out.flags |= dflagACKACK
		c.out.ackAck = c.ackAck
	}
}

// transmit writes this connection's next datagram into buf: a RESET,
// a handshake packet, data (with a piggybacked ACK), a CLOSE, or an ACK or
// PING, the first that is due.
func (c *DgramConn) transmit(now clock.Time, buf []byte) (int, ecn.Codepoint) {
	c.lastNow = now
	if c.resetDue && c.peerCID != 0 && len(buf) >= dgramFixed+8 {
		return c.transmitReset(now, buf), ecn.NotECT
	}
	if c.done {
		return 0, ecn.NotECT
	}
	if !c.established || c.sendAccept > 0 {
		return c.transmitHandshake(now, buf), ecn.NotECT
	}
	if !c.validated || len(buf) < c.maxDatagram {
		return 0, ecn.NotECT
	}
	c.generate(now, now)
	if c.canSend(now) && !(c.closeWanted && c.closeSent > 0) {
		if n, cp := c.transmitData(now, buf); n > 0 {
			return n, cp
		}
	}
	if c.closeWanted && c.sq.n == 0 && c.closeAt == clock.Never && c.closeSent < dgramCloseTries {
		return c.transmitClose(now, buf), ecn.NotECT
	}
	if c.ackNow || c.pingDue {
		return c.transmitAck(now, buf), ecn.NotECT
	}
	return 0, ecn.NotECT
}

// transmitReset writes the RESET that answers a CLOSE or ends an abort.
func (c *DgramConn) transmitReset(now clock.Time, buf []byte) int {
	c.resetDue = false
	c.header(now, dflagRESET)
	c.out.flags &^= dflagACKACK
	c.out.closeCode = c.closeCode
	c.seq++
	c.stats.PacketsSent++
	return encodeDgramHeader(buf, &c.out)
}

// transmitHandshake writes a due Initial (client, padded to MaxDatagram) or
// Accept (server), or nothing (0).
func (c *DgramConn) transmitHandshake(now clock.Time, buf []byte) int {
	if !c.established {
		if !c.initialDue || len(buf) < c.cfg.MaxDatagram {
			return 0
		}
		c.initialDue = false
		p := packet{typ: typeInitial, dcid: c.initialDCID, scid: c.localCID, ts: c.tsNow(now),
			maxDatagram: uint64(c.cfg.MaxDatagram), recvWindow: uint64(c.cfg.RecvQueue), hsFlags: hsDgram | hsReset, request: c.request, token: c.token}
		if c.cfg.ECN {
			p.hsFlags |= hsECN
		}
		c.hsAt = now.Add(c.rtt.current())
		return encodeInitial(buf, &p, c.cfg.MaxDatagram)
	}
	c.sendAccept--
	c.acceptTS = c.tsNow(now)
	p := packet{typ: typeAccept, dcid: c.peerCID, scid: c.localCID, ts: c.acceptTS, tsecr: c.tsHi,
		maxDatagram: uint64(c.cfg.MaxDatagram), recvWindow: uint64(c.cfg.RecvQueue), hsFlags: hsDgram}
	if c.ecnOn {
		p.hsFlags |= hsECN
	}
	c.acceptReset(&p)
	return encodeAccept(buf, &p)
}

// transmitData writes a data packet (the send queue's oldest datagram, or
// the greedy source's next) with a piggybacked ACK if one is due, or
// nothing (0) when there is no data. The window has room (canSend).
func (c *DgramConn) transmitData(now clock.Time, buf []byte) (int, ecn.Codepoint) {
	if !c.hasData() {
		c.rsamp.markAppLimited(c.pipe * c.mss) // room in the window, nothing to send
		return 0, ecn.NotECT
	}
	c.header(now, dflagDATA|dflagRATIO)
	c.out.ackRatio = uint64(c.ratio)
	c.tfrcDataSection()
	c.tfrcReport(now)
	if c.ackDue {
		c.addAck(now, c.payloadMax(dgramHeaderLen(&c.out))-c.mss-12)
	}
	h := dgramHeaderLen(&c.out)
	hn := encodeDgramHeader(buf, &c.out)
	if hn != h {
		panic("transport: datagram header length mismatch")
	}
	room := buf[hn : hn+c.payloadMax(hn)]
	n := -1
	if c.sq.n > 0 {
		n = copy(room, c.sq.front())
		c.sq.pop()
	} else if c.src != nil {
		n = c.src.Next(now, room[:min(len(room), c.mss)])
		if n >= 0 {
			c.stats.Generated++
		}
	}
	if n < 0 {
		return 0, ecn.NotECT // the source had nothing: the packet is not sent
	}
	c.dataSent(now, hn, n)
	cp := ecn.NotECT
	if c.ecnOn {
		cp = ecn.ECT0
	}
	return hn + n, cp
}

// dataSent accounts for a data packet of an hn-byte header and n payload
// bytes just written: the ACK it carries, its record, the window, the
// counters, the controller, TFRC, the RTO timer and the event.
func (c *DgramConn) dataSent(now clock.Time, hn, n int) {
	if c.out.flags&dflagACK != 0 {
		c.ackSent()
	}
	c.record(now, n, true)
	c.rsamp.onSent(now, &c.ring[(c.seq-1)&uint64(len(c.ring)-1)].rate, c.pipe*c.mss)
	c.pipe++
	c.stats.DataSent++
	c.stats.BytesSent += uint64(n)
	c.stats.PacketsSent++
	if c.cc != nil {
		c.cc.OnSent(now, c.mss, c.pipe*c.mss)
	}
	c.tfrcSent(now, hn+n)
	if c.rtoAt == clock.Never {
		c.rtoAt = now.Add(c.rtt.current())
	}
	c.emit(event.Event{Time: now, Kind: event.PacketSent, Seq: c.out.seq, Bytes: n})
}

// transmitClose writes a CLOSE (with an ACK if one fits), repeated with
// backoff until the peer's RESET or dgramCloseTries.
func (c *DgramConn) transmitClose(now clock.Time, buf []byte) int {
	c.header(now, dflagCLOSE)
	c.addAck(now, c.payloadMax(dgramHeaderLen(&c.out))-12)
	if c.out.flags&dflagACK != 0 {
		c.ackSent()
	}
	n := encodeDgramHeader(buf, &c.out)
	c.record(now, 0, false)
	c.closeSent++
	c.closeAt = now.Add(c.rtt.current() << min(c.closeSent-1, 6))
	c.stats.PacketsSent++
	return n
}

// transmitAck writes an ACK-only packet or a PING, or nothing (0) when the
// Ack Vector has nothing to report and no PING is due.
func (c *DgramConn) transmitAck(now clock.Time, buf []byte) int {
	flags := uint8(0)
	if c.pingDue {
		flags = dflagPING
		c.pingDue = false
	}
	c.header(now, flags)
	c.tfrcReport(now)
	if c.ackDue || c.ackNow {
		c.addAck(now, c.payloadMax(dgramHeaderLen(&c.out))-12)
	}
	if c.out.flags&(dflagACK|dflagPING) == 0 {
		c.ackNow = false
		return 0
	}
	n := encodeDgramHeader(buf, &c.out)
	if c.out.flags&dflagACK != 0 {
		c.ackSent()
	}
	c.record(now, 0, false)
	c.stats.PacketsSent++
	return n
}
