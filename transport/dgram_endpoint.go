package transport

import (
	"encoding/binary"
	"net/netip"

	"cclab/clock"
	"cclab/ecn"
)

// DgramEndpointConfig is the datagram-mode part of EndpointConfig.
type DgramEndpointConfig struct {
	// Defaults for DialDgram and for accepted datagram connections.
	Defaults DgramConfig
	// Configure, if set, is called for each incoming datagram connection
	// with the client's request before it is built.
	Configure func(request []byte, cfg *DgramConfig)
}

// dgramEndpoint is an Endpoint's datagram-mode state: its connections are
// kept apart from the stream connections but share the CID space, the
// handshake and the socket (one receiver port serves both modes).
type dgramEndpoint struct {
	sch       scheduler[*DgramConn] // datagram connections, in creation order, with their timers (sched.go)
	byCID     map[uint64]*DgramConn
	byInitial map[uint64]*DgramConn
	acceptQ   fifo[*DgramConn]
	tombInit  expiring[struct{}] // removed server conns by Initial DCID (as Endpoint.tombInit)
	pkt       dgramPacket
}

func (d *dgramEndpoint) init() {
	if d.byCID == nil {
		d.byCID = map[uint64]*DgramConn{}
		d.byInitial = map[uint64]*DgramConn{}
	}
}

// dgramConfig completes cfg with the endpoint and package defaults.
func (e *Endpoint) dgramConfig(cfg DgramConfig) DgramConfig {
	d := e.cfg.Dgram.Defaults
	d.fill(DefaultDgramConfig())
	cfg.fill(d)
	if cfg.Sink == nil {
		cfg.Sink = e.cfg.Sink
	}
	return cfg
}

// DialDgram opens a datagram-mode connection to peer. The Initial goes out
// on the next Transmit; Send works once Established.
func (e *Endpoint) DialDgram(now clock.Time, peer netip.AddrPort, cfg DgramConfig) (*DgramConn, error) {
	cfg = e.dgramConfig(cfg)
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	e.dg.init()
	c := newDgramConn(e, cfg, now)
	c.dial(peer, cfg.Request)
	if cfg.PSK != nil {
		c.auth = newClientAuth(cfg.PSK, cfg.PSKName, cfg.Encrypt, e.entropy())
		e.authUsed = true
	}
	e.dg.sch.add(c)
	e.dgUsed = true
	e.dg.byCID[c.localCID] = c
	e.opened(&c.connCommon)
	return c, nil
}

// AcceptDgram returns the next newly accepted datagram connection, or nil.
func (e *Endpoint) AcceptDgram() *DgramConn {
	return e.dg.acceptQ.pop()
}

// DgramConns returns the live datagram connections (do not modify).
func (e *Endpoint) DgramConns() []*DgramConn { return e.dg.sch.conns }

// dgInitial accepts a datagram-mode connection (an Initial with hsDgram).
func (e *Endpoint) dgInitial(now clock.Time, from netip.AddrPort, p *packet, size int) {
	e.dg.init()
	if c := e.dg.byInitial[p.dcid]; c != nil {
		if c.id != p.scid || c.done {
			e.reject(RejectUnexpected)
			return
		}
		c.touch()
		c.initialAgain(from, e.tokenOK(now, from, p))
		return
	}
	if _, ok := e.dg.tombInit.get(p.dcid, now); ok {
		e.reject(RejectOldPacket)
		return
	}
	kind := e.addressValid(now, from, p, size)
	if kind == tokenNone {
		return
	}
	cfg := e.dgramConfig(DgramConfig{})
	if e.cfg.Dgram.Configure != nil {
		e.cfg.Dgram.Configure(p.request, &cfg)
		cfg = e.dgramConfig(cfg)
	}
	if err := cfg.Validate(); err != nil {
		e.reject(RejectConfig)
		return
	}
	a, ok := e.authInitial(from, p, e.rx, cfg.PSK)
	if !ok || !e.room(now, from, p, size, kind) {
		return
	}
	c := newDgramConn(e, cfg, now)
	c.accept(from, p, cfg.MaxDatagram, cfg.ECN)
	c.setStateless(kind)
	c.keyServer(a, p)
	c.tsHi = p.ts
	if err := c.establish(now, e.rand.Uint64(), e.rand.Uint64()); err != nil {
		e.reject(RejectConfig)
		return
	}
	c.sendAccept = 1
	e.dg.sch.add(c)
	e.dgUsed = true
	e.dg.byCID[c.localCID] = c
	e.dg.byInitial[c.initialDCID] = c
	e.dg.acceptQ.push(c)
	e.opened(&c.connCommon)
}

