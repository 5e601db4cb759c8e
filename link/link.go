// Package link models one direction of a network path as a pipeline of
// stages (docs/link.md): a loss stage (Bernoulli, hashed or Gilbert-Elliott), a queue
// discipline (package qdisc), a serializer (a constant rate, or a Mahimahi
// trace of delivery opportunities, looped), and propagation delay with
// optional jitter that never reorders unless asked.
//
// The package is sans-I/O (docs/architecture.md): it never reads a clock, sleeps,
// starts goroutines or touches sockets. A driver passes the current time into
// every call and asks Deadline for the next instant the link needs control.
// The same Link runs in the live relay (cmd/bottleneck) and in the simulator.
//
// All instants are modelled exactly, independent of when the driver calls:
// a packet that enters the queue at a and is dequeued at s (the instant the
// serializer becomes free, or a if it is idle) departs at
// s + size*8/Rate and arrives at the far end at departure + Delay (+ jitter).
package link

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"cclab/clock"
	"cclab/event"
	"cclab/qdisc"
)

// DefaultMTU is the packet size of one trace delivery opportunity and the
// queue's typical packet size when Config.MTU is 0, bytes (Mahimahi uses
// MTU-sized opportunities of 1500 bytes).
const DefaultMTU = 1500

// DefaultQueue is the queue discipline used when Config.Queue is empty.
const DefaultQueue = "droptail"

// Config describes one direction of a link.
type Config struct {
	Rate      float64       // serialization rate, bits/s; 0 = unlimited (unless a trace is set)
	Trace     string        // Mahimahi trace contents (one ms timestamp per line); the caller reads files. Exclusive with Rate.
	TraceData *Trace        // an already parsed trace (from TraceFromReader); takes precedence over Trace
	Delay     time.Duration // one-way propagation delay
	Jitter    time.Duration // each packet's delay is Delay + uniform(-Jitter, +Jitter), at least 0
	Reorder   bool          // if false (default), jitter never reorders: a packet never arrives before its predecessor
	Loss      string        // "" | "none" | "0.02" | "bernoulli:p=0.02" | "hashed:p=0.02" | "ge:p=..,r=..,h=..,k=.." | "getime:good=..,bad=..,h=..,k=.."
	Queue     string        // qdisc spec, e.g. "droptail:20p", "red:min=5,max=15,maxp=0.1,ecn"; "" = DefaultQueue
	MTU       int           // bytes per trace delivery opportunity and the queue's mean packet size; 0 = DefaultMTU
	Start     clock.Time    // origin of the trace's timestamps; Never = the first instant the link is called with
}

// Env is what a link needs from its surroundings.
type Env struct {
	Rand  *rand.Rand          // seeded source; the link derives separate streams for loss, jitter and the queue from it at New. nil = a fixed seed.
	Sink  event.Sink          // receives the link's events; nil discards them
	Index int32               // hop index written into Event.Link
	Free  func(*qdisc.Packet) // called for every packet the link drops (loss stage or queue), after its Drop event; nil = nothing
	// LossKey is the key of a "hashed" loss stage (HashedConfig); the
	// simulator sets HashedKey(seed, stream). Other loss models ignore it.
	LossKey uint64
}

// DropReasons is the size of Stats.Drops, indexed by qdisc.DropReason.
const DropReasons = 8

// Stats are a link's cumulative counters. The ones every packet updates
// come first (one cache line).
type Stats struct {
	Arrivals       int64              // packets offered by Send and Inject
	ArrivalBytes   int64              // bytes offered
	Enqueued       int64              // packets the queue accepted
	Dequeues       int64              // packets that left the queue for the serializer
	Departures     int64              // packets delivered at the far end
	DepartureBytes int64              // bytes delivered at the far end
	QueueDelaySum  time.Duration      // sum of the sojourn times of dequeued packets
	QueueDelayMax  time.Duration      // largest sojourn time of a dequeued packet
	BusyTime       time.Duration      // time the serializer spent serving packets
	Injected       int64              // of Arrivals, those offered by Inject
	Drops          [DropReasons]int64 // packets dropped, by qdisc.DropReason (DropRandom = loss stage)
	DropBytes      int64              // bytes dropped, all reasons
	Marks          int64              // packets CE-marked by the queue
	QueueLen       int                // packets in the queue now
	QueueBytes     int                // bytes in the queue now
	InTransit      int                // packets being serialized or propagating now
}

