package transport

import (
	"testing"
	"time"

	"cclab/clock"
	"cclab/internal/spec"
)

// timerLoss is a toy strategy written only against the exported seam: it
// declares the oldest segment lost when it has been outstanding for 2*SRTT
// (a crude time threshold, as RACK would), using RecoveryTimer.
type timerLoss struct {
	at  clock.Time
	rtt time.Duration
}

func (r *timerLoss) Name() string     { return "testtimer" }
func (r *timerLoss) InRecovery() bool { return false }
func (r *timerLoss) OnAck(x *Ctx, a *AckInfo) {
	if a.RTT > 0 {
		r.rtt = a.RTT
	}
	r.arm(x)
}
func (r *timerLoss) OnRTO(x *Ctx)                              { r.at = clock.Never }
func (r *timerLoss) Next(x *Ctx) Action                        { return x.Normal() }
func (r *timerLoss) OnSent(x *Ctx, retransmit bool, bytes int) { r.arm(x) }
func (r *timerLoss) Deadline() clock.Time                      { return r.at }
func (r *timerLoss) arm(x *Ctx) {
	r.at = clock.Never
	if x.SB.Count() > 0 && r.rtt > 0 && !x.SB.Seg(0).Lost {
		r.at = x.SB.Seg(0).SentAt.Add(2 * r.rtt)
	}
}
func (r *timerLoss) OnTimer(x *Ctx) {
	x.MarkLost(0, LossTime)
	r.at = clock.Never
}

func init() {
	Recoveries.Register(spec.Entry[Recovery, RecoveryEnv]{
		Name: "testtimer", Doc: "test strategy using RecoveryTimer",
		Defaults: func() any { return &struct{}{} },
		Build:    func(any, RecoveryEnv) (Recovery, error) { return &timerLoss{}, nil },
	})
}

// TestRecoverySeam: a strategy defined outside the package's strategy files,
// registered by name, drives loss detection through its own timer.
func TestRecoverySeam(t *testing.T) {
	f := newFixture(t, Config{CC: "testcc:cwnd=4", Recovery: "testtimer"}, 1<<30, false)
	f.c.SetSource(NewPatternSource(1), -1)
	f.drain()
	t0 := f.now
	f.now = t0.Add(20 * ms)
	f.ack(seg(1).Start, f.sent[0].ts) // RTT 20 ms; segment 1 never acknowledged
	f.drain()
	if got, want := f.ep.Deadline(), t0.Add(40*ms); got != want {
		t.Fatalf("deadline %v, want the strategy's timer %v", got, want)
	}
	f.now = f.ep.Deadline()
	f.ep.OnDeadline(f.now)
	f.drain()
	if got := f.dataOffsets(); len(got) == 0 || got[0] != seg(1).Start {
		t.Errorf("after the strategy's timer sent %v, want retransmission of %d", got, seg(1).Start)
	}
	if f.c.Stats().Lost != 1 || f.c.Stats().RTOs != 0 {
		t.Errorf("lost %d rtos %d, want 1 and 0", f.c.Stats().Lost, f.c.Stats().RTOs)
	}
}
