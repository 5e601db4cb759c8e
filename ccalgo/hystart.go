package ccalgo

import (
	"time"

	"cclab/clock"
)

// HyStart (hybrid slow start; Ha & Rhee, "Taming the elephants: New TCP
// slow start", Computer Networks 55(9), 2011) as Linux's tcp_cubic.c runs
// it (its default, the module parameter hystart=1): slow start ends, with
// ssthresh = cwnd, when within one round of ACKs either
//
//   - ACK train: the ACKs arrive in a train (each within HyStartAckDelta of
//     the previous) lasting longer than half of (the minimum RTT + an
//     allowance for segmentation offload, hyStartAckDelay): the window then
//     holds about half a path's worth of data beyond what the link drains in
//     the minimum RTT; or
//   - delay: the smallest of the round's first HyStartMinSamples RTT
//     samples exceeds the minimum RTT by min RTT/8, clamped to
//     [HyStartDelayMin, HyStartDelayMax]: the queue has begun to grow.
//
// It runs only while cwnd is at least HyStartLowWindow segments, once per
// connection until an RTO (which resets it and the minimum RTT), and takes
// no RTT sample in the first second after a congestion-avoidance stage
// began. RFC 9438 §4.10 allows a slow start other than RFC 5681's; this is
// Linux's deliberate choice, not HyStart++ (RFC 9406).
//
// HyStart constants of tcp_cubic.c (module parameters hystart_low_window,
// hystart_ack_delta_us; HYSTART_MIN_SAMPLES, HYSTART_DELAY_MIN/MAX).
const (
	HyStartLowWindow  = 16                     // segments: no detection below this cwnd
	HyStartAckDelta   = 2 * time.Millisecond   // largest gap between two ACKs of a train
	HyStartMinSamples = 8                      // RTT samples per round before the delay check
	HyStartDelayMin   = 4 * time.Millisecond   // the delay increase's lower clamp
	HyStartDelayMax   = 16 * time.Millisecond  // and its upper clamp
	hyStartGSOMax     = 65536                  // bytes: the largest GSO packet (sk_gso_max_size of a device without bigger TSO)
	hyStartAckCushion = time.Millisecond       // cap of the offload allowance (hystart_ack_delay)
	hyStartQuiet      = time.Second            // no samples this long after a CA stage began
	hyStartPacing     = 2                      // Linux's pacing rate in slow start: 200 % of cwnd/srtt (tcp_update_pacing_rate)
	hyStartRTTNone    = time.Duration(1 << 62) // no RTT sample yet in the round
)

// hyStart is HyStart's state.
type hyStart struct {
	found      bool          // slow start has been ended by HyStart (until reset)
	roundStart clock.Time    // the current round's first ACK
	lastAck    clock.Time    // the train's last ACK
	endSeq     uint64        // the round ends when the cumulative ACK passes this byte (SND.NXT at its start)
	currRTT    time.Duration // smallest RTT sample of the round
	samples    int           // RTT samples of the round
	delayMin   time.Duration // smallest RTT sample since the start or the last reset
}

// reset starts a round at now (bictcp_hystart_reset).
func (h *hyStart) reset(now clock.Time, sndNxt uint64) {
	h.roundStart, h.lastAck, h.endSeq = now, now, sndNxt
	h.currRTT, h.samples = hyStartRTTNone, 0
}

// restart forgets everything, as after an RTO (bictcp_reset, then
// bictcp_hystart_reset).
func (h *hyStart) restart(now clock.Time, sndNxt uint64) {
	*h = hyStart{}
	h.reset(now, sndNxt)
}

// hyStartAckDelay is the allowance for segmentation offload: four of the
// largest GSO packets at Linux's slow-start pacing rate (2·cwnd/srtt),
// at most hyStartAckCushion.
func hyStartAckDelay(cwnd int, srtt time.Duration) time.Duration {
	if cwnd <= 0 || srtt <= 0 {
		return 0
	}
	rate := float64(hyStartPacing*cwnd) / srtt.Seconds() // bytes/s
	return min(hyStartAckCushion, time.Duration(4*hyStartGSOMax/rate*float64(time.Second)))
}

// onAck takes one ACK in slow start with cwnd bytes of mss-byte segments
// and reports whether HyStart ends slow start at it (the caller then sets
// ssthresh = cwnd). epochStart is the start of the current
// congestion-avoidance stage (clock.Never if none).
func (h *hyStart) onAck(a Ack, cwnd, mss int, epochStart clock.Time) bool {
	if a.RTT <= 0 || (epochStart != clock.Never && a.Now.Sub(epochStart) < hyStartQuiet) {
		return false
	}
	if h.delayMin == 0 || a.RTT < h.delayMin {
		h.delayMin = a.RTT
	}
	if h.found || cwnd < HyStartLowWindow*mss {
		return false
	}
	if a.CumAck > h.endSeq {
		h.reset(a.Now, a.SndNxt)
	}
	if a.Now.Sub(h.lastAck) <= HyStartAckDelta {
		h.lastAck = a.Now
		threshold := (h.delayMin + hyStartAckDelay(cwnd, a.SRTT)) / 2 // Linux halves it without pacing (SK_PACING_NONE)
		if a.Now.Sub(h.roundStart) > threshold {
			h.found = true
		}
	}
	h.currRTT = min(h.currRTT, a.RTT)
	if h.samples < HyStartMinSamples {
		h.samples++
	} else if h.currRTT > h.delayMin+min(max(h.delayMin/8, HyStartDelayMin), HyStartDelayMax) {
		h.found = true
	}
	return h.found
}
