package link

import (
	"math"

	"cclab/clock"
)

// A serializer models the transmitter: when service of a packet may begin
// (startAt returns the earliest instant >= t, for non-decreasing t) and when
// its last bit has left (finish serves a packet of size bytes whose service
// begins at s, a value startAt returned, and returns its departure
// instant). The link calls its serializer directly (Link.startAt, begin):
// a constant rate (rateSerializer, service may begin at once) or a trace
// (traceSerializer).

// rateSerializer transmits at a constant rate: departure = start +
// size*8/rate. Sub-nanosecond remainders are carried to the next packet, so
// the long-run rate is exact.
type rateSerializer struct {
	nsPerByte float64 // 8e9/rate; 0 for an unlimited rate
	frac      float64 // carried fraction of a nanosecond, [0, 1)
}

func (r *rateSerializer) finish(s clock.Time, size int) clock.Time {
	if r.nsPerByte == 0 {
		return s
	}
	x := float64(size)*r.nsPerByte + r.frac
	n := math.Floor(x)
	r.frac = x - n
	return s + clock.Time(n)
}

// traceSerializer serves packets at the delivery opportunities of a Mahimahi
// trace, looped. Each opportunity carries mtu bytes; a packet leaves at the
// opportunity that carries its last byte, a larger packet uses several
// opportunities, and the unused bytes of an opportunity may carry further
// packets at the same instant but are lost once the instant passes (as in
// Mahimahi's link queue).
type traceSerializer struct {
	tr       *Trace
	mtu      int
	base     clock.Time // start of the current loop of the trace
	idx      int        // next unused opportunity in the current loop
	credit   int        // bytes left in the opportunity at creditAt
	creditAt clock.Time
}

func (t *traceSerializer) opp() clock.Time { return t.base.Add(t.tr.Offsets[t.idx]) }

func (t *traceSerializer) next() {
	t.idx++
	if t.idx == len(t.tr.Offsets) {
		t.idx = 0
		t.base = t.base.Add(t.tr.Period)
	}
}

func (t *traceSerializer) startAt(at clock.Time) clock.Time {
	if t.credit > 0 && t.creditAt == at {
		return at
	}
	// Skip whole idle loops at once.
	if at.Sub(t.base) > 2*t.tr.Period {
		loops := (at.Sub(t.base) / t.tr.Period) - 1
		t.base = t.base.Add(loops * t.tr.Period)
		t.idx = 0
	}
	for t.opp() < at {
		t.next()
	}
	return t.opp()
}

func (t *traceSerializer) finish(s clock.Time, size int) clock.Time {
	rem := size
	if t.credit > 0 && t.creditAt == s {
		use := min(t.credit, rem)
		t.credit -= use
		rem -= use
		if rem == 0 {
			return s
		}
	}
	t.credit = 0
	for {
		o := t.opp()
		t.next()
		if o < s {
			continue
		}
		if rem <= t.mtu {
			t.credit = t.mtu - rem
			t.creditAt = o
			return o
		}
		rem -= t.mtu
	}
}
