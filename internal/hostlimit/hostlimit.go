// Package hostlimit tells whether a live run was limited by its host
// rather than by the network it measured: a process starved of CPU (its
// timers and the relay's writes late, its threads waiting for a core), a
// process that was itself the bottleneck (a core busy all run), or
// datagrams lost inside the host (the sender's own queue, a full socket
// send buffer, a receive buffer overflow). Each check has a documented
// threshold (docs/metrics.md, "Host-limited runs"); a Report records the
// evidence, the verdict and the reasons, for the sender, receiver and relay
// to print and for the harness to store.
package hostlimit

import (
	"fmt"
	"strings"
	"time"
)

// Thresholds of the checks (docs/metrics.md, "Host-limited runs").
const (
	// LateLimit is the lateness from which a timer wake-up or a relay
	// write counts as late: 10 ms is an eighth of an 80 ms RTT and eight
	// packet times at 10 Mbit/s, where an idle host wakes within about
	// 1 ms (Go's timers) and a host at load 22 on 2 cores (measured,
	// docs/metrics.md) still had a 99th percentile of 5 ms with the
	// measured rates unharmed.
	LateLimit = 10 * time.Millisecond
	// LateFraction is the fraction of late wake-ups or writes above which
	// the run is host-limited (a 99th percentile of the lateness above
	// LateLimit), provided at least MinLate of them were late: a short
	// run's one or two outliers are not a starved host.
	LateFraction = 0.01
	// MinLate is the least number of late wake-ups or writes that can mark
	// a run.
	MinLate = 3
	// BusyCores is the CPU time per second of the run (user + system,
	// in cores) at or above which the process was CPU-bound: a transport
	// loop that keeps a core 90 % busy is the bottleneck itself.
	BusyCores = 0.9
	// RunWaitLimit is the time the process's threads waited on a run
	// queue for a CPU (schedstat), per second of the run, above which it
	// was starved: a whole core-second each second. The wait is a cause,
	// not an effect (a sender at load 22 on 2 cores waited 0.57 s/s and
	// still sent its 10 Mbit/s on time), so its limit is high; the
	// lateness checks see the effect.
	RunWaitLimit = 1.0
	// DropFraction is the fraction of datagrams lost inside the host (the
	// sender's queue without congestion control, failed socket writes, a
	// full receive buffer) above which the run is host-limited.
	DropFraction = 0.001
	// ShortReads is the most datagram reads a flow may have for one read
	// later than its path's minimum RTT to mark it (CodeReadLate): the
	// proportional rule (LateFraction, at least MinLate late) needs
	// MinLate/LateFraction = 300 reads before it is more than a count of
	// MinLate, and a flow that short (100 kB is about 85 data datagrams
	// and 45 ACKs) lasts a handful of RTTs, so one stall longer than an
	// RTT delays it by a sizeable fraction and corrupts its RTT samples
	// (docs/metrics.md, "Host-limited runs").
	ShortReads = MinLate * 100
)

// Reason codes (Reason.Code).
const (
	CodeRelayLate = "relay_late"  // the relay wrote packets late against the link model
	CodeTimerLate = "timer_late"  // the transport loop's timers woke late
	CodeCPUBusy   = "cpu_busy"    // the process kept a core busy: CPU-bound
	CodeRunWait   = "cpu_starved" // the process's threads waited for a CPU
	CodeSendQueue = "send_queue"  // the sender's own queue dropped (no congestion control: it could not keep up)
	CodeSendBuf   = "send_buffer" // socket writes failed (send buffer full)
	CodeRecvQueue = "recv_queue"  // the receive socket's buffer or the application's queue overflowed
	CodeReadStall = "read_stall"  // the link shell's reader left its TUN device unread longer than the queue drains
	CodeReadLate  = "read_late"   // the socket driver processed received datagrams late against their kernel stamps
)

// Reason is one check that failed.
type Reason struct {
	Code   string `json:"code"`   // one of the Code constants
	Detail string `json:"detail"` // the measured value against its threshold
}

// Late counts wake-ups or writes and those later than LateLimit.
type Late struct {
	Count uint64        `json:"count"`       // wake-ups or writes measured
	Late  uint64        `json:"late"`        // of them, later than LateLimit
	Max   time.Duration `json:"max_late_ns"` // the largest lateness, ns
}

// Add counts one wake-up or write that was d late.
func (l *Late) Add(d time.Duration) {
	l.Count++
	if d > LateLimit {
		l.Late++
	}
	l.Max = max(l.Max, d)
}

