package traffic

import (
	"testing"
	"time"

	"cclab/clock"
)

// TestRateSchedule: datagrams n·8/Rate apart, the first at Start; with
// ON/OFF periods a datagram due at or after an ON period's end moves to
// the next ON period's start, Off later; Stop ends it; nothing without a
// rate.
func TestRateSchedule(t *testing.T) {
	ms := func(v float64) clock.Time { return clock.Start.Add(time.Duration(v * float64(time.Millisecond))) }
	for _, tc := range []struct {
		name    string
		rate    float64
		on, off time.Duration
		sizes   []int // bytes produced per datagram (0: nothing produced, counts as 1 byte)
		want    []clock.Time
	}{
		// 1000 B at 8 Mbit/s: 1 ms apart.
		{"rate", 8e6, 0, 0, []int{1000, 1000, 500, 1000}, []clock.Time{ms(0), ms(1), ms(2), ms(2.5)}},
		// ON 2.5 ms, OFF 10 ms: due at 0, 1, 2, then 3 >= 2.5 moves to 12.5.
		{"on/off", 8e6, 2500 * time.Microsecond, 10 * time.Millisecond, []int{1000, 1000, 1000, 1000, 1000},
			[]clock.Time{ms(0), ms(1), ms(2), ms(12.5), ms(13.5)}},
		{"nothing produced", 8e6, 0, 0, []int{0, 1000}, []clock.Time{ms(0), ms(0.001)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewRateSchedule(tc.rate, tc.on, tc.off)
			if _, ok := s.Due(ms(100)); ok || s.Next() != clock.Never {
				t.Fatalf("before Start: due, or Next %v; want nothing", s.Next())
			}
			s.Start(clock.Start)
			for i, want := range tc.want {
				if _, ok := s.Due(want - 1); ok {
					t.Fatalf("datagram %d: due before %v", i, want)
				}
				got, ok := s.Due(ms(1000))
				if !ok || got != want {
					t.Fatalf("datagram %d: due at %v (%v), want %v", i, got, ok, want)
				}
				if i < len(tc.sizes) {
					s.Advance(got, tc.sizes[i])
				}
			}
			s.Stop()
			if _, ok := s.Due(ms(1e6)); ok || s.Next() != clock.Never {
				t.Errorf("after Stop: still due")
			}
		})
	}
	s := NewRateSchedule(0, 0, 0)
	if s.Start(clock.Start); s.Next() != clock.Never {
		t.Errorf("rate 0: Next %v after Start, want Never", s.Next())
	}
}
