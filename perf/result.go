package perf

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"time"

	"cclab/internal/hostlimit"
	"cclab/transport"
)

// Result is the client's JSON output (sender -J), in iperf3's spirit. With
// several flows (-P, --bidir), Start describes the test, Intervals and End
// are sums over the flows of the test's direction (forward, or reverse
// with -R), Flows holds each flow's own Result, and with --bidir
// BidirReverse sums the reverse flows.
type Result struct {
	Start        Start      `json:"start"`
	Intervals    []Interval `json:"intervals"`
	End          End        `json:"end"`
	BidirReverse *Sum       `json:"bidir_reverse,omitempty"`
	Flows        []*Result  `json:"flows,omitempty"`
}

// Sum is the summed intervals and end of one direction's flows.
type Sum struct {
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
	Interval    float64 `json:"interval"`          // -i, s (0: no intervals)
	Omit        float64 `json:"omit,omitempty"`    // -O, s
	Test        string  `json:"test_id,omitempty"` // test ID shared by the flows of one run
	Flows       int     `json:"flows"`             // flows in the test (-P; twice as many with bidir)
	Bidir       bool    `json:"bidir,omitempty"`   // --bidir
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
	SRTTms      float64 `json:"srtt_ms"`         // at the end, ms (a sum: the mean over the flows)
	Omitted     bool    `json:"omitted"`         // within the first -O seconds, left out of the summary's goodput
}

// End is the summary of the transfer.
type End struct {
	CC             string           `json:"cc"`                        // controller at the sending side
	Recovery       string           `json:"recovery"`                  // recovery strategy at the sending side
	Reverse        bool             `json:"reverse"`                   // the receiver sent
	Bytes          int64            `json:"bytes"`                     // stream bytes delivered to the receiving application and acknowledged
	Seconds        float64          `json:"seconds"`                   // from the first byte sent to the receiver's confirmation, s
	ThroughputBps  float64          `json:"throughput_bps"`            // Bytes*8/Seconds, bits/s (goodput); with -O: (Bytes-OmittedBytes)*8/(Seconds-OmittedSeconds)
	OmittedSeconds float64          `json:"omitted_seconds,omitempty"` // -O: the omitted period within Seconds, s
	OmittedBytes   int64            `json:"omitted_bytes,omitempty"`   // -O: bytes acknowledged (forward) or delivered (reverse) in it
	Retransmits    int64            `json:"retransmits"`               // retransmitted data packets
	Spurious       int64            `json:"spurious_retransmits"`      // retransmissions later found unnecessary by timestamps (RFC 3522; the simulator's total_spurious_retransmissions)
	RTOs           int64            `json:"rtos"`                      // retransmission timer expiries
	RTOCauses      map[string]int64 `json:"rto_causes"`                // RTOs by cause: burst_loss, too_few_dupacks, lost_retransmission, other, handshake, spurious
	MinRTTms       float64          `json:"min_rtt_ms"`                // minimum RTT sample, ms
	MeanSRTTms     float64          `json:"mean_srtt_ms"`              // mean of the smoothed RTT over all ACKs, ms
	Verified       bool             `json:"verified"`                  // every byte matched the pattern, or the receiver's digest == the sender's, and byte counts agree
	SenderDigest   string           `json:"sender_digest"`             // hex SHA-256 of the stream as sent
	ReceiverDigest string           `json:"receiver_digest"`
	Verification   string           `json:"verification"`       // what Verified checked: VerifyPattern (every byte compared with the pattern; digests "") or VerifySHA256 (the digests)
	Mismatch       *int64           `json:"mismatch,omitempty"` // VerifyPattern: offset of the first stream byte that differed from the pattern, bytes; absent: none
	SenderBytes    int64            `json:"sender_bytes"`       // bytes the sender put in the stream
	MSS            int              `json:"mss"`                // payload bytes per full segment, as negotiated
	ECN            *ECNResult       `json:"ecn"`                // the ECN account (ecn.go)
	Auth           *AuthResult      `json:"auth,omitempty"`     // this end's account of an authenticated flow (authdata.go)
	Error          string           `json:"error,omitempty"`
	// Host is what limited this process besides the network
	// (docs/metrics.md, "Host-limited runs"): in a sum of several flows,
	// their reports merged.
	Host *hostlimit.Report `json:"host_limit,omitempty"`
}

