package perf

import (
	"encoding/json"
	"time"

	"cclab/transport"
)

// snap is the subset of transport.ConnStats perf uses.
type snap struct {
	sentBytes   int64 // stream bytes sent (first transmissions)
	ackedBytes  int64 // stream bytes cumulatively acknowledged
	recvBytes   int64 // stream bytes delivered in order
	retransmits int64
	spurious    int64 // retransmissions found unnecessary by timestamps
	rtos        int64
	rtoCauses   map[string]int64 // RTOs per cause (RTOCauses)
	cwnd        int
	srtt        time.Duration
	minRTT      time.Duration
	meanSRTT    time.Duration
	mss         int
}

func snapshot(s transport.ConnStats) snap {
	return snap{
		sentBytes: int64(s.BytesSent), ackedBytes: int64(min(s.BytesAcked, s.BytesSent)),
		recvBytes: int64(s.BytesDelivered), retransmits: int64(s.Retransmits), spurious: int64(s.SpuriousRetransmits), rtos: int64(s.RTOs),
		mss: s.MSS, cwnd: s.Cwnd, srtt: s.SRTT, minRTT: s.MinRTT, meanSRTT: s.MeanSRTT,
		rtoCauses: RTOCauses(s.RTOCauses),
	}
}

// RTOCauses names the per-cause RTO counts of transport.ConnStats.RTOCauses
// for JSON: burst_loss, too_few_dupacks, lost_retransmission, other (the
// transport's RTOOther), handshake, spurious.
func RTOCauses(c [transport.NumRTOCauses]uint64) map[string]int64 {
	return map[string]int64{
		"burst_loss":          int64(c[transport.RTOBurstLoss]),
		"too_few_dupacks":     int64(c[transport.RTOTooFewDupAcks]),
		"lost_retransmission": int64(c[transport.RTOLostRetransmission]),
		"other":               int64(c[transport.RTOOther]),
		"handshake":           int64(c[transport.RTOHandshake]),
		"spurious":            int64(c[transport.RTOSpurious]),
	}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
