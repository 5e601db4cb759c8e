package ccalgo

import (
	"testing"
	"time"

	"cclab/clock"
)

const ccid2S = 1000 // packet size for the tests, bytes

func newCCID2(t *testing.T, spec string) *CCID2 {
	t.Helper()
	c, err := NewDgram(spec, Env{MSS: ccid2S})
	if err != nil {
		t.Fatal(err)
	}
	return c.(*CCID2)
}

// ack acknowledges n packets at now with the given SRTT.
func ack(c *CCID2, now clock.Time, n int, srtt time.Duration) {
	c.OnAck(Ack{Now: now, Acked: n * ccid2S, AckedPackets: n, RTT: srtt, SRTT: srtt})
}

func TestCCID2InitialWindow(t *testing.T) {
	for _, tc := range []struct {
		s    int
		want int
	}{
		{1000, 4},  // min(4000, max(2000, 4380)) = 4000 -> 4 packets
		{1200, 3},  // min(4800, max(2400, 4380)) = 4380 -> 3 packets
		{1460, 3},  // 4380 -> 3
		{3000, 2},  // max(6000, 4380) = 6000 -> 2
		{500, 4},   // min(2000, ...) -> 4
		{10000, 2}, // 2 packets
	} {
		c, err := NewCCID2(DefaultCCID2Config(), Env{MSS: tc.s})
		if err != nil {
			t.Fatal(err)
		}
		if got := c.CwndPackets(); got != tc.want {
			t.Errorf("s=%d: initial cwnd got %v, want %v (RFC 3390)", tc.s, got, tc.want)
		}
		if c.Cwnd() != tc.want*tc.s {
			t.Errorf("s=%d: Cwnd bytes got %v, want %v", tc.s, c.Cwnd(), tc.want*tc.s)
		}
	}
}

func TestCCID2SlowStartCountsPackets(t *testing.T) {
	c := newCCID2(t, "ccid2:iw=2")
	now := clock.Start
	// Each acknowledged packet adds one: 2 -> 3 -> 5 -> 9.
	for _, tc := range []struct{ acked, want int }{{1, 3}, {2, 5}, {4, 9}} {
		ack(c, now, tc.acked, 10*time.Millisecond)
		if got := c.CwndPackets(); got != tc.want {
			t.Errorf("after %d acked: cwnd got %v, want %v", tc.acked, got, tc.want)
		}
	}
	if c.State().Phase != PhaseSlowStart {
		t.Errorf("phase got %v, want %v", c.State().Phase, PhaseSlowStart)
	}
}

func TestCCID2CongestionAvoidance(t *testing.T) {
	c := newCCID2(t, "ccid2:iw=10")
	now := clock.Start
	c.OnCongestion(Congestion{Now: now, Kind: Loss}) // cwnd 5, ssthresh 5
	if c.CwndPackets() != 5 || c.SsthreshPackets() != 5 {
		t.Fatalf("after halving: cwnd %d ssthresh %d, want 5 5", c.CwndPackets(), c.SsthreshPackets())
	}
	// In congestion avoidance cwnd grows by one per cwnd acknowledged packets.
	ack(c, now, 4, 10*time.Millisecond)
	if got := c.CwndPackets(); got != 5 {
		t.Errorf("after 4 of 5 acked: cwnd got %v, want 5", got)
	}
	ack(c, now, 1, 10*time.Millisecond)
	if got := c.CwndPackets(); got != 6 {
		t.Errorf("after a window: cwnd got %v, want 6", got)
	}
	ack(c, now, 6, 10*time.Millisecond)
	if got := c.CwndPackets(); got != 7 {
		t.Errorf("after another window: cwnd got %v, want 7", got)
	}
}

func TestCCID2OneHalvingPerRTT(t *testing.T) {
	c := newCCID2(t, "ccid2:iw=32")
	srtt := 100 * time.Millisecond
	now := clock.Start
	ack(c, now, 0, srtt)
	c.OnAck(Ack{Now: now, SRTT: srtt})
	steps := []struct {
		at   time.Duration
		kind CongestionKind
		want int
	}{
		{0, Loss, 16},                     // halves
		{10 * time.Millisecond, Loss, 16}, // same RTT: ignored
		{99 * time.Millisecond, ECN, 16},  // same RTT (ECN too): ignored
		{100 * time.Millisecond, ECN, 8},  // one RTT later: halves
		{250 * time.Millisecond, Loss, 4},
		{400 * time.Millisecond, Loss, 2},
		{600 * time.Millisecond, Loss, 1},
		{800 * time.Millisecond, Loss, 1}, // never below 1
	}
	for _, s := range steps {
		c.OnCongestion(Congestion{Now: now.Add(s.at), Kind: s.kind})
		if got := c.CwndPackets(); got != s.want {
			t.Errorf("congestion at +%v: cwnd got %v, want %v", s.at, got, s.want)
		}
		if got, want := c.SsthreshPackets(), max(c.CwndPackets(), 2); got != want {
			t.Errorf("congestion at +%v: ssthresh got %v, want %v", s.at, got, want)
		}
	}
}

