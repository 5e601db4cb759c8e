package transport

// The sending half of a datagram connection (DgramConn): the application's
// datagrams and generator, the send queue, ACK processing and loss
// detection from Ack Vectors (RFC 4341 §5-6), Ack Ratio, the RTO and the
// congestion window's sending rule.

import (
	"time"

	"cclab/ccalgo"
	"cclab/clock"
	"cclab/event"
)

// SetSource makes src the producer of this connection's datagrams (see
// DgramConfig.Rate for greedy or rate-driven generation).
func (c *DgramConn) SetSource(now clock.Time, src DgramSource) {
	c.touch() // the scheduler asks it at the next Transmit (sched.go)
	c.src = src
	if src == nil {
		c.gen.Stop()
		return
	}
	if c.established {
		c.startGenerator(now)
	}
}

// startGenerator starts the rate-driven generator (traffic.RateSchedule)
// if there is a source and a rate.
func (c *DgramConn) startGenerator(now clock.Time) {
	// No source (none set yet, or Close dropped it): nothing to generate.
	if c.src != nil {
		c.gen.Start(now)
	}
}

// Send queues one application datagram (copied); it returns false if p is
// larger than MaxPayload or the connection is not open. A full queue drops
// by DropPolicy (counted in QueueDropped).
func (c *DgramConn) Send(now clock.Time, p []byte) bool {
	c.touch() // the scheduler asks it at the next Transmit (sched.go)
	if !c.established || c.done || c.closeWanted || len(p) > c.mss {
		return false
	}
	c.stats.Generated++
	c.enqueue(p)
	return true
}

func (c *DgramConn) enqueue(p []byte) {
	b := c.sq.room(len(p))
	if b == nil {
		c.stats.QueueDropped++
		if c.cfg.DropPolicy == DropNewest {
			return
		}
		c.sq.pop()
		b = c.sq.room(len(p))
	}
	c.sq.push(copy(b, p))
}

// generate runs the rate-driven generator up to horizon (now, or at a
// timer wake-up now+PacingQuantum): each datagram the schedule makes due
// (c.gen: one every len*8/Rate, OFF periods skipped) is taken from the
// source into the send queue. A datagram released ahead of its instant is
// generated at now (its stamp is not in the future); the schedule keeps its
// instant, so the rate is exact.
func (c *DgramConn) generate(now, horizon clock.Time) {
	for c.src != nil {
		at, ok := c.gen.Due(horizon)
		if !ok {
			return
		}
		gen := min(at, now)
		var n int
		b := c.sq.room(c.mss)
		if b == nil && c.cfg.DropPolicy == DropNewest {
			n = c.src.Next(gen, c.scratch)
			if n >= 0 {
				c.stats.Generated++
				c.stats.QueueDropped++
			}
		} else {
			if b == nil {
				c.sq.pop()
				c.stats.QueueDropped++
				b = c.sq.room(c.mss)
			}
			n = c.src.Next(gen, b)
			if n >= 0 {
				c.sq.push(n)
				c.stats.Generated++
			}
		}
		if n < 0 {
			n = c.mss // nothing now: try again one datagram time later
		}
		c.gen.Advance(at, n)
	}
}

// Queued returns the number of datagrams waiting in the send queue.
func (c *DgramConn) Queued() int { return c.sq.n }

// updateRatio recomputes the Ack Ratio we send and logs changes.
func (c *DgramConn) updateRatio(now clock.Time) {
	r := c.cfg.AckRatio
	if c.arc != nil {
		r = c.arc.AckRatio()
	} else if c.cc != nil && c.mss > 0 {
		r = max(1, min(r, (c.cc.Cwnd()/c.mss+1)/2)) // RFC 4341 §6.1.2 bound for any controller
	}
	r = min(max(r, 1), MaxAckRatio)
	if r != c.ratio {
		c.ratio = r
		if len(c.ratioLog) < ratioLogMax {
			c.ratioLog = append(c.ratioLog, RatioChange{At: now, Ratio: r})
		}
	}
}

