package campaign

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"time"

	"cclab/internal/qlog"
	"cclab/report/studies"
)

// Path estimation from sender qlogs (docs/campaigns.md, "Profile").
const (
	// TrainPackets is the least number of full-sized packets an ACK train
	// must acknowledge for its dispersion to count as a rate sample: with
	// fewer, one ACK delayed or compressed by the host moves the sample
	// by more than the ±20 % a replay can take.
	TrainPackets = 16
	// OverflowShare: a loss whose queueing delay (the largest RTT sample
	// in the RTT before it, less the min RTT) is at least this share of
	// the largest queueing delay of the path is counted as a buffer
	// overflow; OverflowLosses such losses make the buffer measured
	// rather than a lower bound.
	OverflowShare  = 0.9
	OverflowLosses = 2
)

// traceEstimate is what one sender qlog tells of its path.
type traceEstimate struct {
	minRTT, maxRTT time.Duration
	payload        int     // largest data packet's payload, bytes
	trainBps       float64 // largest ACK-train dispersion rate, payload bits/s (0: no train of TrainPackets)
	// lost is the loss sequence (lossSequence); lossAt the index in lost
	// and the queueing delay at each loss.
	lost   []bool
	lossAt []lossPoint
	// wireLost is the loss sequence the ACKs show (ackedLosses): in the
	// same order as lost, true for each transmission that did not reach
	// the receiver. The loss model is fitted to it, not to lost: a
	// timeout declares its whole flight lost, most of it delivered.
	wireLost []bool
	// sentAt is each transmission's instant, in the loss sequence's
	// order (every packet_sent record, retransmissions too), and
	// resent whether the same packet was sent again after it (it was
	// lost, or its loss spurious: a count that needs no loss detection,
	// which a timeout's retransmissions bypass).
	sentAt []time.Duration
	resent []bool
	// resentAt is, for each transmission sent again, the instant of the
	// next transmission of its packet.
	resentAt []time.Duration
	// spurious counts the retransmissions found unnecessary
	// (cclab:spurious_retransmit: the ACK echoed a timestamp older than
	// the retransmission, RFC 3522): each one's first transmission arrived
	// though resent says it was lost.
	spurious int
	// arrived marks the first transmission of each packet whose
	// retransmission was found spurious: it was sent again, but it was
	// delivered, so it was no drop (checkTailDrop).
	arrived []bool
	// rtts are the RTT samples in time order; ackT the distinct ACK
	// instants and ackCum the payload acknowledged up to each.
	rtts   []rttSample
	ackT   []time.Duration
	ackCum []int64
	// rtoAt are the retransmission timeouts' instants (cclab:rto).
	rtoAt []time.Duration
	// spuriousAt are the instants of the cclab:spurious_retransmit
	// records.
	spuriousAt []time.Duration
}

// lossPoint is one packet declared lost: its index in the loss sequence
// and the largest RTT sample in the RTT before it.
type lossPoint struct {
	idx int
	rtt time.Duration
}

// qlogRecord holds the fields of a sender qlog record the estimate reads.
type qlogRecord struct {
	Time float64 `json:"time"` // ms
	Name string  `json:"name"`
	Data struct {
		Header struct {
			PacketNumber *uint64 `json:"packet_number"`
		} `json:"header"`
		Raw struct {
			Length int `json:"length"`
		} `json:"raw"`
		Length      int     `json:"length"`
		Seq         *uint64 `json:"seq"`
		LatestRTT   float64 `json:"latest_rtt"`   // ms
		SmoothedRTT float64 `json:"smoothed_rtt"` // ms
	} `json:"data"`
}

// rttSample is one RTT sample at an instant.
type rttSample struct{ at, rtt time.Duration }

