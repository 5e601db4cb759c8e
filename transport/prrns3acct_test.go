package transport

import (
	"strings"
	"testing"
)

// TestPRRSndCntNS3Acct checks ns-3 3.37's TcpPrrRecovery::DoRecovery in its
// own uint32_t arithmetic (tcp-prr-recovery.cc:89-118, bytes, MSS 1448):
// below the wrap it agrees with PRRSndCntNS3; the proportional product
// prr_delivered * ssthresh is taken modulo 2^32; SSRB's prr_delivered -
// prr_out is unsigned, so MAX(it, DeliveredData) + MSS is prr_delivered -
// prr_out + MSS modulo 2^32 once prr_out is ahead.
func TestPRRSndCntNS3Acct(t *testing.T) {
	const mss = 1448
	for _, tc := range []struct {
		name                                                string
		prrDelivered, prrOut, delivered, pipe, ssthresh, fs int
		retxAcked                                           bool
		want, rfc                                           int // ns-3's arithmetic; PRRSndCntNS3's
	}{
		// 10 segments delivered, ssthresh 27, RecoverFS 38, 7 sent, pipe 30:
		// ceil(14480 * 39096 / 55024) - 10136 = 10289 - 10136.
		{"proportional, no wrap", 10 * mss, 7 * mss, mss, 30 * mss, 27 * mss, 38 * mss, false, 153, 153},
		// 65536 * 65536 = 2^32 wraps to 0: ceil(0) - 1448.
		{"proportional, product wraps", 65536, mss, mss, 70000, 65536, 131072, false, -mss, 32768 - mss},
		// 3 * 65536 * 65536 mod 2^32 = 0 as well; the RFC's 3 * 2^32 / 2^17 = 98304.
		{"proportional, product wraps twice", 3 * 65536, 0, mss, 70000, 65536, 131072, false, 0, 98304},
		{"below ssthresh: DeliveredData", 8 * mss, 6 * mss, 2 * mss, 5 * mss, 10 * mss, 20 * mss, false, 2 * mss, 2 * mss},
		{"SSRB, prr_out behind", 8 * mss, 6 * mss, 2 * mss, 5 * mss, 10 * mss, 20 * mss, true, 3 * mss, 3 * mss},
		// prr_out 2000 ahead: 2^32 - 2000 + 1448 read as an int = -552.
		{"SSRB, prr_out ahead by more than MSS", 10000, 12000, mss, 30000, 39096, 55024, true, -552, 2 * mss},
		// prr_out 500 ahead: 2^32 - 500 + 1448 = 948 modulo 2^32.
		{"SSRB, prr_out ahead by less than MSS", 10000, 10500, mss, 30000, 39096, 55024, true, 948, 2 * mss},
		{"capped by ssthresh - pipe", 20 * mss, 2 * mss, 4 * mss, 9 * mss, 10 * mss, 20 * mss, true, mss, mss},
	} {
		if got := PRRSndCntNS3Acct(tc.prrDelivered, tc.prrOut, tc.delivered, tc.pipe, tc.ssthresh, tc.fs, mss, tc.retxAcked); got != tc.want {
			t.Errorf("%s: ns-3's sndcnt got %d, want %d", tc.name, got, tc.want)
		}
		if got := PRRSndCntNS3(tc.prrDelivered, tc.prrOut, tc.delivered, tc.pipe, tc.ssthresh, tc.fs, mss, tc.retxAcked); got != tc.rfc {
			t.Errorf("%s: PRRSndCntNS3 got %d, want %d", tc.name, got, tc.rfc)
		}
	}
}

// TestPRRNS3Calls checks how often ns-3 3.37 runs DoRecovery for an ACK in
// recovery, each time adding its DeliveredData to prr_delivered: from
// DupAck for an ACK with new SACK information, and from the partial-ACK
// branch for one that moves snd.una by a segment or more.
func TestPRRNS3Calls(t *testing.T) {
	r := &PRR{}
	r.mss = testMSS
	for _, tc := range []struct {
		name   string
		sacked int
		adv    uint64
		want   int
	}{
		{"neither", 0, 0, 1},
		{"SACK only", testMSS, 0, 1},
		{"cumulative only", 0, testMSS, 1},
		{"both", testMSS, 2 * testMSS, 2},
		{"SACK and less than a segment", testMSS, testMSS - 1, 1},
	} {
		a := &AckInfo{PrevUna: 10 * testMSS, CumAck: 10*testMSS + tc.adv, SackedBytes: tc.sacked}
		if got := r.ns3Calls(a); got != tc.want {
			t.Errorf("%s: got %d DoRecovery calls, want %d", tc.name, got, tc.want)
		}
	}
}

// TestPRRNS3AcctDelivered follows prr_delivered through an episode: 20
// segments out, 0-9 lost; the entry ACK SACKs 10-12 (DeliveredData 3), the
// next ACK acknowledges the retransmitted segment 0 and SACKs 13
// (DeliveredData 2): ns-3 counts it twice (DupAck, then the partial ACK),
// 3 + 2 + 2 = 7 segments; RFC 6937 and bound=ns3 alone 5.
func TestPRRNS3AcctDelivered(t *testing.T) {
	for _, tc := range []struct {
		rec  string
		want int // prr_delivered, segments
	}{
		{"prr:bound=ns3", 5},
		{"prr:bound=ns3,ns3acct", 7},
	} {
		f := sackFixture(t, tc.rec, 20, 0)
		sackAck(f, 0, 10, 11, 12)
		sackAck(f, 1, 10, 11, 12, 13)
		p, ok := f.c.rec.(*PRR)
		if !ok {
			t.Fatalf("%s: recovery is %T", tc.rec, f.c.rec)
		}
		if got, _, _ := p.PRRState(); got != tc.want*testMSS {
			t.Errorf("%s: prr_delivered %d bytes, want %d segments (%d)", tc.rec, got, tc.want, tc.want*testMSS)
		}
	}
	if _, err := newRecovery("prr:ns3acct", RecoveryEnv{MSS: testMSS}); err == nil || !strings.Contains(err.Error(), "bound=ns3") {
		t.Errorf("prr:ns3acct without bound=ns3: got %v, want an error naming bound=ns3", err)
	}
}
