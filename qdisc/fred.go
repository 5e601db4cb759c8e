package qdisc

import (
	"fmt"
	"math/rand/v2"

	"cclab/clock"
	"cclab/ecn"
	"cclab/internal/spec"
)

// FRED defaults, from Lin & Morris, "Dynamics of Random Early Detection",
// SIGCOMM 1997 (hereafter [LM97]), §4 and its algorithm listing: w_q = 0.002,
// max_th = 2·min_th, max_p = 0.02, minq = 2 for small buffers (4 for larger
// ones). [LM97] sets min_th = min(buffer/4, RTT); with the default 100-packet
// buffer we use min_th = 5, max_th = 10 packets as in the paper's examples.
const (
	FREDDefaultWq   = 0.002 // w_q, [LM97]
	FREDDefaultMaxP = 0.02  // max_p, [LM97]
	FREDDefaultMin  = 5     // min_th, packets
	FREDDefaultMax  = 10    // max_th = 2·min_th, packets, [LM97]
	FREDDefaultMinQ = 2     // minq, packets, [LM97] ("2 for small buffers; 4 for large")
	// FREDNonAdaptiveMaxQ is the per-flow limit maxq used while avg >= max_th,
	// [LM97] ("if (avg >= max_th) maxq = 2").
	FREDNonAdaptiveMaxQ = 2
)

// FREDConfig configures a FRED queue (packet mode only). Example spec:
// "fred:min=5,max=10,maxp=0.02,minq=2,limit=100p".
type FREDConfig struct {
	Min   float64 `param:"min" help:"min_th, packets; also the per-flow limit maxq while avg < max_th"`
	Max   float64 `param:"max" help:"max_th, packets (the paper uses 2·min_th)"`
	MaxP  float64 `param:"maxp" help:"max_p: early-drop probability at avg = max_th, in (0,1]"`
	Wq    float64 `param:"wq" help:"w_q: EWMA weight of the instantaneous queue, in (0,1)"`
	MinQ  float64 `param:"minq" help:"minq, packets: a flow with fewer queued packets is never early-dropped"`
	Limit Limit   `param:"limit" help:"hard capacity, packets (100 or 100p)"`
	ECN   bool    `param:"ecn" help:"mark ECN-capable packets with CE instead of random (early) dropping"`
	Wait  bool    `param:"wait" help:"ns-2's wait_ (as red's wait; the CSFQ authors' ns-2 FRED sets it): no early drop until count·p_b reaches 1, gaps uniform in [1/p_b, 2/p_b]"`
}

// Capacity returns the queue's limit (Bounded).
func (c FREDConfig) Capacity() Limit { return c.Limit }

// DefaultFREDConfig returns [LM97]'s constants with a 100-packet buffer.
func DefaultFREDConfig() FREDConfig {
	return FREDConfig{Min: FREDDefaultMin, Max: FREDDefaultMax, MaxP: FREDDefaultMaxP,
		Wq: FREDDefaultWq, MinQ: FREDDefaultMinQ, Limit: Limit{Packets: 100}}
}

// fredFlow is the per-active-flow state table of [LM97]; it exists while the
// flow has packets queued and is recycled when it goes idle.
type fredFlow struct {
	qlen   int // qlen_i, packets queued
	strike int // strike_i, times the flow exceeded its share
}

// FRED is Flow Random Early Drop [LM97]: RED plus per-active-flow accounting
// that early-drops only from flows holding at least max(minq, avgcq) packets,
// and punishes flows that exceed maxq (or hold more than their share while
// having strikes) by dropping every arrival.
type FRED struct {
	cfg     FREDConfig
	avg     redAvg
	avgcq   float64 // average per-flow queue, packets
	count   int     // packets since the last drop, -1 below min_th
	nactive int     // flows with packets queued
	flows   map[uint64]*fredFlow
	free    []*fredFlow
	q       fifo
	h       Handler
	rng     *rand.Rand
}

