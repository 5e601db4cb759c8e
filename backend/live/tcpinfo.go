package liverun

import (
	"time"

	"cclab/clock"
	"cclab/event"
	"cclab/transport"
)

// tcpSample is what the live backend reads of a kernel TCP sender's
// TCP_INFO (Linux's struct tcp_info): cumulative counters and the
// congestion state at one instant.
type tcpSample struct {
	dataSegsOut  uint32 // tcpi_data_segs_out: data segments sent, retransmissions included
	totalRetrans uint32 // tcpi_total_retrans: segments retransmitted
	bytesSent    uint64 // tcpi_bytes_sent: payload bytes sent, retransmissions included
	bytesRetrans uint64 // tcpi_bytes_retrans: payload bytes retransmitted
	bytesAcked   uint64 // tcpi_bytes_acked: payload bytes acknowledged
	totalRTO     uint16 // tcpi_total_rto: retransmission timeouts
	caState      uint8  // tcpi_ca_state: TCP_CA_Open .. TCP_CA_Loss

	cwnd, ssthresh, mss uint32 // tcpi_snd_cwnd, tcpi_snd_ssthresh (segments), tcpi_snd_mss (bytes)
	unacked, sacked     uint32 // tcpi_unacked, tcpi_sacked: segments
	lost, retransOut    uint32 // tcpi_lost, tcpi_retrans: segments
	srtt, minRTT        uint32 // tcpi_rtt, tcpi_min_rtt: µs
}

// Linux's congestion-avoidance states (tcpi_ca_state; include/net/tcp.h)
// that are loss recovery: fast recovery and the loss state after an RTO.
const (
	tcpCARecovery = 3 // TCP_CA_Recovery
	tcpCALoss     = 4 // TCP_CA_Loss
)

// tcpInfiniteSsthresh is Linux's ssthresh before the first reduction
// (TCP_INFINITE_SSTHRESH), segments.
const tcpInfiniteSsthresh = 0x7fffffff

// inRecovery reports whether a tcpi_ca_state is a loss-recovery state.
func inRecovery(ca uint8) bool { return ca == tcpCARecovery || ca == tcpCALoss }

// events emits, at now, the events of flow between the samples prev and s
// (prev zero: the connection's start), in the vocabulary of cclab's own
// connections (docs/metrics.md): a PacketSent per data segment sent (the
// retransmitted ones flagged) and a Retransmit per retransmission, the
// bytes acknowledged as one PacketAcked, an RTO per timeout (cause
// unknown), RecoveryStart and RecoveryEnd where the state entered or left
// recovery, and MetricsUpdated with cwnd, ssthresh, bytes in flight
// (Linux's tcp_packets_in_flight × MSS), srtt and min RTT. The counters
// are cumulative, so nothing between samples is lost; only the state's
// changes between samples are not seen.
func (s *tcpSample) events(prev *tcpSample, now clock.Time, flow uint64, emit func(*event.Event)) {
	e := event.Event{Time: now, Flow: flow, Link: -1}
	retr := s.totalRetrans - prev.totalRetrans
	segs := s.dataSegsOut - prev.dataSegsOut
	newSegs := segs - min(segs, retr)
	rbytes := s.bytesRetrans - prev.bytesRetrans
	nbytes := s.bytesSent - prev.bytesSent - min(s.bytesSent-prev.bytesSent, rbytes)
	split := func(n uint32, bytes uint64, reason uint8) {
		e.Kind, e.Reason = event.PacketSent, reason
		for i := uint32(0); i < n; i++ {
			e.Bytes = int(bytes / uint64(n))
			if i == n-1 {
				e.Bytes += int(bytes % uint64(n))
			}
			emit(&e)
		}
	}
	split(newSegs, nbytes, event.SentNew)
	split(retr, rbytes, event.SentRetransmission)
	e.Kind, e.Reason, e.Bytes = event.Retransmit, 0, int(s.mss)
	for i := uint32(0); i < retr; i++ {
		emit(&e)
	}
	if b := s.bytesAcked - prev.bytesAcked; b > 0 {
		e.Kind, e.Bytes = event.PacketAcked, int(b)
		emit(&e)
	}
	e.Kind, e.Bytes, e.Reason = event.RTO, 0, uint8(transport.RTOUnknown)
	for i := uint16(0); i < s.totalRTO-prev.totalRTO; i++ {
		emit(&e)
	}
	switch was, is := inRecovery(prev.caState), inRecovery(s.caState); {
	case !was && is:
		e.Kind, e.Reason = event.RecoveryStart, 0
		emit(&e)
	case was && !is:
		e.Kind, e.Reason = event.RecoveryEnd, event.RecoveryEndFull
		emit(&e)
	}
	e = event.Event{Time: now, Flow: flow, Link: -1, Kind: event.MetricsUpdated,
		Cwnd: int(s.cwnd) * int(s.mss), SRTT: time.Duration(s.srtt) * time.Microsecond, MinRTT: time.Duration(s.minRTT) * time.Microsecond}
	if s.ssthresh < tcpInfiniteSsthresh {
		e.Ssthresh = int(s.ssthresh) * int(s.mss)
	}
	if in := int(s.unacked) - int(s.sacked) - int(s.lost) + int(s.retransOut); in > 0 {
		e.InFlight = in * int(s.mss)
	}
	emit(&e)
}
