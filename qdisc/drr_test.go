package qdisc

import (
	"slices"
	"testing"
)

func newDRRT(t *testing.T, s string, env Env) *DRR {
	t.Helper()
	q, err := New(s, env)
	if err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return q.(*DRR)
}

// Service order with quantum and deficit counters, worked by hand from
// [SV95] Figure 3 (quantum 500):
//
//	round 1: A DC=500 sends a1(200) DC=300, a2(750) waits; B DC=500 sends b1(500) DC=0;
//	         C DC=500, c1(1000) waits
//	round 2: A DC=800 sends a2 DC=50; B DC=500 sends b2, empties (DC reset);
//	         C DC=1000 sends c1, empties
//	round 3: A DC=550 sends a3(300)
func TestDRROrder(t *testing.T) {
	d := newDRRT(t, "drr:quantum=500,limit=100p", Env{})
	type in struct {
		flow uint64
		size int
		name string
	}
	arrivals := []in{{'A', 200, "a1"}, {'A', 750, "a2"}, {'A', 300, "a3"},
		{'B', 500, "b1"}, {'B', 500, "b2"}, {'C', 1000, "c1"}}
	names := map[uint64]string{}
	var g pktGen
	for _, a := range arrivals {
		p := g.pkt(a.flow, a.size)
		names[p.ID] = a.name
		d.Enqueue(at(0), p)
	}
	var got []string
	for p := d.Dequeue(at(0)); p != nil; p = d.Dequeue(at(0)) {
		got = append(got, names[p.ID])
	}
	if want := []string{"a1", "b1", "a2", "b2", "c1", "a3"}; !slices.Equal(got, want) {
		t.Errorf("service order got %v, want %v", got, want)
	}
	if got, want := d.Flows(), 0; got != want {
		t.Errorf("active flows after drain got %d, want %d", got, want)
	}
}

// Fairness ([SV95] §3, Theorem 1): in every round a backlogged flow is served
// Quantum bytes give or take its deficit (< Max), so two backlogged flows'
// served bytes never differ by more than Quantum + 2·Max, whatever their
// packet sizes (plain packet round robin would give the 1500-byte flow 15×
// the 100-byte flow's bytes). Within one flow, order is FIFO.
func TestDRRFairness(t *testing.T) {
	tests := []struct {
		quantum int
		sizes   []int // packet size of each flow, bytes
	}{
		{1500, []int{1500, 500, 100}},
		{1500, []int{1500, 1500}},
		{500, []int{1500, 64, 700, 1000}},
	}
	for _, tt := range tests {
		d := newDRRT(t, "drr:limit=100000p,quantum="+itoa(tt.quantum), Env{})
		var g pktGen
		for f, s := range tt.sizes {
			for i := 0; i < 300; i++ { // more than the 200 dequeues below
				d.Enqueue(at(0), g.pkt(uint64(f), s))
			}
		}
		served := make([]int, len(tt.sizes))
		last := make([]uint64, len(tt.sizes))
		maxPkt := slices.Max(tt.sizes)
		for i := 0; i < 200; i++ {
			p := d.Dequeue(at(0))
			served[p.Flow] += p.Size
			if p.ID < last[p.Flow] {
				t.Fatalf("flow %d: packet %d after %d", p.Flow, p.ID, last[p.Flow])
			}
			last[p.Flow] = p.ID
			lo, hi := slices.Min(served), slices.Max(served)
			if bound := tt.quantum + 2*maxPkt; hi-lo > bound {
				t.Fatalf("quantum %d sizes %v after %d: served %v spread %d, want <= %d",
					tt.quantum, tt.sizes, i, served, hi-lo, bound)
			}
		}
	}
}

