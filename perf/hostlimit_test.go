package perf

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"cclab/internal/hostlimit"
	"cclab/transport/udp"
)

// TestHostReportStarvedSender: a sender whose socket driver is made to
// look starved (udp.Config.InjectTimerLate, every timed wake-up late)
// reports itself host-limited by late timers in its result and its JSON;
// the receiver reports the flow it received with its own role.
func TestHostReportStarvedSender(t *testing.T) {
	srv, flows := startServer(t, ServerConfig{})
	res, err := Run(context.Background(), ClientConfig{Addr: srv.Addr().String(), Bytes: 1 << 20,
		Driver: udp.Config{InjectTimerLate: 2 * hostlimit.LateLimit}})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	h := res.End.Host
	if h == nil || h.Role != RoleSender || h.Sent == 0 || h.Received == 0 || h.Usage.Seconds <= 0 {
		t.Fatalf("host report %+v: want the sender's, with datagrams and a duration", h)
	}
	if h.Timers.Late != h.Timers.Count {
		t.Errorf("late wake-ups %d of %d: want all", h.Timers.Late, h.Timers.Count)
	}
	b, _ := json.Marshal(res)
	if !strings.Contains(string(b), `"host_limit":{"role":"sender"`) {
		t.Errorf("JSON has no host_limit object: %s", b)
	}
	got := waitFlows(t, srv, flows, 1)
	if r := got[0].Host; r == nil || r.Role != RoleReceiver || r.Received == 0 {
		t.Errorf("receiver's host report %+v: want role receiver with datagrams received", r)
	} else if r.MinRTT <= 0 || r.ReadLate.Count == 0 {
		t.Errorf("receiver's min RTT %v, read lateness %+v: want the flow's min RTT and its reads measured (read_late)", r.MinRTT, r.ReadLate)
	}
	if h.MinRTT <= 0 || h.ReadLate.Count == 0 {
		t.Errorf("sender's min RTT %v, read lateness %+v: want the flow's min RTT and its reads measured (read_late)", h.MinRTT, h.ReadLate)
	}
}

// TestHostReportStarvedDgram: a paced datagram flow (-cc none -rate, of
// fixed-size datagrams: -size, no size discovery) wakes its timer for
// every datagram; with every wake-up made late the sender
// is marked host-limited by late timers, and says why.
func TestHostReportStarvedDgram(t *testing.T) {
	srv, _ := startServer(t, ServerConfig{})
	res, err := RunDgram(context.Background(), DgramClientConfig{Addr: srv.Addr().String(), Duration: 300 * time.Millisecond,
		CC: "none", Rate: 2e6, Size: 1200, Driver: udp.Config{InjectTimerLate: 2 * hostlimit.LateLimit}})
	if err != nil {
		t.Fatalf("RunDgram: %v", err)
	}
	h := res.Host
	if h == nil || !h.Uncontrolled || h.Generated == 0 {
		t.Fatalf("host report %+v: want the uncontrolled sender's, with datagrams generated", h)
	}
	if h.Timers.Count < hostlimit.MinLate || !strings.Contains(h.Codes(), hostlimit.CodeTimerLate) {
		t.Errorf("codes %q with %d late wake-ups of %d: want %s", h.Codes(), h.Timers.Late, h.Timers.Count, hostlimit.CodeTimerLate)
	}
	if w := h.Warning(); !strings.Contains(w, "timer_late: 100.0% of") {
		t.Errorf("warning %q: want the late fraction", w)
	}
}

func TestMergeHost(t *testing.T) {
	a := &hostlimit.Report{Role: RoleSender, Usage: hostlimit.Usage{Seconds: 2, CPU: 0.1},
		Timers: hostlimit.Late{Count: 100, Late: 1, Max: time.Millisecond}, Sent: 10}
	b := &hostlimit.Report{Role: RoleSender, Usage: hostlimit.Usage{Seconds: 3, CPU: 0.2},
		Timers: hostlimit.Late{Count: 100, Late: 4, Max: 30 * time.Millisecond}, Sent: 20}
	a.Judge()
	b.Judge()
	m := mergeHost([]*hostlimit.Report{nil, a, b})
	if m.Timers.Count != 200 || m.Timers.Late != 5 || m.Timers.Max != 30*time.Millisecond || m.Sent != 30 || m.Usage.Seconds != 3 {
		t.Errorf("merged %+v: want summed counts, the larger max, the longer usage", m)
	}
	if !m.Limited || m.Codes() != hostlimit.CodeTimerLate {
		t.Errorf("merged codes %q: want %s (5 of 200 late)", m.Codes(), hostlimit.CodeTimerLate)
	}
	if a.Timers.Count != 100 {
		t.Errorf("merging changed a flow's report: %+v", a)
	}
	if mergeHost([]*hostlimit.Report{nil}) != nil {
		t.Errorf("merging no reports: want nil")
	}
}

// TestWindowMax: a flow's report carries the endpoint's maximum lateness
// only when the flow raised it, never an earlier flow's.
func TestWindowMax(t *testing.T) {
	for _, tc := range []struct{ before, after, want time.Duration }{
		{0, 0, 0},
		{0, 5 * time.Millisecond, 5 * time.Millisecond},
		{30 * time.Millisecond, 30 * time.Millisecond, 0}, // an earlier flow's
		{30 * time.Millisecond, 40 * time.Millisecond, 40 * time.Millisecond},
	} {
		if got := windowMax(tc.before, tc.after); got != tc.want {
			t.Errorf("windowMax(%v, %v) = %v, want %v", tc.before, tc.after, got, tc.want)
		}
	}
}
