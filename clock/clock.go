// Package clock defines cclab's project time type. Core packages never read the
// wall clock: every event carries a Time passed in by a driver (the live driver
// reads a monotonic clock, the simulator advances a virtual one).
package clock

import "time"

// Time is an instant in monotonic nanoseconds since an arbitrary, driver-chosen
// origin. The zero Time means "never" / "unset"; drivers start their clocks at a
// non-zero value (the simulator at Start) so that zero is never a real instant.
type Time int64

// Never is the zero Time, used for "no deadline" and "not set".
const Never Time = 0

// Start is the first instant of a simulated clock: one second after the origin,
// so that zero stays reserved for Never.
const Start Time = Time(time.Second)

// Add returns t+d.
func (t Time) Add(d time.Duration) Time { return t + Time(d) }

// Sub returns the duration t-u.
func (t Time) Sub(u Time) time.Duration { return time.Duration(t - u) }

// Before reports whether t is before u.
func (t Time) Before(u Time) bool { return t < u }

// After reports whether t is after u.
func (t Time) After(u Time) bool { return t > u }

// IsZero reports whether t is Never.
func (t Time) IsZero() bool { return t == 0 }

// Seconds returns t as seconds since the origin (for reports and plots).
func (t Time) Seconds() float64 { return float64(t) / 1e9 }

// Earliest returns the earlier of two deadlines, treating Never as +infinity.
func Earliest(a, b Time) Time {
	switch {
	case a == Never:
		return b
	case b == Never:
		return a
	case a < b:
		return a
	}
	return b
}

// String formats t as seconds with microsecond precision.
func (t Time) String() string {
	if t == Never {
		return "never"
	}
	return time.Duration(t).String()
}
