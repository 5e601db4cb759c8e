package transport

import "time"

// RFC 6298 constants.
const (
	// rttAlpha and rttBeta are the RFC 6298 §2.3 gains 1/8 and 1/4, kept as
	// shifts (SRTT += (R'-SRTT)/8; RTTVAR += (|SRTT-R'|-RTTVAR)/4).
	rttAlphaShift = 3
	rttBetaShift  = 2
	// rttK is K = 4 of RFC 6298 §2.2-2.3: RTO = SRTT + max(G, K*RTTVAR).
	rttK = 4
	// ClockGranularity is G of RFC 6298: the tick of the echoed timestamps
	// (1 µs).
	ClockGranularity = time.Microsecond
	// DefaultInitialRTO is the RFC 6298 §2.1 initial RTO, 1 s.
	DefaultInitialRTO = time.Second
	// DefaultMinRTO is the minimum RTO, 200 ms as in Linux (RFC 6298 §2.4
	// says 1 s; configurable with Config.MinRTO).
	DefaultMinRTO = 200 * time.Millisecond
	// DefaultMaxRTO is the RTO ceiling, 60 s (RFC 6298 §2.5: a maximum MAY
	// be placed on RTO provided it is at least 60 s).
	DefaultMaxRTO = 60 * time.Second
)

// rttEstimator implements the RFC 6298 RTT estimator and RTO with
// exponential backoff. It also tracks the minimum and latest sample.
type rttEstimator struct {
	minRTO, maxRTO, initialRTO time.Duration

	srtt, rttvar time.Duration
	latest, min  time.Duration
	samples      int
	backoff      int           // number of doublings since the last sample/new ack (RFC 6298 §5.5)
	rto          time.Duration // current base RTO (before backoff)

	sumSRTT time.Duration // sum of SRTT after each sample, for the mean
}

func newRTTEstimator(minRTO, initialRTO, maxRTO time.Duration) rttEstimator {
	return rttEstimator{minRTO: minRTO, maxRTO: maxRTO, initialRTO: initialRTO, rto: initialRTO}
}

// sampleInFlight applies one RTT measurement taken while flight bytes were
// outstanding, with segments of mss bytes. RFC 6298's gains assume one
// sample per RTT; with a sample on every ACK (timestamps), RFC 7323
// Appendix G divides alpha and beta by ExpectedSamples =
// ceil(FlightSize / (SMSS*2)), so RTTVAR keeps the memory of about one RTT
// instead of collapsing within a window and leaving the RTO barely above
// SRTT (which fires spuriously after a single fast retransmit).
func (e *rttEstimator) sampleInFlight(r time.Duration, flight uint64, mss int) {
	expected := 1
	if mss > 0 {
		expected = max(1, int((flight+2*uint64(mss)-1)/(2*uint64(mss))))
	}
	e.sampleScaled(r, expected)
}

// sample applies one RTT measurement r (RFC 6298 §2.2, §2.3) and clears the
// backoff: a new sample means the path answers again.
func (e *rttEstimator) sample(r time.Duration) { e.sampleScaled(r, 1) }

// sampleScaled applies r with the RFC 6298 gains divided by expected (RFC
// 7323 Appendix G).
func (e *rttEstimator) sampleScaled(r time.Duration, expected int) {
	if r <= 0 {
		r = ClockGranularity
	}
	e.latest = r
	if e.samples == 0 || r < e.min {
		e.min = r
	}
	if e.samples == 0 {
		// §2.2: SRTT <- R, RTTVAR <- R/2.
		e.srtt = r
		e.rttvar = r / 2
	} else {
		// §2.3: RTTVAR <- (1 - beta) * RTTVAR + beta * |SRTT - R'|, then
		// SRTT <- (1 - alpha) * SRTT + alpha * R'.
		d := e.srtt - r
		if d < 0 {
			d = -d
		}
		n := time.Duration(max(expected, 1))
		e.rttvar += (d - e.rttvar) / (n << rttBetaShift)
		e.srtt += (r - e.srtt) / (n << rttAlphaShift)
	}
	e.samples++
	e.sumSRTT += e.srtt
	// §2.2/2.3: RTO <- SRTT + max(G, K*RTTVAR); §2.4 rounds up to the minimum; §2.5 caps.
	e.rto = e.srtt + max(ClockGranularity, rttK*e.rttvar)
	e.rto = min(max(e.rto, e.minRTO), e.maxRTO)
	e.backoff = 0
}

// current returns the RTO to arm the timer with: the base RTO doubled once
// per backoff (RFC 6298 §5.5), capped at the maximum.
func (e *rttEstimator) current() time.Duration {
	r := e.rto
	for i := 0; i < e.backoff && r < e.maxRTO; i++ {
		r *= 2
	}
	return min(r, e.maxRTO)
}

// backOff doubles the RTO (RFC 6298 §5.5) after a timer expiry.
func (e *rttEstimator) backOff() {
	if e.current() < e.maxRTO {
		e.backoff++
	}
}

// meanSRTT returns the mean of SRTT over all samples.
func (e *rttEstimator) meanSRTT() time.Duration {
	if e.samples == 0 {
		return 0
	}
	return e.sumSRTT / time.Duration(e.samples)
}
