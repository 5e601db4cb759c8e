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
	// ahead by. It weighs the two costs of a lead L (the pinball loss of
	// the estimate): a sleep that ends late is late by o−L, one that ends
	// early polls the clock for L−o, and the q-quantile minimises
	// q·E[late] + (1−q)·E[polling]. The lower quartile counts a µs of
	// polling three times a µs of lateness: polling takes CPU from the
	// readers and, on a shared CPU, from the relay's fair share. Measured
	// (the relay pinned to one CPU at 1 Gbit/s, load 19–21, bench -only
	// full -affinity): error median 67 µs without a lead, 57 µs at the
	// 0.1-quantile, 52 µs at 0.25, 47 µs at the median, for 56, 57, 61 and
	// 77–81 % of a CPU.
	leadQuantile = 0.25
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
