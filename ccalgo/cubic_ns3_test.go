package ccalgo

import (
	"testing"
	"time"

	"cclab/clock"
)

// ns3Ack is one ACK of a test in segments: the cumulative point after it,
// how far it moved, how much it newly SACKed, and the RecoveryPoint of an
// unfinished timeout recovery (0: none).
type ns3Ack struct {
	cum, adv, sacked, rtoPoint uint64
}

func (s ns3Ack) ack(now clock.Time) Ack {
	return Ack{Now: now, Acked: int(max(s.adv, 1)+s.sacked) * testMSS, AckedPackets: int(max(s.adv, 1) + s.sacked),
		CumAck: s.cum * testMSS, CumAcked: int(s.adv) * testMSS, Sacked: int(s.sacked) * testMSS,
		RTOPoint: s.rtoPoint * testMSS, MinRTT: ms(15), SRTT: ms(15), RTT: ms(15)}
}

// TestCubicAcksNS3: with acks=ns3 cwnd grows as ns-3.37's
// TcpSocketBase::ProcessAck calls TcpCubic::IncreaseWindow: by the whole
// segments the cumulative ACK moved over; not at all on an ACK with new
// SACK information (isDupack: CA_OPEN -> CA_DISORDER); after a timeout
// (CA_LOSS, below m_recover) on every advance, SACK or not; and on the ACK
// that reaches m_recover by (ack - m_recover)/SMSS segments only. The
// default counts the data each ACK newly delivered, SACKed included.
func TestCubicAcksNS3(t *testing.T) {
	const ns3 = "cubic:linux=true,friendly=false,ssthresh=1000,ss=ns3,acks=ns3"
	for _, tc := range []struct {
		name string
		spec string
		acks []ns3Ack
		want int // cwnd after the ACKs, segments (initial window 10)
	}{
		{"cumulative advance, no SACK", ns3, []ns3Ack{{cum: 2, adv: 2}}, 12},
		{"new SACK information: CA_DISORDER, no growth", ns3, []ns3Ack{{cum: 2, adv: 2, sacked: 1}}, 10},
		{"the default counts it (RFC 3465 L = 2)", "cubic:linux=true,friendly=false,ssthresh=1000", []ns3Ack{{cum: 2, adv: 2, sacked: 1}}, 12},
		{"CA_LOSS: every segment the ACK moved over, SACK or not", ns3, []ns3Ack{{cum: 51, adv: 50, sacked: 1, rtoPoint: 100}}, 60},
		{"CA_LOSS -> CA_OPEN: only the segments beyond m_recover", ns3, []ns3Ack{{cum: 101, adv: 50, rtoPoint: 100}}, 11},
		{"CA_LOSS -> CA_OPEN exactly at m_recover", ns3, []ns3Ack{{cum: 100, adv: 50, rtoPoint: 100}}, 10},
		{"ss=ns3 alone counts the whole advance there", "cubic:linux=true,friendly=false,ssthresh=1000,ss=ns3", []ns3Ack{{cum: 101, adv: 101, rtoPoint: 100}}, 111},
		{"acks=ns3 with RFC slow start", "cubic:linux=true,friendly=false,ssthresh=1000,acks=ns3", []ns3Ack{{cum: 51, adv: 50, rtoPoint: 100}}, 12},
	} {
		c := newTest[*Cubic](t, tc.spec)
		now := clock.Start.Add(time.Second)
		for _, a := range tc.acks {
			c.OnAck(a.ack(now))
			now = now.Add(ms(1))
		}
		if got := c.Cwnd() / testMSS; got != tc.want {
			t.Errorf("%s (%s): cwnd %d segments, want %d", tc.name, tc.spec, got, tc.want)
		}
	}
	if _, err := Registry.New("cubic:acks=linux", Env{MSS: testMSS}); err == nil {
		t.Errorf("cubic:acks=linux built, want an error naming the values")
	}
}

// TestCubicCANS3: with ca=ns3 congestion avoidance is ns-3.37's
// TcpCubic::IncreaseWindow: m_cWndCnt += segmentsAcked, and if it reaches
// cnt, cwnd += 1 segment and m_cWndCnt -= cnt; at most one segment per ACK,
// the credit kept for later ACKs and across congestion events. Linux's
// tcp_cong_avoid_ai (the default) adds m_cWndCnt/cnt segments at once and
// clears the count at a congestion event. At cwnd = ssthresh = 10 with
// W_max = 0 (no event yet) the target is flat, so cnt is the clamp of 20.
func TestCubicCANS3(t *testing.T) {
	run := func(spec string, acks []ns3Ack, event bool) int {
		c := newTest[*Cubic](t, spec)
		now := clock.Start.Add(time.Second)
		for i, a := range acks {
			if event && i == 1 {
				c.OnCongestion(Congestion{Now: now, Kind: Loss, InFlight: c.Cwnd()})
				c.OnRecoveryExit(now, c.Cwnd())
			}
			c.OnAck(a.ack(now))
			now = now.Add(ms(1))
		}
		return c.Cwnd() / testMSS
	}
	const base = "cubic:linux=true,friendly=false,ssthresh=10,acks=ns3"
	big := ns3Ack{cum: 100, adv: 100}
	small := ns3Ack{cum: 102, adv: 2}
	for _, tc := range []struct {
		name  string
		spec  string
		acks  []ns3Ack
		event bool
		want  int // cwnd after the ACKs, segments
	}{
		{"ns3: one segment for a 100-segment ACK", base + ",ca=ns3", []ns3Ack{big}, false, 11},
		{"linux: 100/20 segments at once", base, []ns3Ack{big}, false, 15},
		{"ns3: the credit gives the next ACK one more", base + ",ca=ns3", []ns3Ack{big, small}, false, 12},
		{"linux: no credit left", base, []ns3Ack{big, small}, false, 15},
		// After a loss (ns3: cwnd 11 -> ssthresh 7) the kept credit of 80
		// segments still gives +1 on the next ACK; Linux's count is cleared
		// (cwnd 15 -> 10, and 2 segments are below cnt).
		{"ns3: credit kept across a congestion event", base + ",ca=ns3", []ns3Ack{big, small}, true, 7 + 1},
		{"linux: count cleared at the event", base, []ns3Ack{big, small}, true, 10},
	} {
		if got := run(tc.spec, tc.acks, tc.event); got != tc.want {
			t.Errorf("%s (%s): cwnd %d segments, want %d", tc.name, tc.spec, got, tc.want)
		}
	}
	if _, err := Registry.New("cubic:ca=ns3", Env{MSS: testMSS}); err == nil {
		t.Errorf("cubic:ca=ns3 without linux=true built, want an error")
	}
}

// TestCubicRTOAlways: with rtoalways a timeout that repeats without a new
// ACK recomputes ssthresh from the loss window, max(1*beta, 2) = 2
// segments, as ns-3.37's ReTxTimeout (GetSsThresh on every expiry: its
// IsHeadRetransmitted test runs after SetSentListLost cleared the flags);
// by default (RFC 5681 §3.1) the first timeout's ssthresh is held.
func TestCubicRTOAlways(t *testing.T) {
	for _, tc := range []struct {
		spec string
		want int // ssthresh after the second timeout, segments
	}{
		{"cubic:linux=true,friendly=false,iw=20", 14},
		{"cubic:linux=true,friendly=false,iw=20,rtoalways", 2},
	} {
		c := newTest[*Cubic](t, tc.spec)
		now := clock.Start.Add(time.Second)
		c.OnRTO(now, 20*testMSS) // 0.7 * 20 segments
		c.OnRTO(now.Add(time.Second), testMSS)
		if got := c.Ssthresh() / testMSS; got != tc.want {
			t.Errorf("%s: ssthresh %d segments after a repeated timeout, want %d", tc.spec, got, tc.want)
		}
	}
}