// estimateTrace reads a sender qlog: the min and max RTT samples, the
// loss sequence with each loss's queueing delay, and the rate the ACK
// trains' dispersion shows (cclab:packet_acked: payload acknowledged per
// ACK; the largest rate over every run of ACKs that acknowledges at least
// TrainPackets full packets: while the bottleneck's queue is busy the ACKs
// come back spaced by its serialization, as packet-train dispersion
// measures it). Malformed records are skipped.
func estimateTrace(trace []byte) traceEstimate {
	var e traceEstimate
	latest := map[uint64]int{}
	first := map[uint64]int{}             // each packet number's first transmission
	ackedAt := map[uint64]time.Duration{} // each packet number's first acknowledgement
	var pns []uint64                      // each transmission's packet number
	var rtts []rttSample
	var ackT []time.Duration // distinct ACK instants
	var ackCum []int64       // payload acknowledged up to and including each
	var total int64
	var prev qlogRecord // the last recovery:metrics_updated record
	for _, rec := range bytes.Split(trace, []byte{qlog.RecordSeparator}) {
		var r qlogRecord
		if len(bytes.TrimSpace(rec)) == 0 || json.Unmarshal(rec, &r) != nil {
			continue
		}
		at := time.Duration(r.Time * 1e6)
		pn := r.Data.Header.PacketNumber
		switch r.Name {
		case "transport:packet_sent":
			if pn != nil {
				if i, ok := latest[*pn]; ok {
					e.resent[i], e.resentAt[i] = true, at
				}
				latest[*pn] = len(e.lost)
				if _, ok := first[*pn]; !ok {
					first[*pn] = len(e.lost)
				}
				e.lost = append(e.lost, false)
				pns = append(pns, *pn)
				e.sentAt = append(e.sentAt, at)
				e.resent = append(e.resent, false)
				e.resentAt = append(e.resentAt, 0)
				e.arrived = append(e.arrived, false)
				e.payload = max(e.payload, r.Data.Raw.Length)
			}
		case "recovery:packet_lost":
			if pn == nil {
				continue
			}
			if i, ok := latest[*pn]; ok {
				e.lost[i] = true
				e.lossAt = append(e.lossAt, lossPoint{idx: i, rtt: recentMax(rtts, at, e.minRTT)})
			}
		case "cclab:rto":
			e.rtoAt = append(e.rtoAt, at)
		case "cclab:spurious_retransmit":
			e.spurious++
			e.spuriousAt = append(e.spuriousAt, at)
			if r.Data.Seq != nil {
				if i, ok := first[*r.Data.Seq]; ok {
					e.arrived[i] = true
				}
			}
		case "recovery:metrics_updated":
			stale := staleRTT(prev, r)
			prev = r
			if r.Data.LatestRTT > 0 && !stale {
				d := time.Duration(r.Data.LatestRTT * 1e6)
				rtts = append(rtts, rttSample{at, d})
				if e.minRTT == 0 || d < e.minRTT {
					e.minRTT = d
				}
				e.maxRTT = max(e.maxRTT, d)
			}
		case "cclab:packet_acked":
			seq := uint64(0) // the qlog leaves out a zero seq
			if r.Data.Seq != nil {
				seq = *r.Data.Seq
			}
			if _, ok := ackedAt[seq]; !ok {
				ackedAt[seq] = at
			}
			total += int64(r.Data.Length)
			if n := len(ackT); n > 0 && ackT[n-1] == at {
				ackCum[n-1] = total
			} else {
				ackT, ackCum = append(ackT, at), append(ackCum, total)
			}
		}
	}
	e.trainBps = trainRate(ackT, ackCum, int64(TrainPackets*e.payload))
	e.rtts, e.ackT, e.ackCum = rtts, ackT, ackCum
	e.wireLost = ackedLosses(pns, e.sentAt, e.lost, ackedAt, e.minRTT)
	return e
}

// AckedLossRTTShare is the share of the smallest RTT sample by which an
// acknowledgement must follow a transmission to be its (ackedLosses): no
// ACK comes back sooner than the path's round trip, and a retransmission
// follows the transmission before it by at least about one (fast
// retransmit waits for duplicate ACKs, a timeout for more than the
// smoothed RTT); the margin holds a min RTT sample that queueing inflated.
const AckedLossRTTShare = 0.75

