package ccalgo

import (
	"fmt"
	"math"
	"math/bits"
	"time"

	"cclab/clock"
	"cclab/internal/spec"
)

// DCA defaults, from Martin, Nilsson & Rhee, "Delay-based congestion
// avoidance for TCP", IEEE/ACM Transactions on Networking 11(3), 2003 (the
// studied settings are (x, w) = (2, 20), (6, 20), (2, 200) and reductions
// 0.5, 0.25, 0.125; docs/controllers.md).
const (
	DCADefaultX         = 2   // samples in sampledRTT(x)
	DCADefaultW         = 20  // samples in windowAvg(w) and its standard deviation
	DCADefaultReduction = 0.5 // fraction of cwnd removed by a reaction
	// MaxDCAWindow bounds w, samples: DCA keeps the last w samples (50
	// times the paper's largest studied w = 200).
	MaxDCAWindow = 10000
	// DCAExactResolution is the resolution at which exact (tick=0) RTT
	// samples are compared with an epoch's level: the RTT has fallen back to
	// the trough when sampledRTT(x) is within it. Exact samples carry
	// sub-millisecond serialization jitter, so the trough is an extreme that
	// an emptied queue need not reach again; 1 ms is the finest timestamp
	// clock RFC 7323 §5.4 suggests (1 ms to 1 s per tick; Linux's). With
	// tick > 0 samples lie on the tick's grid and are compared exactly.
	DCAExactResolution = time.Millisecond
	// MaxDCATick bounds the sample granularity tick (twice the 500 ms
	// tick of BSD's coarse TCP timer).
	MaxDCATick = time.Second
)

// DecisionFreq says how often DCA may react to a positive congestion decision.
type DecisionFreq uint8

// Decision frequencies.
const (
	// PerEpoch: at most once per congestion epoch (see DCA).
	PerEpoch DecisionFreq = iota
	// PerRTT: at most once per round trip.
	PerRTT
	// Per2RTT: at most once every two round trips.
	Per2RTT
)

// String returns the spec spelling: "epoch", "rtt" or "2rtt".
func (d DecisionFreq) String() string {
	switch d {
	case PerEpoch:
		return "epoch"
	case PerRTT:
		return "rtt"
	case Per2RTT:
		return "2rtt"
	}
	return "unknown"
}

// UnmarshalText parses "epoch", "rtt" or "2rtt".
func (d *DecisionFreq) UnmarshalText(b []byte) error {
	i, err := spec.ParseEnum(b, "decision frequency", "epoch", "rtt|1rtt", "2rtt")
	if err == nil {
		*d = DecisionFreq(i)
	}
	return err
}

// rounds is the number of round trips a reaction holds off the next one.
func (d DecisionFreq) rounds() int {
	switch d {
	case PerRTT:
		return 1
	case Per2RTT:
		return 2
	}
	return 0
}

// DCAConfig configures DCA.
type DCAConfig struct {
	BaseConfig
	// X is the number of most recent RTT samples averaged into sampledRTT(x).
	X int `param:"x" help:"samples averaged into sampledRTT(x), count (default 2)"`
	// W is the number of most recent RTT samples averaged into windowAvg(w);
	// their standard deviation is the threshold.
	W int `param:"w" help:"samples in windowAvg(w) and the std-dev threshold, count (default 20)"`
	// Reduction is the fraction of cwnd removed by a reaction:
	// cwnd = cwnd - cwnd*Reduction.
	Reduction float64 `param:"reduction" help:"fraction of cwnd removed on a delay decision, 0<r<1 (default 0.5)"`
	// Decision is how often DCA may react: once per congestion epoch, or at
	// most once per RTT or per two RTTs.
	Decision DecisionFreq `param:"decision" help:"reaction frequency: epoch, rtt or 2rtt (default epoch)"`
	// Tick, if positive, quantizes every sample down to a multiple of it
	// before use, as a coarse-grained TCP clock would (ns-2 measures RTT
	// in ticks of tcpTick_); 0 uses samples at full precision.
	Tick time.Duration `param:"tick" help:"sample granularity: samples are floored to multiples of it; 0 = exact (default 0)"`
}

