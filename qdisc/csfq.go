package qdisc

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"cclab/clock"
	"cclab/internal/spec"
)

// CSFQ constants, from Stoica, Shenker & Zhang, "Core-Stateless Fair
// Queueing: Achieving Approximately Fair Bandwidth Allocations in High Speed
// Networks", SIGCOMM 1998 (hereafter [SSZ98]). The simulations of [SSZ98] §3
// use K = 100 ms for the per-flow rate estimates and K_alpha = 200 ms for the
// aggregate estimates; K_c, the window over which congestion must persist
// before alpha is rescaled, is set to K_alpha here.
const (
	CSFQDefaultK      = 100 * time.Millisecond // K, [SSZ98] §3
	CSFQDefaultKAlpha = 200 * time.Millisecond // K_alpha, [SSZ98] §3
	CSFQDefaultKc     = 200 * time.Millisecond // K_c (= K_alpha)
	// CSFQOverflowDecrease is the fraction by which alpha is decreased on
	// each buffer overflow, [SSZ98] §2.3 ("a small fixed percentage, taken
	// to be 1%").
	CSFQOverflowDecrease = 0.01
	// CSFQMaxOverflowDecrease bounds the total decrease of alpha by
	// overflows between two regular updates, [SSZ98] §2.3 (25%).
	CSFQMaxOverflowDecrease = 0.25
	// CSFQEdgeIdle is how many K a flow may stay silent before an edge
	// forgets its rate estimate (after 10·K its weight e^{-10} < 5e-5).
	CSFQEdgeIdle = 10
)

// CSFQConfig configures a CSFQ hop. Example spec:
// "csfq:k=100ms,kalpha=200ms,kc=200ms,limit=64kb,edge".
type CSFQConfig struct {
	K      time.Duration `param:"k" help:"K: averaging constant of the edge's per-flow rate estimates"`
	KAlpha time.Duration `param:"kalpha" help:"K_alpha: averaging constant of the aggregate arrival (A) and accepted (F) rate estimates"`
	Kc     time.Duration `param:"kc" help:"K_c: how long the link must stay (un)congested before alpha is updated"`
	Limit  Limit         `param:"limit" help:"FIFO capacity: 64kb (bytes) or 100p (packets)"`
	Edge   bool          `param:"edge" help:"also act as an edge: estimate each flow's rate (by Packet.Flow) and label its packets; edge=false for a core hop that trusts incoming labels"`
}

// Capacity returns the queue's limit (Bounded).
func (c CSFQConfig) Capacity() Limit { return c.Limit }

// DefaultCSFQConfig returns the [SSZ98] constants, a 100-packet FIFO and the
// edge role enabled (a single relay is both edge and core).
func DefaultCSFQConfig() CSFQConfig {
	return CSFQConfig{K: CSFQDefaultK, KAlpha: CSFQDefaultKAlpha, Kc: CSFQDefaultKc,
		Limit: Limit{Packets: 100}, Edge: true}
}

// expRate is [SSZ98] Eq. (3)/(5): r_new = (1-e^{-T/K}) l/T + e^{-T/K} r_old,
// with l in bits and T, K in seconds. For T -> 0 it tends to r_old + l/K.
func expRate(old, bits, T, K float64) float64 {
	if T <= 0 {
		return old + bits/K
	}
	w := math.Exp(-T / K)
	return (1-w)*bits/T + w*old
}

// csfqFlow is an edge's per-flow rate estimate; flows are kept in a list
// ordered by last arrival so silent ones are forgotten in O(1) amortized.
type csfqFlow struct {
	key        uint64
	last       clock.Time
	rate       float64 // bits/s
	prev, next *csfqFlow
}