// onAck processes an ACK section: the Ack Vector marks packets received or
// ECN-marked, a packet with three later packets acknowledged is lost (RFC
// 4341 §5), and the controller hears of acknowledgements and congestion.
func (c *DgramConn) onAck(now clock.Time, p *dgramPacket) {
	c.stats.AcksReceived++
	if p.seq > c.ackAck || !c.ackAckDue {
		c.ackAck = p.seq
		c.ackAckDue = true
	}
	mask := uint64(len(c.ring) - 1)
	acked, ecnMarked := 0, false
	var ceSeq uint64
	una, nxt := c.una, c.seq
	DecodeAckVector(p.ackNo, p.vec, func(r AckRun) {
		if r.State == AckNotReceived || r.Top < una {
			return
		}
		lo := r.Top - r.Len + 1
		if lo < una {
			lo = una
		}
		for s := lo; s <= r.Top && s < nxt; s++ {
			e := &c.ring[s&mask]
			switch e.state {
			case pktOut:
				e.state = pktAcked
				if e.data {
					acked++
					c.pipe--
					c.stats.Acked++
					c.rsamp.onDelivered(now, &e.rate, c.mss)
					if r.State == AckReceivedECN {
						c.stats.AckedECN++
						if !ecnMarked || s > ceSeq {
							ceSeq = s
						}
						ecnMarked = true
					}
					c.emit(event.Event{Time: now, Kind: event.PacketAcked, Seq: s, Bytes: int(e.size)})
				}
			case pktLost:
				e.state = pktAcked
				c.stats.LateAcked++
			}
		}
	})
	if acked > 0 && p.tsecr != 0 {
		r := time.Duration(c.tsNow(now)-p.tsecr)*time.Microsecond - time.Duration(p.ackDelay)*time.Microsecond
		if r > 0 && r < time.Hour {
			c.rtt.sample(r)
		}
	}
	// Loss: an outstanding data packet with at least CCID2DupThresh later
	// packets acknowledged (RFC 4341 §5 / RFC 4340 §11.4).
	lost := false
	var lostSeq uint64
	if acked > 0 || p.ackNo >= c.una {
		later := 0
		for s := c.seq; s > c.una; {
			s--
			e := &c.ring[s&mask]
			switch {
			case e.state == pktAcked:
				later++
			case e.state == pktOut && e.data && later >= ccalgo.CCID2DupThresh:
				e.state = pktLost
				c.pipe--
				c.stats.Lost++
				if !lost {
					lostSeq = s
				}
				lost = true
				c.emit(event.Event{Time: now, Kind: event.PacketLost, Seq: s, Bytes: int(e.size)})
			case e.state == pktOut && !e.data && later >= ccalgo.CCID2DupThresh:
				e.state = pktLost
			}
		}
	}
	c.advanceUna()
	if c.cc != nil && acked > 0 {
		c.cc.OnAck(ccalgo.Ack{Now: now, Acked: acked * c.mss, AckedPackets: acked, RTT: c.rtt.latest, SRTT: c.rtt.srtt,
			MinRTT: c.rtt.min, InFlight: c.pipe * c.mss, CumAck: c.una * uint64(c.mss), SndNxt: c.seq * uint64(c.mss),
			AppLimited: c.appLimited(), Rate: c.rsamp.sample(now, c.rtt.min)})
		if m, ok := c.cc.(ccalgo.AppLimitMarker); ok && m.MarkAppLimited() {
			c.rsamp.markAppLimited(c.pipe * c.mss) // BBR's ProbeRTT (draft §4.3.5)
		}
	}
	if c.cc != nil && ((lost && lostSeq >= c.recover) || (ecnMarked && ceSeq >= c.recover)) {
		// One congestion event per window of data (RFC 4341 §5); CCID2
		// also ignores a second halving within one RTT by itself.
		kind := ccalgo.Loss
		if !lost {
			kind = ccalgo.ECN
		}
		c.stats.Congestion++
		c.recover = c.seq
		c.cc.OnCongestion(ccalgo.Congestion{Now: now, Kind: kind, InFlight: c.pipe * c.mss, SndNxt: c.seq * uint64(c.mss)})
		c.cc.OnRecoveryExit(now, c.pipe*c.mss)
		c.emit(event.Event{Time: now, Kind: event.CongestionSignal, Seq: c.seq, Reason: uint8(kind)})
	}
	if c.cc != nil || c.arc != nil {
		c.updateRatio(now)
	}
	if acked > 0 {
		c.pmtu.progress() // full-sized packets get through (dgram_pmtu.go)
		if c.pipe > 0 {
			c.rtoAt = now.Add(c.rtt.current())
		} else {
			c.rtoAt = clock.Never
		}
		c.emitMetrics(now)
	}
}

