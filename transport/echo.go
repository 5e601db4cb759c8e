package transport

import "fmt"

// Option echo of the SACK-based strategies (SACKConfig.Echo,
// RACKConfig.Echo) says which newly delivered retransmissions an ACK's
// timestamp echo is taken to judge: whether RACK_update may take a
// retransmission's delivery as RACK.xmit (RFC 8985 §6.2 step 1: not if the
// echo predates it), whether a retransmitted segment delivered below
// RACK.fack counts as reordering, and whether a cumulatively acknowledged
// retransmission counts as spurious (Eifel, RFC 3522).
//
//   - EchoAll (the default, "" too): every delivered retransmission, as
//     RFC 8985 §6.2's pseudocode reads.
//   - EchoCum: only the first segment of a cumulative advance. An RFC 7323
//     §4.3 receiver (cclab's, Linux's) takes TS.Recent only from the segment
//     at its cumulative point, so while a hole is open every ACK echoes the
//     last in-order segment before it, older than every retransmission
//     above the hole: under EchoAll no SACKed retransmission can become
//     RACK.xmit, a lost retransmission at the head of the hole is found only
//     by the RTO, and each SACKed retransmission counts as reordering. Linux
//     takes no echo in RACK (tcp_rack_advance: the min_RTT test only) and
//     counts no retransmitted segment as reordering (tcp_sacktag_one), so
//     EchoCum is the setting that matches it (docs/compat.md, "Kernel TCP vs
//     cclab").
const (
	EchoAll = "all"
	EchoCum = "cum"
)

// parseEcho checks option echo and reports whether it is EchoCum.
func parseEcho(name, v string) (bool, error) {
	switch v {
	case "", EchoAll:
		return false, nil
	case EchoCum:
		return true, nil
	}
	return false, fmt.Errorf("%s: parameter echo=%q: must be %s or %s", name, v, EchoAll, EchoCum)
}

// echoRule is a strategy with options echo and rtorearm.
type echoRule interface {
	echoAtCumulative() bool
	rearmOnHeadRetransmit() bool
}

// echoAtCumulative implements echoRule.
func (r *sackLoss) echoAtCumulative() bool { return r.echoCum }

// Option rtorearm of the SACK-based strategies (SACKConfig.RTORearm,
// RACKConfig.RTORearm) restarts the retransmission timer whenever the first
// unacknowledged segment is retransmitted, as Linux does
// (tcp_xmit_retransmit_queue rearms ICSK_TIME_RETRANS when it resends the
// head of the retransmission queue). RFC 6298 §5.1 starts the timer on a
// send only when it is not running, so a timer armed at the first
// retransmission of the head may expire an RTO after it even though the
// head was resent since (RACK found that retransmission lost) and its
// newest copy is still on its way: a spurious RTO and go-back-N.
func (r *sackLoss) rearmOnHeadRetransmit() bool { return r.rtoRearm }