// ackedLosses returns the transmissions (pns[i] each one's packet number,
// sentAt[i] its instant, in sending order) that did not reach the
// receiver, as the ACKs show: of a packet number's transmissions, the
// one its first acknowledgement (ackedAt) answered is the latest sent at
// least AckedLossRTTShare × minRTT before it, and the ones sent before
// it were lost (cclab:spurious_retransmit is no guide here: after a
// timeout whose retransmissions were lost it marks the ones before them); later ones were sent needlessly, not lost. A packet never
// acknowledged, or a trace without RTT samples, keeps the declared losses
// (declared). The declared sequence counts every packet a timeout
// declared lost: under bursty loss a Reno timeout's whole flight, mostly
// delivered, which doubled the loss rate and the mean burst of a
// Gilbert-Elliott fit in the multi-host test (docs/campaigns.md,
// "Profile").
func ackedLosses(pns []uint64, sentAt []time.Duration, declared []bool, ackedAt map[uint64]time.Duration, minRTT time.Duration) []bool {
	lost := make([]bool, len(pns))
	if minRTT <= 0 {
		copy(lost, declared)
		return lost
	}
	byPN := map[uint64][]int{}
	for i, pn := range pns {
		byPN[pn] = append(byPN[pn], i)
	}
	floor := time.Duration(AckedLossRTTShare * float64(minRTT))
	answered := func(pn uint64) int {
		j := 0
		for k, i := range byPN[pn] {
			if sentAt[i]+floor <= ackedAt[pn] {
				j = k
			}
		}
		return j
	}
	// lowest is, per ACK instant, the lowest packet number it was the
	// first to acknowledge: the hole whose filling moved the cumulative
	// point over the rest (docs/campaigns.md, "Profile").
	lowest := map[time.Duration]uint64{}
	for pn, a := range ackedAt {
		if l, ok := lowest[a]; !ok || pn < l {
			lowest[a] = pn
		}
	}
	for pn, idx := range byPN {
		a, ok := ackedAt[pn]
		if !ok {
			for _, i := range idx {
				lost[i] = declared[i]
			}
			continue
		}
		j := answered(pn)
		// An ACK that moved the cumulative point over several packets
		// answered the transmission that filled its lowest hole; the
		// packets above it arrived before that one (a path keeps its
		// order), so a transmission of theirs sent after it was needless
		// when an earlier one was sent before it: go-back-N after a
		// timeout resends packets the receiver holds above the hole.
		if l := lowest[a]; l != pn && len(byPN[l]) > 0 {
			hole := sentAt[byPN[l][answered(l)]]
			for j > 0 && sentAt[idx[j]] > hole {
				j--
			}
		}
		for _, i := range idx[:j] {
			lost[i] = true
		}
	}
	return lost
}

// StaleRTTTolerance: a metrics record whose latest and smoothed RTTs
// both equal the previous record's, with the smoothed RTT more than this
// away from the latest, took no RTT sample (staleRTT).
const StaleRTTTolerance = time.Microsecond

// staleRTT reports whether the metrics record r, after prev, repeats
// prev's RTT sample rather than taking one: the transport writes a record
// after every ACK, and one that acknowledged only retransmissions took no
// sample (RFC 6298 §3, Karn's algorithm), so its latest and smoothed RTTs
// are the last ones unchanged. After a host stall hundreds of such
// records repeat the stall's inflated RTT; counted as samples they would
// make a plateau of it. A real sample equal to the last one moves the
// smoothed RTT, unless that has converged to it (a simulated path's
// constant RTT: kept).
func staleRTT(prev, r qlogRecord) bool {
	l, s := r.Data.LatestRTT, r.Data.SmoothedRTT
	return l == prev.Data.LatestRTT && s == prev.Data.SmoothedRTT &&
		math.Abs(l-s) > float64(StaleRTTTolerance)/1e6
}