// dgAccept hands an Accept to a datagram connection; false if none has
// that CID.
func (e *Endpoint) dgAccept(now clock.Time, p *packet) bool {
	c := e.dg.byCID[p.dcid]
	if c == nil {
		return false
	}
	c.touch()
	if r := c.onAccept(now, p); r != RejectNone {
		e.reject(r)
	}
	return true
}

// dgReceive handles a datagram-mode packet (type 4).
func (e *Endpoint) dgReceive(now clock.Time, from netip.AddrPort, ce ecn.Codepoint, b []byte) {
	if len(b) < 2+cidLen {
		e.reject(RejectTooShort)
		return
	}
	// One lookup: the dcid is where decodeDgram reads it.
	c := e.dg.byCID[binary.BigEndian.Uint64(b[2:])]
	if c != nil && c.auth != nil && c.auth.keyed && b[0] == WireVersion {
		if b = e.open(c.auth, b); b == nil {
			return
		}
	}
	p := &e.dg.pkt
	if r := decodeDgram(b, p); r != RejectNone {
		e.reject(r)
		return
	}
	if c == nil {
		e.reject(RejectUnknownCID)
		e.statelessReset(now, from, p.dcid, len(b))
		return
	}
	c.touch()
	if r := c.onPacket(now, from, ce, p); r != RejectNone {
		e.reject(r)
	}
}

// dgTransmit lets the datagram connections take turns at Transmit.
func (e *Endpoint) dgTransmit(now clock.Time, buf []byte) (n int, to netip.AddrPort, cp ecn.Codepoint) {
	s := &e.dg.sch
	s.markDue(now)
	for i := s.next(s.rr); i >= 0; i = s.next(i + 1) {
		c := s.conns[i]
		s.touch(&c.sched)
		if n, to = c.pathTransmit(buf); n > 0 {
			n = c.sealPath(buf, n)
			s.rr = i + 1
			return n, to, ecn.NotECT
		}
		if n = c.pmtuTransmit(now, buf); n > 0 { // a size probe, sealed (dgram_pmtu.go)
			s.rr = i + 1
			return n, c.peer, ecn.NotECT
		}
		if n, cp = c.transmit(now, buf); n > 0 {
			n = c.sealOut(buf, n)
			s.rr = i + 1
			return n, c.peer, cp
		}
		s.idle(&c.sched)
	}
	return 0, netip.AddrPort{}, ecn.NotECT
}

// dgOnDeadline runs the datagram connections' timers and removes finished
// ones after their drain period.
func (e *Endpoint) dgOnDeadline(now clock.Time) {
	removed := false
	for _, c := range e.dg.sch.dueNow(now) {
		c.onDeadline(now)
		e.dg.sch.touch(&c.sched)
		if c.done && !c.resetDue && !now.Before(c.drainAt) {
			c.removed, removed = true, true
			delete(e.dg.byCID, c.localCID)
			if c.server {
				delete(e.dg.byInitial, c.initialDCID)
				e.dg.tombInit.put(c.initialDCID, struct{}{}, now.Add(c.cfg.IdleTimeout))
			}
			e.closed(&c.connCommon)
		}
	}
	if removed {
		e.dg.sch.compact(func(c *DgramConn) bool { return c.removed })
	}
	e.dg.tombInit.sweep(now)
}
