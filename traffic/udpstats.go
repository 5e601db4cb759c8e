package traffic

import (
	"time"

	"cclab/clock"
)

// The receive rule of a raw UDP flow, shared by both backends' receivers
// (the simulator's sim.UDPFlow and the live backend's UDP receiver), so a
// datagram is accounted the same way wherever it arrives.

// UDPHeaderLen is the length of the sequence number and send timestamp a
// raw UDP flow writes at the start of each datagram, bytes.
const UDPHeaderLen = 16

// UDPStats are a raw UDP flow's counters.
type UDPStats struct {
	Sent, SentBytes            int64         // datagrams and payload bytes sent
	Received, RecvBytes        int64         // datagrams and payload bytes received
	Lost                       int64         // datagrams missing at the receiver (sequence gaps; reordering counts as loss then recovery)
	DelaySum, DelayMax         time.Duration // one-way delay, sum and max over received datagrams
	First, Last                clock.Time    // first and last send instants
	FirstRecv, LastRecv        clock.Time    // first and last receive instants
	FeedbackRecv, FeedbackLost int           // counts since the last feedback report (layered)
	LastFeedback               clock.Time    // time of the previous feedback report (layered)
}

// FeedbackEvery is how many received-or-lost datagrams a layered receiver
// accumulates before reporting to its generator; it also reports on the
// first arrival FeedbackInterval after its previous report (slow layers).
const FeedbackEvery = 20

// FeedbackInterval bounds the time between a layered receiver's reports
// while datagrams arrive.
const FeedbackInterval = 500 * time.Millisecond

// Receive accounts one datagram of a raw UDP flow arriving at now: its
// sequence number seq (gaps count as lost), payload bytes and send time
// sent (one-way delay); with a feedback generator fb (layered), it reports
// the datagrams received and lost every FeedbackEvery of them or on the
// first arrival FeedbackInterval after the previous report. Both backends'
// receivers use it (sim.UDPFlow, backend/live).
func (st *UDPStats) Receive(now clock.Time, seq uint64, bytes int, sent clock.Time, fb FeedbackGen) {
	expected := uint64(st.Received + st.Lost)
	if seq > expected {
		gap := int64(seq - expected)
		st.Lost += gap
		st.FeedbackLost += int(gap)
	} else if seq < expected && st.Lost > 0 {
		st.Lost-- // late (reordered) arrival of one counted as lost
	}
	st.Received++
	st.FeedbackRecv++
	st.RecvBytes += int64(bytes)
	d := now.Sub(sent)
	st.DelaySum += d
	st.DelayMax = max(st.DelayMax, d)
	if st.FirstRecv == clock.Never {
		st.FirstRecv = now
	}
	st.LastRecv = now
	if fb != nil && (st.FeedbackRecv+st.FeedbackLost >= FeedbackEvery || now.Sub(st.LastFeedback) >= FeedbackInterval) {
		fb.Feedback(now, st.FeedbackRecv, st.FeedbackLost)
		st.FeedbackRecv, st.FeedbackLost = 0, 0
		st.LastFeedback = now
	}
}
