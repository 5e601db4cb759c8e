package relay

import (
	"errors"
	"time"

	"cclab/clock"
	"cclab/netio"
	"cclab/qdisc"
)

// runCross injects every cross-traffic datagram due at or before now into h.
func (r *Relay) runCross(h *hop, now clock.Time) {
	for _, g := range h.cross {
		for g.next != clock.Never && g.next <= now {
			p, ok := pop(&r.crossP)
			if !ok {
				p = &qdisc.Packet{}
			}
			*p = qdisc.Packet{Size: g.size + r.overhead, Flow: g.flow, ECN: 0}
			r.nextID++
			p.ID = r.nextID
			h.l.Inject(g.next, p)
			g.advance()
		}
	}
}

func (r *Relay) sendHop(h *hop, at clock.Time, p *qdisc.Packet) {
	if h.mtu > 0 && p.Size > h.mtu {
		r.cnt.MTUDrops++ // the hop's path MTU: no fragmentation, the datagram is lost (RFC 8899 §4.3's black hole)
		r.putPkt(p)
		return
	}
	r.runCross(h, at)
	h.l.Send(at, p)
}

// serviceTimed is service at a write the coalescing bound counts from (the
// scheduler's, and a reader's between the messages of a batch): a write
// moves lastWrite to now. Called with mu held.
func (r *Relay) serviceTimed(now clock.Time) {
	if r.service(now) {
		r.lastWrite = now
	}
}

// service moves every packet due at now along the paths and writes the
// packets that leave the last hops; it reports whether it wrote any.
// Called with mu held.
func (r *Relay) service(now clock.Time) bool {
	r.serviceNow = now
	for dir := 0; dir < 2; dir++ {
		hops := r.paths[dir]
		for i, h := range hops {
			r.runCross(h, now)
			for {
				p, at := h.l.DeliverAt(now)
				if p == nil {
					break
				}
				if p.Ctx == 0 {
					r.putPkt(p)
					continue
				}
				if c, _ := r.clientOf(p.Ctx); c != nil && i < c.last[dir] {
					r.sendHop(hops[i+1], at, p)
					continue
				}
				r.output(dir, p, at)
			}
		}
	}
	return r.flush()
}

func (r *Relay) output(dir int, p *qdisc.Packet, at clock.Time) {
	c, _ := r.clientOf(p.Ctx)
	if c == nil || c.up == nil {
		r.cnt.Orphans++
		r.putPkt(p)
		return
	}
	r.lastActive = max(r.lastActive, at)
	late := max(r.serviceNow, r.readNow).Sub(at) + r.cfg.InjectWriteLate
	b := 0
	for b < len(LateBuckets) && late > LateBuckets[b] {
		b++
	}
	r.cnt.Late[b]++
	r.cnt.WriteLate.Add(late)
	r.countWrite(dir, late)
	fs := &c.fs[dir]
	fs.departures++
	fs.bytes += int64(p.Size)
	m := netio.Message{Buf: p.Buf, N: len(p.Buf), ECN: p.ECN}
	if r.packet {
		r.outputPacket(p, at)
	} else if dir == Fwd {
		r.pcapOut.write(r.wall(at), c.addr, r.target, uint8(p.ECN), p.Buf)
	} else {
		r.pcapOut.write(r.wall(at), r.target, c.addr, uint8(p.ECN), p.Buf)
	}
	if dir == Fwd {
		c.out = append(c.out, m)
		c.outPkts = append(c.outPkts, p)
		if !c.dirty {
			c.dirty = true
			r.dirty = append(r.dirty, c)
		}
		return
	}
	m.Addr = c.addr
	r.lnOut[c.entry+1] = append(r.lnOut[c.entry+1], m)
	r.lnPkts[c.entry+1] = append(r.lnPkts[c.entry+1], p)
}

// flush writes pending batches and reports whether there were any. Called
// with mu held.
func (r *Relay) flush() bool {
	wrote := len(r.dirty) > 0
	for _, c := range r.dirty {
		r.write(c.up, &c.gso, Fwd, c.out, c.outPkts)
		clear(c.out)
		c.out = c.out[:0]
		c.outPkts = c.outPkts[:0]
		c.dirty = false
	}
	clear(r.dirty)
	r.dirty = r.dirty[:0]
	for i, out := range r.lnOut {
		if len(out) == 0 {
			continue
		}
		ln := r.ln
		if i > 0 {
			ln = r.entries[i-1]
		}
		r.write(ln, &r.lnGSO[i], Rev, out, r.lnPkts[i])
		clear(out)
		r.lnOut[i] = out[:0]
		r.lnPkts[i] = r.lnPkts[i][:0]
		wrote = true
	}
	return wrote
}

// write sends ms on conn, with GSO runs if *gso is not nil (falling back to
// plain batches for good if the kernel refuses GSO), and recycles their
// packets. Called with mu held.
func (r *Relay) write(conn netio.Conn, gso **netio.GSOWriter, dir int, ms []netio.Message, pk []*qdisc.Packet) {
	start := time.Now()
	sent := 0
	for sent < len(ms) {
		var n, calls int
		var err error
		if *gso != nil {
			n, calls, err = (*gso).WriteMessages(ms[sent:])
			if errors.Is(err, netio.ErrGSOUnsupported) {
				*gso, err = nil, nil // plain batches from now on, starting with the rest of these
				if n == 0 {
					continue
				}
			}
		} else {
			n, err = conn.WriteBatch(ms[sent:])
			calls = (n + batchSize - 1) / batchSize // netio writes up to 64 datagrams per sendmmsg
		}
		r.cnt.WriteCalls += int64(calls)
		for _, m := range ms[sent : sent+n] {
			r.cnt.SentBytes[dir] += int64(m.N)
		}
		r.cnt.Sent[dir] += int64(n)
		sent += n
		if err != nil || n == 0 {
			// Skip the datagram that failed (e.g. ICMP-reported refusal) and go on.
			r.cnt.SendErrors++
			sent++
		}
	}
	r.cnt.SendTime.Add(time.Since(start))
	for i, p := range pk {
		r.putPkt(p)
		pk[i] = nil
	}
}

// dropped is every link's Env.Free. Called with mu held.
func (r *Relay) dropped(h *hop, p *qdisc.Packet) {
	if p.Ctx != 0 {
		if c, dir := r.clientOf(p.Ctx); c != nil {
			c.fs[dir].drops++
			if r.packet {
				r.droppedPacket(h, p)
			} else if r.pcapDrop != nil {
				src, dst := c.addr, r.target
				if dir == Rev {
					src, dst = dst, src
				}
				r.pcapDrop.write(r.wall(h.lastDropAt), src, dst, uint8(p.ECN), p.Buf)
			}
		}
	}
	r.putPkt(p)
}
