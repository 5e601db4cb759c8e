package qdisc

import (
	"slices"
	"testing"
)

func TestDropTailBurst(t *testing.T) {
	tests := []struct {
		spec       string
		burst      int // packets offered at one instant
		size       int // bytes each
		wantQueued int
		wantBytes  int
	}{
		{"droptail:20p", 50, 1000, 20, 20000},
		{"droptail:20", 20, 1000, 20, 20000},
		{"droptail:20p", 5, 1000, 5, 5000},
		{"droptail:limit=1p", 3, 100, 1, 100},
		{"droptail:30000b", 50, 1000, 30, 30000},
		{"droptail:30kb", 50, 1400, 21, 29400}, // 21·1400 = 29400 <= 30000 < 22·1400
		{"droptail:1500b", 2, 1500, 1, 1500},   // exactly at the limit is accepted
		{"droptail:1499b", 1, 1500, 0, 0},      // a packet larger than the limit never fits
		{"droptail", 150, 100, 100, 10000},     // default 100p
	}
	for _, tt := range tests {
		r := &rec{}
		q, err := New(tt.spec, Env{Handler: r})
		if err != nil {
			t.Fatalf("%s: %v", tt.spec, err)
		}
		var g pktGen
		accepted := 0
		for i := 0; i < tt.burst; i++ {
			if q.Enqueue(at(0), g.pkt(1, tt.size)) {
				accepted++
			}
		}
		if got, want := q.Len(), tt.wantQueued; got != want {
			t.Errorf("%s: Len got %d, want %d", tt.spec, got, want)
		}
		if got, want := accepted, tt.wantQueued; got != want {
			t.Errorf("%s: accepted got %d, want %d", tt.spec, got, want)
		}
		if got, want := q.Bytes(), tt.wantBytes; got != want {
			t.Errorf("%s: Bytes got %d, want %d", tt.spec, got, want)
		}
		if got, want := r.count(DropOverflow), tt.burst-tt.wantQueued; got != want {
			t.Errorf("%s: overflow drops got %d, want %d", tt.spec, got, want)
		}
		// The dropped packets are exactly the last burst-queued arrivals.
		for i, d := range r.drops {
			if got, want := d.id, uint64(tt.wantQueued+i+1); got != want {
				t.Errorf("%s: drop %d got id %d, want %d", tt.spec, i, got, want)
			}
		}
	}
}

func TestDropTailFIFOOrder(t *testing.T) {
	q, _ := New("droptail:10p", Env{})
	var g pktGen
	var want []uint64
	// Interleave arrivals and departures, wrapping the ring several times.
	for round := 0; round < 20; round++ {
		for i := 0; i < 7; i++ {
			p := g.pkt(uint64(i%3), 100+i)
			want = append(want, p.ID)
			q.Enqueue(at(0), p)
		}
		for i := 0; i < 7; i++ {
			p := q.Dequeue(at(0))
			if got, w := p.ID, want[0]; got != w {
				t.Fatalf("round %d: dequeued %d, want %d", round, got, w)
			}
			want = want[1:]
		}
	}
	if got := q.Dequeue(at(0)); got != nil {
		t.Errorf("empty queue: Dequeue got %v, want nil", got)
	}
	if got, want := q.Len(), 0; got != want {
		t.Errorf("Len got %d, want %d", got, want)
	}
}

func TestDropTailRefillAfterDrain(t *testing.T) {
	// Draining a full queue makes room for exactly limit more packets.
	r := &rec{}
	q, _ := New("droptail:4p", Env{Handler: r})
	var g pktGen
	for i := 0; i < 6; i++ {
		q.Enqueue(at(0), g.pkt(0, 10))
	}
	ids := drain(q, at(0))
	if got, want := ids, []uint64{1, 2, 3, 4}; !slices.Equal(got, want) {
		t.Errorf("first drain got %v, want %v", got, want)
	}
	for i := 0; i < 6; i++ {
		q.Enqueue(at(0), g.pkt(0, 10))
	}
	if got, want := drain(q, at(0)), []uint64{7, 8, 9, 10}; !slices.Equal(got, want) {
		t.Errorf("second drain got %v, want %v", got, want)
	}
	if got, want := len(r.drops), 4; got != want {
		t.Errorf("drops got %d, want %d", got, want)
	}
}

// TestDropTailEmptyAdmits: EmptyAdmits is the largest packet the empty
// queue accepts (Transparent): a packet of that size is enqueued, one byte
// more is dropped, for limits in packets, in bytes and a zero Limit.
func TestDropTailEmptyAdmits(t *testing.T) {
	for _, limit := range []Limit{{Packets: 20}, {Packets: 1}, {Bytes: 3000}, {}} {
		for _, size := range []int{1, 1500, 2999, 3000, 3001, 65535} {
			d := NewDropTail(limit, nil)
			got := d.Enqueue(0, &Packet{Size: size})
			if want := size <= d.EmptyAdmits(); got != want {
				t.Errorf("limit %+v, empty queue, %d-byte packet: enqueued %v, want %v (EmptyAdmits %d)", limit, size, got, want, d.EmptyAdmits())
			}
		}
	}
}
