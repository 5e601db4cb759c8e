package hostlimit

import (
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestJudge: each check fires just above its threshold and not at it.
func TestJudge(t *testing.T) {
	late := func(count, n uint64) Late { return Late{Count: count, Late: n, Max: 20 * time.Millisecond} }
	idle := Usage{Seconds: 10, CPU: 1, RunWait: 0.5, Pressure: 0.9}
	cases := []struct {
		name string
		r    Report
		want string // codes, comma-separated
	}{
		{"clean", Report{Usage: idle, Timers: late(1000, 10), Writes: late(1000, 10), Sent: 1000, Received: 1000}, ""},
		{"timers just late", Report{Usage: idle, Timers: late(1000, 11)}, CodeTimerLate},
		{"few late in a short run", Report{Usage: idle, Timers: late(100, 2)}, ""},
		{"relay late", Report{Usage: idle, Writes: late(10000, 500)}, CodeRelayLate},
		{"cpu busy", Report{Usage: Usage{Seconds: 10, CPU: 9, RunWait: 0}}, CodeCPUBusy},
		{"cpu just under", Report{Usage: Usage{Seconds: 10, CPU: 8.9, RunWait: 0}}, ""},
		{"busy poll on purpose", Report{Usage: Usage{Seconds: 10, CPU: 10}, BusyPoll: true}, ""},
		{"starved", Report{Usage: Usage{Seconds: 10, CPU: 1, RunWait: 10.5}}, CodeRunWait},
		{"unknown usage", Report{Usage: Usage{Seconds: 10, CPU: -1, RunWait: -1, Pressure: -1}}, ""},
		{"send queue without cc", Report{Usage: idle, Generated: 2110, QueueDropped: 814, Uncontrolled: true}, CodeSendQueue},
		{"send queue under a controller", Report{Usage: idle, Generated: 2110, QueueDropped: 814}, ""},
		{"send buffer", Report{Usage: idle, Sent: 9980, SendErrors: 20}, CodeSendBuf},
		{"send errors at the limit", Report{Usage: idle, Sent: 9990, SendErrors: 10}, ""},
		{"receive drops", Report{Usage: idle, Received: 9000, RecvDropped: 1000}, CodeRecvQueue},
		{"read stalls", Report{Usage: idle, ReadStalls: &Stalls{Limit: 12 * time.Millisecond, Reads: 5000, Stalls: MinLate, Max: 30 * time.Millisecond}}, CodeReadStall},
		{"read stalls too few", Report{Usage: idle, ReadStalls: &Stalls{Limit: 12 * time.Millisecond, Reads: 5000, Stalls: MinLate - 1, Max: 30 * time.Millisecond}}, ""},
		{"read stalls without a limit", Report{Usage: idle, ReadStalls: &Stalls{Reads: 5000, Stalls: 9, Max: 30 * time.Millisecond}}, ""},
		{"reads late in a long flow", Report{Usage: idle, ReadLate: late(1000, 11)}, CodeReadLate},
		{"reads late, too few", Report{Usage: idle, ReadLate: late(1000, 10)}, ""},
		// One stall longer than the min RTT in a short flow.
		{"short flow, one stall", Report{Usage: idle, MinRTT: 12 * time.Millisecond, ReadLate: Late{Count: 130, Late: 1, Max: 40 * time.Millisecond}}, CodeReadLate},
		{"short flow, stall under the min RTT", Report{Usage: idle, MinRTT: 50 * time.Millisecond, ReadLate: Late{Count: 130, Late: 1, Max: 40 * time.Millisecond}}, ""},
		{"short flow, min RTT unknown", Report{Usage: idle, ReadLate: Late{Count: 130, Late: 1, Max: 40 * time.Millisecond}}, ""},
		{"short flow, stall under LateLimit", Report{Usage: idle, MinRTT: time.Millisecond, ReadLate: Late{Count: 130, Max: LateLimit}}, ""},
		{"one stall at the short-flow limit", Report{Usage: idle, MinRTT: 12 * time.Millisecond, ReadLate: Late{Count: ShortReads, Late: 1, Max: 40 * time.Millisecond}}, CodeReadLate},
		{"one stall in a long flow", Report{Usage: idle, MinRTT: 12 * time.Millisecond, ReadLate: Late{Count: ShortReads + 1, Late: 1, Max: 40 * time.Millisecond}}, ""},
		{"several", Report{Usage: Usage{Seconds: 1, CPU: 0.95, RunWait: 0}, Timers: late(100, 50)}, CodeTimerLate + "," + CodeCPUBusy},
	}
	for _, c := range cases {
		r := c.r
		r.Role = "sender"
		r.Judge()
		if got := r.Codes(); got != c.want {
			t.Errorf("%s: codes %q, want %q (reasons %v)", c.name, got, c.want, r.Reasons)
		}
		if got, want := r.Limited, c.want != ""; got != want {
			t.Errorf("%s: limited %v, want %v", c.name, got, want)
		}
		w := r.Warning()
		if (w != "") != r.Limited {
			t.Errorf("%s: warning %q with limited %v", c.name, w, r.Limited)
		}
		if r.Limited && (!strings.HasPrefix(w, "warning: host-limited run (sender): ") || strings.Contains(w, "\n")) {
			t.Errorf("%s: warning %q: want one line naming the role", c.name, w)
		}
	}
	// Judging twice gives the same reasons, not twice as many.
	r := Report{Usage: idle, Timers: late(100, 50)}
	r.Judge()
	r.Judge()
	if len(r.Reasons) != 1 {
		t.Errorf("judged twice: %d reasons, want 1", len(r.Reasons))
	}
	var nilReport *Report
	if w := nilReport.Warning(); w != "" {
		t.Errorf("nil report's warning: %q, want none", w)
	}
}

func TestLateAdd(t *testing.T) {
	var l Late
	for _, d := range []time.Duration{-time.Millisecond, 0, LateLimit, LateLimit + 1, 50 * time.Millisecond} {
		l.Add(d)
	}
	if l.Count != 5 || l.Late != 2 || l.Max != 50*time.Millisecond {
		t.Errorf("got %+v, want 5 counted, 2 later than %v, max 50ms", l, LateLimit)
	}
	if got, want := l.Fraction(), 0.4; got != want {
		t.Errorf("fraction %v, want %v", got, want)
	}
	if got := (Late{}).Fraction(); got != 0 {
		t.Errorf("empty fraction %v, want 0", got)
	}
}

func TestStalls(t *testing.T) {
	s := Stalls{Limit: 12 * time.Millisecond}
	for _, d := range []time.Duration{0, time.Millisecond, 12 * time.Millisecond, 12*time.Millisecond + 1, 40 * time.Millisecond} {
		s.Add(d)
	}
	if got, want := s, (Stalls{Limit: 12 * time.Millisecond, Reads: 5, Stalls: 2, Max: 40 * time.Millisecond}); got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	cases := []struct {
		a, b Stalls
		want Stalls
	}{
		{Stalls{}, Stalls{Limit: 5, Reads: 2, Stalls: 1, Max: 9}, Stalls{Limit: 5, Reads: 2, Stalls: 1, Max: 9}},
		{Stalls{Limit: 5, Reads: 2, Stalls: 1, Max: 9}, Stalls{Limit: 3, Reads: 1, Max: 4}, Stalls{Limit: 3, Reads: 3, Stalls: 1, Max: 9}},
		{Stalls{Limit: 3, Reads: 2}, Stalls{Reads: 1, Max: 4}, Stalls{Limit: 3, Reads: 3, Max: 4}},
	}
	for _, c := range cases {
		got := c.a
		got.Merge(c.b)
		if got != c.want {
			t.Errorf("%+v merged with %+v: got %+v, want %+v", c.a, c.b, got, c.want)
		}
	}
}

func TestParse(t *testing.T) {
	if got, ok := parseSchedstat("4397460 769129 2\n"); !ok || got != 769129 {
		t.Errorf("parseSchedstat: got %v %v, want 769129ns", got, ok)
	}
	for _, bad := range []string{"", "12", "1 x 3", "1 -5 3"} {
		if _, ok := parseSchedstat(bad); ok {
			t.Errorf("parseSchedstat(%q): accepted", bad)
		}
	}
	psi := "some avg10=79.39 avg60=42.95 avg300=30.47 total=177194748\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
	if got, want := parsePressure(psi), 177194748*time.Microsecond; got != want {
		t.Errorf("parsePressure: got %v, want %v", got, want)
	}
	for _, bad := range []string{"", "full avg10=0 total=5", "some avg10=1 total=x"} {
		if got := parsePressure(bad); got != -1 {
			t.Errorf("parsePressure(%q) = %v, want -1", bad, got)
		}
	}
}

func TestSince(t *testing.T) {
	a := Snapshot{wall: time.Unix(100, 0), cpu: time.Second, runWait: 2 * time.Second, pressure: 0}
	b := Snapshot{wall: time.Unix(104, 0), cpu: 3 * time.Second, runWait: 3 * time.Second, pressure: 2 * time.Second}
	u := b.Since(a)
	if u.Seconds != 4 || u.CPU != 2 || u.RunWait != 1 || u.Pressure != 0.5 {
		t.Errorf("got %+v, want 4 s, 2 s CPU, 1 s wait, pressure 0.5", u)
	}
	if u.Cores() != 0.5 || u.RunWaitPerSecond() != 0.25 {
		t.Errorf("cores %v wait/s %v, want 0.5 and 0.25", u.Cores(), u.RunWaitPerSecond())
	}
	b.cpu, b.runWait, b.pressure = -1, -1, -1
	if u := b.Since(a); u.CPU != -1 || u.RunWait != -1 || u.Pressure != -1 || u.Cores() != 0 {
		t.Errorf("unknown counters: got %+v, want -1 each and 0 cores", u)
	}
}

// TestTake reads the real counters: CPU grows with work.
func TestTake(t *testing.T) {
	a := Take()
	x := uint64(1)
	for i := 0; i < 20_000_000; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	u := Take().Since(a)
	if x == 0 {
		t.Log(x)
	}
	if runtime.GOOS != "linux" {
		t.Skipf("the run-queue wait and pressure are read on Linux only, not %s", runtime.GOOS)
	}
	if u.CPU <= 0 {
		t.Errorf("CPU after work: %v s, want > 0", u.CPU)
	}
	if u.RunWait < 0 {
		t.Errorf("run-queue wait unknown on Linux (/proc/self/task/*/schedstat)")
	}
	t.Logf("usage %+v", u)
}