func TestCCID2TimeoutResetsCwndAndAckRatio(t *testing.T) {
	c := newCCID2(t, "ccid2:iw=20,ackratio=4")
	now := clock.Start
	if got := c.AckRatio(); got != 4 {
		t.Fatalf("ack ratio got %v, want 4", got)
	}
	c.OnRTO(now, 20*ccid2S)
	if c.CwndPackets() != 1 || c.SsthreshPackets() != 10 || c.AckRatio() != 1 {
		t.Errorf("after RTO: cwnd %d ssthresh %d R %d, want 1 10 1", c.CwndPackets(), c.SsthreshPackets(), c.AckRatio())
	}
	if c.State().Phase != PhaseAfterRTO {
		t.Errorf("phase got %v, want %v", c.State().Phase, PhaseAfterRTO)
	}
	// A backed-off second timeout keeps ssthresh (cwnd is already 1).
	c.OnRTO(now.Add(time.Second), ccid2S)
	if c.SsthreshPackets() != 10 {
		t.Errorf("after 2nd RTO: ssthresh got %v, want 10", c.SsthreshPackets())
	}
	// Slow start back: R rises with cwnd but stays <= ceil(cwnd/2).
	for i := 0; i < 12; i++ {
		ack(c, now, 1, 10*time.Millisecond)
		if r, lim := c.AckRatio(), (c.CwndPackets()+1)/2; r > lim || r < 1 {
			t.Errorf("cwnd %d: R got %v, want 1..%v", c.CwndPackets(), r, lim)
		}
	}
	if got := c.AckRatio(); got != 4 {
		t.Errorf("after recovery to cwnd %d: R got %v, want the configured 4", c.CwndPackets(), got)
	}
}

func TestCCID2AckRatioCappedByCwnd(t *testing.T) {
	for _, tc := range []struct {
		spec string
		want int
	}{
		{"ccid2:iw=2,ackratio=8", 1}, // ceil(2/2) = 1
		{"ccid2:iw=3,ackratio=8", 2}, // ceil(3/2) = 2
		{"ccid2:iw=4,ackratio=8", 2},
		{"ccid2:iw=9,ackratio=8", 5},
		{"ccid2:iw=40,ackratio=8", 8},
		{"ccid2:iw=40", 2},
		{"ccid2:iw=40,ackratio=1", 1},
	} {
		if got := newCCID2(t, tc.spec).AckRatio(); got != tc.want {
			t.Errorf("%s: R got %v, want %v", tc.spec, got, tc.want)
		}
	}
}

func TestCCID2AckRatioAdapts(t *testing.T) {
	srtt := 50 * time.Millisecond
	c := newCCID2(t, "ccid2:iw=40,ackratio=2")
	now := clock.Start
	c.OnAck(Ack{Now: now, SRTT: srtt})
	c.OnAckCongestion(now)
	if got := c.AckRatio(); got != 4 {
		t.Errorf("after ack loss: R got %v, want 4 (doubled)", got)
	}
	c.OnAckCongestion(now.Add(srtt / 2))
	if got := c.AckRatio(); got != 4 {
		t.Errorf("second ack loss in the same RTT: R got %v, want 4", got)
	}
	c.OnAckCongestion(now.Add(srtt))
	if got := c.AckRatio(); got != 8 {
		t.Errorf("ack loss one RTT later: R got %v, want 8", got)
	}
	// Decrease by one after cwnd/(R^2-R) clean windows: cwnd 40, R 8:
	// 40/56 -> at least 1 window.
	c.OnCongestion(Congestion{Now: now.Add(10 * srtt), Kind: Loss}) // cwnd 20: R stays 8 (<= 10)
	cw := c.CwndPackets()
	if cw != 20 || c.AckRatio() != 8 {
		t.Fatalf("after halving: cwnd %d R %d, want 20 8", cw, c.AckRatio())
	}
	ack(c, now, cw-1, srtt)
	if got := c.AckRatio(); got != 8 {
		t.Errorf("before a full clean window: R got %v, want 8", got)
	}
	ack(c, now, 1, srtt)
	if got := c.AckRatio(); got != 7 {
		t.Errorf("after one clean window: R got %v, want 7", got)
	}
	// R never decreases below the configured value.
	for i := 0; i < 200; i++ {
		ack(c, now, c.CwndPackets(), srtt)
	}
	if got := c.AckRatio(); got != 2 {
		t.Errorf("after many clean windows: R got %v, want the configured 2", got)
	}
}

func TestCCID2AckRatioDecreaseNeedsWindows(t *testing.T) {
	// cwnd 60, R 3: cwnd/(R^2-R) = 60/6 = 10 clean windows for one step.
	srtt := 50 * time.Millisecond
	c := newCCID2(t, "ccid2:iw=60,ackratio=2")
	c.OnAck(Ack{Now: clock.Start, SRTT: srtt})
	c.target = 3
	c.clampRatio()
	c.OnCongestion(Congestion{Now: clock.Start, Kind: Loss})
	c.cwnd, c.ssthresh = 60, 1000 // restore the window; keep R 3
	for w := 1; w <= 10; w++ {
		c.OnAck(Ack{Now: clock.Start, AckedPackets: 60, AppLimited: true, SRTT: srtt})
		want := 3
		if w == 10 {
			want = 2
		}
		if got := c.AckRatio(); got != want {
			t.Errorf("after %d clean windows: R got %v, want %v", w, got, want)
		}
	}
}

func TestCCID2NoAdapt(t *testing.T) {
	c := newCCID2(t, "ccid2:iw=40,ackratio=3,adapt=false")
	c.OnAckCongestion(clock.Start)
	if got := c.AckRatio(); got != 3 {
		t.Errorf("adapt=false, ack loss: R got %v, want 3", got)
	}
}

func TestCCID2Params(t *testing.T) {
	for _, bad := range []string{"ccid2:ackratio=0", "ccid2:iw=-1", "ccid2:bogus=1"} {
		if _, err := NewDgram(bad, Env{MSS: ccid2S}); err == nil {
			t.Errorf("%s: got nil error, want one", bad)
		}
	}
	// Registry controllers are reachable through NewDgram too.
	c, err := NewDgram("reno", Env{MSS: ccid2S})
	if err != nil || c.Name() != "reno" {
		t.Errorf("NewDgram(reno): got %v, %v", c, err)
	}
	if _, ok := Registry.Lookup("ccid2"); ok {
		t.Errorf("ccid2 is in Registry; want it only in DgramRegistry")
	}
}

// TestCCID2SetMSS: a larger packet size scales cwnd and ssthresh down so
// the window in bytes does not grow (RFC 8899 §4.4); a smaller one keeps
// the packet counts (the bytes fall); the Ack Ratio stays within
// ceil(cwnd/2).
func TestCCID2SetMSS(t *testing.T) {
	for _, tc := range []struct {
		name           string
		cwnd, ssthresh int // packets of ccid2S bytes before
		mss            int
		wantCwnd       int // packets after
		wantSsthresh   int
	}{
		{"raise 4x", 40, 20, 4 * ccid2S, 10, 5},
		{"raise past the window", 3, 2, 9 * ccid2S, 1, 2},
		{"raise, not a multiple", 10, 10, 3 * ccid2S, 3, 3},
		{"fall keeps packets", 40, 20, ccid2S / 2, 40, 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCCID2(t, "ccid2:ackratio=8")
			c.cwnd, c.ssthresh = tc.cwnd, tc.ssthresh
			c.clampRatio()
			before := c.Cwnd()
			if !c.SetMSS(tc.mss) {
				t.Fatalf("SetMSS(%d) refused", tc.mss)
			}
			if got := c.CwndPackets(); got != tc.wantCwnd {
				t.Errorf("cwnd = %d packets, want %d", got, tc.wantCwnd)
			}
			if got := c.SsthreshPackets(); got != tc.wantSsthresh {
				t.Errorf("ssthresh = %d packets, want %d", got, tc.wantSsthresh)
			}
			if got := c.Cwnd(); got > before && tc.wantCwnd > 1 {
				t.Errorf("cwnd grew from %d to %d bytes", before, got)
			}
			if r := c.AckRatio(); r > (c.CwndPackets()+1)/2 && r > 1 {
				t.Errorf("Ack Ratio %d above ceil(cwnd/2) for cwnd %d", r, c.CwndPackets())
			}
		})
	}
	c := newCCID2(t, "ccid2")
	if got, want := c.SsthreshPackets(), InfiniteSsthresh/ccid2S; got != want {
		t.Fatalf("initial ssthresh = %d, want %d", got, want)
	}
	c.SetMSS(2 * ccid2S)
	if got, want := c.Ssthresh(), InfiniteSsthresh/(2*ccid2S)*(2*ccid2S); got != want {
		t.Errorf("unset ssthresh after a raise = %d bytes, want %d (still unset)", got, want)
	}
	if c.SetMSS(0) || c.SetMSS(MaxSegment+1) {
		t.Errorf("SetMSS accepted an impossible size")
	}
}