// NewFRED returns a FRED queue; rate (bits/s) and meanPkt (bytes) drive the
// idle-time correction of the average, as in RED.
func NewFRED(cfg FREDConfig, rate float64, meanPkt int, rng *rand.Rand, h Handler) (*FRED, error) {
	switch {
	case !(cfg.Wq > 0 && cfg.Wq < 1):
		return nil, fmt.Errorf("fred: wq=%v must be in (0,1)", cfg.Wq)
	case !(cfg.MaxP > 0 && cfg.MaxP <= 1):
		return nil, fmt.Errorf("fred: maxp=%v must be in (0,1]", cfg.MaxP)
	case !(cfg.Min > 0):
		return nil, fmt.Errorf("fred: min=%v must be positive (packets)", cfg.Min)
	case !(cfg.Max > cfg.Min):
		return nil, fmt.Errorf("fred: max=%v must exceed min=%v", cfg.Max, cfg.Min)
	case !(cfg.MinQ >= 0):
		return nil, fmt.Errorf("fred: minq=%v must not be negative", cfg.MinQ)
	case cfg.Limit.Packets <= 0:
		return nil, fmt.Errorf("fred: limit=%v must be a positive number of packets", cfg.Limit)
	}
	e := Env{Handler: h, Rand: rng, MTU: meanPkt} // fills in the defaults
	return &FRED{cfg: cfg, avg: newREDAvg(cfg.Wq, rate, e.mtu()), count: -1,
		flows: make(map[uint64]*fredFlow), h: e.handler(), rng: e.rand()}, nil
}

// Avg returns the average queue, packets.
func (f *FRED) Avg() float64 { return f.avg.avg }

// AvgCQ returns the average per-flow queue avgcq, packets.
func (f *FRED) AvgCQ() float64 { return f.avgcq }

// Strikes returns the strike count of flow (0 if it has no state).
func (f *FRED) Strikes(flow uint64) int {
	if s := f.flows[flow]; s != nil {
		return s.strike
	}
	return 0
}

// calcAvg is [LM97]'s "calculate average queue length" routine: if the queue
// is non-empty or P is departing, avg = (1-w_q) avg + w_q q; otherwise the
// idle-time decay (1-w_q)^m as in RED; then avgcq = avg/nactive (avg if no
// flow is active), at least 1. Unlike RED it runs at departures too.
func (f *FRED) calcAvg(now clock.Time, departing bool) {
	q := float64(f.q.n)
	if departing {
		f.avg.sample(q)
		if f.q.n == 0 {
			f.avg.emptied(now) // "if (q == 0 && P is departing) q_time = time"
		}
	} else {
		f.avg.update(now, q)
	}
	f.setAvgCQ()
}

// setAvgCQ sets avgcq = avg/nactive (avg if no flow is active), at least 1.
func (f *FRED) setAvgCQ() {
	if f.nactive > 0 {
		f.avgcq = f.avg.avg / float64(f.nactive)
	} else {
		f.avgcq = f.avg.avg
	}
	f.avgcq = max(f.avgcq, 1)
}