// CSFQ is Core-Stateless Fair Queueing [SSZ98]: a FIFO whose arrivals are
// dropped with probability max(0, 1 - alpha/label), where alpha, the fair
// share, is estimated from the aggregate arrival rate A and the accepted rate
// F ([SSZ98] Figure 3). Survivors are relabelled min(label, alpha). With Edge,
// the hop first labels each packet with its flow's estimated rate.
type CSFQ struct {
	cfg      CSFQConfig
	c        float64 // link capacity C, bits/s
	k, ka    float64 // K, K_alpha, seconds
	kc       time.Duration
	q        fifo
	h        Handler
	rng      *rand.Rand
	alpha    float64 // fair share, bits/s; 0 until first estimated
	alphaMin float64 // floor for overflow decreases: (1-25%) of alpha at its last regular update
	tmpAlpha float64 // largest label seen in the current uncongested window, bits/s
	a, f     float64 // aggregate arrival and accepted rates, bits/s
	lastA    clock.Time
	lastF    clock.Time
	congest  bool
	start    clock.Time // start_time of the current (un)congested window

	flows      map[uint64]*csfqFlow
	free       []*csfqFlow
	head, tail *csfqFlow // edge flows by last arrival, oldest first
}

// NewCSFQ returns a CSFQ hop feeding a link of capacity rate bits/s.
func NewCSFQ(cfg CSFQConfig, rate float64, rng *rand.Rand, h Handler) (*CSFQ, error) {
	switch {
	case !(rate > 0):
		return nil, fmt.Errorf("csfq: needs the link capacity (Env.Rate, bits/s), got %v", rate)
	case cfg.K <= 0:
		return nil, fmt.Errorf("csfq: k=%v must be positive", cfg.K)
	case cfg.KAlpha <= 0:
		return nil, fmt.Errorf("csfq: kalpha=%v must be positive", cfg.KAlpha)
	case cfg.Kc <= 0:
		return nil, fmt.Errorf("csfq: kc=%v must be positive", cfg.Kc)
	case cfg.Limit.Packets <= 0 && cfg.Limit.Bytes <= 0:
		return nil, fmt.Errorf("csfq: limit must be positive")
	}
	e := Env{Handler: h, Rand: rng} // fills in the defaults
	return &CSFQ{cfg: cfg, c: rate, k: cfg.K.Seconds(), ka: cfg.KAlpha.Seconds(), kc: cfg.Kc,
		h: e.handler(), rng: e.rand(), flows: make(map[uint64]*csfqFlow)}, nil
}

// Alpha returns the current fair-share estimate, bits/s (0 before the first
// estimate).
func (c *CSFQ) Alpha() float64 { return c.alpha }

// Rates returns the aggregate arrival rate A and accepted rate F, bits/s.
func (c *CSFQ) Rates() (A, F float64) { return c.a, c.f }

// Congested reports whether the hop is in the congested state (A >= C).
func (c *CSFQ) Congested() bool { return c.congest }

// label is the edge role: update flow p.Flow's rate estimate with [SSZ98]
// Eq. (3) and return it. A flow's first packet (or its first after
// CSFQEdgeIdle·K of silence) is estimated from r_old = 0 with the T -> 0
// limit, l/K.
func (c *CSFQ) label(now clock.Time, p *Packet) float64 {
	horizon := time.Duration(CSFQEdgeIdle * float64(c.cfg.K))
	for c.head != nil && now.Sub(c.head.last) > horizon {
		old := c.head
		c.unlink(old)
		delete(c.flows, old.key)
		*old = csfqFlow{}
		c.free = append(c.free, old)
	}
	fl := c.flows[p.Flow]
	bits := float64(p.Size) * 8
	if fl == nil {
		if n := len(c.free); n > 0 {
			fl, c.free = c.free[n-1], c.free[:n-1]
		} else {
			fl = new(csfqFlow)
		}
		fl.key, fl.rate = p.Flow, bits/c.k
		c.flows[p.Flow] = fl
	} else {
		fl.rate = expRate(fl.rate, bits, now.Sub(fl.last).Seconds(), c.k)
		c.unlink(fl)
	}
	fl.last = now
	fl.prev, fl.next = c.tail, nil
	if c.tail != nil {
		c.tail.next = fl
	} else {
		c.head = fl
	}
	c.tail = fl
	return fl.rate
}

func (c *CSFQ) unlink(f *csfqFlow) {
	if f.prev != nil {
		f.prev.next = f.next
	} else {
		c.head = f.next
	}
	if f.next != nil {
		f.next.prev = f.prev
	} else {
		c.tail = f.prev
	}
	f.prev, f.next = nil, nil
}

// EdgeFlows returns the number of flows whose rate an edge hop tracks.
func (c *CSFQ) EdgeFlows() int { return len(c.flows) }

