package perf

import (
	"net"

	"cclab/internal/rusage"
	"strconv"
	"time"
)

// Iperf3 is the -J output of sender and receiver: iperf3's JSON schema (as
// iperf 3.12 writes it; keys, nesting and units: bytes, bits/s, seconds,
// RTT in µs, jitter in ms), so that iperf3's consumers read it, with
// cclab's own account beside iperf3's keys under "cclab" (start.cclab,
// end.cclab). A stream-mode test (cclab's reliable stream) has iperf3's
// TCP shape (retransmits, snd_cwnd, rtt); a datagram-mode test has its UDP
// shape (packets, end.sum with jitter_ms, lost_packets, lost_percent).
// docs/sender.md lists the keys and what each holds here.
type Iperf3 struct {
	Start     I3Start      `json:"start"`
	Intervals []I3Interval `json:"intervals"`
	End       I3End        `json:"end"`
	Error     string       `json:"error,omitempty"` // as iperf3 -J: why the test failed
}

// I3Start is iperf3's "start" object.
type I3Start struct {
	Connected     []I3Connected `json:"connected"`
	Version       string        `json:"version"`     // "cclab <version>"
	SystemInfo    string        `json:"system_info"` // OS, architecture and kernel
	Timestamp     I3Timestamp   `json:"timestamp"`
	ConnectingTo  *I3Host       `json:"connecting_to,omitempty"`       // client side
	Accepted      *I3Host       `json:"accepted_connection,omitempty"` // receiver side
	Cookie        string        `json:"cookie"`                        // cclab: the test ID, or the connection ID
	TCPMSSDefault int           `json:"tcp_mss_default,omitempty"`     // stream mode: max datagram, bytes
	TargetBitrate float64       `json:"target_bitrate"`                // bits/s; 0: unlimited
	TestStart     I3TestStart   `json:"test_start"`
	Cclab         any           `json:"cclab,omitempty"` // cclab's start (Start), or the receiver's flow summaries
}

// I3Connected is one stream's sockets; Socket numbers the flows from 1 (cclab
// flows share one UDP socket, so they are not file descriptors).
type I3Connected struct {
	Socket     int    `json:"socket"`
	LocalHost  string `json:"local_host"`
	LocalPort  int    `json:"local_port"`
	RemoteHost string `json:"remote_host"`
	RemotePort int    `json:"remote_port"`
}

// I3Timestamp is the test's start time.
type I3Timestamp struct {
	Time     string `json:"time"`     // RFC 1123 in GMT, as iperf3
	Timesecs int64  `json:"timesecs"` // Unix seconds
}

// I3Host is a host and port.
type I3Host struct {
	Host string `json:"host"`
	Port int    `json:"port"`
}

// I3TestStart is iperf3's start.test_start.
type I3TestStart struct {
	Protocol      string  `json:"protocol"` // "TCP" (stream mode) or "UDP" (datagram mode)
	NumStreams    int     `json:"num_streams"`
	Blksize       int     `json:"blksize"`  // max datagram, bytes
	Omit          float64 `json:"omit"`     // s
	Duration      float64 `json:"duration"` // s; 0 with -n
	Bytes         int64   `json:"bytes"`
	Blocks        int64   `json:"blocks"`
	Reverse       int     `json:"reverse"` // 1 with -R
	Bidir         int     `json:"bidir,omitempty"`
	TOS           int     `json:"tos"`
	TargetBitrate float64 `json:"target_bitrate"` // bits/s
}

// I3Stats is one stream's or one sum's numbers, as iperf3 writes them in
// intervals[].streams[], intervals[].sum and end.*; the optional keys are
// those iperf3 writes only for TCP senders (retransmits, cwnd, RTT) or for
// UDP (packets, jitter, loss).
type I3Stats struct {
	Socket        int      `json:"socket,omitempty"`
	Start         float64  `json:"start"`   // s since the test started
	End           float64  `json:"end"`     // s
	Seconds       float64  `json:"seconds"` // End-Start
	Bytes         int64    `json:"bytes"`
	BitsPerSecond float64  `json:"bits_per_second"`
	Retransmits   *int64   `json:"retransmits,omitempty"`
	SndCwnd       *int64   `json:"snd_cwnd,omitempty"`     // bytes, at the end of the interval
	RTT           *int64   `json:"rtt,omitempty"`          // smoothed RTT, µs
	MaxSndCwnd    *int64   `json:"max_snd_cwnd,omitempty"` // bytes
	MaxRTT        *int64   `json:"max_rtt,omitempty"`      // µs
	MinRTT        *int64   `json:"min_rtt,omitempty"`      // µs
	MeanRTT       *int64   `json:"mean_rtt,omitempty"`     // µs
	JitterMs      *float64 `json:"jitter_ms,omitempty"`    // RFC 3550 interarrival jitter, ms
	LostPackets   *int64   `json:"lost_packets,omitempty"` // lost in the network
	Packets       *int64   `json:"packets,omitempty"`      // datagrams sent
	LostPercent   *float64 `json:"lost_percent,omitempty"` // 100*LostPackets/Packets
	Omitted       *bool    `json:"omitted,omitempty"`      // within -O (intervals only)
	Sender        bool     `json:"sender"`                 // the stream's data flows from this host
}

