package ccalgo

import (
	"testing"
	"time"

	"cclab/clock"
)

// TestCubicSlowStartNS3: with ss=ns3 slow start adds every whole segment
// the cumulative ACK moved over (ns-3.37's TcpCubic::IncreaseWindow:
// cwnd += segmentsAcked * SMSS, segmentsAcked from the cumulative advance,
// data SACKed before included, remainders below a segment carried), with
// no limit per ACK and past ssthresh; by default (RFC 5681 with RFC 3465)
// cwnd += min(acked, abc*SMSS), up to ssthresh.
func TestCubicSlowStartNS3(t *testing.T) {
	type step struct {
		cum   uint64 // cumulative ACK point, segments ×2 (half segments)
		acked int    // Ack.Acked (newly acknowledged and newly SACKed), segments
	}
	for _, tc := range []struct {
		spec  string
		steps []step
		want  int // cwnd after the steps, segments
	}{
		// A cumulative jump of 50 segments of which 1 was not SACKed before
		// (the retransmission that filled the hole after an RTO).
		{"cubic:linux=true,friendly=false,ssthresh=20,ss=ns3", []step{{100, 1}}, 10 + 50},
		{"cubic:linux=true,friendly=false,ssthresh=20,ss=rfc", []step{{100, 1}}, 10 + 1},
		{"cubic:linux=true,friendly=false,ssthresh=20", []step{{100, 1}}, 10 + 1},
		// Half segments carry over: 1.5 then 0.5 segments make 1 then 1.
		{"cubic:linux=true,friendly=false,ssthresh=20,ss=ns3", []step{{3, 1}}, 10 + 1},
		{"cubic:linux=true,friendly=false,ssthresh=20,ss=ns3", []step{{3, 1}, {4, 1}}, 10 + 2},
		// Byte counting per ACK: at most abc = 2 segments (RFC 3465 L).
		{"cubic:linux=true,friendly=false,ssthresh=20", []step{{10, 5}}, 10 + 2},
		{"cubic:linux=true,friendly=false,ssthresh=20,ss=ns3", []step{{10, 5}}, 10 + 5},
	} {
		c := newTest[*Cubic](t, tc.spec)
		now := clock.Start.Add(time.Second)
		for _, s := range tc.steps {
			c.OnAck(Ack{Now: now, Acked: s.acked * testMSS, AckedPackets: s.acked, CumAck: s.cum * testMSS / 2, MinRTT: ms(20)})
		}
		if got := c.Cwnd(); got != tc.want*testMSS {
			t.Errorf("%s after %v: cwnd %d segments, want %d", tc.spec, tc.steps, got/testMSS, tc.want)
		}
	}
	if _, err := Registry.New("cubic:ss=linux", Env{MSS: testMSS}); err == nil {
		t.Errorf("cubic:ss=linux built, want an error naming the values")
	}
}