// FormatSize formats a byte count for a summary line, with three
// significant digits and a decimal prefix ("254.6 MB", "1.07 GB", "512 B").
func FormatSize(n int64) string {
	v, unit := float64(n), "B"
	for _, u := range []string{"kB", "MB", "GB", "TB"} {
		if math.Abs(v) < 1000 {
			break
		}
		v, unit = v/1000, u
	}
	if unit == "B" {
		return fmt.Sprintf("%d B", n)
	}
	return strconv.FormatFloat(v, 'f', max(0, 2-int(math.Floor(math.Log10(math.Abs(v))))), 64) + " " + unit
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// WriteIntervalHeaderLabel writes the column header of the human interval
// lines, for lines with labels as wide as label.
func WriteIntervalHeaderLabel(w io.Writer, label string) {
	fmt.Fprintf(w, "%*s%-17s %12s %14s %8s %12s %11s\n", len(label), "", "interval", "transfer", "goodput", "retrans", "cwnd", "srtt")
}

// WriteIntervalLabel writes one human interval line (seconds since the
// start, bytes acknowledged in the interval, goodput, retransmissions in
// the interval, cwnd and srtt at its end) after a label ("[  1] " for a
// flow of several, "[SUM] " for their sum; "" for a single flow); an
// interval within -O ends with "(omitted)".
func WriteIntervalLabel(w io.Writer, label string, iv Interval) {
	om := ""
	if iv.Omitted {
		om = "  (omitted)"
	}
	fmt.Fprintf(w, "%s%7.2f-%-7.2f s %9.2f MB %9.2f Mbit/s %8d %9.1f kB %8.3f ms%s\n", label, iv.Start, iv.End,
		float64(iv.Bytes)/1e6, iv.BitsPerSec/1e6, iv.Retransmits, float64(iv.Cwnd)/1e3, iv.SRTTms, om)
}

// FlowLabel is the label of flow i (1-based) of a several-flow test, or of
// their sum (i == 0; reverse: the sum of a --bidir test's other
// direction), as iperf3 prints them, all one width.
func FlowLabel(i int, reverse bool) string {
	switch {
	case i == 0 && reverse:
		return "[SUM-R] "
	case i == 0:
		return "[SUM]   "
	}
	return fmt.Sprintf("%-8s", fmt.Sprintf("[%3d]", i))
}

// WriteSummary writes the human end summary.
func WriteSummary(w io.Writer, e End) { WriteSummaryLabel(w, "", e) }

// WriteSummaryLabel writes the end summary after a label (see
// WriteIntervalLabel).
func WriteSummaryLabel(w io.Writer, label string, e End) {
	dir := "sent"
	if e.Reverse {
		dir = "received"
	}
	om := ""
	if e.OmittedSeconds > 0 {
		om = fmt.Sprintf(" (first %.3f s omitted)", e.OmittedSeconds)
	}
	fmt.Fprintf(w, "%s%s %s (%d bytes) in %.3f s = %.2f Mbit/s%s  cc=%s recovery=%s retransmits=%d rtos=%d min_rtt=%.3f ms mean_srtt=%.3f ms verified=%v (%s)\n",
		label, dir, FormatSize(e.Bytes), e.Bytes, e.Seconds, e.ThroughputBps/1e6, om, e.CC, e.Recovery,
		e.Retransmits, e.RTOs, e.MinRTTms, e.MeanSRTTms, e.Verified, e.Verification)
	if x := e.ECN; x != nil && x.Requested {
		fmt.Fprintf(w, "%secn: negotiated=%v validated=%v codepoint=%s ect0_sent=%d ce_received=%d ece_acks=%d reductions=%d\n",
			label, x.Negotiated, x.Validated, x.Codepoint, x.ECTSent, x.CERecv, x.ECEAcks, x.Reductions)
	}
	WriteAuth(w, label, e.Auth)
}

// WriteAuth writes the line of an authenticated flow's account (nothing
// for nil): the cipher and the packets dropped as forged or replayed.
func WriteAuth(w io.Writer, label string, a *AuthResult) {
	if a != nil {
		fmt.Fprintf(w, "%sauthenticated: %s, dropped %d failing authentication, %d replayed\n", label, a.Cipher, a.AuthFailed, a.Replayed)
	}
}

// EndpointCounts are a receiver endpoint's counters of admission under
// pressure (transport.EndpointStats; docs/security.md "Admission"), totals
// since it started.
type EndpointCounts struct {
	CookiesSent      uint64 `json:"cookies_sent"`      // Retries of the stateless fallback: the half-open table was full
	StatelessAccepts uint64 `json:"stateless_accepts"` // connections admitted from a returned cookie, never half-open
	Evicted          uint64 `json:"evicted"`           // connections evicted to admit a new validated peer
	RefusedFull      uint64 `json:"refused_full"`      // validated peers refused with "receiver full"
}

// endpointCounts returns the admission counters of st.
func endpointCounts(st transport.EndpointStats) *EndpointCounts {
	return &EndpointCounts{CookiesSent: st.CookiesSent, StatelessAccepts: st.StatelessAccepts, Evicted: st.Evicted, RefusedFull: st.RefusedFull}
}

// WriteEndpoint writes the line of a receiver endpoint's admission counters
// (nothing for nil, or while they are all zero: no pressure yet).
func WriteEndpoint(w io.Writer, label string, c *EndpointCounts) {
	if c != nil && *c != (EndpointCounts{}) {
		fmt.Fprintf(w, "%sreceiver admission (totals): cookies_sent=%d stateless_accepts=%d evicted=%d refused_full=%d\n",
			label, c.CookiesSent, c.StatelessAccepts, c.Evicted, c.RefusedFull)
	}
}