// recentMax returns the largest RTT sample within window before at (the
// queue a loss at at met: its packet was sent about an RTT earlier).
func recentMax(rtts []rttSample, at, window time.Duration) time.Duration {
	i := sort.Search(len(rtts), func(i int) bool { return rtts[i].at >= at-window })
	var m time.Duration
	for _, s := range rtts[i:] {
		m = max(m, s.rtt)
	}
	return m
}

// trainRate returns the largest payload rate (bits/s) over runs of ACKs
// acknowledging at least least bytes after the run's first ACK: bytes
// acknowledged by ACKs i+1..j over t[j] − t[i], the shortest such run
// ending at each j.
func trainRate(t []time.Duration, cum []int64, least int64) float64 {
	best, i := 0.0, 0
	if least <= 0 {
		return 0
	}
	for j := range t {
		for i+1 < j && cum[j]-cum[i+1] >= least {
			i++
		}
		if cum[j]-cum[i] >= least && t[j] > t[i] {
			best = max(best, float64(cum[j]-cum[i])*8/(t[j]-t[i]).Seconds())
		}
	}
	return best
}

// Probe estimation (docs/campaigns.md, "Probing").
const (
	// ProbeQueueQuantile and ProbePlateau: a probe's full queue is the
	// median of its queueing delays of at least ProbePlateau times their
	// ProbeQueueQuantile. The queue stays full, a plateau of the RTT, while
	// the probe outpaces the bottleneck; its start, one RTT at its start
	// rate, may briefly fill earlier queues too (the RTT above the
	// plateau), and a few delayed ACKs do not count.
	ProbeQueueQuantile = 0.95
	ProbePlateau       = 0.8
	// ProbeRatePackets is the least number of packets a probe's busy
	// period (from the first to the last RTT sample with the queue at
	// least half full) must acknowledge for its rate to count.
	ProbeRatePackets = 4 * TrainPackets
	// ProbeSettleRTTs: the transmissions of a probe sent within this many
	// of its largest RTTs before its first retransmission timeout are left
	// out of the count before it (beforeTimeout): their losses, if any,
	// may not have been found before the timeout resent them with
	// everything else outstanding.
	ProbeSettleRTTs = 2.0
)

// probeEstimate is what a probe's sender qlog tells of the bottleneck.
type probeEstimate struct {
	rate, rateLo, rateHi float64       // payload bits/s: the median of the busy period's trains, and their quartiles
	queue                time.Duration // the full queue's queueing delay
	// buffer is the buffer counted from the transmissions at the rate
	// (countedBuffer), packets; bufferLo and bufferHi at rateHi and
	// rateLo. overflows are the losses with the queue at least
	// OverflowShare of it, overflowed whether they show a drop-tail
	// overflow (else buffer is a bound).
	buffer, bufferLo, bufferHi float64
	overflows                  int
	overflowed                 bool
	payload                    int
	// tail is the delay side of the count (checkTailDrop) when the count
	// passed its own overflow test; notTail says why it then failed the
	// delay side (overflowed is false). disputed says the count (count
	// packets) and the delay at its overflows disagreed by more than
	// BufferAgreement: buffer is then the one judged right (judge) and
	// bufferLo and bufferHi hold both.
	tail     tailDrop
	notTail  string
	disputed bool
	count    float64
	// fromDelay says the count failed its own overflow test and the
	// buffer is the full queue's delay at the rate, its losses showing a
	// drop-tail overflow in delay alone (byDelay; count is then the
	// count's bound); delayTail is that check's evidence.
	fromDelay bool
	delayTail delayTail
	// plateauAgrees says a disputed count stood because the full
	// queue's delay at the rate agreed with it (judge).
	plateauAgrees bool
	// beforeTimeout is the number of transmissions the buffer was
	// counted from when it was counted before the probe's first
	// retransmission timeout (beforeTimeout), else 0.
	beforeTimeout int
	// random is the loss sequence of the transmissions that found the
	// counted queue below half full (randomLosses), when the count is
	// measured and clean (before any timeout); else nil.
	random []bool
}

