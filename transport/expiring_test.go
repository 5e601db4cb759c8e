package transport

import (
	"testing"
	"time"

	"cclab/clock"
)

// TestExpiring: an entry is answered until its expiry and never after,
// sweep drops exactly the expired entries (an entry put again with a later
// expiry survives its first record), and the queue does not grow without
// bound under steady churn.
func TestExpiring(t *testing.T) {
	at := func(ms int) clock.Time { return clock.Start.Add(time.Duration(ms) * time.Millisecond) }
	for _, mode := range []struct {
		name    string
		fillers int // entries put first (expiring at once) so that the table is indexed by a map
		indexed bool
	}{{"small", 0, false}, {"indexed", expiringSmall, true}} {
		t.Run(mode.name, func(t *testing.T) {
			var x expiring[int]
			for i := range mode.fillers {
				x.put(uint64(1000+i), -1, at(1))
			}
			x.put(1, 10, at(100))
			x.put(2, 20, at(50)) // expires before the entry put first
			x.put(3, 30, at(100))
			x.put(3, 31, at(300)) // put again: the later expiry holds
			if got := x.m != nil; got != mode.indexed {
				t.Fatalf("indexed by a map: %v, want %v", got, mode.indexed)
			}
			for _, tc := range []struct {
				id     uint64
				now    clock.Time
				want   int
				wantOK bool
			}{
				{1, at(99), 10, true}, {1, at(100), 0, false}, {2, at(49), 20, true}, {2, at(50), 0, false},
				{3, at(100), 31, true}, {3, at(299), 31, true}, {3, at(300), 0, false}, {4, at(0), 0, false},
			} {
				if got, ok := x.get(tc.id, tc.now); got != tc.want || ok != tc.wantOK {
					t.Errorf("get(%d, %v) = %d, %v; want %d, %v", tc.id, tc.now, got, ok, tc.want, tc.wantOK)
				}
			}
			x.sweep(at(60)) // entry 2 is expired but queued behind entry 1
			if got, want := x.len(), 4; got != want {
				t.Errorf("after sweep at 60 ms: %d entries, want %d", got, want)
			}
			if _, ok := x.get(2, at(60)); ok {
				t.Errorf("expired entry 2 still answered after the sweep at 60 ms")
			}
			x.sweep(at(100))
			if got, want := x.len(), 1; got != want {
				t.Errorf("after sweep at 100 ms: %d entries, want %d (entry 3 put again lives on)", got, want)
			}
			if got, ok := x.get(3, at(200)); got != 31 || !ok {
				t.Errorf("entry put again after the sweep of its first record: get = %d, %v; want 31, true", got, ok)
			}
			x.sweep(at(300))
			if got := x.len(); got != 0 || len(x.m) != 0 {
				t.Errorf("after every expiry: %d entries, %d in the map; want 0, 0", got, len(x.m))
			}
		})
	}
	// Churn: one entry per ms living 10 ms, swept every ms: the queue stays
	// small and no map is made.
	var x expiring[int]
	for i := range 10000 {
		x.put(uint64(i), i, at(i+10))
		x.sweep(at(i))
		if x.len() > 11 {
			t.Fatalf("churn step %d: %d entries pending; want at most 11", i, x.len())
		}
		if v, ok := x.get(uint64(i), at(i+9)); !ok || v != i {
			t.Fatalf("churn step %d: get = %d, %v; want %d, true", i, v, ok, i)
		}
	}
	if cap(x.q.q) > 1024 || x.m != nil {
		t.Errorf("churn: queue capacity %d, map %v; want the queue bounded by the live entries and no map", cap(x.q.q), x.m != nil)
	}
}