// DefaultDCAConfig returns x=2, w=20, reduction=0.5, decision=epoch.
func DefaultDCAConfig() DCAConfig {
	return DCAConfig{BaseConfig: DefaultBaseConfig(), X: DCADefaultX, W: DCADefaultW,
		Reduction: DCADefaultReduction, Decision: PerEpoch}
}

func (c DCAConfig) validate() error {
	if err := c.BaseConfig.validate("dca"); err != nil {
		return err
	}
	if c.X < 1 {
		return fmt.Errorf("dca: parameter x=%d: must be at least 1 sample", c.X)
	}
	if c.W < 2 || c.W > MaxDCAWindow {
		return fmt.Errorf("dca: parameter w=%d: must be 2..%d samples (a standard deviation needs 2; the samples are kept)", c.W, MaxDCAWindow)
	}
	if c.X > c.W {
		return fmt.Errorf("dca: parameter x=%d: must not exceed w=%d", c.X, c.W)
	}
	if !(c.Reduction > 0 && c.Reduction < 1) {
		return fmt.Errorf("dca: parameter reduction=%v: must be a fraction strictly between 0 and 1", c.Reduction)
	}
	if c.Tick < 0 || c.Tick > MaxDCATick {
		return fmt.Errorf("dca: parameter tick=%v: must be 0..%v", c.Tick, MaxDCATick)
	}
	if c.Decision > Per2RTT {
		return fmt.Errorf("dca: parameter decision=%v: allowed: epoch, rtt, 2rtt", c.Decision)
	}
	return nil
}

// DCADecision records one congestion decision of DCA (one per RTT sample)
// with the values compared, for traces.
type DCADecision struct {
	Now        clock.Time
	Sample     time.Duration // the tcprtt sample that triggered the check
	SampledRTT time.Duration // mean of the last x samples
	WindowAvg  time.Duration // mean of the last w samples
	Threshold  time.Duration // standard deviation of the last w samples
	Congested  bool          // SampledRTT > WindowAvg + Threshold
	Reacted    bool          // the window was reduced
	Held       string        // why a congested decision did not react: "epoch", "rtt", "" otherwise
	EpochOpen  bool          // a congestion epoch is open after this sample
	EpochLevel time.Duration // the open epoch's level (the RTT it must fall back to), 0 if none
	CwndBefore int           // bytes
	CwndAfter  int           // bytes
}