// I3Interval is one element of iperf3's "intervals".
type I3Interval struct {
	Streams         []I3Stats `json:"streams"`
	Sum             I3Stats   `json:"sum"`
	SumBidirReverse *I3Stats  `json:"sum_bidir_reverse,omitempty"`
}

// I3EndStream is one element of iperf3's end.streams: the sending and
// receiving side's account of a stream (TCP), or the UDP account.
type I3EndStream struct {
	Sender   *I3Stats `json:"sender,omitempty"`
	Receiver *I3Stats `json:"receiver,omitempty"`
	UDP      *I3Stats `json:"udp,omitempty"`
}

// I3CPU is iperf3's end.cpu_utilization_percent: CPU time over the test's
// wall-clock time, percent of one core. The remote side's keys are written
// only when it reported them (cclab's receiver does not: they are absent).
type I3CPU struct {
	HostTotal    float64  `json:"host_total"`
	HostUser     float64  `json:"host_user"`
	HostSystem   float64  `json:"host_system"`
	RemoteTotal  *float64 `json:"remote_total,omitempty"`
	RemoteUser   *float64 `json:"remote_user,omitempty"`
	RemoteSystem *float64 `json:"remote_system,omitempty"`
}

// I3End is iperf3's "end" object.
type I3End struct {
	Streams                 []I3EndStream `json:"streams"`
	Sum                     *I3Stats      `json:"sum,omitempty"` // UDP: the receiver's sum
	SumSent                 I3Stats       `json:"sum_sent"`
	SumReceived             I3Stats       `json:"sum_received"`
	SumSentBidirReverse     *I3Stats      `json:"sum_sent_bidir_reverse,omitempty"`
	SumReceivedBidirReverse *I3Stats      `json:"sum_received_bidir_reverse,omitempty"`
	CPU                     I3CPU         `json:"cpu_utilization_percent"`
	SenderCongestion        string        `json:"sender_tcp_congestion,omitempty"`   // the controller spec
	ReceiverCongestion      string        `json:"receiver_tcp_congestion,omitempty"` // the controller spec
	Cclab                   any           `json:"cclab,omitempty"`                   // cclab's end (End, DgramResult or FlowSummary)
}

// Host is what the -J output says about the machine and process.
type Host struct {
	Version    string // "cclab <version>" (internal/buildinfo)
	SystemInfo string // OS, architecture, kernel
	// CPU time the process used during the test, and the test's wall-clock
	// time; zero Wall: CPU unknown.
	User, System, Wall time.Duration
}

// HostSince returns a function that gives the Host with the CPU time the
// process used from now until it is called (internal/rusage).
func HostSince(version, system string) func() Host {
	t0 := time.Now()
	u0, s0, ok := rusage.Times()
	return func() Host {
		h := Host{Version: version, SystemInfo: system}
		if u1, s1, ok1 := rusage.Times(); ok && ok1 {
			h.User, h.System, h.Wall = u1-u0, s1-s0, time.Since(t0)
		}
		return h
	}
}

func (h Host) cpu() I3CPU {
	if h.Wall <= 0 {
		return I3CPU{}
	}
	pc := func(d time.Duration) float64 { return 100 * float64(d) / float64(h.Wall) }
	return I3CPU{HostTotal: pc(h.User + h.System), HostUser: pc(h.User), HostSystem: pc(h.System)}
}

func ptr[T any](v T) *T { return &v }

func usec(ms float64) *int64 { return ptr(int64(ms * 1e3)) }

func bps(bytes int64, seconds float64) float64 {
	if seconds <= 0 {
		return 0
	}
	return float64(bytes) * 8 / seconds
}

// hostPort splits "host:port" (0 for a port it cannot read).
func hostPort(addr string) (string, int) {
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		return addr, 0
	}
	n, _ := strconv.Atoi(p)
	return h, n
}

func timestamp(t time.Time) I3Timestamp {
	return I3Timestamp{Time: t.UTC().Format("Mon, 02 Jan 2006 15:04:05 GMT"), Timesecs: t.Unix()}
}