// Merge adds o's counts to l (the larger maximum).
func (l *Late) Merge(o Late) {
	l.Count += o.Count
	l.Late += o.Late
	l.Max = max(l.Max, o.Max)
}

// Fraction returns Late/Count, 0 without counts.
func (l Late) Fraction() float64 {
	if l.Count == 0 {
		return 0
	}
	return float64(l.Late) / float64(l.Count)
}

// Report is what limited one process's part of a live run besides the
// network: the evidence (zero where not measured, -1 where unknown), and
// the verdict from Judge.
type Report struct {
	Role    string   `json:"role"`         // sender, receiver or relay
	Limited bool     `json:"host_limited"` // some check failed
	Reasons []Reason `json:"reasons,omitempty"`

	Usage Usage `json:"usage"` // CPU use and waits over the run
	// BusyPoll is set when the process polls on purpose (the relay's
	// -poll busy takes a whole CPU busy or idle): the CPU-bound check is
	// skipped.
	BusyPoll bool `json:"busy_poll,omitempty"`

	Timers Late `json:"timers"` // the transport loop's timer wake-ups
	Writes Late `json:"writes"` // the relay's writes against the modelled instants
	// ReadLate is the socket driver's datagram reads against the
	// kernel's receive stamps (SO_TIMESTAMPNS): how long each datagram
	// waited in the socket before the driver processed it. Count 0 where
	// the socket has no stamps.
	ReadLate Late `json:"read_late"`
	// MinRTT is the flow's minimum RTT sample, the path's own delay
	// against which one late read is judged (0: unknown, that rule is
	// skipped).
	MinRTT time.Duration `json:"min_rtt_ns,omitempty"`
	// ReadStalls are the link shell's TUN reads that found packets
	// waiting (nil outside a link shell): a TUN read carries no kernel
	// receive stamp, so a packet's arrival is the read's instant.
	ReadStalls *Stalls `json:"read_stalls,omitempty"`

	// Datagram mode: what the application generated and the sender's
	// queue dropped; Uncontrolled when no congestion controller ran (-cc
	// none), so the queue only overflows when the host falls behind (with
	// one, the controller holding packets back fills it, which is the
	// network's doing).
	Generated    uint64 `json:"generated,omitempty"`
	QueueDropped uint64 `json:"queue_dropped,omitempty"`
	Uncontrolled bool   `json:"uncontrolled,omitempty"`

	Sent       uint64 `json:"sent"`        // datagrams written to the socket
	SendErrors uint64 `json:"send_errors"` // socket writes that failed (ENOBUFS, EAGAIN)
	Received   uint64 `json:"received"`    // datagrams read from the socket
	// RecvDropped counts datagrams the host dropped on the receive side:
	// the socket's receive-buffer overflows (SO_MEMINFO's drops, as
	// /proc/net/udp's drops column) and the application's receive queue.
	RecvDropped uint64 `json:"recv_dropped"`
}

