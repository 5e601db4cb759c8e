package qdisc

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"cclab/clock"
	"cclab/ecn"
	"cclab/internal/spec"
)

// RED defaults. Floyd & Jacobson, "Random Early Detection Gateways for
// Congestion Avoidance", IEEE/ACM ToN 1(4), 1993 (hereafter [FJ93]), and
// Floyd's "RED: Discussions of Setting Parameters" (1997), which ns-2 follows:
// w_q = 0.002 ([FJ93] §11 uses 0.002 in its simulations), max_p = 0.1 (ns-2
// linterm_ = 10), min_th = 5 packets, max_th = 3·min_th = 15 packets.
const (
	REDDefaultWq   = 0.002 // queue weight w_q, [FJ93] §6/§11
	REDDefaultMaxP = 0.1   // max_p, Floyd 1997 recommendation
	REDDefaultMin  = 5     // min_th, packets, Floyd 1997 recommendation
	REDDefaultMax  = 15    // max_th = 3·min_th, packets, Floyd 1997 recommendation
)

// Threshold is a RED queue threshold in packets ("5", "5p") or bytes
// ("7500b", "7.5kb"). A threshold given in the other unit than the queue is
// measured in is converted with the mean packet size (Env.MTU), as ns-2 does
// (red.cc: th_min = th_min_pkts · mean_pktsize in byte mode).
type Threshold struct {
	Packets float64 // threshold in packets; 0 if given in bytes
	Bytes   float64 // threshold in bytes; 0 if given in packets
}