// estimateProbe reads a probe's trace (estimateTrace) on a path of min
// RTT minRTT (0: the trace's): the full queue's delay (ProbePlateau), the
// busy period from the first to the last RTT sample with the queue at
// least half that, and the rate as the median over the busy period's
// trains of TrainPackets packets (packet-train dispersion: the median
// leaves out the trains across a stall, e.g. a retransmission timeout at
// the end, and those compressed by the host), with their quartiles as
// the range. ok is false when the busy period acknowledged fewer than
// ProbeRatePackets packets.
func estimateProbe(t traceEstimate, minRTT time.Duration) (pe probeEstimate, ok bool) {
	if minRTT <= 0 || t.minRTT > 0 && t.minRTT < minRTT {
		minRTT = t.minRTT
	}
	if len(t.rtts) == 0 || t.payload <= 0 {
		return pe, false
	}
	pe.payload = t.payload
	pe.queue = fullQueueDelay(t.rtts, minRTT)
	first, last := time.Duration(-1), time.Duration(-1)
	for _, s := range t.rtts {
		if s.rtt-minRTT >= pe.queue/2 {
			if first < 0 {
				first = s.at
			}
			last = s.at
		}
	}
	a, b := ackIndex(t.ackT, first), ackIndex(t.ackT, last)
	if first < 0 || b <= a || t.ackCum[b]-t.ackCum[a] < int64(ProbeRatePackets*t.payload) {
		return pe, false
	}
	var trains []float64
	for i, j := a, a+1; j <= b; j++ {
		if t.ackCum[j]-t.ackCum[i] >= int64(TrainPackets*t.payload) && t.ackT[j] > t.ackT[i] {
			trains = append(trains, float64(t.ackCum[j]-t.ackCum[i])*8/(t.ackT[j]-t.ackT[i]).Seconds())
			i = j
		}
	}
	if len(trains) == 0 {
		return pe, false
	}
	pe.rate, pe.rateLo, pe.rateHi = studies.Quantile(trains, 0.5), studies.Quantile(trains, 0.25), studies.Quantile(trains, 0.75)
	// The count before the first timeout, when it measured the buffer
	// (docs/campaigns.md, "Probing"): the timeout resends everything
	// outstanding, delivered packets too, and the count takes each as
	// dropped; before it, the count is clean.
	if p, ok := beforeTimeout(t); ok {
		b := pe
		b.queue = fullQueueDelay(p.rtts, minRTT)
		if b.countBuffer(p, minRTT); b.overflowed && !b.fromDelay {
			b.beforeTimeout = len(p.sentAt)
			b.random = randomLosses(p, b.rate/8/float64(t.payload), b.buffer)
			return b, true
		}
	}
	pe.countBuffer(t, minRTT)
	if len(t.rtoAt) == 0 && pe.overflowed && !pe.fromDelay {
		pe.random = randomLosses(t, pe.rate/8/float64(t.payload), pe.buffer)
	}
	return pe, true
}

// randomLosses returns the loss sequence of the transmissions of a
// probe's trace t (one without a retransmission timeout, or its part
// before one: beforeTimeout) that found its queue, replayed at rate
// packets per second (queueAtSends), below half its counted buffer:
// true for each sent again and not found spurious. A drop-tail queue
// drops nothing there, so these losses are the path's random loss, the
// probe's own overflows left out (docs/campaigns.md, "Profile").
func randomLosses(t traceEstimate, rate, buffer float64) []bool {
	if rate <= 0 || buffer <= 0 || len(t.sentAt) != len(t.resent) {
		return nil
	}
	var out []bool
	for i, q := range queueAtSends(t.sentAt, t.resent, rate) {
		if q < buffer/2 {
			out = append(out, t.resent[i] && (len(t.arrived) != len(t.resent) || !t.arrived[i]))
		}
	}
	return out
}