// TotalDrops returns the sum of Drops over all reasons.
func (s Stats) TotalDrops() int64 {
	var n int64
	for _, d := range s.Drops {
		n += d
	}
	return n
}

// Link is one direction of a path. It is not safe for concurrent use.
//
// The fields a packet touches come first, so that a packet crossing one of
// the many links of a large simulation touches few cache lines; the queue's
// length is mirrored in qlen (read on every call) instead of asking the
// queue discipline, a separate object behind an interface, each time.
type Link struct {
	now clock.Time // latest instant seen
	cur *qdisc.Packet
	// qlen is the packets in the queue: q.Len() after the latest Enqueue
	// or Dequeue, the only calls that change it. During them it is stale:
	// the handler's drops and marks ask the queue.
	qlen int
	// passMax is the largest packet, bytes, that Through passes; -1 if the
	// link is not transparent (no loss stage, unlimited rate, no delay or
	// jitter, and a qdisc.Transparent queue: an idle link passes a packet
	// at once).
	passMax int
	// settled: advance has nothing to do before this instant (run sets
	// it; an Enqueue that may start a service runs at once).
	settled clock.Time
	started bool
	stalled bool  // queue reported packets but returned none
	quiet   bool  // no sink: events are not even built
	index   int32 // env.Index
	// passed and passedBytes count the packets (and bytes) Through passed:
	// each is an arrival, an enqueue, a dequeue and a departure, added to
	// those counters by Stats. Through so writes this line, not the two
	// of st that hold them (issue #29: a simulator's access links are
	// many, and each packet finds its link out of the cache).
	passed, passedBytes int64
	// The first line ends here: Through reads it and the delay line's
	// length in the next, and touches nothing else of the struct.
	dl       delayLine
	freeAt   clock.Time // instant the serializer became (or becomes) free
	curStart clock.Time
	txEnd    clock.Time
	curArr   clock.Time // far-end arrival instant of cur (drawn when its service begins)
	lastArr  clock.Time // latest arrival instant scheduled (no-reorder clamp)
	// qbytes is q.Bytes() after the latest Enqueue or Dequeue, kept only
	// for events (not if quiet): the Dequeue and Departure events read it.
	qbytes int
	st     Stats
	q      qdisc.Queue
	dt     *qdisc.DropTail  // q if it is a DropTail (the default), called directly; else nil
	rate   rateSerializer   // the serializer unless trace is set
	trace  *traceSerializer // the serializer of a trace-driven link; nil at a constant rate
	delay  time.Duration    // cfg.Delay
	jitter time.Duration    // cfg.Jitter
	loss   lossModel
	sink   event.Sink
	ev     event.Event // the event given to sink (emit): set in place, not copied; Link set at New

	cfg Config
	env Env

	lossRand, jitterRand *rand.Rand
}

// Bounds of a link's parameters (docs/link.md). Below MinRate a datagram's
// serialization time overflows no clock but is no model of a network; the
// bounds keep every instant computed from them far inside clock.Time.
const (
	MinRate  = 1e3       // slowest rate, bits/s (1 kbit/s)
	MaxRate  = 1e13      // fastest rate, bits/s (10 Tbit/s)
	MaxDelay = time.Hour // longest propagation delay and jitter
)

