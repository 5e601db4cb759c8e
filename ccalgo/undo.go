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

// SsthreshHolder is implemented by controllers that can take a timeout
// without recomputing ssthresh. A transport calls OnRTOHold instead of
// Controller.OnRTO when its recovery strategy finds the timeout a repeat
// within an earlier timeout's loss recovery (the transport's option
// rtohold), as ns-3 3.37's TcpSocketBase::ReTxTimeout
// (src/internet/model/tcp-socket-base.cc) calls GetSsThresh only when the
// socket is not in CA_LOSS or the head of its sent list was not
// retransmitted.
type SsthreshHolder interface {
	// OnRTOHold is OnRTO with ssthresh kept: cwnd = loss window and every
	// other timeout reset as OnRTO does.
	OnRTOHold(now clock.Time)
}

// OnRTOHold implements SsthreshHolder.
func (r *Reno) OnRTOHold(now clock.Time) {
	ss := r.ssthresh
	r.OnRTO(now, 0)
	r.ssthresh = ss
}

// OnRTOHold implements SsthreshHolder.
func (c *Cubic) OnRTOHold(now clock.Time) {
	ss := c.ssthresh
	c.OnRTO(now, 0)
	c.ssthresh = ss
}
