package campaign

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"syscall"
	"time"
)

// Transfer is one transfer as a Runner gets it.
type Transfer struct {
	Item
	Campaign string
	Attempt  int // 1, 2, ...
	From, To Host
	Settings TransferSettings
	// Relay is the relay's address the sender sends to when the pair
	// crosses one (Spec.RelayOf), "" for To's data address.
	Relay string
}

// Outcome is what one finished transfer measured (the sender's and the
// receiver's summaries and what was taken from them).
type Outcome struct {
	Start        time.Time
	Seconds      float64 // s
	Bytes        int64   // delivered
	GoodputBps   float64 // bits/s
	Retransmits  int64
	Unnecessary  int64 // -1: not reported
	RTOs         int64
	RTOCauses    map[string]int64
	PacketsSent  int64   // -1: not reported
	MinRTTms     float64 // ms
	MeanSRTTms   float64 // ms
	ClockOffset  time.Duration
	OffsetRTT    time.Duration
	SenderJSON   []byte
	ReceiverJSON []byte
	SenderQlog   []byte
	ReceiverQlog []byte
}

// Runner runs one transfer. An error fails the attempt; a *Failure names
// its cause (otherwise Classify finds one).
type Runner interface {
	Run(ctx context.Context, t Transfer) (*Outcome, error)
}

// Failure causes, as stored (docs/campaigns.md, "Status").
const (
	CauseDialRefused  = "dial_refused"   // an agent's control port refused the connection
	CauseDial         = "dial_error"     // an agent could not be reached otherwise (no route, name, TLS/handshake)
	CauseUnauthorized = "unauthorized"   // an agent refused our credentials or we refused its, or it speaks another control protocol version (not retried within a run)
	CauseTimeout      = "timeout"        // the transfer did not finish within schedule.timeout
	CauseTransfer     = "transfer_error" // the agents reported a failed transfer
)

// Failure is a failed transfer with its cause.
type Failure struct {
	Cause string // a Cause* constant
	Err   error
}

func (f *Failure) Error() string { return f.Cause + ": " + f.Err.Error() }
func (f *Failure) Unwrap() error { return f.Err }

// Classify returns the failure cause of a runner's error: a *Failure's
// cause, timeout for deadlines and network timeouts, dial_refused for a
// refused connection, transfer_error otherwise.
func Classify(err error) string {
	var f *Failure
	var ne net.Error
	switch {
	case errors.As(err, &f):
		return f.Cause
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return CauseTimeout
	case errors.Is(err, syscall.ECONNREFUSED):
		return CauseDialRefused
	}
	return CauseTransfer
}

// EventKind is what a progress Event reports.
type EventKind int

// Event kinds.
const (
	EventStart EventKind = iota // an attempt started
	EventDone                   // an attempt ended (Status, Cause, Err)
)

// Event is one step of a campaign's progress.
type Event struct {
	Kind    EventKind
	Item    Item
	Attempt int
	Status  string // EventDone: StatusDone or StatusFailed
	Cause   string
	Err     error
	Wall    time.Duration // EventDone: the attempt's wall time
	Retry   bool          // EventDone of a failed attempt: it will be tried again
	Counts  Counts
	Running int
}

// Counts are the plan's transfers by state, and this run's failed
// attempts by cause.
type Counts struct {
	Total   int // transfers in the plan
	Skipped int // done or given up in an earlier run (stored)
	Done    int // finished in this run
	Failed  int // gave up in this run (every attempt failed)
	// Deferred are the transfers whose attempt in this run failed with a
	// cause that is not retried within a run (unauthorized) while attempts
	// are left: not done; the next run tries them again.
	Deferred int
	// FailedAttempts counts this run's failed attempts by cause (Cause*
	// constants), retried ones included; nil when none failed.
	FailedAttempts map[string]int
}

// Summary is the counts in one line (cclab campaign run ends with it):
// "N transfers: D done now, S stored before, F failed (G given up, L left
// for the next run); failed attempts: CAUSE K, ..." ("none" when no
// attempt failed).
func (c Counts) Summary() string {
	return fmt.Sprintf("%d transfers: %d done now, %d stored before, %d failed (%d given up, %d left for the next run); failed attempts: %s",
		c.Total, c.Done, c.Skipped, c.NotDone(), c.Failed, c.Deferred, causeList(c.FailedAttempts, "none"))
}

// NotDone returns the transfers this run ended without finishing after
// trying them: given up (Failed) or left for the next run (Deferred).
func (c Counts) NotDone() int { return c.Failed + c.Deferred }

