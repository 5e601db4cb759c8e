package transport

import (
	"math/rand/v2"
	"testing"
	"time"

	"cclab/clock"
)

// TestExpiring: an entry is answered until its expiry and never after,
// sweep drops exactly the expired entries, each at the first sweep after its
// own expiry (an entry put again with a later expiry survives its first
// record), and the heap does not grow without bound under steady churn.
func TestExpiring(t *testing.T) {
	at := func(ms int) clock.Time { return clock.Start.Add(time.Duration(ms) * time.Millisecond) }
	for _, mode := range []struct {
		name    string
		fillers int // entries put first (expiring at once) so that the table is indexed by a map
		indexed bool
		at60    int // entries pending after the sweep at 60 ms
	}{{"small", 0, false, 2}, {"indexed", expiringSmall, true, 3}} { // indexed: entry 3's first record is pending too
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
			x.sweep(at(60)) // entry 2 is expired, although put after entry 1, which lives on
			if got, want := x.len(), mode.at60; got != want {
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
	// Churn: one entry per ms living 10 ms, swept every ms: the heap stays
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
	if cap(x.h) > 1024 || x.m != nil {
		t.Errorf("churn: heap capacity %d, map %v; want the heap bounded by the live entries and no map", cap(x.h), x.m != nil)
	}
}

// TestExpiringMixedLifetimes: entries of different lifetimes (connections
// with different IdleTimeouts) are each dropped at the first sweep after
// their own expiry: one long-lived entry put first does not hold back the
// short-lived ones put after it (before, the table was swept in put order
// and kept every entry put after a long-lived one until that one expired).
func TestExpiringMixedLifetimes(t *testing.T) {
	at := func(ms int) clock.Time { return clock.Start.Add(time.Duration(ms) * time.Millisecond) }
	for _, n := range []int{5, 3 * expiringSmall} { // without and with the map
		var x expiring[int]
		x.put(0, 0, at(3_600_000)) // an hour
		for i := 1; i <= n; i++ {
			x.put(uint64(i), i, at(1000+i))
			x.sweep(at(i))
		}
		x.sweep(at(2000))
		if got, want := x.len(), 1; got != want {
			t.Errorf("%d short entries after a long one, swept after they expired: %d entries pending, want %d", n, got, want)
		}
		if v, ok := x.get(0, at(2000)); !ok || v != 0 {
			t.Errorf("%d short entries: the long-lived entry: get = %d, %v; want 0, true", n, v, ok)
		}
		if x.m != nil && len(x.m) != 1 {
			t.Errorf("%d short entries: %d in the map, want 1", n, len(x.m))
		}
	}
	// Random lifetimes: after each sweep, exactly the unexpired entries are
	// pending and the heap is ordered.
	r := rand.New(rand.NewPCG(5, 6))
	var x expiring[int]
	live := map[uint64]clock.Time{}
	for i := range 3000 {
		id := uint64(r.IntN(200))
		exp := at(i + 1 + r.IntN(500))
		x.put(id, i, exp)
		live[id] = exp
		now := at(i)
		x.sweep(now)
		for id, exp := range live {
			if !now.Before(exp) {
				delete(live, id)
			}
		}
		if x.m == nil && x.len() != len(live) {
			t.Fatalf("step %d: %d entries pending, want the %d unexpired", i, x.len(), len(live))
		}
		if x.m != nil && len(x.m) != len(live) {
			t.Fatalf("step %d: %d entries in the map, want the %d unexpired", i, len(x.m), len(live))
		}
		for j := 1; j < len(x.h); j++ {
			if x.h[j].exp.Before(x.h[(j-1)/2].exp) {
				t.Fatalf("step %d: heap out of order at %d", i, j)
			}
		}
	}
}