// appLimited reports whether the sender has nothing to send.
func (c *DgramConn) appLimited() bool {
	return c.sq.n == 0 && (c.src == nil || c.cfg.Rate > 0)
}

// advanceUna moves una past resolved packets.
func (c *DgramConn) advanceUna() {
	mask := uint64(len(c.ring) - 1)
	for c.una < c.seq && c.ring[c.una&mask].state != pktOut {
		c.una++
	}
	for c.una < c.seq && !c.ring[c.una&mask].data && c.seq-c.una > uint64(len(c.ring))/2 {
		c.una++ // unacknowledged non-data packets do not hold the ring
	}
}

// onRTO gives up the packets in flight (no retransmission) and lets the
// controller restart (RFC 4341 §5: TCP-like timeout with backoff).
func (c *DgramConn) onRTO(now clock.Time) {
	c.rtoAt = clock.Never
	if c.pipe == 0 {
		return
	}
	mask := uint64(len(c.ring) - 1)
	for s := c.una; s < c.seq; s++ {
		e := &c.ring[s&mask]
		if e.state == pktOut {
			e.state = pktLost
			if e.data {
				c.stats.LostRTO++
				c.emit(event.Event{Time: now, Kind: event.PacketLost, Seq: s, Bytes: int(e.size), Reason: uint8(LossRTO)})
			}
		}
	}
	flight := c.pipe * c.mss
	c.pipe = 0
	c.advanceUna()
	c.recover = c.seq
	if c.cc != nil {
		c.cc.OnRTO(now, flight)
	}
	c.rtt.backOff()
	c.stats.RTOs++
	if c.pmtuOn {
		c.pmtu.rto(now) // black-hole detection (dgram_pmtu.go)
	}
	c.updateRatio(now)
	c.emit(event.Event{Time: now, Kind: event.RTO, Seq: c.una, Reason: uint8(RTOBurstLoss)})
	c.emitMetrics(now)
}

// canSend reports whether the window allows one more data packet.
func (c *DgramConn) canSend(now clock.Time) bool {
	if c.pace.blocked(now.Add(c.cfg.PacingQuantum)) {
		return false
	}
	if c.cc == nil || c.tf.tx != nil {
		return true // no window: no controller, or a rate-based one
	}
	return c.pipe < max(1, c.cc.Cwnd()/c.mss)
}

// record enters packet seq in the sent ring.
func (c *DgramConn) record(now clock.Time, size int, data bool) {
	c.advanceUna()
	if c.seq-c.una >= uint64(len(c.ring)) {
		if len(c.ring) < 1<<16 {
			n := make([]sentPkt, 2*len(c.ring))
			om, nm := uint64(len(c.ring)-1), uint64(len(n)-1)
			for s := c.una; s < c.seq; s++ {
				n[s&nm] = c.ring[s&om]
			}
			c.ring = n
		} else {
			// Nothing acknowledges: forget the oldest packet.
			e := &c.ring[c.una&uint64(len(c.ring)-1)]
			if e.state == pktOut && e.data {
				c.pipe--
			}
			c.stats.Untracked++
			c.una++
			c.advanceUna()
		}
	}
	c.ring[c.seq&uint64(len(c.ring)-1)] = sentPkt{at: now, size: int32(size), data: data, state: pktOut}
	c.seq++
}