// flowsOf is a test's flows in order: its Flows, or the result itself.
func flowsOf(r *Result) []*Result {
	if len(r.Flows) > 0 {
		return r.Flows
	}
	return []*Result{r}
}

// ToIperf3 converts a stream-mode Result (sender -J) into iperf3's schema;
// err (may be nil) is the test's error.
func ToIperf3(r *Result, h Host, err error) *Iperf3 {
	out := &Iperf3{Intervals: []I3Interval{}}
	if err != nil {
		out.Error = err.Error()
	}
	flows := flowsOf(r)
	out.Start = streamStart(r, flows, h)
	// Intervals: each flow's k-th interval, and the sums per direction.
	for k, sum := range r.Intervals {
		iv := I3Interval{Sum: ivStats(0, sum, r.Start.Reverse)}
		iv.Sum.SndCwnd, iv.Sum.RTT = nil, nil // iperf3's sums carry no cwnd or RTT
		for i, f := range flows {
			if k < len(f.Intervals) {
				iv.Streams = append(iv.Streams, ivStats(i+1, f.Intervals[k], f.Start.Reverse || f.End.Reverse))
			}
		}
		if b := r.BidirReverse; b != nil && k < len(b.Intervals) {
			s := ivStats(0, b.Intervals[k], !r.Start.Reverse)
			s.SndCwnd, s.RTT = nil, nil
			iv.SumBidirReverse = &s
		}
		out.Intervals = append(out.Intervals, iv)
	}
	e := &out.End
	e.Streams = []I3EndStream{}
	for i, f := range flows {
		snd, rcv := endStats(i+1, f.End, f.Intervals)
		e.Streams = append(e.Streams, I3EndStream{Sender: &snd, Receiver: &rcv})
	}
	e.SumSent, e.SumReceived = endStats(0, r.End, r.Intervals)
	if b := r.BidirReverse; b != nil {
		s, rc := endStats(0, b.End, b.Intervals)
		e.SumSentBidirReverse, e.SumReceivedBidirReverse = &s, &rc
	}
	e.CPU = h.cpu()
	e.SenderCongestion, e.ReceiverCongestion = r.End.CC, r.End.CC
	e.Cclab = r.End
	return out
}

// streamStart is start{} of a stream-mode test.
func streamStart(r *Result, flows []*Result, h Host) I3Start {
	s := I3Start{Version: h.Version, SystemInfo: h.SystemInfo, Cookie: r.Start.Test,
		TCPMSSDefault: r.Start.MaxDatagram, Cclab: r.Start, Connected: []I3Connected{}}
	if s.Cookie == "" {
		s.Cookie = r.Start.ConnID
	}
	if t, err := time.Parse(time.RFC3339Nano, r.Start.Timestamp); err == nil {
		s.Timestamp = timestamp(t)
	}
	host, port := hostPort(r.Start.ConnectTo)
	s.ConnectingTo = &I3Host{Host: host, Port: port}
	for i, f := range flows {
		lh, lp := hostPort(f.Start.Local)
		rh, rp := hostPort(f.Start.ConnectTo)
		s.Connected = append(s.Connected, I3Connected{Socket: i + 1, LocalHost: lh, LocalPort: lp, RemoteHost: rh, RemotePort: rp})
	}
	s.TestStart = I3TestStart{Protocol: "TCP", NumStreams: max(r.Start.Flows, 1), Blksize: r.Start.MaxDatagram,
		Omit: r.Start.Omit, Duration: r.Start.Seconds, Bytes: r.Start.Bytes}
	if r.Start.Bidir {
		s.TestStart.NumStreams /= 2
		s.TestStart.Bidir = 1
	}
	if r.Start.Reverse {
		s.TestStart.Reverse = 1
	}
	return s
}

// ivStats is one interval of a flow (socket > 0) or a sum (socket 0);
// reverse: this host received, so it has no retransmits, cwnd or RTT.
func ivStats(socket int, iv Interval, reverse bool) I3Stats {
	s := I3Stats{Socket: socket, Start: iv.Start, End: iv.End, Seconds: iv.End - iv.Start, Bytes: iv.Bytes,
		BitsPerSecond: iv.BitsPerSec, Omitted: ptr(iv.Omitted), Sender: !reverse}
	if !reverse {
		s.Retransmits = ptr(iv.Retransmits)
		s.SndCwnd = ptr(int64(iv.Cwnd))
		s.RTT = usec(iv.SRTTms)
	}
	return s
}

