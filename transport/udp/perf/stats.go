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
	rtos        int64
	cwnd        int
	srtt        time.Duration
	minRTT      time.Duration
	meanSRTT    time.Duration
	mss         int
	sentDigest  []byte
	recvDigest  []byte
}

func snapshot(s transport.ConnStats) snap {
	return snap{
		sentBytes: int64(s.BytesSent), ackedBytes: int64(min(s.BytesAcked, s.BytesSent)),
		recvBytes: int64(s.BytesDelivered), retransmits: int64(s.Retransmits), rtos: int64(s.RTOs),
		mss: s.MSS, cwnd: s.Cwnd, srtt: s.SRTT, minRTT: s.MinRTT, meanSRTT: s.MeanSRTT,
		sentDigest: s.SentDigest[:], recvDigest: s.RecvDigest[:],
	}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