// Buffer stealing: when the shared buffer is full the longest queue (in
// bytes) loses its tail packet, which may be the arrival itself.
func TestDRRDropLongest(t *testing.T) {
	type batch struct {
		flow uint64
		n    int
		size int
	}
	tests := []struct {
		name       string
		limit      string
		fill       []batch
		arrival    batch // n = 1
		wantDrop   uint64
		wantAccept bool
		wantLen    map[uint64]int
	}{
		{"packets: longer flow pays", "10p",
			[]batch{{1, 7, 100}, {2, 3, 100}}, batch{2, 1, 100}, 1, true, map[uint64]int{1: 6, 2: 4}},
		{"packets: longest is the arrival's flow", "10p",
			[]batch{{1, 7, 100}, {2, 3, 100}}, batch{1, 1, 100}, 1, false, map[uint64]int{1: 7, 2: 3}},
		{"longest by bytes, not packets", "11p",
			[]batch{{1, 3, 1500}, {2, 8, 100}}, batch{2, 1, 100}, 1, true, map[uint64]int{1: 2, 2: 9}},
		{"byte limit", "5000b",
			[]batch{{1, 2, 1500}, {2, 1, 1500}, {3, 1, 500}}, batch{3, 1, 1000}, 1, true, map[uint64]int{1: 1, 2: 1, 3: 2}},
		{"new flow under a full buffer", "4p",
			[]batch{{1, 4, 100}}, batch{9, 1, 100}, 1, true, map[uint64]int{1: 3, 9: 1}},
	}
	for _, tt := range tests {
		rc := &rec{}
		d := newDRRT(t, "drr:limit="+tt.limit, Env{Handler: rc})
		var g pktGen
		var lastOf = map[uint64]uint64{}
		for _, b := range tt.fill {
			for i := 0; i < b.n; i++ {
				p := g.pkt(b.flow, b.size)
				lastOf[b.flow] = p.ID
				d.Enqueue(at(0), p)
			}
		}
		if len(rc.drops) != 0 {
			t.Fatalf("%s: setup dropped %d", tt.name, len(rc.drops))
		}
		p := g.pkt(tt.arrival.flow, tt.arrival.size)
		lastOf[tt.arrival.flow] = p.ID
		if got := d.Enqueue(at(0), p); got != tt.wantAccept {
			t.Errorf("%s: Enqueue got %v, want %v", tt.name, got, tt.wantAccept)
		}
		if got, want := len(rc.drops), 1; got != want {
			t.Fatalf("%s: drops got %d, want %d", tt.name, got, want)
		}
		dr := rc.drops[0]
		if dr.flow != tt.wantDrop || dr.id != lastOf[tt.wantDrop] || dr.reason != DropOverflow {
			t.Errorf("%s: dropped flow %d id %d (%v), want flow %d id %d (overflow)",
				tt.name, dr.flow, dr.id, dr.reason, tt.wantDrop, lastOf[tt.wantDrop])
		}
		for f, n := range tt.wantLen {
			if got := d.FlowLen(f); got != n {
				t.Errorf("%s: flow %d length got %d, want %d", tt.name, f, got, n)
			}
		}
	}
}

// Per-flow state exists only while a flow is backlogged, is recycled, and a
// returning flow starts a fresh deficit of one quantum ([SV95] §3: DC is
// reset when the queue empties).
func TestDRRFlowLifecycle(t *testing.T) {
	d := newDRRT(t, "drr:quantum=1000", Env{})
	var g pktGen
	for f := uint64(0); f < 50; f++ {
		d.Enqueue(at(0), g.pkt(f, 300))
	}
	if got, want := d.Flows(), 50; got != want {
		t.Errorf("active flows got %d, want %d", got, want)
	}
	drain(d, at(0))
	if got, want := len(d.flows), 0; got != want {
		t.Errorf("flow table after drain got %d, want %d", got, want)
	}
	if got, want := len(d.free), 50; got != want {
		t.Errorf("free list got %d, want %d", got, want)
	}
	d.Enqueue(at(0), g.pkt(7, 300))
	if got, want := d.flows[7].deficit, 1000; got != want {
		t.Errorf("returning flow deficit got %d, want %d", got, want)
	}
	if got, want := len(d.free), 49; got != want {
		t.Errorf("free list after reuse got %d, want %d", got, want)
	}
	// Heap invariant after mixed operations.
	for i := 0; i < 500; i++ {
		d.Enqueue(at(0), g.pkt(uint64(i%13), 100+(i*37)%1400))
		if i%3 == 0 {
			d.Dequeue(at(0))
		}
	}
	for i := range d.heap {
		if d.heap[i].heapIdx != i {
			t.Fatalf("heap index %d got %d", i, d.heap[i].heapIdx)
		}
		if c := 2*i + 1; c < len(d.heap) && d.heap[c].q.bytes > d.heap[i].q.bytes {
			t.Fatalf("heap order broken at %d", i)
		}
	}
}

func itoa(n int) string { return ftoa(float64(n)) }