// fullQueueDelay is a probe's full queue's queueing delay: of the RTT
// samples less minRTT, the median of those at least ProbePlateau times
// their ProbeQueueQuantile (0 without samples).
func fullQueueDelay(rtts []rttSample, minRTT time.Duration) time.Duration {
	if len(rtts) == 0 {
		return 0
	}
	qs := make([]float64, len(rtts))
	for i, s := range rtts {
		qs[i] = float64(max(s.rtt-minRTT, 0))
	}
	top := ProbePlateau * studies.Quantile(qs, ProbeQueueQuantile)
	var plateau []float64
	for _, q := range qs {
		if q >= top {
			plateau = append(plateau, q)
		}
	}
	return time.Duration(studies.Quantile(plateau, 0.5))
}

// countBuffer sets the buffer of a probe whose rate and full queue's
// delay are set from its trace t on a path of min RTT minRTT: the count
// (countedBuffer) held against the delay at its overflows (judge), or,
// when the count is no measurement, the delay at the losses alone
// (byDelay).
func (pe *probeEstimate) countBuffer(t traceEstimate, minRTT time.Duration) {
	pps := func(bps float64) float64 { return bps / 8 / float64(t.payload) }
	pe.buffer, pe.overflows, pe.overflowed = countedBuffer(t.sentAt, t.resent, pps(pe.rate))
	lo, _, _ := countedBuffer(t.sentAt, t.resent, pps(pe.rateHi))
	hi, _, _ := countedBuffer(t.sentAt, t.resent, pps(pe.rateLo))
	pe.bufferLo, pe.bufferHi = min(lo, hi, pe.buffer), max(lo, hi, pe.buffer)
	if pe.overflowed {
		pe.judge(checkTailDrop(t, minRTT, pps(pe.rate), pe.buffer, pe.queue), t.spurious, pe.queue.Seconds()*pps(pe.rate))
	}
	// A count that is no measurement (it failed its own overflow test, or
	// its losses did not come at the full queue's delay and found the
	// count itself in fewer than ProbeTrains trains) leaves the delay at
	// the losses alone to tell; one whose overflows came at its level in
	// ProbeTrains trains stays the bound (an RTT plateau above it is a
	// second queue or the host's, docs/campaigns.md "Probing").
	if !pe.overflowed && pe.tail.atCount < ProbeTrains {
		pe.byDelay(checkDelayTail(t, minRTT, pps(pe.rate), pe.queue), pps(pe.rateLo), pps(pe.rateHi), pps(pe.rate))
	}
}

// byDelay measures the buffer of a probe whose count failed its own
// overflow test from the queueing delay at its losses alone (delayTail),
// when they show a drop-tail overflow: the full queue's delay at the rate
// (packets per second; lo and hi the rate's quartiles), with an interval
// holding it at both quartiles and the count's bound.
func (pe *probeEstimate) byDelay(d delayTail, lo, hi, rate float64) {
	pe.delayTail = d
	if !d.confirmed() {
		return
	}
	q := pe.queue.Seconds()
	pe.count, pe.fromDelay, pe.overflowed, pe.overflows = pe.buffer, true, true, d.lost
	pe.buffer = q * rate
	pe.bufferLo, pe.bufferHi = min(q*lo, q*hi, pe.buffer, pe.count), max(q*lo, q*hi, pe.buffer, pe.count)
}

