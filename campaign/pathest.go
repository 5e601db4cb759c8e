package campaign

import (
	"bytes"
	"encoding/json"
	"sort"
	"time"

	"cclab/internal/qlog"
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
		Length    int     `json:"length"`
		LatestRTT float64 `json:"latest_rtt"` // ms
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
	var rtts []rttSample
	var ackT []time.Duration // distinct ACK instants
	var ackCum []int64       // payload acknowledged up to and including each
	var total int64
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
				latest[*pn] = len(e.lost)
				e.lost = append(e.lost, false)
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
		case "recovery:metrics_updated":
			if r.Data.LatestRTT > 0 {
				d := time.Duration(r.Data.LatestRTT * 1e6)
				rtts = append(rtts, rttSample{at, d})
				if e.minRTT == 0 || d < e.minRTT {
					e.minRTT = d
				}
				e.maxRTT = max(e.maxRTT, d)
			}
		case "cclab:packet_acked":
			total += int64(r.Data.Length)
			if n := len(ackT); n > 0 && ackT[n-1] == at {
				ackCum[n-1] = total
			} else {
				ackT, ackCum = append(ackT, at), append(ackCum, total)
			}
		}
	}
	e.trainBps = trainRate(ackT, ackCum, int64(TrainPackets*e.payload))
	return e
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
