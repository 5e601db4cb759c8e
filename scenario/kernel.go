package scenario

import (
	"fmt"
	"strconv"
	"time"

	"cclab/internal/spec"
	"cclab/traffic"
	"cclab/transport"
)

// Flow stacks (Flow.Stack).
const (
	// StackCclab is cclab's own transport (the default).
	StackCclab = "cclab"
	// StackKernel is the operating system's TCP (Linux), run live through
	// the link shell (docs/scenarios.md "Kernel TCP flows").
	StackKernel = "kernel"
)

// KernelSettings are the settings of a kernel TCP flow as the live backend
// applies them (docs/scenarios.md "Kernel TCP flows"): each comes from a
// flow field and is expressed by a kernel mechanism.
type KernelSettings struct {
	CC string // the kernel controller's name (TCP_CONGESTION)
	// IW is the initial window, segments (route initcwnd); 0: the
	// kernel's (10, RFC 6928).
	IW int
	// SACK turns SACK on (net.ipv4.tcp_sack in the sender's namespace):
	// recovery rack or KernelRACK (Linux's RACK-TLP and PRR over SACK) or
	// newreno (off).
	SACK bool
	// MSS is the segment's payload, bytes: the payload a cclab segment of
	// the flow's datagram carries (transport.SegmentSize), so both stacks
	// put the same data in a packet; 0: the path MTU's. TCP_MAXSEG is set
	// to MSS + KernelTimestampOption.
	MSS int
	// MinRTO is the route's rto_min; 0: the kernel's (200 ms).
	MinRTO time.Duration
	// QuickAck makes the receiver acknowledge every segment (route
	// quickack): ack_every 1 or delayed_ack 0.
	QuickAck bool
	// ECN asks for ECN (net.ipv4.tcp_ecn = 1 in the sender's namespace).
	ECN bool
}

// KernelTimestampOption is the TCP timestamp option's length in a segment,
// bytes (RFC 7323 §3, padded to 12 as Linux sends it): Linux counts
// TCP_MAXSEG without it and takes it off each segment's payload.
const KernelTimestampOption = 12

// kernelRecoveries are the recovery values a kernel flow takes.
const kernelRecoveries = "rack, rack:echo=cum or rack:echo=cum,rtorearm (Linux's RACK-TLP and PRR over SACK; echo=cum and rtorearm are how Linux reads the timestamp echo and rearms the RTO, docs/recovery.md) or newreno (SACK off)"

// KernelRACK is the cclab recovery that matches Linux's (docs/compat.md):
// RACK-TLP with PRR, the echo judging only the segment it describes, the
// RTO restarted when the first unacknowledged segment is retransmitted.
const KernelRACK = transport.DefaultRecovery + ":echo=" + transport.EchoCum + ",rtorearm"

// Kernel returns a kernel flow's settings, or an error naming the field
// (and parameter) that kernel TCP cannot express and what it allows.
func (f *Flow) Kernel() (KernelSettings, FieldError) {
	var k KernelSettings
	name, params, err := spec.Split(f.CC)
	if err != nil {
		return k, FieldError{"cc", err.Error()}
	}
	k.CC = name
	for _, p := range params {
		if msg := kernelParam(name, p, &k); msg != "" {
			return k, FieldError{"cc", msg}
		}
	}
	switch f.Recovery {
	case "", transport.DefaultRecovery, transport.DefaultRecovery + ":echo=" + transport.EchoCum, KernelRACK:
		k.SACK = true
	case "newreno":
	default:
		return k, FieldError{"recovery", fmt.Sprintf("kernel TCP's recovery %q is not expressible: allowed %s", f.Recovery, kernelRecoveries)}
	}
	switch {
	case f.Mode != ModeStream:
		return k, FieldError{"mode", fmt.Sprintf("kernel TCP is a stream: mode %q not allowed (stream)", f.Mode)}
	case f.Window != 0:
		return k, FieldError{"window", "kernel TCP has no cap on its window apart from the receive window: leave window out"}
	case f.RecvWindow != 0:
		return k, FieldError{"recv_window", "kernel TCP autotunes its receive buffer (tcp_rmem), which a fixed window cannot express: leave recv_window out"}
	case f.AckFirst:
		return k, FieldError{"ack_first", "kernel TCP starts its receiver in quick-ACK mode (tcp_event_data_recv: up to 16 segments acknowledged at once), which ack_first's one segment cannot express: leave ack_first out"}
	case f.AltCC != "":
		return k, FieldError{"alt_cc", "a kernel flow group runs one controller: leave alt_cc out"}
	}
	if _, cfg, err := traffic.Registry.Config(f.Traffic); err != nil {
		return k, FieldError{"traffic", err.Error()}
	} else if g, ok := cfg.(*traffic.GreedyConfig); !ok || g.Bytes != 0 {
		return k, FieldError{"traffic", fmt.Sprintf("kernel TCP flows are bulk transfers: traffic %q not allowed (greedy)", f.Traffic)}
	}
	switch f.AckEvery {
	case 0, transport.DefaultAckEvery:
	case 1:
		k.QuickAck = true
	default:
		return k, FieldError{"ack_every", fmt.Sprintf("Linux acknowledges every second full segment (2) or, with quickack, every segment (1): %d not expressible", f.AckEvery)}
	}
	switch f.DelayedAck {
	case 0, transport.DefaultDelayedAck:
	case transport.NoDelayedAck:
		k.QuickAck = true
	default:
		return k, FieldError{"delayed_ack", fmt.Sprintf("Linux's delayed-ACK timer starts at 40ms and adapts up to 200ms: %v not expressible (allowed 40ms, or 0s: quickack)", f.DelayedAck)}
	}
	if f.PMTUD {
		return k, FieldError{"pmtud", "kernel TCP finds its segment size itself (the route's MTU): leave pmtud out"}
	}
	if f.Datagram > 0 {
		k.MSS = transport.SegmentSize(f.Datagram)
		if k.MSS < KernelMinMSS {
			return k, FieldError{"datagram", fmt.Sprintf("datagram %d B gives a %d-byte segment, below Linux's smallest MSS (%d B)", f.Datagram, k.MSS, KernelMinMSS)}
		}
	}
	k.MinRTO, k.ECN = f.MinRTO, f.ECN
	if k.MinRTO > 0 && k.MinRTO%time.Millisecond != 0 {
		return k, FieldError{"min_rto", fmt.Sprintf("the route's rto_min is in milliseconds: %v not expressible", k.MinRTO)}
	}
	return k, FieldError{}
}

