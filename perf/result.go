package perf

import (
	"fmt"
	"io"
	"time"

	"cclab/internal/units"
)

// Result is the client's JSON output (sender -J), in iperf3's spirit.
type Result struct {
	Start     Start      `json:"start"`
	Intervals []Interval `json:"intervals"`
	End       End        `json:"end"`
}

// Start describes the test.
type Start struct {
	Timestamp   string  `json:"timestamp"`     // wall clock at start, RFC 3339
	ConnectTo   string  `json:"connecting_to"` // receiver address
	Local       string  `json:"local"`         // our socket address
	ConnID      string  `json:"conn_id"`       // transport connection ID, hex
	Reverse     bool    `json:"reverse"`
	CC          string  `json:"cc"`
	Recovery    string  `json:"recovery"`
	Bytes       int64   `json:"bytes_requested,omitempty"`   // -n
	Seconds     float64 `json:"seconds_requested,omitempty"` // -t
	MaxDatagram int     `json:"max_datagram"`                // bytes
	MinRTOms    float64 `json:"min_rto_ms,omitempty"`
	ECN         bool    `json:"ecn"`
	Seed        uint64  `json:"seed"`
}

// Interval is one -i line: what happened during [Start, End) seconds since
// the transfer began, at the sending side (forward) or the receiving side
// (reverse: bytes delivered; window and RTT fields are zero there).
type Interval struct {
	Start       float64 `json:"start"`           // s
	End         float64 `json:"end"`             // s
	Bytes       int64   `json:"bytes"`           // bytes acknowledged (forward) or delivered (reverse) in the interval
	BitsPerSec  float64 `json:"bits_per_second"` // Bytes*8/(End-Start)
	Retransmits int64   `json:"retransmits"`     // in the interval
	Cwnd        int     `json:"cwnd"`            // at the end, bytes
	SRTTms      float64 `json:"srtt_ms"`         // at the end, ms
}

// End is the summary of the transfer.
type End struct {
	CC             string           `json:"cc"`             // controller at the sending side
	Recovery       string           `json:"recovery"`       // recovery strategy at the sending side
	Reverse        bool             `json:"reverse"`        // the receiver sent
	Bytes          int64            `json:"bytes"`          // stream bytes delivered to the receiving application and acknowledged
	Seconds        float64          `json:"seconds"`        // from the first byte sent to the receiver's confirmation, s
	ThroughputBps  float64          `json:"throughput_bps"` // Bytes*8/Seconds, bits/s (goodput)
	Retransmits    int64            `json:"retransmits"`    // retransmitted data packets
	RTOs           int64            `json:"rtos"`           // retransmission timer expiries
	RTOCauses      map[string]int64 `json:"rto_causes"`     // RTOs by cause: burst_loss, too_few_dupacks, lost_retransmission, other, handshake, spurious
	MinRTTms       float64          `json:"min_rtt_ms"`     // minimum RTT sample, ms
	MeanSRTTms     float64          `json:"mean_srtt_ms"`   // mean of the smoothed RTT over all ACKs, ms
	Verified       bool             `json:"verified"`       // receiver's digest == sender's digest and byte counts agree
	SenderDigest   string           `json:"sender_digest"`  // hex SHA-256 of the stream as sent
	ReceiverDigest string           `json:"receiver_digest"`
	SenderBytes    int64            `json:"sender_bytes"` // bytes the sender put in the stream
	MSS            int              `json:"mss"`          // payload bytes per full segment, as negotiated
	ECN            *ECNResult       `json:"ecn"`          // the ECN account (ecn.go)
	Error          string           `json:"error,omitempty"`
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// WriteIntervalHeader writes the column header of the human interval lines.
func WriteIntervalHeader(w io.Writer) {
	fmt.Fprintf(w, "%-17s %12s %14s %8s %12s %11s\n", "interval", "transfer", "goodput", "retrans", "cwnd", "srtt")
}

// WriteInterval writes one human interval line: seconds since the start,
// bytes acknowledged in the interval, goodput, retransmissions in the
// interval, and cwnd and srtt at its end.
func WriteInterval(w io.Writer, iv Interval) {
	fmt.Fprintf(w, "%7.2f-%-7.2f s %9.2f MB %9.2f Mbit/s %8d %9.1f kB %8.3f ms\n", iv.Start, iv.End,
		float64(iv.Bytes)/1e6, iv.BitsPerSec/1e6, iv.Retransmits, float64(iv.Cwnd)/1e3, iv.SRTTms)
}

// WriteSummary writes the human end summary.
func WriteSummary(w io.Writer, e End) {
	dir := "sent"
	if e.Reverse {
		dir = "received"
	}
	fmt.Fprintf(w, "%s %s (%d bytes) in %.3f s = %.2f Mbit/s  cc=%s recovery=%s retransmits=%d rtos=%d min_rtt=%.3f ms mean_srtt=%.3f ms verified=%v\n",
		dir, units.FormatBytes(e.Bytes), e.Bytes, e.Seconds, e.ThroughputBps/1e6, e.CC, e.Recovery,
		e.Retransmits, e.RTOs, e.MinRTTms, e.MeanSRTTms, e.Verified)
	if x := e.ECN; x != nil && x.Requested {
		fmt.Fprintf(w, "ecn: negotiated=%v validated=%v codepoint=%s ect0_sent=%d ce_received=%d ece_acks=%d reductions=%d\n",
			x.Negotiated, x.Validated, x.Codepoint, x.ECTSent, x.CERecv, x.ECEAcks, x.Reductions)
	}
}