// New builds a link. Errors name the offending field and its allowed values.
func New(cfg Config, env Env) (*Link, error) {
	if math.IsNaN(cfg.Rate) || math.IsInf(cfg.Rate, 0) || cfg.Rate < 0 || cfg.Rate > 0 && (cfg.Rate < MinRate || cfg.Rate > MaxRate) {
		return nil, fmt.Errorf("link: Rate %v: must be 0 (unlimited) or between %g and %g bits/s (1kbit..10Tbit)", cfg.Rate, float64(MinRate), float64(MaxRate))
	}
	if cfg.Delay < 0 || cfg.Delay > MaxDelay {
		return nil, fmt.Errorf("link: Delay %v: must be between 0 and %v", cfg.Delay, MaxDelay)
	}
	if cfg.Jitter < 0 || cfg.Jitter > MaxDelay {
		return nil, fmt.Errorf("link: Jitter %v: must be between 0 and %v", cfg.Jitter, MaxDelay)
	}
	if cfg.MTU < 0 || cfg.MTU > 1<<16 {
		return nil, fmt.Errorf("link: MTU %d: must be 1..65536 bytes (0 = %d)", cfg.MTU, DefaultMTU)
	}
	if cfg.MTU == 0 {
		cfg.MTU = DefaultMTU
	}
	if cfg.TraceData == nil && strings.TrimSpace(cfg.Trace) != "" {
		tr, err := TraceFromReader(strings.NewReader(cfg.Trace))
		if err != nil {
			return nil, err
		}
		cfg.TraceData = tr
	}
	if cfg.TraceData != nil && cfg.Rate != 0 {
		return nil, fmt.Errorf("link: set Rate or Trace, not both")
	}
	lm, err := parseLoss(cfg.Loss, env.LossKey)
	if err != nil {
		return nil, err
	}
	if env.Rand == nil {
		env.Rand = rand.New(rand.NewPCG(1, 2))
	}
	sink := env.Sink
	if sink == nil {
		sink = event.Discard
	}
	l := &Link{cfg: cfg, env: env, sink: sink, quiet: env.Sink == nil, loss: lm, index: env.Index,
		delay: cfg.Delay, jitter: cfg.Jitter, passMax: -1}
	l.ev.Link = env.Index
	// Separate streams, drawn in a fixed order, so that e.g. enabling jitter
	// does not shift the loss stage's draws.
	l.lossRand = rand.New(rand.NewPCG(env.Rand.Uint64(), env.Rand.Uint64()))
	l.jitterRand = rand.New(rand.NewPCG(env.Rand.Uint64(), env.Rand.Uint64()))
	qRand := rand.New(rand.NewPCG(env.Rand.Uint64(), env.Rand.Uint64()))

	rate := cfg.Rate
	if cfg.TraceData != nil {
		l.trace = &traceSerializer{tr: cfg.TraceData, mtu: cfg.MTU}
		rate = cfg.TraceData.Rate(cfg.MTU)
	} else if cfg.Rate > 0 {
		l.rate.nsPerByte = 8e9 / cfg.Rate
	}
	qs := cfg.Queue
	if strings.TrimSpace(qs) == "" {
		qs = DefaultQueue
	}
	q, err := qdisc.New(qs, qdisc.Env{Handler: (*handler)(l), Rand: qRand, Rate: rate, MTU: cfg.MTU})
	if err != nil {
		return nil, fmt.Errorf("link: Queue: %v", err)
	}
	l.q = q
	l.dt, _ = q.(*qdisc.DropTail)
	if cfg.Reorder {
		l.dl.rh = &reorderHeap{}
	}
	if tq, ok := q.(qdisc.Transparent); ok && lm == nil && cfg.TraceData == nil && cfg.Rate == 0 &&
		cfg.Delay == 0 && cfg.Jitter == 0 {
		l.passMax = tq.EmptyAdmits()
	}
	return l, nil
}

// Config returns the link's configuration (with defaults filled in).
func (l *Link) Config() Config { return l.cfg }

// Queue returns the link's queue discipline (read-only use: Len, Bytes).
func (l *Link) Queue() qdisc.Queue { return l.q }

// Send offers p to the link at now: the loss stage may drop it, then the
// queue may drop or mark it, then it waits for the serializer and
// propagates. The link owns p until Deliver returns it or Env.Free is called
// for it. Calls with now earlier than a previous call are treated as the
// previous instant.
func (l *Link) Send(now clock.Time, p *qdisc.Packet) {
	now = l.advance(now)
	l.st.Arrivals++
	l.st.ArrivalBytes += int64(p.Size)
	if l.loss != nil && l.loss.lose(l.lossRand, now) {
		(*handler)(l).Dropped(now, p, qdisc.DropRandom)
		return
	}
	l.enqueue(now, p)
}

