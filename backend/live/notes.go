package liverun

import (
	"os"
	"strconv"
	"strings"
	"time"

	"cclab/internal/hostlimit"
	"cclab/relay"
	"cclab/transport/udp"
)

// Keys of a live run's notes (metrics.RunResult.Notes).
const (
	NoteLoadStart = "host_load1_start" // 1-minute load average of the host when the run started (Linux)
	NoteLoadEnd   = "host_load1_end"   // the same when the flows ended
	NoteLate1ms   = "relay_late_1ms"   // fraction of the relay's writes more than 1 ms after their modelled instant
	NoteLateMax   = "relay_late_max_s" // the relay's largest write lateness, s
	NoteRelayPkts = "relay_packets"    // datagrams the relay wrote, both directions
	NoteUDPBad    = "udp_malformed"    // datagrams at the raw UDP receiver too short for the header or of no flow (dropped)
	// NoteUDPUnaccounted counts the raw UDP flows' datagrams that vanished:
	// sent, and, once the run drained (Runner.Run waits up to udpDrain after
	// the senders' end), neither received, nor dropped at a link, nor by a
	// full socket receive buffer on their path (NoteUDPRecvDrops). Counted
	// over the whole run, not the measurement window (the windowed totals
	// differ by what is in flight at the window's edges). Zero unless
	// datagrams are lost where nothing counts them.
	NoteUDPUnaccounted = "udp_unaccounted"
	// NoteUDPRecvDrops counts the datagrams the kernel dropped on the raw
	// UDP flows' path because a socket receive buffer was full (the relay's
	// entries and the UDP receiver; netio.ReceiveDrops; Linux only).
	NoteUDPRecvDrops = "udp_recv_drops"
	// NoteUDPSendLate is the raw UDP senders' largest lateness against
	// their generators' schedule, s: a sender late by more than its gap
	// sends the datagrams it owes at once (open loop), a burst the
	// simulator's flow does not send.
	NoteUDPSendLate = "udp_send_late_max_s"
	// NoteHostLimited is 1 when the run was host-limited (docs/metrics.md,
	// "Host-limited runs": a check of package hostlimit failed), else 0;
	// NoteHostReason + a reason code (relay_late, timer_late, cpu_busy,
	// cpu_starved, send_buffer, recv_queue, read_stall, read_late) is 1 for each failed check.
	// Reports keep host-limited runs out of sim/live comparisons.
	NoteHostLimited  = "host_limited"
	NoteHostReason   = "host_limited_"
	NoteHostCores    = "host_cpu_cores"    // the process's CPU time per second of the run (relay, senders, receiver)
	NoteHostRunWait  = "host_run_wait"     // its threads' run-queue wait per second
	NoteHostPressure = "host_cpu_pressure" // share of the run some task of the host waited for a CPU (PSI)
	NoteTimerLate    = "timer_late_10ms"   // share of the endpoints' timed wake-ups over hostlimit.LateLimit late
	// NoteShellStalls counts the link shell's TUN reads that found packets
	// waiting after the reader was away longer than the bottleneck queue's
	// drain time (hostlimit.Stalls; reason read_stall from MinLate of
	// them); NoteShellGapMax is the longest such gap, s. Runs with kernel
	// flows (a link shell) only.
	NoteShellStalls = "shell_read_stalls"
	NoteShellGapMax = "shell_read_gap_max_s"
	// NoteUnconnected counts the flows whose handshake had no answer before
	// their stop (every handshake packet dropped: errNotConnected).
	NoteUnconnected = "flows_unconnected"
	// NoteUnconnectedReset counts those of them the receiver answered with
	// a stateless reset before confirming the handshake (the client had
	// its Accept; errResetUnconfirmed). Set only when not zero.
	NoteUnconnectedReset = "flows_unconnected_reset"
)

// notes summarizes the run's conditions: host load and the relay's timing
// fidelity (how late it wrote packets against the link model's instants).
func notes(c relay.Counters, load1 float64) map[string]float64 {
	n := map[string]float64{}
	if load1 >= 0 {
		n[NoteLoadStart] = load1
	}
	if l := loadAverage(); l >= 0 {
		n[NoteLoadEnd] = l
	}
	var total, late int64
	for i, k := range c.Late {
		total += k
		if i >= len(relay.LateBuckets) || relay.LateBuckets[i] > time.Millisecond {
			late += k
		}
	}
	if total > 0 {
		n[NoteLate1ms] = float64(late) / float64(total)
	}
	n[NoteLateMax] = c.WriteLate.Max.Seconds()
	n[NoteRelayPkts] = float64(c.Sent[0] + c.Sent[1])
	return n
}

// hostReport judges whether the run was host-limited (package hostlimit):
// the relay's write lateness and the process's CPU (relay, senders and
// receiver share it), with the transport endpoints' timer and read
// lateness and receive drops (eps: the receiver's and the senders') added.
// The read lateness is judged by its proportion only (no min RTT: the
// run's flows have several).
func hostReport(rl *relay.Relay, eps []*udp.Endpoint) *hostlimit.Report {
	h := rl.HostReport()
	h.Role = "live run"
	for _, ep := range eps {
		ls := ep.LoopStats()
		h.Timers.Merge(ls.TimerLate)
		h.ReadLate.Merge(ls.ReadLate)
		h.RecvDropped += ls.RecvDrops
	}
	h.Judge()
	return h
}

// hostNotes records the host-limited mark in a run's notes: NoteHostLimited
// (1 or 0), one NoteHostReason+code per failed check, and the CPU evidence.
func hostNotes(n map[string]float64, h *hostlimit.Report) {
	n[NoteHostLimited] = 0
	if h.Limited {
		n[NoteHostLimited] = 1
	}
	for _, r := range h.Reasons {
		n[NoteHostReason+r.Code] = 1
	}
	n[NoteHostCores] = h.Usage.Cores()
	if h.Usage.RunWait >= 0 {
		n[NoteHostRunWait] = h.Usage.RunWaitPerSecond()
	}
	if h.Usage.Pressure >= 0 {
		n[NoteHostPressure] = h.Usage.Pressure
	}
	n[NoteTimerLate] = h.Timers.Fraction()
	if st := h.ReadStalls; st != nil {
		n[NoteShellStalls] = float64(st.Stalls)
		n[NoteShellGapMax] = st.Max.Seconds()
	}
}

// loadAverage returns the host's 1-minute load average, or -1 if unknown.
func loadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return -1
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return -1
	}
	return v
}
