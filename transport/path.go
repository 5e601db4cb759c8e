package transport

import (
	"encoding/binary"
	"io"
	"net/netip"
	"time"

	"cclab/clock"
)

// Path validation on migration (RFC 9000 §8.2, §9): a packet that passes
// every check but comes from an address other than the connection's
// (validated) peer is processed, but does not move the peer. The connection
// sends a PATH_CHALLENGE with 8 unpredictable bytes (EndpointConfig.Entropy)
// to the new address, and moves there only when the matching PATH_RESPONSE
// arrives from that address: an attacker who spoofs a source address cannot
// answer, so no data ever goes to an unvalidated address (the issue's
// reflection through reverse mode, 1 spoofed packet -> a 50 MB flow). Before
// validation the new address gets nothing but challenges, and no more bytes
// than it sent (amplification factor <= 1; RFC 9000 §8.2.1 allows 3); a
// challenge is repeated at most once per RTO while packets keep arriving
// from the new address, so no timer is needed. NAT rebinding (the client's
// address changes for good) costs one round trip before the connection
// sends to the new address.
//
// Path packets (type 6) are mode-independent: stream and datagram
// connections share them (docs/wire.md "Path").

// typePath is the packet type of PATH_CHALLENGE and PATH_RESPONSE.
const typePath packetType = 6

// pathLen is the length of a Path packet, bytes: version, type, dcid,
// path_type, 8 bytes of data.
const pathLen = 2 + cidLen + 1 + 8

// pathState is a connection's path validation.
type pathState struct {
	probe    netip.AddrPort // address being validated (invalid: none)
	data     uint64         // challenge data sent to probe
	credit   int            // bytes we may still send to probe: what it sent us (1x)
	nextAt   clock.Time     // earliest instant of the next challenge
	due      bool           // a challenge is to be sent
	resp     bool           // a response is to be sent
	respTo   netip.AddrPort // where the challenge came from
	respData uint64
	respMax  int    // the response may not exceed the challenge, bytes
	pmtuAck  bool   // a DPLPMTUD probe from the peer is to be acknowledged (dplpmtud.go)
	pmtuID   uint64 // the probe's data

	challenges uint64 // challenges sent
	rebinds    uint64 // peer moves after validation
}

// fromNewPath records a packet of size bytes that passed every check and
// came from `from`: from an address other than the peer's it starts (or
// feeds) the validation of that address. rto paces the challenges.
func (h *connCommon) fromNewPath(now clock.Time, from netip.AddrPort, size int, rto time.Duration) {
	if from == h.peer || !h.validated {
		return
	}
	ps := &h.path
	if from != ps.probe {
		var b [8]byte
		if _, err := io.ReadFull(h.ep.entropy(), b[:]); err != nil {
			panic("transport: EndpointConfig.Entropy failed: " + err.Error())
		}
		*ps = pathState{probe: from, data: binary.BigEndian.Uint64(b[:]), nextAt: now, challenges: ps.challenges, rebinds: ps.rebinds}
	}
	ps.credit = min(ps.credit+size, 1<<20)
	if !now.Before(ps.nextAt) {
		ps.due = true
		ps.nextAt = now.Add(rto)
	}
}

// onPath handles a Path packet p of size bytes from `from` at now.
func (h *connCommon) onPath(now clock.Time, from netip.AddrPort, p *packet, size int) RejectReason {
	ps := &h.path
	switch p.pathType {
	case pathPMTUProbe, pathPMTUAck:
		return h.onPMTUPath(now, from, p)
	case pathChallenge:
		ps.resp, ps.respTo, ps.respData, ps.respMax = true, from, p.pathData, size
	case pathResponse:
		if !ps.probe.IsValid() || from != ps.probe || p.pathData != ps.data {
			return RejectUnexpected
		}
		h.peer = from
		ps.rebinds++
		*ps = pathState{challenges: ps.challenges, rebinds: ps.rebinds}
	}
	return RejectNone
}

// pathTransmit writes a due Path packet into buf and returns its length
// and destination (0: none due). It is inlined into Transmit's loops: with
// no Path response or challenge pending (nearly always) it costs no call.
func (h *connCommon) pathTransmit(buf []byte) (n int, to netip.AddrPort) {
	if h.path.resp || h.path.due || h.path.pmtuAck {
		n, to = h.pathSend(buf)
	}
	return n, to
}

// pathSend is pathTransmit with a Path packet pending.
func (h *connCommon) pathSend(buf []byte) (int, netip.AddrPort) {
	ps := &h.path
	if ps.pmtuAck {
		ps.pmtuAck = false
		if h.peerCID != 0 {
			return encodePath(buf, h.peerCID, pathPMTUAck, ps.pmtuID), h.peer
		}
	}
	if ps.resp {
		ps.resp = false
		if h.pathSize() <= ps.respMax && h.peerCID != 0 {
			return encodePath(buf, h.peerCID, pathResponse, ps.respData), ps.respTo
		}
	}
	if ps.due && h.peerCID != 0 {
		ps.due = false
		if sz := h.pathSize(); ps.credit >= sz {
			ps.credit -= sz
			ps.challenges++
			return encodePath(buf, h.peerCID, pathChallenge, ps.data), ps.probe
		}
	}
	return 0, netip.AddrPort{}
}

// encodePath writes a Path packet into b and returns its length.
func encodePath(b []byte, dcid uint64, typ uint8, data uint64) int {
	b[0] = WireVersion
	b[1] = byte(typePath)
	binary.BigEndian.PutUint64(b[2:], dcid)
	b[10] = typ
	binary.BigEndian.PutUint64(b[11:], data)
	return pathLen
}