// Scheduler runs a campaign's plan (docs/campaigns.md, "Running").
type Scheduler struct {
	Spec   *Spec
	Store  *Store
	Runner Runner
	// Progress, if set, is called from the scheduler's goroutine for every
	// attempt's start and end.
	Progress func(Event)
	// Log, if set, gets one line per notable thing (the length bound).
	Log func(format string, args ...any)
	// LeaseTTL is how long the run's claim on the campaign (Lease) lasts
	// without renewal; 0 means DefaultLeaseTTL.
	LeaseTTL time.Duration
	// lengthNow, if set (tests), is the clock of the max_length bound.
	lengthNow func() time.Time
}

// ErrMaxLength is returned when schedule.max_length ended the campaign
// with transfers left.
var ErrMaxLength = errors.New("campaign: schedule.max_length reached")

type pending struct {
	item      Item
	attempts  int       // attempts stored or made
	notBefore time.Time // retry delay
}

type result struct {
	p     *pending
	start time.Time
	out   *Outcome
	err   error
	wall  time.Duration
}

// Run runs the plan's transfers that are not stored yet for this campaign
// name and spec digest: one row per attempt, each in its own transaction
// when it ends, so a crash loses only the transfers in flight and a new Run
// continues. At most schedule.concurrency transfers run at once, never two
// on one path (a host pair, either direction) and each host in at most
// schedule.host_concurrency; a host pauses schedule.spacing plus a uniform
// [0, jitter) between its transfers. A failed attempt is retried after
// retry_delay up to schedule.retries times (an unauthorized one in the
// next run). When ctx is done Run stops starting transfers, cancels the
// running ones (they are not stored) and returns ctx's error.
//
// One run at a time runs a campaign (by name): Run first takes the
// campaign's lease in the database (Store.Acquire) and returns a
// *LeasedError naming the other run if one holds it; it renews the lease
// while it runs and releases it when it returns. If the lease is lost (not
// renewed in time and taken by another run) Run stops as if cancelled and
// returns ErrLeaseLost.
func (s *Scheduler) Run(ctx context.Context) (counts Counts, err error) {
	sp := s.Spec
	plan := append(sp.ProbePlan(), sp.Plan()...)
	counts = Counts{Total: len(plan)}
	ttl := s.LeaseTTL
	if ttl <= 0 {
		ttl = DefaultLeaseTTL
	}
	lease, err := s.Store.Acquire(ctx, sp.Name, NewOwner(), ttl, nil)
	if err != nil {
		return counts, err
	}
	ctx, stopLease := lease.Keep(ctx)
	defer func() {
		if err != nil && errors.Is(context.Cause(ctx), ErrLeaseLost) {
			err = context.Cause(ctx)
		}
		stopLease()
	}()
	r := &schedRun{s: s, sp: sp, ctx: ctx, digest: sp.Digest(), counts: counts}
	r.store = context.WithoutCancel(ctx) // a finished transfer is stored even when the run is being cancelled
	if err := s.Store.Register(r.store, sp); err != nil {
		return counts, err
	}
	if err := r.load(plan); err != nil {
		return r.counts, err
	}
	r.runCtx, r.cancel = context.WithCancel(ctx)
	defer r.cancel()
	r.loop()
	return r.counts, r.stopErr
}

// schedRun is the state of one Scheduler.Run after it took the lease.
type schedRun struct {
	s      *Scheduler
	sp     *Spec
	ctx    context.Context // the run's (cancelled when the lease is lost)
	store  context.Context // for saving results: not cancelled with the run
	digest string
	counts Counts

	maxAttempts int
	queue       []*pending // not started, in plan order
	first       time.Time  // the campaign's first transfer (max_length counts from it)
	lengthNow   func() time.Time
	jitter      *rand.Rand
	busyPath    map[[2]string]bool
	busyHost    map[string]int
	freeAt      map[string]time.Time // a host's next start after spacing and jitter
	results     chan result
	running     int
	probing     bool            // a probe is running (alone)
	runCtx      context.Context // the transfers'
	cancel      context.CancelFunc
	stopErr     error // why no more transfers start
}

// load reads the campaign's stored rows and queues the plan's transfers
// that are neither done nor out of attempts.
func (r *schedRun) load(plan []Item) error {
	sp := r.sp
	rows, err := r.s.Store.Rows(r.ctx, sp.Name, r.digest)
	if err != nil {
		return err
	}
	r.maxAttempts = 1 + sp.Schedule.Retries
	done := map[int]bool{}
	attempts := map[int]int{}
	for _, row := range rows {
		if row.Status == StatusDone {
			done[row.Seq] = true
		} else {
			attempts[row.Seq] = max(attempts[row.Seq], row.Attempt)
		}
		if r.first.IsZero() || row.Start.Before(r.first) {
			r.first = row.Start
		}
	}
	for _, it := range plan {
		if done[it.Seq] || attempts[it.Seq] >= r.maxAttempts {
			r.counts.Skipped++
			continue
		}
		r.queue = append(r.queue, &pending{item: it, attempts: attempts[it.Seq]})
	}
	r.lengthNow = time.Now
	if r.s.lengthNow != nil {
		r.lengthNow = r.s.lengthNow
	}
	if r.first.IsZero() {
		r.first = r.lengthNow()
	}
	r.jitter = rand.New(rand.NewPCG(sp.Schedule.Seed, 0x6a6974746572)) // "jitter"
	r.busyPath = map[[2]string]bool{}
	r.busyHost = map[string]int{}
	r.freeAt = map[string]time.Time{}
	r.results = make(chan result)
	return nil
}