// judge holds a count that passed countedBuffer's overflow test against
// the delay at its overflow losses (d): without ProbeTrains trains of
// losses at the full queue's delay (and ProbePlateauShare of them) it was no
// drop-tail overflow, and the count is a bound; with them, a count and a
// delay within BufferAgreement are measured, the interval widened to
// hold both. When they disagree the interval holds both and the buffer
// is the delay's when that is the smaller (a queue that dropped at that
// delay held no more: the count took drops as kept, or the rate is off)
// or when the spurious retransmissions (each a transmission the count
// took as dropped though it arrived) can make up the count's deficit (a
// timeout's retransmissions of a delivered window); else the count's (a
// host that held ACKs back, or a second queue behind the bottleneck,
// adds to the RTT, not to the count). But when the count agrees within
// BufferAgreement with the full queue's delay at the rate (plateau,
// packets), two measures of the full queue agree and the delay at the
// losses alone is the odd one (losses that came below the full queue's
// delay in most trains with one): the count stands (plateauAgrees).
func (pe *probeEstimate) judge(d tailDrop, spurious int, plateau float64) {
	pe.tail, pe.count = d, pe.buffer
	if !d.confirmed() && d.atCount < ProbeTrains && d.atPlateau >= ProbeTrains {
		pe.overflowed = false
		pe.notTail = fmt.Sprintf("its losses found the queue at the counted %.0f packets or more in %d trains of %d packets only (a drop-tail queue holds it through every train once full; %d wanted): a queue still rising when the probe ended, not an overflow",
			pe.buffer, d.atCount, ProbeTrainPackets, ProbeTrains)
		return
	}
	if !d.confirmed() {
		pe.overflowed = false
		pe.notTail = fmt.Sprintf("its losses at the counted %.0f packets met the full queue's delay (%v) in %d of the %d trains of %d packets with one (a drop-tail queue drops at that delay in every train while it is full; %d and a third wanted): a loss burst, not an overflow",
			pe.buffer, pe.queue.Round(100*time.Microsecond), d.atPlateau, d.trains, ProbeTrainPackets, ProbeTrains)
		return
	}
	pe.bufferLo, pe.bufferHi = min(pe.bufferLo, d.at), max(pe.bufferHi, d.at)
	if math.Abs(pe.buffer/d.at-1) <= BufferAgreement {
		return
	}
	pe.disputed = true
	if plateau > 0 && math.Abs(pe.buffer/plateau-1) <= BufferAgreement {
		pe.plateauAgrees = true
		return
	}
	if d.at < pe.buffer || d.at-pe.buffer <= float64(spurious) {
		pe.buffer = d.at
	}
}

// beforeTimeout returns the part of a probe's trace that its first
// retransmission timeout left intact (ok false: the trace had none): the
// transmissions sent at least ProbeSettleRTTs of its largest RTT sample
// before the timeout, each counted as sent again only when it was before
// the timeout, the RTT samples of those transmissions, and the spurious
// retransmissions before the timeout.
func beforeTimeout(t traceEstimate) (p traceEstimate, ok bool) {
	if len(t.rtoAt) == 0 {
		return t, false
	}
	rto := t.rtoAt[0]
	var rtt time.Duration
	n := sort.Search(len(t.rtts), func(i int) bool { return t.rtts[i].at >= rto })
	for _, s := range t.rtts[:n] {
		rtt = max(rtt, s.rtt)
	}
	end := rto - time.Duration(ProbeSettleRTTs*float64(rtt))
	k := sort.Search(len(t.sentAt), func(i int) bool { return t.sentAt[i] >= end })
	p = t
	p.sentAt, p.rtts, p.rtoAt = t.sentAt[:k], nil, nil
	for _, s := range t.rtts[:n] {
		if s.at-s.rtt < end {
			p.rtts = append(p.rtts, s)
		}
	}
	p.resent = make([]bool, k)
	for i := range p.resent {
		p.resent[i] = t.resent[i] && t.resentAt[i] < rto
	}
	p.resentAt = t.resentAt[:k]
	if len(t.arrived) >= k {
		p.arrived = t.arrived[:k]
	}
	p.spurious = sort.Search(len(t.spuriousAt), func(i int) bool { return t.spuriousAt[i] >= rto })
	p.spuriousAt = t.spuriousAt[:p.spurious]
	return p, true
}

// ackIndex returns the index of the first ACK instant at or after at
// (the last one if none).
func ackIndex(ackT []time.Duration, at time.Duration) int {
	i := sort.Search(len(ackT), func(i int) bool { return ackT[i] >= at })
	return min(i, len(ackT)-1)
}
