package transport

import (
	"math"
	"testing"
	"time"

	"cclab/clock"
	"cclab/event"
)

// rateTolerance is the allowed relative error of a paced rate over a long
// interval (10 s of datagrams): the schedule is exact, so only the
// datagrams at the interval's edges (at most one quantum's worth plus one)
// may differ; 0.5 % covers them at the rates tested.
const rateTolerance = 0.005

// quantumDatagrams is the largest burst the definition of PacingQuantum
// allows: every datagram whose instant falls in [now, now+q] at rate bits/s
// for datagrams of size bytes.
func quantumDatagrams(q time.Duration, rate float64, size int) int {
	return 1 + int(q.Seconds()*rate/float64(8*size)+1e-9)
}

// TestDgramPacingQuantum: a fixed-rate flow (the generator, CC none, and
// CCID2 on an uncongested path) sends at the set rate over 10 s within
// rateTolerance whatever the quantum; no instant sends more datagrams
// than the quantum holds (after warmup); and with a quantum the sender's
// timer wakes up at most once per quantum rather than once per datagram
// (arriving ACKs may release datagrams too, at wake-ups the driver has
// anyway).
func TestDgramPacingQuantum(t *testing.T) {
	// warmup: CCID2's window opens in slow start; until then a window
	// release, not the pacing, sets the burst.
	const size, dur, warmup = 1000, 10 * time.Second, 2 * time.Second
	for _, tc := range []struct {
		name string
		cc   string
		rate float64
		q    time.Duration
	}{
		{"none/per-datagram", "none", 100e6, 0},
		{"none/1ms", "none", 100e6, time.Millisecond},
		{"none/4ms", "none", 100e6, 4 * time.Millisecond},
		{"none/slow-1ms", "none", 1e6, time.Millisecond}, // 8 ms between datagrams: one per wake
		{"ccid2/1ms", "ccid2", 100e6, time.Millisecond},
		{"ccid2/per-datagram", "ccid2", 100e6, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			perInstant := map[clock.Time]int{}
			var first, last clock.Time
			sent := 0
			sink := event.Func(func(e *event.Event) {
				if e.Kind != event.PacketSent {
					return
				}
				if sent == 0 {
					first = e.Time
				}
				last = e.Time
				sent++
				perInstant[e.Time]++
			})
			cfg := DgramConfig{CC: tc.cc, Rate: tc.rate, PacingQuantum: tc.q, SendQueue: 1024, Sink: sink}
			path := pathModel{Delay: 5 * time.Millisecond}
			n := newDnet(t, 21, path, path, cfg)
			cli, _ := n.dial(cfg, &seqSource{size: size}, true)
			// Run as dnet.run does, counting the sender's timer wake-ups
			// (steps at its own deadline).
			wakes, end := 0, n.now.Add(dur)
			for {
				n.app(n)
				n.flush()
				d := n.eps[0].Deadline()
				if !n.advance(end) {
					break
				}
				if n.now == d {
					wakes++
				}
			}
			if cs := cli.Stats(); cs.QueueDropped != 0 {
				t.Fatalf("send queue dropped %d datagrams: the flow was not rate-limited by its generator", cs.QueueDropped)
			}
			want := tc.rate * last.Sub(first).Seconds() / (8 * size)
			if got := float64(sent - 1); math.Abs(got-want) > rateTolerance*want {
				t.Errorf("sent %.0f datagrams after the first in %v, want %.0f ± %.1f %%", got, last.Sub(first), want, 100*rateTolerance)
			}
			burst := 0
			for at, k := range perInstant {
				if at.Sub(first) >= warmup {
					burst = max(burst, k)
				}
			}
			if limit := quantumDatagrams(tc.q, tc.rate, size); burst > limit {
				t.Errorf("largest burst %d datagrams at one instant, want at most %d (quantum %v)", burst, limit, tc.q)
			}
			if tc.q > 0 {
				limit := int(dur/tc.q) + 1
				if slow := int(want) + 2; slow < limit {
					limit = slow // fewer datagrams than quanta: one wake each
				}
				if wakes > limit {
					t.Errorf("the sender's timer woke %d times in %v, want at most %d (one per quantum)", wakes, dur, limit)
				}
			}
		})
	}
}

// fixedPacer is a controller stand-in with a constant pacing rate.
type fixedPacer struct {
	testCC
	rate float64
}

func (p *fixedPacer) PacingRate() float64 { return p.rate }

// TestPacingHorizon drives the pacing schedule with a fake clock that wakes
// at the schedule's own deadline (as the drivers do) and sends whatever is
// not blocked PacingQuantum ahead: the rate over 10 s is the pacing rate
// within rateTolerance, and no wake sends more than the quantum holds.
func TestPacingHorizon(t *testing.T) {
	const size, rate = 1200, 100e6
	for _, q := range []time.Duration{0, 500 * time.Microsecond, time.Millisecond, 3 * time.Millisecond} {
		var pc pacing
		pc.set(&fixedPacer{rate: rate}, size)
		now, end := clock.Start, clock.Start.Add(10*time.Second)
		sent, burst := 0, 0
		for now.Before(end) {
			k := 0
			for !pc.blocked(now.Add(q)) {
				pc.sent(now, size)
				k++
			}
			sent += k
			burst = max(burst, k)
			now = max(pc.at(), now.Add(1)) // the next wake: the schedule's deadline
		}
		want := rate * 10 / (8 * size)
		if got := float64(sent); math.Abs(got-want) > rateTolerance*want {
			t.Errorf("quantum %v: sent %.0f packets in 10 s, want %.0f ± %.1f %%", q, got, want, 100*rateTolerance)
		}
		if limit := quantumDatagrams(q, rate, size); burst > limit {
			t.Errorf("quantum %v: burst %d packets, want at most %d", q, burst, limit)
		}
	}
}

// TestDgramPacingQuantumValidate: a quantum outside 0..MaxPacingQuantum is
// refused, naming the field.
func TestDgramPacingQuantumValidate(t *testing.T) {
	for _, q := range []time.Duration{-time.Millisecond, MaxPacingQuantum + 1} {
		cfg := DefaultDgramConfig()
		cfg.PacingQuantum = q
		if err := cfg.Validate(); err == nil {
			t.Errorf("PacingQuantum=%v accepted", q)
		}
	}
}
