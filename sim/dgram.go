package sim

import (
	"cclab/clock"
	"cclab/qdisc"
	"cclab/traffic"
	"cclab/transport"
)

// DgramPort is the UDP port of the datagram-mode transport endpoints the
// simulator runs for DgramFlows (a second endpoint per host, next to the
// stream endpoint on TransportPort).
const DgramPort = 4434

// Dgram adds datagram-mode flows (DCCP-like, transport.DgramConn: CCID2 or
// uncontrolled) to a Sim. Each host used by a datagram flow gets a
// transport.Endpoint on DgramPort, driven like the stream stack: Receive,
// Transmit, OnDeadline at Deadline; receivers read every datagram at once
// into the flow's DgramMeter.
type Dgram struct {
	Sim   *Sim
	Flows []*DgramFlow
	hosts map[int32]*dgramHost
	byID  map[uint64]*DgramFlow
}

// NewDgram returns the datagram-flow layer of s.
func NewDgram(s *Sim) *Dgram {
	return &Dgram{Sim: s, hosts: map[int32]*dgramHost{}, byID: map[uint64]*DgramFlow{}}
}

// DgramFlow is one datagram-mode connection from Src to Dst carrying
// stamped datagrams (transport.StampSource).
type DgramFlow struct {
	Name     string
	Index    int
	Src, Dst *Node
	Config   transport.DgramConfig
	Start    clock.Time
	Conn     *transport.DgramConn // sender side (nil before Start)
	Peer     *transport.DgramConn // receiver side (nil until accepted)
	Meter    transport.DgramMeter // at the receiver
	Err      error                // a failed Dial

	d     *Dgram
	timer Timer
}

// AddFlow adds a datagram flow from src to dst that starts at start; cfg
// is its transport configuration (CC "ccid2" by default, "none" with a
// Rate for an uncontrolled flow). The source is greedy unless cfg.Rate is set.
func (d *Dgram) AddFlow(name string, src, dst *Node, cfg transport.DgramConfig, start clock.Time) *DgramFlow {
	f := &DgramFlow{Name: name, Index: len(d.Flows), Src: src, Dst: dst, Config: cfg, Start: start, d: d}
	d.host(src)
	d.host(dst)
	d.Sim.E.InitTimer(&f.timer, f, 0)
	f.timer.Set(start)
	d.Flows = append(d.Flows, f)
	return f
}

// Fire dials the flow's connection.
func (f *DgramFlow) Fire(now clock.Time, _ uint64) {
	if f.Conn != nil {
		return
	}
	h := f.d.host(f.Src)
	c, err := h.ep.DialDgram(now, AddrPort(f.Dst.ID, DgramPort), f.Config)
	if err != nil {
		f.Err = err
		return
	}
	c.SetSource(now, &transport.StampSource{})
	f.Conn = c
	f.d.byID[c.ID()] = f
	h.service(now)
}

// dgramHost is a host's datagram endpoint; it passes other packets on to
// the host's stream stack.
type dgramHost struct {
	d     *Dgram
	node  *Node
	inner Receiver
	ep    *transport.Endpoint
	timer Timer
	recv  []*transport.DgramConn
	buf   []byte
}

func (d *Dgram) host(n *Node) *dgramHost {
	if h := d.hosts[n.ID]; h != nil {
		return h
	}
	s := d.Sim
	st := s.stack(n) // the stream stack first, so it does not replace us as the node's receiver
	h := &dgramHost{d: d, node: n, inner: st, buf: make([]byte, 64<<10)}
	h.ep = transport.NewEndpoint(transport.EndpointConfig{
		Server:  true,
		Sink:    s.Sink,
		Rand:    traffic.Stream(s.Net.Seed, "dgram-endpoint/"+n.Name),
		NoRetry: true, // no attacker on simulated paths: no Retry round trip
		Buffers: s.bufs,
	})
	s.E.InitTimer(&h.timer, h, 0)
	n.Receiver = h
	d.hosts[n.ID] = h
	return h
}

// Receive implements Receiver.
func (h *dgramHost) Receive(now clock.Time, p *qdisc.Packet) {
	m := h.d.Sim.Net.pool.Meta(p)
	if m.DstPort != DgramPort {
		h.inner.Receive(now, p)
		return
	}
	h.ep.Receive(now, AddrPort(m.Src, m.SrcPort), p.ECN, p.Buf)
	h.service(now)
}

// Fire runs the endpoint's timers.
func (h *dgramHost) Fire(now clock.Time, _ uint64) {
	h.ep.OnDeadline(now)
	h.service(now)
}

// service reads every received datagram, drains Transmit onto the network
// and re-arms the timer.
func (h *dgramHost) service(now clock.Time) {
	for c := h.ep.AcceptDgram(); c != nil; c = h.ep.AcceptDgram() {
		h.recv = append(h.recv, c)
		if f := h.d.byID[c.ID()]; f != nil {
			f.Peer = c
		}
	}
	k := 0
	for _, c := range h.recv {
		f := h.d.byID[c.ID()]
		for {
			n, ok := c.Recv(h.buf)
			if !ok {
				break
			}
			if f != nil {
				_ = f.Meter.Add(now, h.buf[:n])
			}
		}
		if !c.Done() {
			h.recv[k] = c
			k++
		}
	}
	clear(h.recv[k:])
	h.recv = h.recv[:k]
	h.d.Sim.Net.transmit(now, h.ep, h.node, DgramPort)
	h.timer.Set(h.ep.Deadline())
}