// Through passes p across the link at once if the link is transparent (no
// loss stage, unlimited rate, no delay, no jitter, a drop-tail queue that p
// fits) and idle, and reports whether it did; otherwise it does nothing and
// the caller uses Send. When it reports true, the link's counters, events
// and behaviour from then on are exactly those of Send(now, p) followed by
// Deliver(now) returning p (TestThroughMatchesSend), at a fraction of the
// cost: an access link of the simulator is such a link. It leaves the
// serializer's instants (freeAt, curStart, txEnd, curArr, lastArr) as they
// are, which Send would set to now: on an idle link without rate or delay
// none is read before the next enqueue sets freeAt to its instant and
// begin sets the others (the arrival clamp lastArr never binds, every
// arrival then being at or after now), and a drop-tail queue never stalls.
func (l *Link) Through(now clock.Time, p *qdisc.Packet) bool {
	if p.Size > l.passMax || l.cur != nil || l.qlen != 0 || l.dl.len() != 0 {
		return false
	}
	now = l.advance(now) // an idle rate-less link: only its clock moves
	l.passed++           // an arrival, enqueue, dequeue and departure (Stats)
	l.passedBytes += int64(p.Size)
	p.Enqueued = now
	if !l.quiet {
		l.emit(now, event.Enqueue, p, 0, 1, p.Size, 0)
		l.emit(now, event.Dequeue, p, 0, 0, 0, 0)
		l.emit(now, event.Departure, p, 0, 0, 0, 0)
	}
	return true
}

// Transparent reports whether Through may pass packets across the link
// (no loss stage, unlimited rate, no delay or jitter, a transparent queue):
// if not, Through always reports false and a driver can skip it.
func (l *Link) Transparent() bool { return l.passMax >= 0 }

// Inject offers cross traffic p directly to the queue at now. It skips the
// loss stage (the loss stage models the path the measured flows take
// upstream of the bottleneck; synthetic cross traffic is generated at the
// queue). Otherwise it is treated exactly as a packet from Send: it occupies
// the queue and the serializer and is returned by Deliver, where the caller
// recognises and recycles it (e.g. by Packet.Ctx).
func (l *Link) Inject(now clock.Time, p *qdisc.Packet) {
	now = l.advance(now)
	l.st.Arrivals++
	l.st.ArrivalBytes += int64(p.Size)
	l.st.Injected++
	l.enqueue(now, p)
}

func (l *Link) enqueue(now clock.Time, p *qdisc.Packet) {
	idle := l.cur == nil && l.qlen == 0
	var ok bool
	if l.dt != nil {
		ok = l.dt.Enqueue(now, p)
	} else {
		ok = l.q.Enqueue(now, p)
	}
	l.mirror()
	if !ok {
		return
	}
	l.st.Enqueued++
	l.stalled = false
	if !l.quiet {
		l.emit(now, event.Enqueue, p, 0, l.qlen, l.qbytes, 0)
	}
	if idle && l.freeAt < now {
		l.freeAt = now
	}
	if l.cur == nil { // a busy serializer is settled at now: Send or Inject advanced it
		l.run(now)
	}
}

// mirror copies the queue's length (and, for events, bytes) into qlen
// and qbytes after an Enqueue or Dequeue.
func (l *Link) mirror() {
	if dt := l.dt; dt != nil {
		l.qlen, l.qbytes = dt.Len(), dt.Bytes()
		return
	}
	l.qlen = l.q.Len()
	if !l.quiet {
		l.qbytes = l.q.Bytes()
	}
}

// advance runs the serializer up to now at the modelled instants. Until
// settled it has nothing to do (a serialization under way, nothing
// queued, or a trace's next opportunity ahead): it returns at once (it is
// inlined); run does the rest.
func (l *Link) advance(now clock.Time) clock.Time {
	now = max(now, l.now)
	l.now = now
	if now < l.settled {
		return now
	}
	l.run(now)
	return now
}

// run is advance's loop: it completes serializations and begins the
// services due by now (= l.now), then sets settled. It is kept out of line
// so that advance stays small enough to be inlined at every caller (with
// run inlined, profile-guided inlining made advance a call at most of
// them, though most calls return at once).
//
//go:noinline
func (l *Link) run(now clock.Time) {
	if !l.started {
		l.started = true
		l.freeAt = now
		if l.trace != nil {
			l.trace.base = now
			if l.cfg.Start != clock.Never && l.cfg.Start <= now {
				l.trace.base = l.cfg.Start
			}
		}
	}
	for {
		if l.cur != nil {
			if l.txEnd > now {
				l.settled = l.txEnd
				return
			}
			l.complete()
			continue
		}
		if l.stalled || l.qlen == 0 {
			l.settled = math.MaxInt64 // until the next Enqueue
			return
		}
		s := l.startAt()
		if s > now {
			l.settled = s
			return
		}
		var p *qdisc.Packet
		if l.dt != nil {
			p = l.dt.Dequeue(s)
		} else {
			p = l.q.Dequeue(s)
		}
		l.mirror()
		if p == nil {
			l.stalled = l.qlen > 0
			continue // stalled, or empty
		}
		l.begin(s, p)
	}
}