// loop starts transfers as paths, hosts and spacing allow and takes their
// results until none is queued or running, or a stop leaves none running.
func (r *schedRun) loop() {
	for len(r.queue) > 0 || r.running > 0 {
		r.checkStop()
		wake := r.startEligible(time.Now())
		if r.running == 0 {
			if r.stopErr != nil {
				break
			}
			if wake.IsZero() {
				continue // (cannot happen: with nothing running every host is free)
			}
		}
		if res, ok := r.wait(wake); ok {
			r.finish(res)
		}
	}
}

// checkStop sets stopErr once max_length has passed with transfers queued
// or the run's context is done.
func (r *schedRun) checkStop() {
	if r.stopErr != nil {
		return
	}
	sched := r.sp.Schedule
	if sched.MaxLength > 0 && r.lengthNow().Sub(r.first) >= sched.MaxLength && len(r.queue) > 0 {
		r.stopErr = ErrMaxLength
		if r.s.Log != nil {
			r.s.Log("schedule.max_length %s reached: %d transfers not started", sched.MaxLength, len(r.queue))
		}
		return
	}
	r.stopErr = r.ctx.Err()
}

// startEligible starts every queued transfer that may start at now, in plan
// order, and returns the earliest instant a waiting one may (zero: none).
func (r *schedRun) startEligible(now time.Time) (wake time.Time) {
	sched := r.sp.Schedule
	for i := 0; r.stopErr == nil && i < len(r.queue) && r.running < sched.Concurrency; i++ {
		p := r.queue[i]
		it := p.item
		if r.probing || i > 0 && r.queue[0].item.IsProbe() || it.IsProbe() && r.running > 0 {
			break // a probe runs alone, before the transfers (they queue after it)
		}
		if r.busyPath[it.Path()] || r.busyHost[it.Pair.From] >= sched.HostConcurrency || r.busyHost[it.Pair.To] >= sched.HostConcurrency {
			continue
		}
		ready := p.notBefore
		for _, h := range []string{it.Pair.From, it.Pair.To} {
			if r.freeAt[h].After(ready) {
				ready = r.freeAt[h]
			}
		}
		if ready.After(now) {
			if wake.IsZero() || ready.Before(wake) {
				wake = ready
			}
			continue
		}
		r.queue = append(r.queue[:i], r.queue[i+1:]...)
		i--
		r.start(p)
	}
	return wake
}

// emit reports ev to Progress with the current counts.
func (r *schedRun) emit(ev Event) {
	if r.s.Progress != nil {
		ev.Counts, ev.Running = r.counts, r.running
		r.s.Progress(ev)
	}
}

// start runs p's next attempt in a goroutine that sends its result.
func (r *schedRun) start(p *pending) {
	sp, it := r.sp, p.item
	p.attempts++
	r.busyPath[it.Path()] = true
	r.busyHost[it.Pair.From]++
	r.busyHost[it.Pair.To]++
	r.running++
	r.probing = it.IsProbe()
	r.emit(Event{Kind: EventStart, Item: it, Attempt: p.attempts})
	t := Transfer{Item: it, Campaign: sp.Name, Attempt: p.attempts, From: sp.Host(it.Pair.From), To: sp.Host(it.Pair.To), Settings: sp.Transfer}
	if r.probing {
		t.Settings = TransferSettings{Bytes: sp.Probe.Bytes, MaxDatagram: sp.Transfer.MaxDatagram, Qlog: true}
	}
	if r, ok := sp.RelayOf(it.Pair); ok {
		t.Relay = r.Listen
	}
	go func() {
		tctx, tcancel := context.WithTimeout(r.runCtx, sp.Schedule.Timeout)
		defer tcancel()
		start := time.Now()
		out, err := r.s.Runner.Run(tctx, t)
		if err == nil && out == nil {
			err = &Failure{CauseTransfer, errors.New("the runner returned no outcome")}
		}
		r.results <- result{p: p, start: start, out: out, err: err, wall: time.Since(start)}
	}()
}