// KernelMinMSS is the smallest segment Linux sends, bytes (TCP_MIN_MSS, 88;
// TCP_MAXSEG takes no less).
const KernelMinMSS = 88

// kernelParam applies one controller parameter of a kernel flow's cc spec
// and returns "" or why kernel TCP cannot express it. The parameters taken
// are the initial window and those that state what Linux's controller
// does anyway (so one cc value serves a sweep over stacks).
func kernelParam(name string, p spec.KV, k *KernelSettings) string {
	switch {
	case p.Key == "iw":
		n, err := strconv.Atoi(p.Value)
		if err != nil || n < 1 || n > 16384 {
			return fmt.Sprintf("%s:iw=%s: want an initial window of 1..16384 segments (route initcwnd)", name, p.Value)
		}
		k.IW = n
		return ""
	case name == "cubic" && (p.Key == "linux" || p.Key == "friendly" || p.Key == "hystart"):
		if v, err := strconv.ParseBool(p.Value); p.Bare || (err == nil && v) {
			return "" // tcp_cubic.c's arithmetic, Reno-friendly region and HyStart are Linux's own
		}
		return fmt.Sprintf("cubic:%s=%s: kernel CUBIC is tcp_cubic.c, whose %s is always on (allowed: %s=true)", p.Key, p.Value, p.Key, p.Key)
	}
	allowed := "iw"
	if name == "cubic" {
		allowed = "iw, linux=true, friendly=true, hystart=true"
	}
	return fmt.Sprintf("%s:%s: not expressible for kernel TCP (parameters allowed: %s)", name, p.Key, allowed)
}

// FieldError is an error about one field of a flow ("" Field: none).
type FieldError struct {
	Field string // the flow's field, e.g. "recovery"
	Msg   string
}

// checkKernelFlow returns "" or why flow f of scenario s cannot run as
// kernel TCP there: only the live backend runs it, end to end (the link
// shell has one path), and every kernel flow of the run shares the
// settings that live in its namespace's sysctls and route (all but the
// controller and the segment size).
func checkKernelFlow(s *Scenario, f Flow) string {
	if f.Stack != StackKernel {
		return ""
	}
	for _, b := range s.Backends {
		if b != BackendLive {
			return fmt.Sprintf("stack kernel runs on the live backend only (backends: %s; allowed: live)", b)
		}
	}
	if f.Path != nil && (f.Path[0] != 0 || f.Path[1] != len(s.Topology.Hops)-1) {
		return fmt.Sprintf("stack kernel: path %d-%d: kernel flows cross every hop (the link shell's one path): leave path out", f.Path[0], f.Path[1])
	}
	k, _ := f.Kernel()
	for _, g := range s.Flows {
		if g.Stack != StackKernel {
			continue
		}
		if o, _ := g.Kernel(); !k.SharedEqual(o) {
			return fmt.Sprintf("stack kernel: flows %s and %s differ in recovery (SACK), ecn, the cc's iw, min_rto, ack_every or delayed_ack, "+
				"which kernel TCP takes from the namespace's sysctls and route: give every kernel flow the same", g.Name, f.Name)
		}
	}
	return ""
}

// SharedEqual reports whether k and o agree on the settings every kernel
// flow of a run shares (sysctls and route of the link shell's namespace).
func (k KernelSettings) SharedEqual(o KernelSettings) bool {
	k.CC, k.MSS, o.CC, o.MSS = "", 0, "", 0
	return k == o
}