func (l *Link) begin(s clock.Time, p *qdisc.Packet) {
	soj := s.Sub(p.Enqueued)
	l.st.Dequeues++
	l.st.QueueDelaySum += soj
	if soj > l.st.QueueDelayMax {
		l.st.QueueDelayMax = soj
	}
	if !l.quiet {
		l.emit(s, event.Dequeue, p, 0, l.qlen, l.qbytes, soj)
	}
	l.cur = p
	l.curStart = s
	if l.trace != nil {
		l.txEnd = l.trace.finish(s, p.Size)
	} else {
		l.txEnd = l.rate.finish(s, p.Size)
	}
	// The arrival instant is known once service begins: propagation
	// (and jitter) follow the serialization that has just been decided.
	d := l.delay
	if l.jitter > 0 {
		d += time.Duration((l.jitterRand.Float64()*2 - 1) * float64(l.jitter))
		if d < 0 {
			d = 0
		}
	}
	at := l.txEnd.Add(d)
	if l.dl.rh == nil && at < l.lastArr {
		at = l.lastArr
	}
	if at > l.lastArr {
		l.lastArr = at
	}
	l.curArr = at
}

func (l *Link) complete() {
	p := l.cur
	l.cur = nil
	l.freeAt = l.txEnd
	l.st.BusyTime += l.txEnd.Sub(l.curStart)
	l.dl.push(p, l.curArr)
}

// startAt returns the earliest instant at which a queued packet may begin
// service: freeAt at a constant rate, a trace's next opportunity from
// freeAt on.
func (l *Link) startAt() clock.Time {
	if l.trace != nil {
		return l.trace.startAt(l.freeAt)
	}
	return l.freeAt
}

// Deadline returns the next instant at which the link needs control: a
// serialization completes, a queued packet can begin service (a trace's next
// opportunity), or a packet reaches the far end. It returns clock.Never when
// the link is idle. The driver calls Deliver at (or after) that instant.
func (l *Link) Deadline() clock.Time {
	d := clock.Never
	if l.cur != nil {
		d = l.txEnd
	} else if l.qlen > 0 && !l.stalled && l.started {
		d = l.startAt()
	}
	if l.dl.len() > 0 {
		d = clock.Earliest(d, l.dl.peek())
	}
	return d
}

// DeliveryDeadline returns the next instant at which the link must be
// called for every packet to leave at its modelled instant, for a driver
// that does not need the queue's dequeues reported at their own instants:
// the earliest far-end arrival among the packets in flight and in service
// (a packet still queued arrives later; with Reorder and Jitter, the end
// of the current serialization too, since the next packet may overtake),
// or, with nothing in service, the instant a queued packet can begin
// service (a trace's next opportunity). It returns clock.Never when the
// link is idle.
//
// Dequeues between calls are modelled at their exact instants all the
// same: every call (Send, Inject, Deliver, Advance) first runs the link up
// to its now, in order, so the link's state, its random draws and the
// sequence of its events are those of a driver following Deadline; only
// the dequeues' events (and the Stats counters) are reported at the next
// call rather than at their instants. A simulator driving a link this way
// needs one event per packet (its arrival) instead of two (docs/link.md).
func (l *Link) DeliveryDeadline() clock.Time {
	if l.dl.n > 0 && (l.cur != nil || l.qlen == 0) {
		// Packets in flight in the FIFO ring (n counts only the ring's:
		// arrivals in order, no reordering): the packet in service
		// arrives no earlier than the last one in flight.
		return l.dl.ring[l.dl.head].at
	}
	return l.deliveryDeadline()
}