// DCA is delay-based congestion avoidance (Martin, Nilsson & Rhee 2003) on a
// Reno base (docs/controllers.md):
//
//   - each ACK that newly acknowledges data and carries an RTT sample gives
//     one sample tcprtt, however many segments it acknowledges; no samples
//     are taken during loss recovery (Ack.InRecovery or between
//     OnCongestion(Loss) and OnRecoveryExit);
//   - sampledRTT(x) is the mean of the last x samples, windowAvg(w) the mean
//     of the last w samples, threshold the (population) standard deviation
//     of those w samples; nothing is decided before w samples exist;
//   - on every sample the decision sampledRTT(x) > windowAvg(w) + threshold
//     is evaluated; when it holds and the decision frequency allows, cwnd =
//     cwnd - cwnd*reduction (not below 2 SMSS) and ssthresh = the new cwnd,
//     so the flow continues in congestion avoidance rather than slow-starting
//     straight back to the window it just left;
//   - decision=epoch: a congestion epoch opens at the first congested sample
//     while none is open; its level is the smallest of the w samples at that
//     sample: the RTT the increase rose from (the chapter: an epoch "ends
//     when the RTT falls back to its original value"), not their mean, which
//     noise crosses every few samples; it closes at the first later sample
//     whose sampledRTT(x) <= that level (within DCAExactResolution for exact
//     samples, tick=0), or when the epoch ends in a loss
//     (OnCongestion of kind Loss or ECN, or OnRTO): the queue whose growth
//     opened the epoch has overflowed and the Reno reduction answers it, so
//     on a persistently queued hop, where the RTT never returns to the level
//     it rose from, the next rise opens a new epoch. Only the opening sample
//     may react, so DCA reacts at most once per epoch;
//   - decision=rtt / 2rtt: after a reaction at an ACK with SndNxt = s, the
//     next reaction waits until CumAck >= s (one round), and for 2rtt one
//     further round after that.
//
// Loss, ECN and RTO are handled as Reno.
type DCA struct {
	window
	cfg DCAConfig

	buf   []int64 // ring of the last w samples, ns
	head  int     // next write position
	n     int     // samples held (<= w)
	total uint64  // samples taken
	sumW  uint64  // sum of the last w samples, ns (exact)
	sumX  uint64  // sum of the last x samples, ns (exact)
	sqW   u128    // sum of squares of the last w samples, ns^2 (exact)

	epochOpen  bool
	epochLevel float64 // ns: the smallest of the w samples when the epoch opened
	epochs     uint64
	lossEnds   uint64 // epochs ended by a loss, ECN mark or timeout

	holdRounds int    // rounds still to wait before the next reaction (rtt/2rtt)
	holdEnd    uint64 // the current hold round ends when CumAck >= holdEnd

	decisions uint64
	congested uint64
	reactions uint64
	last      DCADecision
	haveLast  bool
	trace     func(DCADecision)
	vars      [10]Var // State().Vars storage, reused
}

// NewDCA returns a DCA controller.
func NewDCA(cfg DCAConfig, env Env) (*DCA, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	w, err := newWindow("dca", cfg.BaseConfig, env.MSS)
	if err != nil {
		return nil, err
	}
	d := reuse[DCA](env)
	buf := d.buf // a reused DCA's ring, if long enough
	if cap(buf) >= cfg.W {
		buf = buf[:cfg.W]
		clear(buf)
	} else {
		buf = make([]int64, cfg.W)
	}
	*d = DCA{window: w, cfg: cfg, buf: buf}
	return d, nil
}

// Name returns "dca".
func (d *DCA) Name() string { return "dca" }

// Config returns the configuration in use.
func (d *DCA) Config() DCAConfig { return d.cfg }

// SetTrace installs f to receive every decision (one per RTT sample once w
// samples exist); nil removes it. f runs synchronously inside OnAck.
func (d *DCA) SetTrace(f func(DCADecision)) { d.trace = f }

// LastDecision returns the most recent decision, if any.
func (d *DCA) LastDecision() (DCADecision, bool) { return d.last, d.haveLast }

// Counts returns the number of decisions evaluated, of congested decisions,
// of reactions, and of congestion epochs opened.
func (d *DCA) Counts() (decisions, congested, reactions, epochs uint64) {
	return d.decisions, d.congested, d.reactions, d.epochs
}

// LossEndedEpochs returns the number of congestion epochs that ended in a
// loss, an ECN mark or a timeout rather than by the RTT's return.
func (d *DCA) LossEndedEpochs() uint64 { return d.lossEnds }

// DelayReductions returns the number of reactions (window reductions on a
// congestion decision): ccalgo.DelayReactor.
func (d *DCA) DelayReductions() uint64 { return d.reactions }

// addSample appends one tcprtt sample (ns) to the ring, keeping exact
// running sums so each decision costs O(1) whatever w is.
func (d *DCA) addSample(ns int64) {
	v := uint64(ns)
	w := len(d.buf)
	if d.n == w { // the oldest sample leaves the w window
		old := uint64(d.buf[d.head])
		d.sumW -= old
		d.sqW = d.sqW.sub(mul64(old, old))
	}
	if d.n >= d.cfg.X { // the sample x back leaves the x window
		d.sumX -= uint64(d.buf[(d.head-d.cfg.X+w)%w])
	}
	d.buf[d.head] = ns
	d.head = (d.head + 1) % w
	if d.n < w {
		d.n++
	}
	d.sumW += v
	d.sumX += v
	d.sqW = d.sqW.add(mul64(v, v))
	d.total++
}

