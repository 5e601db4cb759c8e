package traffic

import (
	"time"

	"cclab/clock"
)

// RateSchedule paces an application that produces datagrams of varying
// size at a rate, optionally in ON/OFF periods: the generator of a datagram
// connection (transport.DgramConn with DgramConfig.Rate, On, Off; the
// sender's -rate, -on, -off). After a datagram of n bytes produced at
// instant t the next is due at t + n·8/Rate; a datagram due at or after
// the end of an ON period moves to the start of the next ON period, Off
// later. Unlike CBR the size is known only once the datagram is produced
// (the application's source decides it), so the schedule is advanced by
// the consumer: Due, then Advance with the size produced. Sans-I/O: time
// is passed in. The zero value is stopped.
type RateSchedule struct {
	rate    float64       // bits/s of payload; 0: no schedule
	on, off time.Duration // ON and OFF periods; on 0: always on
	next    clock.Time    // the next datagram's instant (Never: stopped)
	onEnd   clock.Time    // the end of the current ON period (Never: always on)
}

// NewRateSchedule returns a stopped schedule at rate bits/s with ON/OFF
// periods on and off (on 0: always on).
func NewRateSchedule(rate float64, on, off time.Duration) RateSchedule {
	return RateSchedule{rate: rate, on: on, off: off, next: clock.Never, onEnd: clock.Never}
}

// Start makes the first datagram due at now and, with ON/OFF periods,
// begins an ON period at now. Without a rate it does nothing.
func (s *RateSchedule) Start(now clock.Time) {
	if s.rate <= 0 {
		return
	}
	s.next = now
	if s.on > 0 {
		s.onEnd = now.Add(s.on)
	}
}

// Stop ends the schedule: nothing is due any more.
func (s *RateSchedule) Stop() { s.next = clock.Never }

// Next returns the instant of the next datagram (Never: stopped), for the
// consumer's deadline. It may fall in an OFF period; Due then moves it.
func (s *RateSchedule) Next() clock.Time { return s.next }

// Due returns the instant of the datagram due at or before now, skipping
// OFF periods, and false if none is due.
func (s *RateSchedule) Due(now clock.Time) (clock.Time, bool) {
	for s.next != clock.Never && !now.Before(s.next) {
		if s.onEnd != clock.Never && !s.next.Before(s.onEnd) {
			s.next = s.onEnd.Add(s.off)
			s.onEnd = s.next.Add(s.on)
			continue
		}
		return s.next, true
	}
	return 0, false
}

// Advance schedules the datagram after one of n bytes produced at at (the
// instant Due returned): n·8/Rate later (n below 1 counts as 1).
func (s *RateSchedule) Advance(at clock.Time, n int) {
	s.next = at.Add(time.Duration(float64(max(n, 1)*8) / s.rate * float64(time.Second)))
}