// deliveryDeadline is DeliveryDeadline's general case.
func (l *Link) deliveryDeadline() clock.Time {
	d := clock.Never
	if l.dl.len() > 0 {
		d = l.dl.peek()
	}
	switch {
	case l.cur != nil:
		d = clock.Earliest(d, l.curArr)
		if l.dl.rh != nil && l.jitter > 0 && l.qlen > 0 {
			d = clock.Earliest(d, l.txEnd)
		}
	case l.qlen > 0 && !l.stalled && l.started:
		d = clock.Earliest(d, l.startAt())
	}
	return d
}

// Advance runs the link up to now: serializations that completed and
// dequeues that happened by now take place (at their modelled instants)
// and emit their events. A driver following DeliveryDeadline calls it
// before reading Stats or when the events up to now must have been
// reported (at the end of a measurement).
func (l *Link) Advance(now clock.Time) { l.advance(now) }

// Deliver advances the link to now and returns the next packet whose
// arrival instant at the far end is <= now, in arrival order, or nil. Call it
// repeatedly until nil. The caller owns the returned packet.
func (l *Link) Deliver(now clock.Time) *qdisc.Packet {
	p, _ := l.DeliverAt(now)
	return p
}

// DeliverAt is Deliver that also returns the packet's modelled arrival
// instant at the far end (<= now), e.g. to feed the next hop exactly.
func (l *Link) DeliverAt(now clock.Time) (*qdisc.Packet, clock.Time) {
	now = l.advance(now)
	if l.dl.len() == 0 || l.dl.peek() > now {
		return nil, clock.Never
	}
	it := l.dl.pop()
	p := it.p
	l.st.Departures++
	l.st.DepartureBytes += int64(p.Size)
	if !l.quiet {
		l.emit(it.at, event.Departure, p, 0, l.qlen, l.qbytes, 0)
	}
	return p, it.at
}

// emit gives the sink the link's event of kind k about packet p at t: the
// drop reason, the queue's length after it (packets, bytes) and the
// packet's sojourn time. It sets the fields of the link's own event in
// place (building an Event and passing it by value costs a temporary and a
// copy of 128 bytes per event); the fields a link's events never set
// (sender state) stay zero, and Link stays the link's index (set at New),
// as sinks do not change the event (event.Sink).
func (l *Link) emit(t clock.Time, k event.Kind, p *qdisc.Packet, reason uint8, qlen, qbytes int, soj time.Duration) {
	e := &l.ev
	e.Time, e.Kind, e.Flow, e.Seq, e.Bytes, e.Reason = t, k, p.Flow, p.ID, p.Size, reason
	e.QueueLen, e.QueueBytes, e.Sojourn = qlen, qbytes, soj
	l.sink.Record(e)
}

// Stats returns the link's counters.
func (l *Link) Stats() Stats {
	s := l.st
	s.Arrivals += l.passed
	s.Enqueued += l.passed
	s.Dequeues += l.passed
	s.Departures += l.passed
	s.ArrivalBytes += l.passedBytes
	s.DepartureBytes += l.passedBytes
	s.QueueLen = l.qlen
	s.QueueBytes = l.q.Bytes()
	s.InTransit = l.dl.len()
	if l.cur != nil {
		s.InTransit++
	}
	return s
}

// handler receives the queue's drops and marks (and the loss stage's drops).
type handler Link

// Dropped records a drop, emits its event and hands p to Env.Free.
func (h *handler) Dropped(now clock.Time, p *qdisc.Packet, reason qdisc.DropReason) {
	l := (*Link)(h)
	if int(reason) < DropReasons {
		l.st.Drops[reason]++
	}
	l.st.DropBytes += int64(p.Size)
	var soj time.Duration
	if p.Enqueued != clock.Never && reason == qdisc.DropCoDel {
		soj = now.Sub(p.Enqueued)
	}
	// The queue's own length, not the qlen/qbytes mirror: a queue drops
	// (and marks) inside Enqueue or Dequeue, before the link mirrors the
	// length that operation leaves.
	if !l.quiet {
		l.emit(now, event.Drop, p, uint8(reason), l.q.Len(), l.q.Bytes(), soj)
	}
	if l.env.Free != nil {
		l.env.Free(p)
	}
}

// Marked records a CE mark and emits its event.
func (h *handler) Marked(now clock.Time, p *qdisc.Packet) {
	l := (*Link)(h)
	l.st.Marks++
	if !l.quiet {
		l.emit(now, event.Mark, p, 0, l.q.Len(), l.q.Bytes(), 0)
	}
}
