package qdisc

import (
	"testing"
	"time"

	"cclab/clock"
	"cclab/ecn"
)

// pool is a Handler that recycles dropped packets, as a relay's buffer pool
// would.
type pool struct{ free []*Packet }

func (p *pool) Dropped(_ clock.Time, pk *Packet, _ DropReason) { p.free = append(p.free, pk) }
func (p *pool) Marked(clock.Time, *Packet)                     {}

func (p *pool) get() *Packet {
	n := len(p.free)
	pk := p.free[n-1]
	p.free = p.free[:n-1]
	return pk
}

// loadRig drives a queue in a steady overload: each step one or two
// arrivals from 16 flows (ECT, varied sizes), one departure, the clock
// advancing 100 µs, packets recycled through a pool.
type loadRig struct {
	q     Queue
	pool  *pool
	now   clock.Time
	i     uint64
	flows uint64 // number of distinct flows, cycled through
}

var benchSpecs = []string{
	"droptail:100p",
	"red:min=5,max=15,limit=100p",
	"red:min=5,max=15,limit=100p,gentle,ecn,bytes",
	"fred:limit=100",
	"drr:limit=100p",
	"csfq:limit=100p",
	"codel:limit=100p",
}

func newRig(tb testing.TB, spec string, flows uint64) *loadRig {
	p := &pool{}
	for i := 0; i < 512; i++ {
		p.free = append(p.free, &Packet{})
	}
	q, err := New(spec, Env{Handler: p, Rate: 100e6, MTU: 1500, Rand: seeded(1)})
	if err != nil {
		tb.Fatal(err)
	}
	r := &loadRig{q: q, pool: p, now: clock.Start, flows: flows}
	for i := uint64(0); i < max(5000, 3*flows); i++ { // warm up: grow rings, maps, free lists
		r.step()
	}
	return r
}

func (r *loadRig) arrive() {
	pk := r.pool.get()
	r.i++
	*pk = Packet{Size: 200 + int(r.i*389%1300), Flow: r.i * 7 % r.flows, ECN: ecn.ECT0, ID: r.i}
	r.q.Enqueue(r.now, pk)
}

func (r *loadRig) step() {
	r.now = r.now.Add(100 * time.Microsecond)
	r.arrive()
	if r.i%3 == 0 || r.q.Len() < 20 {
		r.arrive()
	}
	if p := r.q.Dequeue(r.now); p != nil {
		r.pool.free = append(r.pool.free, p)
	}
}

// TestNoAllocSteadyState checks the no-per-packet-allocation rule for every
// discipline under the benchmark load.
func TestNoAllocSteadyState(t *testing.T) {
	for _, s := range benchSpecs {
		// 16 flows: all stay backlogged. 20000 flows: each flow returns
		// every 2 s, so per-flow state (DRR, FRED, CSFQ edge) is freed and
		// recreated all the time.
		for _, flows := range []uint64{16, 20000} {
			r := newRig(t, s, flows)
			if got := testing.AllocsPerRun(20000, r.step); got != 0 {
				t.Errorf("%s with %d flows: allocations per step got %v, want 0", s, flows, got)
			}
		}
	}
}

func BenchmarkEnqueueDequeue(b *testing.B) {
	names := []string{"droptail", "red", "red-gentle-ecn-bytes", "fred", "drr", "csfq", "codel"}
	for i, s := range benchSpecs {
		b.Run(names[i], func(b *testing.B) {
			r := newRig(b, s, 16)
			b.ReportAllocs()
			for b.Loop() {
				r.step()
			}
		})
	}
}
