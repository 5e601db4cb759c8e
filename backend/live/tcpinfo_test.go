package liverun

import (
	"testing"
	"time"

	"cclab/clock"
	"cclab/event"
)

// TestTCPSampleEvents checks the events made of two TCP_INFO samples: one
// PacketSent per data segment (retransmissions flagged, bytes as counted
// by the kernel), a Retransmit per retransmission, the acknowledged bytes,
// the RTOs, the recovery's start, and the state in MetricsUpdated.
func TestTCPSampleEvents(t *testing.T) {
	prev := tcpSample{dataSegsOut: 10, totalRetrans: 1, bytesSent: 14480, bytesRetrans: 1448, bytesAcked: 10000, totalRTO: 1, caState: 0}
	cur := tcpSample{dataSegsOut: 15, totalRetrans: 3, bytesSent: 21720, bytesRetrans: 4344, bytesAcked: 15000, totalRTO: 2, caState: tcpCARecovery,
		cwnd: 20, ssthresh: 14, mss: 1448, unacked: 12, sacked: 3, lost: 2, retransOut: 1, srtt: 41000, minRTT: 40000}
	var log event.Log
	now := clock.Start.Add(time.Second)
	cur.events(&prev, now, 7, log.Record)
	count := map[event.Kind]int{}
	sent := map[uint8]int{}
	for _, e := range log.Events {
		if e.Time != now || e.Flow != 7 || e.Link != -1 {
			t.Errorf("%v: time %v flow %d link %d, want %v, 7, -1", e.Kind, e.Time, e.Flow, e.Link, now)
		}
		count[e.Kind]++
		if e.Kind == event.PacketSent {
			sent[e.Reason] += e.Bytes
		}
	}
	for k, want := range map[event.Kind]int{event.PacketSent: 5, event.Retransmit: 2, event.PacketAcked: 1, event.RTO: 1,
		event.RecoveryStart: 1, event.RecoveryEnd: 0, event.MetricsUpdated: 1} {
		if got := count[k]; got != want {
			t.Errorf("%v events: got %d, want %d", k, got, want)
		}
	}
	if got, want := sent[event.SentNew], 7240-2896; got != want {
		t.Errorf("new bytes sent: got %d, want %d", got, want)
	}
	if got, want := sent[event.SentRetransmission], 2896; got != want {
		t.Errorf("retransmitted bytes: got %d, want %d", got, want)
	}
	m := log.Events[len(log.Events)-1]
	if m.Kind != event.MetricsUpdated || m.Cwnd != 20*1448 || m.Ssthresh != 14*1448 || m.InFlight != 8*1448 ||
		m.SRTT != 41*time.Millisecond || m.MinRTT != 40*time.Millisecond {
		t.Errorf("metrics: got %+v, want cwnd %d ssthresh %d in flight %d srtt 41ms min RTT 40ms", m, 20*1448, 14*1448, 8*1448)
	}
	// Leaving recovery ends it; an infinite ssthresh is left out.
	next := cur
	next.caState, next.ssthresh = 0, tcpInfiniteSsthresh
	log.Events = nil
	next.events(&cur, now, 7, log.Record)
	if len(log.Events) != 2 || log.Events[0].Kind != event.RecoveryEnd || log.Events[1].Ssthresh != 0 {
		t.Errorf("after recovery: got %+v, want RecoveryEnd and MetricsUpdated with no ssthresh", log.Events)
	}
}