// endStats is the sending and receiving side's account of a flow (or of a
// sum of flows) from its End; with -O both leave out the omitted period,
// as iperf3's end sums do.
func endStats(socket int, e End, ivs []Interval) (snd, rcv I3Stats) {
	start, secs := e.OmittedSeconds, e.Seconds-e.OmittedSeconds
	sent := e.SenderBytes
	if sent == 0 {
		sent = e.Bytes
	}
	sent -= e.OmittedBytes
	got := e.Bytes - e.OmittedBytes
	snd = I3Stats{Socket: socket, Start: start, End: e.Seconds, Seconds: secs, Bytes: sent, BitsPerSecond: bps(sent, secs), Sender: !e.Reverse}
	rcv = I3Stats{Socket: socket, Start: start, End: e.Seconds, Seconds: secs, Bytes: got, BitsPerSecond: bps(got, secs), Sender: !e.Reverse}
	if e.Reverse {
		return snd, rcv // the remote side sent: its window and RTTs are not known here
	}
	snd.Retransmits = ptr(e.Retransmits)
	var maxCwnd int64
	var maxRTT float64
	for _, iv := range ivs {
		maxCwnd, maxRTT = max(maxCwnd, int64(iv.Cwnd)), max(maxRTT, iv.SRTTms)
	}
	snd.MaxSndCwnd, snd.MaxRTT, snd.MinRTT, snd.MeanRTT = ptr(maxCwnd), usec(maxRTT), usec(e.MinRTTms), usec(e.MeanSRTTms)
	return snd, rcv
}

// ToIperf3Dgram converts a datagram-mode result (sender -u/-mode datagram
// -J) into iperf3's UDP schema: packets are data packets sent, lost_packets
// those lost in the network (the receiver's count; the sender's queue drops
// are under cclab, as they were never sent), jitter_ms the receiver's RFC
// 3550 jitter. err (may be nil) is the test's error.
func ToIperf3Dgram(r *DgramResult, h Host, err error) *Iperf3 {
	out := &Iperf3{Intervals: []I3Interval{}}
	if err != nil {
		out.Error = err.Error()
	}
	s := &out.Start
	s.Version, s.SystemInfo, s.Cookie, s.Cclab = h.Version, h.SystemInfo, r.ConnID, map[string]any{"mode": r.Mode, "cc": r.CC}
	if t, err := time.Parse(time.RFC3339Nano, r.Timestamp); err == nil {
		s.Timestamp = timestamp(t)
	}
	lh, lp := hostPort(r.Local)
	rh, rp := hostPort(r.Peer)
	s.Connected = []I3Connected{{Socket: 1, LocalHost: lh, LocalPort: lp, RemoteHost: rh, RemotePort: rp}}
	s.ConnectingTo = &I3Host{Host: rh, Port: rp}
	s.TargetBitrate = r.Rate
	s.TestStart = I3TestStart{Protocol: "UDP", NumStreams: 1, Blksize: r.MaxDatagram, Duration: r.Seconds, TargetBitrate: r.Rate}
	for _, iv := range r.Intervals {
		st := I3Stats{Socket: 1, Start: iv.Start, End: iv.End, Seconds: iv.End - iv.Start, Bytes: int64(iv.SentBytes),
			BitsPerSecond: iv.SendBps, Packets: ptr(int64(iv.Sent)), Omitted: ptr(false), Sender: true}
		sum := st
		sum.Socket = 0
		out.Intervals = append(out.Intervals, I3Interval{Streams: []I3Stats{st}, Sum: sum})
	}
	e := &out.End
	sent := int64(r.Sent)
	e.SumSent = I3Stats{End: r.Seconds, Seconds: r.Seconds, Bytes: int64(r.SentBytes), BitsPerSecond: r.SendRateBps,
		JitterMs: ptr(0.0), LostPackets: ptr(int64(0)), Packets: ptr(sent), LostPercent: ptr(0.0), Sender: true}
	e.SumReceived = I3Stats{Packets: ptr(sent)}
	if rc := r.Receiver; rc != nil {
		lost := int64(rc.LostNetwork)
		pct := 0.0
		if sent > 0 {
			pct = 100 * float64(lost) / float64(sent)
		}
		e.SumReceived = I3Stats{End: rc.Seconds, Seconds: rc.Seconds, Bytes: int64(rc.Bytes), BitsPerSecond: rc.ThroughputBps,
			JitterMs: ptr(rc.Jitterms), LostPackets: ptr(lost), Packets: ptr(sent), LostPercent: ptr(pct)}
	}
	sum := e.SumReceived
	sum.Sender = true
	e.Sum = &sum
	udp := sum
	udp.Socket = 1
	e.Streams = []I3EndStream{{UDP: &udp}}
	e.CPU = h.cpu()
	e.Cclab = r
	return out
}
