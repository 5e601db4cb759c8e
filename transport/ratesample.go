package transport

import (
	"sort"
	"time"

	"cclab/ccalgo"
	"cclab/clock"
)

// Delivery-rate estimation (draft-cheng-iccrg-delivery-rate-estimation, as
// Linux tcp_rate.c): every packet sent is stamped with the connection's
// delivery state; every packet delivered (cumulatively or selectively
// acknowledged) advances it; the packet most recently sent among those an
// ACK delivers gives the sample: data delivered since it was sent over
// max(send elapsed, ACK elapsed). Both modes use it (stream segments and
// the datagram mode's sent ring).

// rateStamp is the delivery state recorded with one packet when sent (the
// draft's P.delivered, P.delivered_time, P.first_sent_time,
// P.is_app_limited, P.sent_time).
type rateStamp struct {
	delivered     uint64 // C.delivered when sent, bytes
	deliveredTime clock.Time
	firstSentTime clock.Time
	sentTime      clock.Time
	appLimited    bool
}

// rateSampler is the connection's delivery state (the draft's C.*) and the
// sample being built from one ACK.
type rateSampler struct {
	delivered     uint64     // C.delivered: bytes delivered so far
	deliveredTime clock.Time // C.delivered_time
	firstSentTime clock.Time // C.first_sent_time
	appLimited    uint64     // C.app_limited: 0, or the delivered count that ends the app-limited period

	// the sample of the ACK being processed
	have        bool
	prior       uint64 // rs.prior_delivered
	priorTime   clock.Time
	sendElapsed time.Duration
	ackElapsed  time.Duration
	sampleApp   bool
	sentTime    clock.Time
}

// onSent stamps a packet sent at now; inFlight is the data in flight
// before it, bytes (none in flight restarts the sampling intervals, §3.2).
func (r *rateSampler) onSent(now clock.Time, st *rateStamp, inFlight int) {
	if inFlight <= 0 {
		r.firstSentTime, r.deliveredTime = now, now
	}
	*st = rateStamp{delivered: r.delivered, deliveredTime: r.deliveredTime, firstSentTime: r.firstSentTime,
		sentTime: now, appLimited: r.appLimited != 0}
}

// onDelivered accounts for a packet of bytes delivered by the ACK at now
// (§3.3 UpdateRateSample).
func (r *rateSampler) onDelivered(now clock.Time, st *rateStamp, bytes int) {
	if st.sentTime == 0 {
		return // never stamped
	}
	r.delivered += uint64(bytes)
	r.deliveredTime = now
	if !r.have || st.delivered > r.prior || (st.delivered == r.prior && st.sentTime > r.sentTime) {
		r.have = true
		r.prior = st.delivered
		r.priorTime = st.deliveredTime
		r.sampleApp = st.appLimited
		r.sendElapsed = st.sentTime.Sub(st.firstSentTime)
		r.ackElapsed = now.Sub(st.deliveredTime)
		r.sentTime = st.sentTime
		r.firstSentTime = st.sentTime
	}
	st.sentTime = 0 // delivered once
}

// markAppLimited records that the application has nothing to send while
// the window has room (§3.4): samples until inFlight more bytes are
// delivered are application-limited.
func (r *rateSampler) markAppLimited(inFlight int) {
	r.appLimited = max(r.delivered+uint64(inFlight), 1)
}

// sample ends the ACK's sample (§3.3 GenerateRateSample): intervals shorter
// than minRTT are not valid (ACK compression).
func (r *rateSampler) sample(now clock.Time, minRTT time.Duration) ccalgo.RateSample {
	if r.appLimited != 0 && r.delivered > r.appLimited {
		r.appLimited = 0
	}
	rs := ccalgo.RateSample{TotalDelivered: r.delivered}
	if !r.have {
		return rs
	}
	r.have = false
	rs.PriorDelivered = r.prior
	rs.AppLimited = r.sampleApp
	rs.RTT = now.Sub(r.sentTime)
	rs.Delivered = r.delivered - r.prior
	rs.Interval = max(r.sendElapsed, r.ackElapsed)
	if rs.Interval <= 0 || rs.Interval < minRTT {
		return rs
	}
	rs.DeliveryRate = float64(rs.Delivered) * 8 / rs.Interval.Seconds()
	return rs
}

// sackBlindDelivered counts the segments an ACK's SACK blocks report for a
// SACK-blind recovery strategy (Reno, NewReno), which leaves them unmarked
// in the scoreboard: the data reached the receiver, so the delivery-rate
// estimate counts it now rather than all at once when the cumulative ACK
// jumps after recovery (Linux counts such data from duplicate ACKs,
// tcp_add_reno_sack). Segments counted here are not counted again.
func (c *Conn) sackBlindDelivered(now clock.Time, p *packet, cum uint64) {
	for i := 0; i < p.nBlocks; i++ {
		b := p.blocks[i]
		start := max(b.Start, cum)
		k := sort.Search(c.sb.count, func(k int) bool { return c.sb.Seg(k).Off >= start })
		for ; k < c.sb.count; k++ {
			s := c.sb.Seg(k)
			if s.End() > b.End {
				break
			}
			c.rsamp.onDelivered(now, &s.rate, s.Len)
		}
	}
}