// Judge applies the thresholds to the evidence and sets Limited and
// Reasons.
func (r *Report) Judge() {
	r.Reasons = r.Reasons[:0]
	add := func(code, format string, a ...any) {
		r.Reasons = append(r.Reasons, Reason{Code: code, Detail: fmt.Sprintf(format, a...)})
	}
	if f := r.Writes.Fraction(); f > LateFraction && r.Writes.Late >= MinLate {
		add(CodeRelayLate, "%.1f%% of %d writes more than %v late (limit %.0f%%), max %v", 100*f, r.Writes.Count, LateLimit, 100*LateFraction, r.Writes.Max.Round(time.Microsecond))
	}
	if f := r.Timers.Fraction(); f > LateFraction && r.Timers.Late >= MinLate {
		add(CodeTimerLate, "%.1f%% of %d timer wake-ups more than %v late (limit %.0f%%), max %v", 100*f, r.Timers.Count, LateLimit, 100*LateFraction, r.Timers.Max.Round(time.Microsecond))
	}
	if l := r.ReadLate; l.Fraction() > LateFraction && l.Late >= MinLate {
		add(CodeReadLate, "%.1f%% of %d datagram reads more than %v late (limit %.0f%%), max %v", 100*l.Fraction(), l.Count, LateLimit, 100*LateFraction, l.Max.Round(time.Microsecond))
	} else if l.Late > 0 && r.MinRTT > 0 && l.Max > r.MinRTT && l.Count <= ShortReads {
		add(CodeReadLate, "a datagram waited %v to be read, more than the min RTT %v, in a short flow (%d reads, at most %d)", l.Max.Round(time.Microsecond), r.MinRTT.Round(time.Microsecond), l.Count, ShortReads)
	}
	if c := r.Usage.Cores(); c >= BusyCores && !r.BusyPoll {
		add(CodeCPUBusy, "%.2f CPU cores busy over the run (limit %.2f): CPU-bound", c, BusyCores)
	}
	if w := r.Usage.RunWaitPerSecond(); w > RunWaitLimit {
		add(CodeRunWait, "threads waited %.2f s per second for a CPU (limit %.2f)", w, RunWaitLimit)
	}
	if r.Uncontrolled && r.Generated > 0 {
		if f := float64(r.QueueDropped) / float64(r.Generated); f > DropFraction {
			add(CodeSendQueue, "the sender's queue dropped %d of %d datagrams (%.1f%%, limit %.1f%%) with no congestion control", r.QueueDropped, r.Generated, 100*f, 100*DropFraction)
		}
	}
	if n := r.Sent + r.SendErrors; n > 0 {
		if f := float64(r.SendErrors) / float64(n); f > DropFraction {
			add(CodeSendBuf, "%d socket writes failed of %d (%.1f%%, limit %.1f%%)", r.SendErrors, n, 100*f, 100*DropFraction)
		}
	}
	if n := r.Received + r.RecvDropped; n > 0 {
		if f := float64(r.RecvDropped) / float64(n); f > DropFraction {
			add(CodeRecvQueue, "%d datagrams dropped on receipt of %d (%.1f%%, limit %.1f%%)", r.RecvDropped, n, 100*f, 100*DropFraction)
		}
	}
	if s := r.ReadStalls; s != nil && s.Limit > 0 && s.Stalls >= MinLate {
		add(CodeReadStall, "%d of %d TUN reads came after the reader was away more than the queue's drain time %v, max %v", s.Stalls, s.Reads, s.Limit.Round(time.Microsecond), s.Max.Round(time.Microsecond))
	}
	r.Limited = len(r.Reasons) > 0
}

// Stalls counts the reads of a device that carries no receive stamps (a
// TUN device) that found packets already waiting, and how long the
// reader had been away from the device before each: the packets arrived
// somewhere in that gap but enter the link at the read. A gap longer than
// Limit, the time the bottleneck queue takes to drain when full, can let
// the link run idle and then offer it a burst that overflows the queue:
// losses of the host, not of the path (docs/shell.md, "Arrival instant").
type Stalls struct {
	Limit  time.Duration `json:"limit_ns"`   // gaps above it are stalls; 0: measured, never judged
	Reads  uint64        `json:"reads"`      // reads that found packets waiting
	Stalls uint64        `json:"stalls"`     // of them, after a gap longer than Limit
	Max    time.Duration `json:"max_gap_ns"` // the longest gap, ns
}

// Add counts one read that found packets waiting after the reader had been
// away for gap.
func (s *Stalls) Add(gap time.Duration) {
	s.Reads++
	if s.Limit > 0 && gap > s.Limit {
		s.Stalls++
	}
	s.Max = max(s.Max, gap)
}

// Merge adds o's counts to s (Limit: the smaller non-zero one).
func (s *Stalls) Merge(o Stalls) {
	s.Reads += o.Reads
	s.Stalls += o.Stalls
	s.Max = max(s.Max, o.Max)
	if s.Limit == 0 || (o.Limit > 0 && o.Limit < s.Limit) {
		s.Limit = o.Limit
	}
}

// Codes returns the reasons' codes joined by commas ("" when not limited).
func (r *Report) Codes() string {
	c := make([]string, len(r.Reasons))
	for i, x := range r.Reasons {
		c[i] = x.Code
	}
	return strings.Join(c, ",")
}

// Warning returns the one-line warning a command prints at the end of a
// host-limited run, "" when the run was not host-limited.
func (r *Report) Warning() string {
	if r == nil || !r.Limited {
		return ""
	}
	parts := make([]string, len(r.Reasons))
	for i, x := range r.Reasons {
		parts[i] = x.Code + ": " + x.Detail
	}
	return fmt.Sprintf("warning: host-limited run (%s): %s; these results measure this host, not the network", r.Role, strings.Join(parts, "; "))
}
