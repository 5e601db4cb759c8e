package ccalgo

import (
	"math"

	"cclab/clock"
)

// Linux's CUBIC (net/ipv4/tcp_cubic.c; ns-3's TcpCubic follows it) differs
// from RFC 9438's formulas in its arithmetic, on purpose (integer kernel
// code); cubic:linux=true reproduces it so that cclab can be matched with
// either (docs/compat.md):
//
//   - windows in whole segments: W_max (last_max_cwnd), the origin point and
//     the target are integers, the cubic term C*(t-K)^3 truncated;
//   - the target is taken at t + min RTT (delay_min), not t + SRTT;
//   - growth by counting: cnt = cwnd/(target-cwnd) acknowledged segments per
//     +1 segment (100*cwnd when target <= cwnd), at most 20 while
//     last_max_cwnd is 0, and never below 2 (at most +1 segment per 2
//     acknowledged: 1.5x per RTT); tcp_cong_avoid_ai applies it;
//   - ssthresh = max(cwnd*beta, 2) segments from cwnd, not FlightSize
//     (bictcp_recalc_ssthresh);
//   - after an RTO last_max_cwnd = 0 (bictcp_reset), so the next epoch starts
//     at K = 0 with the clamp of 20;
//   - the Reno-friendly estimate (tcp_friendliness) counts acknowledged
//     segments: +1 to tcp_cwnd per cwnd*beta_scale/8 of them, with
//     beta_scale = 8(1+beta)/(3(1-beta)), and bounds cnt by cwnd/(tcp_cwnd -
//     cwnd).

// Linux tcp_cubic.c constants.
const (
	// linuxCntNoMax is the clamp of cnt while last_max_cwnd is 0
	// (bictcp_update: "ca->cnt = 20", 5% growth per RTT).
	linuxCntNoMax = 20
	// linuxCntMin is the smallest cnt (bictcp_update: "ca->cnt = max(ca->cnt, 2U)").
	linuxCntMin = 2
	// linuxCntFlat is cnt per segment of cwnd when the target is not above
	// cwnd (bictcp_update: "ca->cnt = 100 * cwnd").
	linuxCntFlat = 100
)

// linuxCubic is the state of the Linux arithmetic, in segments.
type linuxCubic struct {
	lastMax int     // last_max_cwnd
	origin  int     // bic_origin_point
	cnt     int     // acknowledged segments per +1 segment
	cwndCnt int     // snd_cwnd_cnt: acknowledged segments counted towards the next +1
	ackCnt  int     // ack_cnt: acknowledged segments in this epoch (friendliness)
	tcpCwnd int     // tcp_cwnd: the Reno-friendly estimate
	k       float64 // K, seconds
}

// linuxEvent is bictcp_recalc_ssthresh: W_max with fast convergence and
// ssthresh = max(cwnd*beta, 2) segments, both from cwnd.
func (c *Cubic) linuxEvent() {
	seg := c.cwnd / c.mss
	if c.cfg.FastConv && seg < c.lx.lastMax {
		c.lx.lastMax = int(float64(seg) * (1 + c.cfg.Beta) / 2)
	} else {
		c.lx.lastMax = seg
	}
	c.wMax = float64(c.lx.lastMax)
	c.cwndPrior = float64(seg)
	c.ssthresh = max(int(float64(seg)*c.cfg.Beta), MinSsthreshSegments) * c.mss
	c.bytesAcked = 0
	if c.cfg.CA != CANS3 { // ns-3's TcpCubic::GetSsThresh keeps m_cWndCnt
		c.lx.cwndCnt = 0
	}
	c.epochStart = clock.Never
}

// linuxUpdate is bictcp_update and tcp_cong_avoid_ai for one ACK of acked
// bytes in congestion avoidance.
func (c *Cubic) linuxUpdate(a Ack, acked int) {
	c.linuxSegs(a, max(1, (acked+c.mss/2)/c.mss))
}

// linuxSegs is bictcp_update and tcp_cong_avoid_ai (or, with ca=ns3,
// TcpCubic::IncreaseWindow's counting) for one ACK of segs acknowledged
// segments in congestion avoidance.
func (c *Cubic) linuxSegs(a Ack, segs int) {
	seg := c.cwnd / c.mss
	if c.epochStart == clock.Never {
		c.epochStart = a.Now
		c.lx.ackCnt, c.lx.tcpCwnd = 0, seg
		if c.lx.lastMax <= seg {
			c.lx.k, c.lx.origin = 0, seg
		} else {
			c.lx.k = math.Cbrt(float64(c.lx.lastMax-seg) / c.cfg.C)
			c.lx.origin = c.lx.lastMax
		}
		c.k, c.cwndEpoch, c.wEst = c.lx.k, float64(seg), float64(seg)
	}
	c.lx.ackCnt += segs
	t := a.Now.Sub(c.epochStart).Seconds() + a.MinRTT.Seconds()
	c.lx.cnt = linuxCnt(seg, c.lx.origin, c.lx.lastMax, c.cfg.C, t-c.lx.k)
	if c.cfg.Friendly {
		scale := int(8 * (1 + c.cfg.Beta) / (3 * (1 - c.cfg.Beta)))
		if step := max(1, seg*scale/8); c.lx.ackCnt > step {
			n := c.lx.ackCnt / step
			c.lx.ackCnt -= n * step
			c.lx.tcpCwnd += n
		}
		if c.lx.tcpCwnd > seg {
			c.lx.cnt = min(c.lx.cnt, seg/(c.lx.tcpCwnd-seg))
		}
		c.wEst = float64(c.lx.tcpCwnd)
	}
	c.lx.cnt = max(c.lx.cnt, linuxCntMin)
	if c.cfg.CA == CANS3 {
		// TcpCubic::IncreaseWindow: one segment at most per ACK.
		c.lx.cwndCnt += segs
		if c.lx.cwndCnt >= c.lx.cnt {
			c.cwnd += c.mss
			c.lx.cwndCnt -= c.lx.cnt
		}
		return
	}
	// tcp_cong_avoid_ai: credits from a higher cnt are applied gently first.
	if c.lx.cwndCnt >= c.lx.cnt {
		c.lx.cwndCnt = 0
		c.cwnd += c.mss
	}
	c.lx.cwndCnt += segs
	if c.lx.cwndCnt >= c.lx.cnt {
		n := c.lx.cwndCnt / c.lx.cnt
		c.lx.cwndCnt -= n * c.lx.cnt
		c.cwnd += n * c.mss
	}
}

// linuxCnt is bictcp_update's cnt for a window of seg segments at d = t +
// delay_min - K seconds from the origin point: target = origin +/-
// trunc(C*|d|^3); cnt = seg/(target-seg), or 100*seg if the target is not
// above seg; at most 20 while last_max_cwnd is 0. The caller applies the
// floor of 2.
func linuxCnt(seg, origin, lastMax int, cc, d float64) int {
	delta := int(cc * math.Abs(d*d*d))
	target := origin + delta
	if d < 0 {
		target = origin - delta
	}
	cnt := linuxCntFlat * seg
	if target > seg {
		cnt = seg / (target - seg)
	}
	if lastMax == 0 && cnt > linuxCntNoMax {
		cnt = linuxCntNoMax
	}
	return cnt
}