// wait waits for a result, until wake (if not zero), or for the run's
// context (which cancels the running transfers: their results are not
// stored); ok reports whether a result came.
func (r *schedRun) wait(wake time.Time) (res result, ok bool) {
	var timer <-chan time.Time
	var ctxDone <-chan struct{}
	if r.stopErr == nil {
		if !wake.IsZero() {
			tm := time.NewTimer(time.Until(wake))
			defer tm.Stop()
			timer = tm.C
		}
		ctxDone = r.ctx.Done()
	}
	select {
	case <-timer:
	case <-ctxDone:
		r.cancel()
	case res = <-r.results:
		return res, true
	}
	return res, false
}

// finish frees a finished attempt's path and hosts, stores its row and
// counts it, queueing a retry when one is due.
func (r *schedRun) finish(res result) {
	sched := r.sp.Schedule
	r.running--
	r.probing = false
	it := res.p.item
	r.busyPath[it.Path()] = false
	r.busyHost[it.Pair.From]--
	r.busyHost[it.Pair.To]--
	end := time.Now()
	for _, h := range []string{it.Pair.From, it.Pair.To} {
		pause := sched.Spacing
		if sched.Jitter > 0 {
			pause += time.Duration(r.jitter.Int64N(int64(sched.Jitter)))
		}
		r.freeAt[h] = end.Add(pause)
	}
	if res.err != nil && r.runCtx.Err() != nil {
		return // cancelled with the run: in flight, not stored
	}
	row := r.s.row(it, res, r.digest)
	ev := Event{Kind: EventDone, Item: it, Attempt: res.p.attempts, Status: row.Status, Cause: row.Cause, Err: res.err, Wall: res.wall}
	if err := r.s.Store.Save(r.store, &row); err != nil {
		r.cancel()
		r.stopErr = fmt.Errorf("storing transfer %s: %w", it.ID(), err)
		return
	}
	if row.Status == StatusFailed {
		if r.counts.FailedAttempts == nil {
			r.counts.FailedAttempts = map[string]int{}
		}
		r.counts.FailedAttempts[row.Cause]++
	}
	switch {
	case row.Status == StatusDone:
		r.counts.Done++
	case res.p.attempts < r.maxAttempts && row.Cause != CauseUnauthorized:
		ev.Retry = true
		res.p.notBefore = end.Add(sched.RetryDelay)
		r.queue = insertInOrder(r.queue, res.p)
	case res.p.attempts >= r.maxAttempts:
		r.counts.Failed++
	default: // not retried within a run, attempts left
		r.counts.Deferred++
	}
	r.emit(ev)
}

// insertInOrder puts p back into the queue at its plan position.
func insertInOrder(q []*pending, p *pending) []*pending {
	i := 0
	for i < len(q) && q[i].item.Seq < p.item.Seq {
		i++
	}
	q = append(q, nil)
	copy(q[i+1:], q[i:])
	q[i] = p
	return q
}

// row is the stored row of an attempt's result.
func (s *Scheduler) row(it Item, r result, digest string) Row {
	sp := s.Spec
	from, to := sp.Host(it.Pair.From), sp.Host(it.Pair.To)
	row := Row{Campaign: sp.Name, Digest: digest, Seq: it.Seq, Attempt: r.p.attempts, Round: it.Round, ID: it.ID(),
		From: from.Name, To: to.Name, FromGroup: from.Group, ToGroup: to.Group, Variant: it.Variant.Name,
		CC: it.Variant.CC, Recovery: it.Variant.Recovery, Start: r.start.UTC(), Unnecessary: -1, PacketsSent: -1}
	if r.err != nil {
		row.Status, row.Cause, row.Error = StatusFailed, Classify(r.err), r.err.Error()
		return row
	}
	o := r.out
	row.Status = StatusDone
	if !o.Start.IsZero() {
		row.Start = o.Start.UTC()
	}
	row.Seconds, row.Bytes, row.GoodputBps = o.Seconds, o.Bytes, o.GoodputBps
	row.Retransmits, row.Unnecessary, row.RTOs, row.RTOCauses, row.PacketsSent = o.Retransmits, o.Unnecessary, o.RTOs, o.RTOCauses, o.PacketsSent
	row.MinRTTms, row.MeanSRTTms = o.MinRTTms, o.MeanSRTTms
	row.ClockOffsetMs, row.OffsetRTTms = ms(o.ClockOffset), ms(o.OffsetRTT)
	row.SenderJSON, row.ReceiverJSON = string(o.SenderJSON), string(o.ReceiverJSON)
	row.SenderQlog, row.ReceiverQlog = string(o.SenderQlog), string(o.ReceiverQlog)
	return row
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }
