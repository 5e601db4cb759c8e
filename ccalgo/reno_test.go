package ccalgo

import (
	"strings"
	"testing"
	"time"

	"cclab/clock"
)

const testMSS = 1200

// fakeClock is a test clock advanced by hand.
type fakeClock struct{ now clock.Time }

func (c *fakeClock) advance(d time.Duration) clock.Time { c.now = c.now.Add(d); return c.now }

func TestInitialWindowRFC6928(t *testing.T) {
	for _, tc := range []struct {
		mss, want int
	}{
		{536, 5360},    // 10*MSS is the smaller bound
		{1200, 12000},  // 10*MSS
		{1460, 14600},  // both bounds equal
		{4000, 14600},  // 14600-byte bound
		{9000, 18000},  // 2*MSS floor
		{1500, 14600},  // 14600 < 15000
		{7300, 14600},  // 2*MSS = 14600
		{7301, 14602},  // 2*MSS exceeds 14600
		{1000, 10000},  // 10*MSS
		{1461, 14600},  // 14600 < 14610
		{100, 1000},    // tiny MSS
		{14600, 29200}, // 2*MSS
	} {
		if got := InitialWindow(tc.mss); got != tc.want {
			t.Errorf("InitialWindow(%d): got %d, want %d", tc.mss, got, tc.want)
		}
		c, err := New("reno", Env{MSS: tc.mss})
		if err != nil {
			t.Fatal(err)
		}
		if got := c.Cwnd(); got != tc.want {
			t.Errorf("reno cwnd with MSS %d: got %d, want %d", tc.mss, got, tc.want)
		}
		if got := c.Ssthresh(); got != InfiniteSsthresh {
			t.Errorf("initial ssthresh: got %d, want %d (arbitrarily high)", got, InfiniteSsthresh)
		}
	}
	r := newTest[*Reno](t, "reno:iw=4")
	if got, want := r.Cwnd(), 4*testMSS; got != want {
		t.Errorf("iw=4: got %d, want %d", got, want)
	}
	r = newTest[*Reno](t, "reno:ssthresh=7")
	if got, want := r.Ssthresh(), 7*testMSS; got != want {
		t.Errorf("ssthresh=7: got %d, want %d", got, want)
	}
}

// TestRenoSlowStart checks RFC 5681 §3.1 (cwnd += min(N, SMSS)) with abc=1
// and RFC 3465 §2.2 (cwnd += min(N, L*SMSS), L = 2) with the default.
func TestRenoSlowStart(t *testing.T) {
	for _, tc := range []struct {
		name  string
		spec  string
		acked []int // bytes acknowledged by successive ACKs
		want  int   // cwnd increase, bytes
	}{
		{"rfc5681 one segment", "reno:abc=1", []int{1200}, 1200},
		{"rfc5681 partial segment", "reno:abc=1", []int{600}, 600},
		{"rfc5681 delayed ack two segments capped at SMSS", "reno:abc=1", []int{2400}, 1200},
		{"rfc5681 stretch ack", "reno:abc=1", []int{6000}, 1200},
		{"abc L=2 one segment", "reno", []int{1200}, 1200},
		{"abc L=2 delayed ack", "reno", []int{2400}, 2400},
		{"abc L=2 stretch ack capped", "reno", []int{3600}, 2400},
		{"abc L=2 stretch ack 5 segments capped", "reno", []int{6000}, 2400},
		{"per-segment acks of a window double it", "reno:iw=10", repeat(1200, 10), 12000},
		{"delayed acks with L=1 give 1.5x", "reno:iw=10,abc=1", repeat(2400, 5), 6000},
		{"delayed acks with L=2 double", "reno:iw=10,abc=2", repeat(2400, 5), 12000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newTest[*Reno](t, tc.spec)
			before := r.Cwnd()
			var clk fakeClock
			clk.now = clock.Start
			for _, b := range tc.acked {
				r.OnAck(Ack{Now: clk.advance(time.Millisecond), Acked: b, RTT: 50 * time.Millisecond})
			}
			if got := r.Cwnd() - before; got != tc.want {
				t.Errorf("cwnd increase: got %d, want %d", got, tc.want)
			}
			if got := r.State().Phase; got != PhaseSlowStart {
				t.Errorf("phase: got %q, want %q", got, PhaseSlowStart)
			}
		})
	}
}

func repeat(v, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// TestRenoSlowStartToSsthresh checks that slow start stops at ssthresh and
// the rest of the ACK is byte-counted by congestion avoidance.
func TestRenoSlowStartToSsthresh(t *testing.T) {
	r := newTest[*Reno](t, "reno:iw=4,ssthresh=5")
	r.OnAck(Ack{Acked: 2400})
	if got, want := r.Cwnd(), 5*testMSS; got != want {
		t.Errorf("cwnd: got %d, want %d (capped at ssthresh)", got, want)
	}
	if got, want := r.bytesAcked, 1200; got != want {
		t.Errorf("bytes_acked carried into CA: got %d, want %d", got, want)
	}
	if got, want := r.State().Phase, PhaseCongAvoid; got != want {
		t.Errorf("phase: got %q, want %q", got, want)
	}
}

// TestRenoCongestionAvoidance checks +1 SMSS per RTT (a cwnd's worth of
// acknowledged bytes) with RFC 3465 byte counting, whatever the ACK size.
func TestRenoCongestionAvoidance(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cwnd   int // packets
		ackPkt int // packets per ACK
		rtts   int
	}{
		{"per-segment acks, 1 RTT", 10, 1, 1},
		{"delayed acks, 1 RTT", 10, 2, 1},
		{"stretch acks of 5, 1 RTT", 10, 5, 1},
		{"per-segment acks, 5 RTTs", 10, 1, 5},
		{"delayed acks, 7 RTTs", 20, 2, 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newTest[*Reno](t, "reno")
			r.cwnd, r.ssthresh = tc.cwnd*testMSS, tc.cwnd*testMSS
			for range tc.rtts {
				// one RTT: the current window is acknowledged
				w := r.Cwnd()
				for acked := 0; acked < w; acked += tc.ackPkt * testMSS {
					r.OnAck(Ack{Acked: min(tc.ackPkt*testMSS, w-acked)})
				}
			}
			if got, want := r.Cwnd(), (tc.cwnd+tc.rtts)*testMSS; got != want {
				t.Errorf("cwnd after %d RTTs: got %d, want %d", tc.rtts, got, want)
			}
		})
	}
	// Less than a window acknowledged: no increase yet.
	r := newTest[*Reno](t, "reno")
	r.cwnd, r.ssthresh = 10*testMSS, 10*testMSS
	for range 9 {
		r.OnAck(Ack{Acked: testMSS})
	}
	if got, want := r.Cwnd(), 10*testMSS; got != want {
		t.Errorf("cwnd after 9/10 of a window: got %d, want %d", got, want)
	}
}

// TestRenoLoss checks RFC 5681 §3.2 step 2 (ssthresh from FlightSize, not
// cwnd), no growth during recovery and RFC 6582 §3.2 step 3 on exit.
func TestRenoLoss(t *testing.T) {
	for _, tc := range []struct {
		name         string
		cwnd, flight int // packets
		wantSsthresh int // bytes
	}{
		{"flight equals cwnd", 20, 20, 10 * testMSS},
		{"flight below cwnd uses flight", 20, 10, 5 * testMSS},
		{"odd flight", 21, 21, 21 * testMSS / 2},
		{"floor 2 SMSS", 4, 3, 2 * testMSS},
		{"tiny flight", 2, 1, 2 * testMSS},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newTest[*Reno](t, "reno")
			r.cwnd = tc.cwnd * testMSS
			r.OnCongestion(Congestion{Kind: Loss, InFlight: tc.flight * testMSS})
			if got := r.Ssthresh(); got != tc.wantSsthresh {
				t.Errorf("ssthresh: got %d, want %d", got, tc.wantSsthresh)
			}
			if got, want := r.Cwnd(), tc.cwnd*testMSS; got != want {
				t.Errorf("cwnd before recovery exit: got %d, want %d (recovery strategy governs)", got, want)
			}
			if got, want := r.State().Phase, PhaseRecovery; got != want {
				t.Errorf("phase: got %q, want %q", got, want)
			}
			// ACKs during recovery never grow cwnd.
			for _, a := range []Ack{{Acked: testMSS, InRecovery: true}, {Acked: 2 * testMSS}} {
				r.OnAck(a)
			}
			if got, want := r.Cwnd(), tc.cwnd*testMSS; got != want {
				t.Errorf("cwnd after ACKs in recovery: got %d, want %d", got, want)
			}
			r.OnRecoveryExit(0, 0)
			if got := r.Cwnd(); got != tc.wantSsthresh {
				t.Errorf("cwnd after recovery exit: got %d, want ssthresh %d", got, tc.wantSsthresh)
			}
		})
	}
}

func TestRenoNoGrowth(t *testing.T) {
	for _, tc := range []struct {
		name string
		ack  Ack
	}{
		{"in recovery", Ack{Acked: 2400, InRecovery: true}},
		{"app limited", Ack{Acked: 2400, AppLimited: true}},
		{"nothing acked", Ack{Acked: 0}},
	} {
		for _, ss := range []bool{true, false} {
			r := newTest[*Reno](t, "reno")
			if !ss {
				r.ssthresh = r.cwnd
			}
			before := r.Cwnd()
			for range 20 {
				r.OnAck(tc.ack)
			}
			if got := r.Cwnd(); got != before {
				t.Errorf("%s (slow start %v): cwnd got %d, want %d", tc.name, ss, got, before)
			}
		}
	}
}

// TestRenoRTO checks RFC 5681 §3.1: ssthresh = max(FlightSize/2, 2*SMSS),
// cwnd = LW = 1 SMSS, ssthresh held across backed-off timeouts, and slow
// start afterwards.
func TestRenoRTO(t *testing.T) {
	r := newTest[*Reno](t, "reno")
	r.cwnd = 30 * testMSS
	r.OnRTO(0, 24*testMSS)
	if got, want := r.Cwnd(), testMSS; got != want {
		t.Errorf("cwnd after RTO: got %d, want %d", got, want)
	}
	if got, want := r.Ssthresh(), 12*testMSS; got != want {
		t.Errorf("ssthresh after RTO: got %d, want %d", got, want)
	}
	// Second timeout of the same data: flight is now tiny, ssthresh held.
	r.OnRTO(0, testMSS)
	if got, want := r.Ssthresh(), 12*testMSS; got != want {
		t.Errorf("ssthresh after backed-off RTO: got %d, want %d", got, want)
	}
	if got, want := r.Cwnd(), testMSS; got != want {
		t.Errorf("cwnd after backed-off RTO: got %d, want %d", got, want)
	}
	// A new ACK: slow start from 1 SMSS.
	r.OnAck(Ack{Acked: testMSS})
	if got, want := r.Cwnd(), 2*testMSS; got != want {
		t.Errorf("cwnd after first ACK post-RTO: got %d, want %d", got, want)
	}
	// A later, independent timeout recomputes ssthresh.
	r.OnRTO(0, 2*testMSS)
	if got, want := r.Ssthresh(), 2*testMSS; got != want {
		t.Errorf("ssthresh after new RTO: got %d, want %d", got, want)
	}
	// An RTO during loss recovery ends the recovery episode.
	r = newTest[*Reno](t, "reno")
	r.OnCongestion(Congestion{Kind: Loss, InFlight: 10 * testMSS})
	r.OnRTO(0, 10*testMSS)
	if got, want := r.State().Phase, PhaseAfterRTO; got != want {
		t.Errorf("phase: got %q, want %q", got, want)
	}
	r.OnAck(Ack{Acked: testMSS})
	if got, want := r.Cwnd(), 2*testMSS; got != want {
		t.Errorf("cwnd grows in slow start after RTO in recovery: got %d, want %d", got, want)
	}
}

// TestRenoECN checks RFC 3168 §6.1.2: cwnd = ssthresh = max(FlightSize/2, 2*SMSS) at once.
func TestRenoECN(t *testing.T) {
	for _, tc := range []struct {
		cwnd, flight, want int // packets
	}{
		{20, 20, 10}, {20, 12, 6}, {3, 3, 2}, {10, 0, 2},
	} {
		r := newTest[*Reno](t, "reno")
		r.cwnd = tc.cwnd * testMSS
		r.OnCongestion(Congestion{Kind: ECN, InFlight: tc.flight * testMSS})
		if got := r.Cwnd(); got != tc.want*testMSS {
			t.Errorf("ECN cwnd %d flight %d: cwnd got %d, want %d", tc.cwnd, tc.flight, got, tc.want*testMSS)
		}
		if got := r.Ssthresh(); got != tc.want*testMSS {
			t.Errorf("ECN cwnd %d flight %d: ssthresh got %d, want %d", tc.cwnd, tc.flight, got, tc.want*testMSS)
		}
		if got := r.State().Phase; got != PhaseCongAvoid {
			t.Errorf("ECN phase: got %q, want %q (no recovery episode)", got, PhaseCongAvoid)
		}
		// ACKs grow it again at once (no recovery).
		r.OnAck(Ack{Acked: r.Cwnd()})
		if got := r.Cwnd(); got != (tc.want+1)*testMSS {
			t.Errorf("ECN then one window acked: got %d, want %d", got, (tc.want+1)*testMSS)
		}
	}
}

func TestRegistryErrors(t *testing.T) {
	for _, tc := range []struct {
		spec string
		mss  int
		want []string // substrings of the error
	}{
		{"nosuch", testMSS, []string{`unknown congestion controller "nosuch"`, "reno", "newreno"}},
		{"reno:bogus=1", testMSS, []string{`unknown parameter "bogus"`, "abc, ca, grow, halve, iw, ssthresh"}},
		{"reno:iw=ten", testMSS, []string{"iw", "not an integer"}},
		{"reno:iw=-1", testMSS, []string{"iw=-1"}},
		{"reno:abc=3", testMSS, []string{"abc=3"}},
		{"reno:abc=0", testMSS, []string{"abc=0"}},
		{"newreno:ssthresh=-2", testMSS, []string{"ssthresh=-2"}},
		{"reno", 0, []string{"MSS"}},
	} {
		_, err := New(tc.spec, Env{MSS: tc.mss})
		if err == nil {
			t.Errorf("New(%q): got nil error, want one mentioning %q", tc.spec, tc.want)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("New(%q) error: got %q, want it to contain %q", tc.spec, err, w)
			}
		}
	}
	for _, name := range []string{"reno", "newreno"} {
		c, err := New(name, Env{MSS: testMSS})
		if err != nil {
			t.Fatal(err)
		}
		if got := c.Name(); got != name {
			t.Errorf("Name: got %q, want %q", got, name)
		}
	}
}

// TestRenoPerAckCA: ca=acks is RFC 5681 equation (3), cwnd += SMSS*SMSS/cwnd
// per ACK whatever it acknowledges (as ns-3's TcpNewReno), so with delayed
// ACKs the window grows about half an SMSS per RTT, against one SMSS with
// byte counting (ca=bytes, the default).
func TestRenoPerAckCA(t *testing.T) {
	r := newTest[*Reno](t, "reno:ca=acks")
	r.cwnd, r.ssthresh = 10*testMSS, 10*testMSS
	r.OnAck(Ack{Acked: 2 * testMSS})
	if got, want := r.Cwnd(), 10*testMSS+testMSS/10; got != want {
		t.Errorf("one ACK at cwnd 10 SMSS: got %d, want %d (SMSS*SMSS/cwnd)", got, want)
	}
	for _, tc := range []struct {
		ca     string
		ackPkt int     // packets per ACK
		lo, hi float64 // growth over one RTT, SMSS
	}{
		{"acks", 1, 0.9, 1.0},
		{"acks", 2, 0.45, 0.5},
		{"bytes", 1, 1, 1},
		{"bytes", 2, 1, 1},
	} {
		r := newTest[*Reno](t, "reno:ca="+tc.ca)
		r.cwnd, r.ssthresh = 20*testMSS, 20*testMSS
		w := r.Cwnd()
		for acked := 0; acked < w; acked += tc.ackPkt * testMSS {
			r.OnAck(Ack{Acked: tc.ackPkt * testMSS})
		}
		if got := float64(r.Cwnd()-w) / testMSS; got < tc.lo || got > tc.hi {
			t.Errorf("ca=%s, %d packets per ACK: grew %.3f SMSS in one RTT, want %.2f..%.2f", tc.ca, tc.ackPkt, got, tc.lo, tc.hi)
		}
	}
	if err := Registry.Validate("reno:ca=segments"); err == nil || !strings.Contains(err.Error(), "bytes, acks") {
		t.Errorf("reno:ca=segments: %v, want an error listing bytes, acks", err)
	}
}

// TestRenoGrowCum: with grow=cum only an ACK that moves the cumulative point
// grows cwnd, by the bytes it moved over (RFC 5681 §3.1: "each ACK received
// that cumulatively acknowledges new data"; ns-3 3.37's ProcessAck calls
// IncreaseWindow only for ackNumber > oldHeadSequence); the default grows on
// every ACK by the data it newly delivered, SACKed included.
func TestRenoGrowCum(t *testing.T) {
	const m = testMSS
	for _, tc := range []struct {
		name     string
		spec     string
		cwnd     int // segments; ssthresh 10 segments
		ack      Ack
		want     int // cwnd after the ACK, bytes
		recovery bool
	}{
		{"slow start, SACK only", "reno:grow=cum", 4, Ack{Acked: m}, 4 * m, false},
		{"slow start, SACK only, default", "reno", 4, Ack{Acked: m}, 5 * m, false},
		{"slow start, hole filled", "reno:grow=cum,abc=2", 4, Ack{Acked: m, CumAcked: 6 * m}, 6 * m, false},
		{"slow start, hole filled, default", "reno:abc=2", 4, Ack{Acked: m, CumAcked: 6 * m}, 5 * m, false},
		{"slow start, abc=1", "reno:grow=cum,abc=1", 4, Ack{Acked: m, CumAcked: 6 * m}, 5 * m, false},
		{"per-ACK CA, SACK only", "newreno:ca=acks,abc=1,grow=cum", 20, Ack{Acked: 2 * m}, 20 * m, false},
		{"per-ACK CA, SACK only, default", "newreno:ca=acks,abc=1", 20, Ack{Acked: 2 * m}, 20*m + m/20, false},
		{"per-ACK CA, cumulative", "newreno:ca=acks,abc=1,grow=cum", 20, Ack{Acked: 2 * m, CumAcked: 2 * m}, 20*m + m/20, false},
		{"in recovery", "reno:grow=cum", 4, Ack{Acked: m, CumAcked: m, InRecovery: true}, 4 * m, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newTest[*Reno](t, tc.spec)
			r.cwnd, r.ssthresh = tc.cwnd*m, 10*m
			if tc.cwnd >= 10 {
				r.ssthresh = tc.cwnd * m
			}
			r.OnAck(tc.ack)
			if got := r.Cwnd(); got != tc.want {
				t.Errorf("%s: cwnd %d after %+v, want %d", tc.spec, got, tc.ack, tc.want)
			}
		})
	}
	if err := Registry.Validate("reno:grow=sacked"); err == nil || !strings.Contains(err.Error(), "delivered, cum") {
		t.Errorf("reno:grow=sacked: %v, want an error naming delivered or cum", err)
	}
}

// linuxRenoSsthresh is ns-3.37's TcpLinuxReno::GetSsThresh
// (tcp-linux-reno.cc:144), Linux's tcp_reno_ssthresh: max(2*SMSS, cwnd/2),
// the bytes in flight ignored.
func linuxRenoSsthresh(cwnd, _ int) int { return max(2*testMSS, cwnd/2) }

// TestRenoHalveCwnd checks halve=cwnd against the ns-3/Linux rule on a loss,
// an ECN echo and a timeout outside recovery, and the flight the transport
// passes (ns-3's PRR cwnd, pipe + sndcnt) for a timeout during recovery; the
// default halves the flight (RFC 5681 eq. (4)).
func TestRenoHalveCwnd(t *testing.T) {
	const m = testMSS
	for _, tc := range []struct {
		name         string
		spec         string
		cwnd, flight int // bytes
		event        string
		want         int // ssthresh, bytes
	}{
		{"loss, flight below cwnd", "reno:halve=cwnd", 20 * m, 12 * m, "loss", linuxRenoSsthresh(20*m, 12*m)},
		{"loss, flight below cwnd, default", "reno", 20 * m, 12 * m, "loss", 6 * m},
		{"loss, flight above cwnd", "reno:halve=cwnd", 10 * m, 16 * m, "loss", linuxRenoSsthresh(10*m, 16*m)},
		{"loss, odd bytes", "reno:halve=cwnd", 21*m + 1, 3 * m, "loss", linuxRenoSsthresh(21*m+1, 3*m)},
		{"loss, small cwnd", "reno:halve=cwnd", 3 * m, 3 * m, "loss", linuxRenoSsthresh(3*m, 3*m)},
		{"ECN", "reno:halve=cwnd", 20 * m, 8 * m, "ecn", linuxRenoSsthresh(20*m, 8*m)},
		{"RTO", "reno:halve=cwnd", 20 * m, 4 * m, "rto", linuxRenoSsthresh(20*m, 4*m)},
		{"RTO, default", "reno:halve=flight", 20 * m, 4 * m, "rto", 2 * m},
		{"RTO in recovery: the flight", "reno:halve=cwnd", 20 * m, 14 * m, "loss+rto", 7 * m},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newTest[*Reno](t, tc.spec)
			r.cwnd = tc.cwnd
			switch tc.event {
			case "loss":
				r.OnCongestion(Congestion{Kind: Loss, InFlight: tc.flight})
			case "ecn":
				r.OnCongestion(Congestion{Kind: ECN, InFlight: tc.flight})
			case "rto":
				r.OnRTO(0, tc.flight)
			case "loss+rto":
				r.OnCongestion(Congestion{Kind: Loss, InFlight: tc.cwnd})
				r.OnRTO(0, tc.flight)
			}
			if got := r.Ssthresh(); got != tc.want {
				t.Errorf("%s: cwnd %d, flight %d, %s: ssthresh got %d, want %d", tc.spec, tc.cwnd, tc.flight, tc.event, got, tc.want)
			}
		})
	}
	if err := Registry.Validate("reno:halve=pipe"); err == nil || !strings.Contains(err.Error(), "flight, cwnd") {
		t.Errorf("reno:halve=pipe: %v, want an error naming flight or cwnd", err)
	}
}
