package relay

import "time"

// wakeLead learns how late the scheduler's sleeps wake up (their
// overshoot: wake-up time minus the instant asked for), so that it can
// sleep that much less and poll the clock for what is left, instead of
// waking after the modelled instant by the machine's wake-up latency (on
// the development VM 50–70 µs at the median even with 1 ns timer slack,
// against 2 µs for a thread that polls; bench -only floor).
//
// The estimate is a streaming quantile: the deterministic form of Frugal-1U
// (Ma, Muthukrishnan and Sandler, "Frugal Streaming for Estimating
// Quantiles", 2013), a stochastic-gradient step on the pinball loss: an
// overshoot above the estimate raises it by leadStep·leadQuantile, one
// below lowers it by leadStep·(1−leadQuantile), so it settles where a
// fraction leadQuantile of the overshoots lie below it. One word of state,
// no allocation, and it follows a change of load within a few hundred
// wake-ups.
type wakeLead struct {
	est time.Duration
}

// Settings of wakeLead.
const (
	// leadQuantile is the quantile of the overshoot the scheduler wakes
	// ahead by: the median, so half its sleeps end early (it then polls
	// the clock for the rest, a few µs when the overshoot varies little)
	// and half late by the overshoot above the median.
	leadQuantile = 0.5
	// leadStep is the gradient step, ns: the estimate moves by at most
	// leadStep per wake-up (tens of thousands a second at 1 Gbit/s).
	leadStep = time.Microsecond
	// maxLead bounds the lead, and so how long the scheduler polls the
	// clock after a sleep that ended early: a machine whose wake-ups are
	// late by more (a loaded one) gets no more polling than this.
	maxLead = 200 * time.Microsecond
)

// observe counts one sleep that overshot its instant by o.
func (w *wakeLead) observe(o time.Duration) {
	switch {
	case o > w.est:
		w.est += time.Duration(float64(leadStep) * leadQuantile)
	case o < w.est:
		w.est -= time.Duration(float64(leadStep) * (1 - leadQuantile))
	}
	w.est = min(max(w.est, 0), maxLead)
}

// lead returns how long before an instant to stop sleeping.
func (w *wakeLead) lead() time.Duration { return w.est }