// Enqueue runs [LM97]'s "for each arriving packet P" steps.
func (f *FRED) Enqueue(now clock.Time, p *Packet) bool {
	// Step 1: find or create the flow's state table (qlen_i = strike_i = 0).
	fl := f.flows[p.Flow]
	if fl == nil {
		if n := len(f.free); n > 0 {
			fl, f.free = f.free[n-1], f.free[:n-1]
		} else {
			fl = new(fredFlow)
		}
		f.flows[p.Flow] = fl
	}
	// Step 2: "if queue is empty, calculate average queue length" (the
	// idle-time decay; otherwise avg is updated when a packet is accepted
	// and when one departs, [LM97]).
	if f.q.n == 0 {
		f.calcAvg(now, false)
	}
	avg := f.avg.avg
	// Step 3: maxq = min_th; maxq = 2 if avg >= max_th.
	maxq := f.cfg.Min
	if avg >= f.cfg.Max {
		maxq = FREDNonAdaptiveMaxQ
	}
	qlen := float64(fl.qlen)
	// Step 4: identify and manage non-adaptive flows. (While avg >= max_th,
	// maxq = 2 <= 2·avgcq, so the middle test is implied by the first; it is
	// kept as in [LM97].)
	if qlen >= maxq ||
		(avg >= f.cfg.Max && qlen > 2*f.avgcq) || // robust against transient fluctuation
		(qlen >= f.avgcq && fl.strike > 1) {
		fl.strike++
		f.reject(now, p, fl, DropFlowLimit)
		return false
	}
	mark := false
	switch {
	case avg >= f.cfg.Min && avg < f.cfg.Max:
		// Step 5: random drop mode, only from robust flows.
		f.count++
		if qlen >= max(f.cfg.MinQ, f.avgcq) {
			pb := f.cfg.MaxP * (avg - f.cfg.Min) / (f.cfg.Max - f.cfg.Min)
			pa := redPa(pb, f.count)
			if f.cfg.Wait {
				pa = redPaWait(pb, f.count)
			}
			if f.rng.Float64() < pa {
				f.count = 0
				if f.cfg.ECN && p.ECN.Capable() {
					mark = true
				} else {
					f.reject(now, p, fl, DropEarly)
					return false
				}
			}
		}
	case avg < f.cfg.Min:
		// Step 6: no drop mode.
		f.count = -1
	default:
		// Step 7: drop-tail mode (avg >= max_th).
		f.count = 0
		f.reject(now, p, fl, DropForced)
		return false
	}
	if f.q.n >= f.cfg.Limit.Packets {
		f.reject(now, p, fl, DropOverflow)
		return false
	}
	// Step 8: "if (qlen_i == 0) nactive++; calculate average queue length;
	// accept packet P" (q does not yet include P).
	if fl.qlen == 0 {
		f.nactive++
	}
	fl.qlen++
	f.calcAvg(now, false)
	if mark {
		p.ECN = ecn.CE
		f.h.Marked(now, p)
	}
	p.Enqueued = now
	f.q.push(p)
	f.avg.arrived()
	return true
}

// reject drops the arrival p, discarding the flow's state table if the flow
// has no packets queued (state exists only for active flows).
func (f *FRED) reject(now clock.Time, p *Packet, fl *fredFlow, r DropReason) {
	if fl.qlen == 0 {
		f.release(p.Flow, fl)
	}
	f.h.Dropped(now, p, r)
}

func (f *FRED) release(key uint64, fl *fredFlow) {
	delete(f.flows, key)
	*fl = fredFlow{}
	f.free = append(f.free, fl)
}

// Dequeue runs [LM97]'s "for each departing packet P" steps: recompute the
// averages; if the flow has no more packets queued, nactive-- and delete its
// state table.
func (f *FRED) Dequeue(now clock.Time) *Packet {
	p := f.q.pop()
	if p == nil {
		return nil
	}
	if fl := f.flows[p.Flow]; fl != nil {
		fl.qlen--
		if fl.qlen == 0 {
			f.nactive--
			f.release(p.Flow, fl)
		}
	}
	f.calcAvg(now, true)
	return p
}

// Len returns the number of queued packets.
func (f *FRED) Len() int { return f.q.n }

// Bytes returns the number of queued bytes.
func (f *FRED) Bytes() int { return f.q.bytes }

func init() {
	spec.Add(Registry, "fred", "Flow Random Early Drop (Lin & Morris 1997): RED with per-active-flow accounting",
		DefaultFREDConfig, func(c FREDConfig, env Env) (Queue, error) {
			return NewFRED(c, env.Rate, env.mtu(), env.rand(), env.handler())
		})
}