// levelTolerance is how far above an epoch's level sampledRTT(x) may be and
// still count as fallen back to it, ns: 0 on a tick's grid,
// DCAExactResolution for exact samples.
func (d *DCA) levelTolerance() float64 {
	if d.cfg.Tick > 0 {
		return 0
	}
	return float64(DCAExactResolution)
}

// windowMin returns the smallest of the last w samples, ns: the RTT level an
// epoch's increase rose from. It scans the ring (O(w)), which happens only
// when an epoch opens.
func (d *DCA) windowMin() int64 {
	m := d.buf[0]
	for _, v := range d.buf[1:d.n] {
		m = min(m, v)
	}
	return m
}

// stats returns sampledRTT(x), windowAvg(w) and the population standard
// deviation of the last w samples, ns. It needs n == w. The variance is
// (w*sum(v^2) - sum(v)^2) / w^2, computed exactly in 128-bit integers
// before the one conversion to float64.
func (d *DCA) stats() (sampled, avg, sd float64) {
	w := uint64(len(d.buf))
	avg = float64(d.sumW) / float64(w)
	sampled = float64(d.sumX) / float64(d.cfg.X)
	num := d.sqW.mulSmall(w).sub(mul64(d.sumW, d.sumW))
	return sampled, avg, math.Sqrt(num.float() / float64(w*w))
}

// u128 is an unsigned 128-bit integer for exact sums of squared nanoseconds.
type u128 struct{ hi, lo uint64 }

func mul64(a, b uint64) u128 { hi, lo := bits.Mul64(a, b); return u128{hi, lo} }

func (x u128) add(y u128) u128 {
	lo, c := bits.Add64(x.lo, y.lo, 0)
	hi, _ := bits.Add64(x.hi, y.hi, c)
	return u128{hi, lo}
}

func (x u128) sub(y u128) u128 {
	lo, b := bits.Sub64(x.lo, y.lo, 0)
	hi, _ := bits.Sub64(x.hi, y.hi, b)
	return u128{hi, lo}
}

func (x u128) mulSmall(m uint64) u128 {
	hi, lo := bits.Mul64(x.lo, m)
	return u128{x.hi*m + hi, lo}
}

func (x u128) float() float64 { return float64(x.hi)*(1<<64) + float64(x.lo) }

// OnAck takes the tcprtt sample, runs the congestion decision and, if it did
// not react, grows the window by the Reno rules.
func (d *DCA) OnAck(a Ack) {
	d.noteAck()
	// Round accounting for rtt/2rtt holds runs on every ACK.
	if d.holdRounds > 0 && a.CumAck >= d.holdEnd {
		d.holdRounds--
		d.holdEnd = a.SndNxt
	}
	reacted := false
	if a.RTT > 0 && !a.InRecovery && !d.inRecovery {
		reacted = d.sample(a)
	}
	if !reacted && d.mayGrow(a) {
		d.renoGrowth(a.Acked)
	}
}

