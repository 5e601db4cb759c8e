package qdisc

import (
	"fmt"
	"math"
	"time"

	"cclab/clock"
	"cclab/ecn"
	"cclab/internal/spec"
)

// CoDel constants, RFC 8289 §4.2-4.4 and the §5 pseudocode.
const (
	CoDelDefaultTarget   = 5 * time.Millisecond   // TARGET, RFC 8289 §4.4
	CoDelDefaultInterval = 100 * time.Millisecond // INTERVAL, RFC 8289 §4.3
	// CoDelReentryWindow is the "16 * INTERVAL" of the count re-entry rule,
	// RFC 8289 §5.5 (the Linux variant quoted there), in intervals.
	CoDelReentryWindow = 16
)

// CoDelConfig configures a CoDel queue. Example spec:
// "codel:target=5ms,interval=100ms,limit=1000p,ecn".
type CoDelConfig struct {
	Target   time.Duration `param:"target" help:"TARGET: acceptable standing queue delay (RFC 8289 §4.4)"`
	Interval time.Duration `param:"interval" help:"INTERVAL: sliding window for the minimum sojourn time, about a worst-case RTT (RFC 8289 §4.3)"`
	Limit    Limit         `param:"limit" help:"hard capacity: 1000p (packets) or 1500kb (bytes)"`
	ECN      bool          `param:"ecn" help:"mark ECN-capable packets with CE instead of dropping them at dequeue"`
}

// Capacity returns the queue's limit (Bounded).
func (c CoDelConfig) Capacity() Limit { return c.Limit }

// DefaultCoDelConfig returns RFC 8289's defaults and a 1000-packet limit
// (the Linux sch_codel default).
func DefaultCoDelConfig() CoDelConfig {
	return CoDelConfig{Target: CoDelDefaultTarget, Interval: CoDelDefaultInterval, Limit: Limit{Packets: 1000}}
}

// CoDel is Controlled Delay, RFC 8289, following the §5 pseudocode: drops
// happen at dequeue when the sojourn time has stayed at or above TARGET for
// INTERVAL, then at intervals of INTERVAL/sqrt(count).
type CoDel struct {
	cfg            CoDelConfig
	mtu            int        // MAXPACKET, bytes
	firstAboveTime clock.Time // first_above_time_
	dropNext       clock.Time // drop_next_
	count          uint32     // count_: drops since entering the dropping state
	lastCount      uint32     // lastcount_
	dropping       bool       // dropping_
	q              fifo
	h              Handler
}

// NewCoDel returns a CoDel queue; mtu (bytes) is MAXPACKET.
func NewCoDel(cfg CoDelConfig, mtu int, h Handler) (*CoDel, error) {
	switch {
	case cfg.Target <= 0:
		return nil, fmt.Errorf("codel: target=%v must be positive", cfg.Target)
	case cfg.Interval <= 0:
		return nil, fmt.Errorf("codel: interval=%v must be positive", cfg.Interval)
	case cfg.Limit.Packets <= 0 && cfg.Limit.Bytes <= 0:
		return nil, fmt.Errorf("codel: limit must be positive")
	}
	if h == nil {
		h = NopHandler{}
	}
	if mtu <= 0 {
		mtu = 1500
	}
	return &CoDel{cfg: cfg, mtu: mtu, h: h}, nil
}

// Enqueue timestamps p and appends it, tail-dropping when the hard limit is
// reached (RFC 8289 §5.1 "enqueue").
func (c *CoDel) Enqueue(now clock.Time, p *Packet) bool {
	if c.cfg.Limit.full(c.q.n, c.q.bytes, p.Size) {
		c.h.Dropped(now, p, DropOverflow)
		return false
	}
	p.Enqueued = now
	c.q.push(p)
	return true
}

// controlLaw is RFC 8289 §5.4: t + INTERVAL/sqrt(count).
func (c *CoDel) controlLaw(t clock.Time, count uint32) clock.Time {
	return t.Add(time.Duration(float64(c.cfg.Interval) / math.Sqrt(float64(count))))
}

// doDequeue is RFC 8289 §5.3 "dodequeue": it pops the head and reports
// whether the sojourn time has been at or above TARGET for at least INTERVAL.
func (c *CoDel) doDequeue(now clock.Time) (p *Packet, okToDrop bool) {
	p = c.q.pop()
	if p == nil {
		// The queue is empty: leave the above-target state.
		c.firstAboveTime = clock.Never
		return nil, false
	}
	if sojourn(now, p) < c.cfg.Target || c.q.bytes <= c.mtu {
		// Went below, or too few bytes left to form a standing queue:
		// stay below for at least INTERVAL.
		c.firstAboveTime = clock.Never
		return p, false
	}
	if c.firstAboveTime == clock.Never {
		// Just went above from below: drop if it stays above for INTERVAL.
		c.firstAboveTime = now.Add(c.cfg.Interval)
	} else if !now.Before(c.firstAboveTime) {
		okToDrop = true
	}
	return p, okToDrop
}

// signal drops p (reporting DropCoDel), or, with ECN enabled and p
// ECN-capable, marks it CE and reports that it must be delivered.
func (c *CoDel) signal(now clock.Time, p *Packet) (deliver bool) {
	if c.cfg.ECN && p.ECN.Capable() {
		p.ECN = ecn.CE
		c.h.Marked(now, p)
		return true
	}
	c.h.Dropped(now, p, DropCoDel)
	return false
}

// Dequeue is RFC 8289 §5.5 "dequeue". With ECN, a packet that would be
// dropped is marked and returned instead, ending this dequeue (as Linux
// sch_codel does).
func (c *CoDel) Dequeue(now clock.Time) *Packet {
	p, okToDrop := c.doDequeue(now)
	if p == nil {
		c.dropping = false
		return nil
	}
	if c.dropping {
		if !okToDrop {
			// Sojourn time below TARGET: leave the dropping state.
			c.dropping = false
		}
		// Time for the next drop; the loop drops as many packets as the
		// control law schedules up to now.
		for c.dropping && !now.Before(c.dropNext) {
			c.count++
			if c.signal(now, p) {
				c.dropNext = c.controlLaw(c.dropNext, c.count)
				return p
			}
			p, okToDrop = c.doDequeue(now)
			if !okToDrop {
				c.dropping = false
			} else {
				c.dropNext = c.controlLaw(c.dropNext, c.count)
			}
		}
		return p
	}
	if okToDrop {
		// Enter the dropping state: signal this packet, then apply the
		// count re-entry rule of RFC 8289 §5.5.
		deliver := c.signal(now, p)
		if !deliver {
			p, _ = c.doDequeue(now)
		}
		c.dropping = true
		delta := c.count - c.lastCount
		c.count = 1
		if delta > 1 && now.Sub(c.dropNext) < CoDelReentryWindow*c.cfg.Interval {
			c.count = delta
		}
		c.dropNext = c.controlLaw(now, c.count)
		c.lastCount = c.count
	}
	return p
}

// Len returns the number of queued packets.
func (c *CoDel) Len() int { return c.q.n }

// Bytes returns the number of queued bytes.
func (c *CoDel) Bytes() int { return c.q.bytes }

func init() {
	spec.Add(Registry, "codel", "Controlled Delay AQM (RFC 8289), dequeue-time drops or ECN marks",
		DefaultCoDelConfig, func(c CoDelConfig, env Env) (Queue, error) {
			return NewCoDel(c, env.mtu(), env.handler())
		})
}
