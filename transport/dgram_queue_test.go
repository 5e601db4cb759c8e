package transport

import (
	"bytes"
	"testing"

	"cclab/clock"
)

// TestDgramQueueBytes: the queue keeps datagrams of any length in order;
// with datagrams no larger than its set-up size the count limit binds (as
// fixed slots would), larger ones are bounded by the ring's bytes, and
// grow keeps what is queued.
func TestDgramQueueBytes(t *testing.T) {
	var q dgramQueue
	q.init(4, 100)
	var want [][]byte
	push := func(n int) bool {
		b := q.room(n)
		if b == nil {
			return false
		}
		for i := range b {
			b[i] = byte(n + i)
		}
		q.pushAt(n, clock.Time(n))
		want = append(want, append([]byte(nil), b...))
		return true
	}
	pop := func() {
		t.Helper()
		if got := q.front(); !bytes.Equal(got, want[0]) || q.frontAt() != clock.Time(len(want[0])) {
			t.Fatalf("front = %d bytes, want %d (order or content lost)", len(got), len(want[0]))
		}
		q.pop()
		want = want[1:]
	}
	// Mixed sizes up to 100 bytes, many wraps: the count limit binds.
	for round := range 50 {
		for q.n < 4 {
			if !push(1 + (round*37+q.n*53)%100) {
				t.Fatalf("round %d: no room with %d of 4 datagrams queued", round, q.n)
			}
		}
		if push(1) {
			t.Fatalf("round %d: a fifth datagram fit a queue of 4", round)
		}
		pop()
		pop()
	}
	for q.n > 0 {
		pop()
	}
	// Larger datagrams: the ring's (4+2)*100 bytes bind.
	got := 0
	for push(250) {
		got++
	}
	if got != 2 {
		t.Errorf("250-byte datagrams queued = %d, want 2 (600-byte ring)", got)
	}
	if push(601) {
		t.Errorf("a datagram larger than the ring fit")
	}
	q.grow(1000)
	for push(900) {
	}
	if q.n != 4 {
		t.Errorf("after grow(1000): %d datagrams queued, want 4", q.n)
	}
	for q.n > 0 {
		pop()
	}
}