// sample records one tcprtt sample and evaluates the decision; it reports
// whether the window was reduced.
func (d *DCA) sample(a Ack) bool {
	rtt := a.RTT
	if d.cfg.Tick > 0 {
		rtt -= rtt % d.cfg.Tick
	}
	d.addSample(int64(rtt))
	if d.n < len(d.buf) {
		return false
	}
	sampled, avg, sd := d.stats()
	rec := DCADecision{Now: a.Now, Sample: rtt, SampledRTT: time.Duration(math.Round(sampled)),
		WindowAvg: time.Duration(math.Round(avg)), Threshold: time.Duration(math.Round(sd)),
		Congested: sampled > avg+sd, CwndBefore: d.cwnd}
	d.decisions++
	// The epoch ends when the RTT is back to the level it began at.
	if d.epochOpen && sampled <= d.epochLevel+d.levelTolerance() {
		d.epochOpen = false
	}
	if rec.Congested {
		d.congested++
		opens := !d.epochOpen
		if opens {
			d.epochOpen = true
			d.epochLevel = float64(d.windowMin())
			d.epochs++
		}
		switch {
		case d.cfg.Decision == PerEpoch && !opens:
			rec.Held = "epoch"
		case d.cfg.Decision != PerEpoch && d.holdRounds > 0:
			rec.Held = d.cfg.Decision.String()
		default:
			d.react(a)
			rec.Reacted = true
		}
	}
	rec.EpochOpen = d.epochOpen
	if d.epochOpen {
		rec.EpochLevel = time.Duration(d.epochLevel)
	}
	rec.CwndAfter = d.cwnd
	d.last, d.haveLast = rec, true
	if d.trace != nil {
		d.trace(rec)
	}
	return rec.Reacted
}

// OnCongestion ends an open congestion epoch (it ended in a loss or an ECN
// mark) and applies Reno's reduction.
func (d *DCA) OnCongestion(c Congestion) {
	d.endEpochByLoss()
	d.window.OnCongestion(c)
}

// OnRTO ends an open congestion epoch and applies the RFC 5681 timeout rules.
func (d *DCA) OnRTO(now clock.Time, inFlight int) {
	d.endEpochByLoss()
	d.window.OnRTO(now, inFlight)
}

// endEpochByLoss closes an open epoch at a loss, ECN mark or timeout.
func (d *DCA) endEpochByLoss() {
	if d.epochOpen {
		d.epochOpen = false
		d.lossEnds++
	}
}

// react applies cwnd = cwnd - cwnd*reduction, floored at 2 SMSS, sets
// ssthresh to the new cwnd and starts the rtt/2rtt hold.
func (d *DCA) react(a Ack) {
	d.reactions++
	floor := MinSsthreshSegments * d.mss
	if d.cwnd > floor {
		d.cwnd = max(d.cwnd-int(float64(d.cwnd)*d.cfg.Reduction), floor)
	}
	d.ssthresh = max(d.cwnd, floor)
	d.bytesAcked = 0
	if k := d.cfg.Decision.rounds(); k > 0 {
		d.holdRounds = k
		d.holdEnd = a.SndNxt
	}
}

// State returns a snapshot with DCA's last compared values in Vars. Vars
// uses storage owned by the controller (no allocation per call): it is valid
// until the next call of State; copy it to keep it.
func (d *DCA) State() State {
	s := d.window.state()
	l := d.last
	epoch := 0.0
	if d.epochOpen {
		epoch = 1
	}
	d.vars = [...]Var{
		{Name: "sampled_rtt", Value: l.SampledRTT.Seconds() * 1e3, Unit: "ms"},
		{Name: "window_avg", Value: l.WindowAvg.Seconds() * 1e3, Unit: "ms"},
		{Name: "threshold", Value: l.Threshold.Seconds() * 1e3, Unit: "ms"},
		{Name: "samples", Value: float64(d.total), Unit: "count"},
		{Name: "decisions", Value: float64(d.decisions), Unit: "count"},
		{Name: "congested", Value: float64(d.congested), Unit: "count"},
		{Name: "reactions", Value: float64(d.reactions), Unit: "count"},
		{Name: "epochs", Value: float64(d.epochs), Unit: "count"},
		{Name: "epochs_loss_ended", Value: float64(d.lossEnds), Unit: "count"},
		{Name: "epoch_open", Value: epoch, Unit: "bool"},
	}
	s.Vars = d.vars[:]
	return s
}

func init() {
	spec.Add(Registry, "dca", "delay-based congestion avoidance (Martin, Nilsson & Rhee 2003) on Reno",
		DefaultDCAConfig, func(c DCAConfig, env Env) (Controller, error) { return NewDCA(c, env) })
}