// UnmarshalText parses "5", "5p", "7500b" or "7.5kb".
func (t *Threshold) UnmarshalText(b []byte) error {
	s := strings.ToLower(strings.TrimSpace(string(b)))
	mult, unitBytes := 1.0, false
	switch {
	case strings.HasSuffix(s, "kb"):
		s, mult, unitBytes = strings.TrimSuffix(s, "kb"), 1000, true
	case strings.HasSuffix(s, "b"):
		s, unitBytes = strings.TrimSuffix(s, "b"), true
	case strings.HasSuffix(s, "p"):
		s = strings.TrimSuffix(s, "p")
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || !(v > 0) || math.IsInf(v, 0) {
		return fmt.Errorf("not a positive threshold (examples: 5 or 5p for packets, 7500b or 7.5kb for bytes)")
	}
	if unitBytes {
		*t = Threshold{Bytes: v * mult}
	} else {
		*t = Threshold{Packets: v}
	}
	return nil
}

// String formats the threshold as it is parsed.
func (t Threshold) String() string {
	if t.Bytes > 0 {
		return strconv.FormatFloat(t.Bytes, 'g', -1, 64) + "b"
	}
	return strconv.FormatFloat(t.Packets, 'g', -1, 64) + "p"
}

// in returns the threshold in queue units: bytes if byteMode, else packets.
func (t Threshold) in(byteMode bool, meanPkt int) float64 {
	switch {
	case byteMode && t.Bytes == 0:
		return t.Packets * float64(meanPkt)
	case !byteMode && t.Bytes > 0:
		return t.Bytes / float64(meanPkt)
	case byteMode:
		return t.Bytes
	}
	return t.Packets
}

// REDConfig configures a RED queue. Example spec:
// "red:min=5,max=15,maxp=0.1,wq=0.002,limit=100p,gentle,ecn,bytes".
type REDConfig struct {
	Min    Threshold `param:"min" help:"min_th: early drops start when avg reaches it; packets (5, 5p) or bytes (7500b)"`
	Max    Threshold `param:"max" help:"max_th: drop probability reaches maxp here; packets or bytes"`
	MaxP   float64   `param:"maxp" help:"max_p: early-drop probability at avg = max_th, in (0,1]"`
	Wq     float64   `param:"wq" help:"w_q: EWMA weight of the instantaneous queue, in (0,1)"`
	Limit  Limit     `param:"limit" help:"hard capacity: 100p (packets) or 150kb (bytes)"`
	Gentle bool      `param:"gentle" help:"gentle RED: probability rises linearly from maxp to 1 between max_th and 2·max_th"`
	ECN    bool      `param:"ecn" help:"mark ECN-capable packets with CE instead of early-dropping them"`
	Bytes  bool      `param:"bytes" help:"byte mode: queue measured in bytes, drop probability scaled by size/MTU"`
	Wait   bool      `param:"wait" help:"ns-2's wait_: no early drop until count·p_b reaches 1, then p_b/(2-count·p_b); gaps between drops uniform in [1/p_b, 2/p_b]"`
	NS2    bool      `param:"ns2" help:"ns-2's red.cc gates: no early or forced drop while the queue holds at most one packet, count restarts at 1 (no drop) when avg enters the drop region, an overflow drop resets count"`
}

// Capacity returns the queue's limit (Bounded).
func (c REDConfig) Capacity() Limit { return c.Limit }

// DefaultREDConfig returns the defaults of [FJ93] and Floyd's 1997 notes.
func DefaultREDConfig() REDConfig {
	return REDConfig{
		Min:   Threshold{Packets: REDDefaultMin},
		Max:   Threshold{Packets: REDDefaultMax},
		MaxP:  REDDefaultMaxP,
		Wq:    REDDefaultWq,
		Limit: Limit{Packets: 100},
	}
}

// redAvg is the average-queue estimator shared by RED and FRED ([FJ93] §4,
// Figure 2): an EWMA of the instantaneous queue taken at each arrival, decayed
// over idle periods as if m = idle/s small packets had arrived to an empty
// queue, where s is the transmission time of a mean-sized packet.
type redAvg struct {
	wq      float64
	avg     float64    // average queue, packets or bytes
	idle    bool       // queue has been empty since qTime
	qTime   clock.Time // start of the current idle period
	txTime  float64    // s: transmission time of a mean-sized packet, seconds; 0 disables idle correction
	logDecy float64    // log(1-w_q), cached for the idle correction
}

func newREDAvg(wq float64, rate float64, meanPkt int) redAvg {
	a := redAvg{wq: wq, idle: true, logDecy: math.Log1p(-wq)}
	if rate > 0 {
		a.txTime = float64(meanPkt) * 8 / rate
	}
	return a
}

// update applies [FJ93] Figure 2 "calculate the average queue size avg" for
// an arrival that finds q (packets or bytes) in the queue.
func (a *redAvg) update(now clock.Time, q float64) {
	if a.idle && q == 0 {
		// avg <- (1-w_q)^m avg, m = f(time - q_time).
		if a.txTime > 0 && now > a.qTime {
			m := now.Sub(a.qTime).Seconds() / a.txTime
			a.avg *= math.Exp(m * a.logDecy)
		}
		// Restart the idle period so that a further arrival dropped
		// while the queue stays empty does not decay avg twice.
		a.qTime = now
		return
	}
	a.sample(q)
}

// sample folds the instantaneous queue q into the average:
// avg <- (1-w_q) avg + w_q q ([FJ93] Figure 2).
func (a *redAvg) sample(q float64) { a.avg += a.wq * (q - a.avg) }

// arrived notes that the queue is no longer idle.
func (a *redAvg) arrived() { a.idle = false }

// emptied notes that the queue became empty at now ("when queue becomes
// empty: q_time <- time", [FJ93] Figure 2).
func (a *redAvg) emptied(now clock.Time) { a.idle, a.qTime = true, now }

// redPaWait returns the early-drop probability of ns-2's RED with wait_ set
// (queue/red.cc, REDQueue::modify_p, ns-2 since ns-1; ns-default.tcl
// "Queue/RED set wait_ true"): 0 while count·p_b < 1, p_b / (2 - count·p_b)
// while count·p_b < 2, else 1. The gap between early drops is then uniform
// in [1/p_b, 2/p_b] arrivals (mean 1.5/p_b) instead of [FJ93]'s [1, 1/p_b]
// (mean 1/(2 p_b)): at the same average queue RED drops a third as often.
func redPaWait(pb float64, count int) float64 {
	switch cp := float64(count) * pb; {
	case cp < 1:
		return 0
	case cp < 2:
		return min(1, pb/(2-cp))
	}
	return 1
}

// redPa returns the final early-drop probability of [FJ93] Figure 2,
// p_a <- p_b / (1 - count·p_b), capped at 1 (1 once the denominator reaches 0).
// count is the number of packets since the last early drop or mark, this
// arrival included. FRED uses the same rule ([LM97]).
func redPa(pb float64, count int) float64 {
	if d := 1 - float64(count)*pb; d > 0 {
		return min(1, pb/d)
	}
	return 1
}

// RED is Random Early Detection [FJ93] with the gentle variant (Floyd, "Recommendation on
// using the gentle_ variant of RED", 2000) and ECN marking (RFC 3168 §7).
type RED struct {
	cfg      REDConfig
	minTh    float64 // min_th in queue units (packets or bytes)
	maxTh    float64 // max_th in queue units
	meanPkt  int     // mean / maximum packet size, bytes (byte-mode scaling, idle correction)
	avg      redAvg
	count    int  // packets since the last early drop/mark, -1 below min_th ([FJ93] Figure 2)
	old      bool // ns2: the previous arrival was in the drop region (red.cc edv_.old)
	q        fifo
	h        Handler
	rng      *rand.Rand
	lastProb float64 // p_a computed for the latest arrival (for tests and tracing)
}

// NewRED returns a RED queue; it validates cfg. rate (bits/s) and meanPkt
// (bytes) drive the idle-time correction; rate 0 disables it.
func NewRED(cfg REDConfig, rate float64, meanPkt int, rng *rand.Rand, h Handler) (*RED, error) {
	e := Env{Handler: h, Rand: rng, MTU: meanPkt} // fills in the defaults
	meanPkt, h, rng = e.mtu(), e.handler(), e.rand()
	r := &RED{cfg: cfg, meanPkt: meanPkt, h: h, rng: rng, count: -1}
	r.minTh = cfg.Min.in(cfg.Bytes, meanPkt)
	r.maxTh = cfg.Max.in(cfg.Bytes, meanPkt)
	switch {
	case !(cfg.Wq > 0 && cfg.Wq < 1):
		return nil, fmt.Errorf("red: wq=%v must be in (0,1)", cfg.Wq)
	case !(cfg.MaxP > 0 && cfg.MaxP <= 1):
		return nil, fmt.Errorf("red: maxp=%v must be in (0,1]", cfg.MaxP)
	case !(r.minTh > 0):
		return nil, fmt.Errorf("red: min=%v must be positive", cfg.Min)
	case !(r.maxTh > r.minTh):
		return nil, fmt.Errorf("red: max=%v must exceed min=%v", cfg.Max, cfg.Min)
	case cfg.Limit.Packets <= 0 && cfg.Limit.Bytes <= 0:
		return nil, fmt.Errorf("red: limit must be positive")
	}
	r.avg = newREDAvg(cfg.Wq, rate, meanPkt)
	return r, nil
}

func (r *RED) qlen() float64 {
	if r.cfg.Bytes {
		return float64(r.q.bytes)
	}
	return float64(r.q.n)
}

// Avg returns the current average queue (packets, or bytes in byte mode).
func (r *RED) Avg() float64 { return r.avg.avg }

// prob returns p_b for the current average and packet size ([FJ93] Figure 2,
// gentle extension), or 1 (forced) when the average is beyond the drop region.
func (r *RED) pb(size int) (pb float64, forced bool) {
	avg := r.avg.avg
	switch {
	case avg < r.minTh:
		return 0, false
	case avg < r.maxTh:
		pb = r.cfg.MaxP * (avg - r.minTh) / (r.maxTh - r.minTh)
	case r.cfg.Gentle && avg < 2*r.maxTh:
		pb = r.cfg.MaxP + (1-r.cfg.MaxP)*(avg-r.maxTh)/r.maxTh
	default:
		return 1, true
	}
	if r.cfg.Bytes {
		// Byte mode: p_b <- p_b · PacketSize / MaximumPacketSize ([FJ93] §4).
		pb *= float64(size) / float64(r.meanPkt)
	}
	return pb, false
}

// Enqueue runs [FJ93] Figure 2 for the arrival p (with ns2, the gates of
// ns-2's REDQueue::enque).
func (r *RED) Enqueue(now clock.Time, p *Packet) bool {
	r.avg.update(now, r.qlen())
	pb, forced := r.pb(p.Size)
	early, mark := false, false
	switch {
	case r.cfg.NS2 && (r.avg.avg < r.minTh || r.q.n <= 1):
		// red.cc: "if (qavg >= th_min && qlen > 1)", else no drop and old = 0.
		r.count, r.old = -1, false
		r.lastProb = 0
	case forced:
		// avg >= max_th (2·max_th when gentle): mark (drop) every arrival; count <- 0.
		r.count = 0
		r.lastProb = 1
		r.h.Dropped(now, p, DropForced)
		return false
	case r.avg.avg < r.minTh:
		r.count = -1
		r.lastProb = 0
	case r.cfg.NS2 && !r.old:
		// red.cc: avg has just entered the drop region (or the queue has
		// just grown past one packet): count <- 1, no drop.
		r.count, r.old = 1, true
		r.lastProb = 0
	default:
		// min_th <= avg: count <- count+1; p_a <- p_b / (1 - count·p_b).
		r.count++
		var pa float64
		if r.cfg.Wait {
			pa = redPaWait(pb, r.count)
		} else {
			pa = redPa(pb, r.count)
		}
		r.lastProb = pa
		if r.rng.Float64() < pa {
			r.count = 0
			if r.cfg.ECN && p.ECN.Capable() {
				mark = true
			} else {
				early = true
			}
		}
	}
	if early {
		r.h.Dropped(now, p, DropEarly)
		return false
	}
	if r.cfg.Limit.full(r.q.n, r.q.bytes, p.Size) {
		if r.cfg.NS2 && r.count > 0 {
			r.count = 0 // red.cc resets count after every forced drop
		}
		r.h.Dropped(now, p, DropOverflow)
		return false
	}
	if mark {
		p.ECN = ecn.CE
		r.h.Marked(now, p)
	}
	p.Enqueued = now
	r.q.push(p)
	r.avg.arrived()
	return true
}

// Dequeue removes the oldest packet, starting an idle period if the queue
// empties.
func (r *RED) Dequeue(now clock.Time) *Packet {
	p := r.q.pop()
	if p != nil && r.q.n == 0 {
		r.avg.emptied(now)
	}
	return p
}

// Len returns the number of queued packets.
func (r *RED) Len() int { return r.q.n }

// Bytes returns the number of queued bytes.
func (r *RED) Bytes() int { return r.q.bytes }

func init() {
	spec.Add(Registry, "red", "Random Early Detection (Floyd & Jacobson 1993), optional gentle, ECN and byte modes",
		DefaultREDConfig, func(c REDConfig, env Env) (Queue, error) {
			return NewRED(c, env.Rate, env.mtu(), env.rand(), env.handler())
		})
}