// setAlpha is a regular update of alpha; it also resets the overflow floor.
func (c *CSFQ) setAlpha(a float64) {
	c.alpha = a
	c.alphaMin = (1 - CSFQMaxOverflowDecrease) * a
}

// estimateAlpha is [SSZ98] Figure 3 "estimate_alpha(p, dropped)". A has
// already been updated for this arrival.
// bits is the packet's size (for F) and label its label (for tmp_alpha).
func (c *CSFQ) estimateAlpha(now clock.Time, bits, label float64, dropped bool) {
	if !dropped {
		// F: estimated accepted traffic rate, Eq. (5) with K_alpha.
		var T float64
		if c.lastF != clock.Never {
			T = now.Sub(c.lastF).Seconds()
		}
		c.f = expRate(c.f, bits, T, c.ka)
		c.lastF = now
	}
	if c.a >= c.c {
		if !c.congest {
			c.congest, c.start = true, now
			if c.alpha == 0 {
				// First congestion: start from the largest label seen
				// while uncongested (C if none), then rescale by C/F.
				a := c.tmpAlpha
				if a <= 0 {
					a = c.c
				}
				c.setAlpha(a)
			}
		} else if now.Sub(c.start) > c.kc {
			if c.f > 0 {
				c.setAlpha(c.alpha * c.c / c.f)
			}
			c.start = now
		}
		return
	}
	if c.congest {
		c.congest, c.start, c.tmpAlpha = false, now, 0
		return
	}
	if now.Sub(c.start) < c.kc {
		c.tmpAlpha = max(c.tmpAlpha, label)
		return
	}
	// Uncongested for K_c: alpha is the largest label (rate) seen.
	c.setAlpha(c.tmpAlpha)
	c.start, c.tmpAlpha = now, 0
}

// Enqueue runs [SSZ98] Figure 3 "on receiving packet p".
func (c *CSFQ) Enqueue(now clock.Time, p *Packet) bool {
	if c.cfg.Edge {
		p.Label = c.label(now, p)
	}
	bits := float64(p.Size) * 8
	// A: estimated aggregate arrival rate, Eq. (5) with K_alpha.
	var T float64
	if c.lastA != clock.Never {
		T = now.Sub(c.lastA).Seconds()
	}
	c.a = expRate(c.a, bits, T, c.ka)
	c.lastA = now
	// prob = max(0, 1 - alpha/p.label). Unlabelled packets (label 0) and a
	// not yet estimated alpha never cause a CSFQ drop.
	prob := 0.0
	if p.Label > 0 && c.alpha > 0 {
		prob = max(0, 1-c.alpha/p.Label)
	}
	if prob > 0 && prob > c.rng.Float64() {
		c.estimateAlpha(now, bits, p.Label, true)
		c.h.Dropped(now, p, DropCSFQ)
		return false
	}
	// A packet the full buffer refuses is not accepted traffic either.
	full := c.cfg.Limit.full(c.q.n, c.q.bytes, p.Size)
	c.estimateAlpha(now, bits, p.Label, full)
	if full {
		// Buffer overflow: decrease alpha by a small percentage, at most
		// 25% below its last regular value ([SSZ98] §2.3).
		if c.alpha > 0 {
			c.alpha = max(c.alpha*(1-CSFQOverflowDecrease), c.alphaMin)
		}
		c.h.Dropped(now, p, DropOverflow)
		return false
	}
	if prob > 0 {
		p.Label = min(p.Label, c.alpha) // relabel p
	}
	p.Enqueued = now
	c.q.push(p)
	return true
}

// Dequeue removes the oldest packet.
func (c *CSFQ) Dequeue(clock.Time) *Packet { return c.q.pop() }

// Len returns the number of queued packets.
func (c *CSFQ) Len() int { return c.q.n }

// Bytes returns the number of queued bytes.
func (c *CSFQ) Bytes() int { return c.q.bytes }

func init() {
	spec.Add(Registry, "csfq", "Core-Stateless Fair Queueing (Stoica, Shenker & Zhang 1998), edge labelling and core dropping",
		DefaultCSFQConfig, func(c CSFQConfig, env Env) (Queue, error) {
			return NewCSFQ(c, env.Rate, env.rand(), env.handler())
		})
}
