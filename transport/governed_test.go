package transport

import (
	"slices"
	"testing"
	"time"

	"cclab/ccalgo"
	"cclab/clock"
	"cclab/internal/spec"
)

// govCC is testCC that governs recovery (ccalgo.RecoveryGovernor, as BBR):
// its fixed cwnd applies during loss recovery too.
type govCC struct{ testCC }

func (c *govCC) OnCongestion(ccalgo.Congestion) {}
func (c *govCC) OnRecoveryExit(clock.Time, int) {}
func (c *govCC) GovernsRecovery()               {}

func init() {
	ccalgo.Registry.Register(spec.Entry[ccalgo.Controller, ccalgo.Env]{
		Name: "testgov", Doc: "test controller with a fixed window that governs recovery",
		Defaults: func() any { return &testCCConfig{Cwnd: 10} },
		Build: func(cfg any, env ccalgo.Env) (ccalgo.Controller, error) {
			c := cfg.(*testCCConfig)
			return &govCC{testCC{mss: env.MSS, cwnd: c.Cwnd * env.MSS, ssthresh: 1 << 30}}, nil
		},
	})
}

// TestGovernedSACKBlindRecovery: under Reno and NewReno recovery a
// controller that governs recovery sends one new segment per duplicate ACK
// (each reports a segment gone from the network: RFC 5681 §3.2 step 4,
// Linux's sacked_out for a sender without SACK), not nothing until the
// recovery ends because pipe still counts what the receiver holds.
func TestGovernedSACKBlindRecovery(t *testing.T) {
	for _, rec := range []string{"newreno", "reno"} {
		f := newFixture(t, Config{CC: "testgov:cwnd=10", Recovery: rec}, 1<<30, false)
		f.c.SetSource(NewPatternSource(1), -1)
		if got := len(f.drain()); got != 10 {
			t.Fatalf("%s: initial flight %d datagrams, want 10", rec, got)
		}
		f.now = f.now.Add(50 * time.Millisecond)
		f.ack(seg(1).Start, f.sent[0].ts) // segment 1 is lost from here on
		f.drain()
		dupAcks(f, 2, 2)
		f.drain() // Limited Transmit: segments 11 and 12
		dupAcks(f, 4, 1)
		f.drain()
		// Flight: segments 1..12, segment 1 retransmitted; 3 duplicate ACKs
		// departed: 12 - 3 = 9 in flight under a cwnd of 10.
		if got, want := f.dataOffsets(), []uint64{seg(1).Start, seg(13).Start}; !slices.Equal(got, want) {
			t.Errorf("%s: at the third duplicate ACK sent %v, want the retransmission and one new segment %v", rec, got, want)
		}
		if got, want := f.c.rec.(Departer).Departed(), 3*testMSS; got != want {
			t.Errorf("%s: departed %d, want %d", rec, got, want)
		}
		for k := 0; k < 4; k++ {
			dupAcks(f, 5+k, 1)
			f.drain()
			if got, want := f.dataOffsets(), []uint64{seg(14 + k).Start}; !slices.Equal(got, want) {
				t.Errorf("%s: duplicate ACK %d sent %v, want one new segment %v", rec, 4+k, got, want)
			}
		}
		if rec != "newreno" {
			continue
		}
		// A partial ACK of segments 1..4: three of them (2, 3, 4) were
		// duplicate-ACKed; the departures left are 7 - 3 = 4.
		f.ack(seg(5).Start, 0)
		if got, want := f.c.rec.(Departer).Departed(), 4*testMSS; got != want {
			t.Errorf("%s: after a partial ACK departed %d, want %d", rec, got, want)
		}
	}
}
