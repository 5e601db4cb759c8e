package ccalgo

import "cclab/clock"

// Undoer is implemented by controllers whose reaction to a loss can be
// reverted once the loss is found spurious (the retransmission was not
// needed: RFC 2883 D-SACK with RFC 3708, RFC 3522 Eifel detection, RFC 5682
// F-RTO), as Linux undoes a congestion-window reduction
// (tcp_undo_cwnd_reduction with the congestion module's undo_cwnd).
type Undoer interface {
	// Undo restores the window from before the spurious loss episode:
	// cwnd = max(cwnd, priorCwnd), ssthresh = max(ssthresh,
	// priorSsthresh) (RFC 4015 §3 restores ssthresh; Linux
	// tcp_reno_undo_cwnd the window), and ends the episode (recovery or
	// timeout state) without OnRecoveryExit. Sizes in bytes.
	Undo(now clock.Time, priorCwnd, priorSsthresh int)
}

// Undo implements Undoer for the window-based controllers.
func (w *window) Undo(_ clock.Time, priorCwnd, priorSsthresh int) {
	w.cwnd = max(w.cwnd, priorCwnd)
	w.ssthresh = max(w.ssthresh, priorSsthresh)
	w.bytesAcked = 0
	w.inRecovery = false
	w.afterRTO = false
}
