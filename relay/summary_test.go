package relay

import (
	"regexp"
	"strconv"
	"testing"
	"time"

	"cclab/ecn"
	"cclab/internal/testenv"
	"cclab/link"
)

// TestSummaryActivePeriod: the summary rates a burst over the active
// period (first datagram read to last one out), not over the relay's whole
// lifetime: idle time before and after the traffic does not dilute it.
func TestSummaryActivePeriod(t *testing.T) {
	tn := udpNet()
	dst := newSink(t, tn, false)
	var sum testenv.Buffer
	cfg := Config{Target: dst.conn.LocalAddr().String(), Summary: &sum,
		Hops: [2][]link.Config{{mkHop(t, "rate=8Mbit")}, {mkHop(t, "delay=0")}}}
	cfg.Listen = tn.host + ":0"
	cfg.Network = tn.network()
	r, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r.Start()
	idle := 300 * time.Millisecond
	time.Sleep(idle) // idle before: part of the lifetime, not of the active period
	c := dial(t, tn, r.Addr())
	const n = 100
	if _, err := c.WriteBatch(datagrams(0, n, 1000, ecn.NotECT)); err != nil {
		t.Fatal(err)
	}
	if got := dst.waitFor(n, 10*time.Second); len(got) != n {
		t.Fatalf("sink got %d datagrams, want %d", len(got), n)
	}
	time.Sleep(idle) // and after
	r.Close()
	out := sum.String()
	t.Log(out)
	m := regexp.MustCompile(`summary after ([0-9.]+)s \(active ([0-9.]+)s, from ([0-9.]+)s to ([0-9.]+)s\)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("summary %q lacks the active period", out)
	}
	life, _ := strconv.ParseFloat(m[1], 64)
	active, _ := strconv.ParseFloat(m[2], 64)
	from, _ := strconv.ParseFloat(m[3], 64)
	if from < idle.Seconds() || life-active < 2*idle.Seconds() || active <= 0 {
		t.Errorf("lifetime %.3fs, active %.3fs from %.3fs: want the active period to start after the %v idle start and to leave out both idle periods", life, active, from, idle)
	}
	// 100 × 1000 B at 8 Mbit/s take ≥ 0.1 s; the mean rate over the
	// active period is then at most the link's 8 Mbit/s, and more than the
	// lifetime's dilution would give.
	rm := regexp.MustCompile(`hop 0: arrivals \d+, departures \d+ \([^,]+, ([0-9.]+)([kMG]?)bit/s mean\)`).FindStringSubmatch(out)
	if rm == nil {
		t.Fatalf("summary %q lacks hop 0's mean rate", out)
	}
	rate, _ := strconv.ParseFloat(rm[1], 64)
	rate *= map[string]float64{"": 1, "k": 1e3, "M": 1e6, "G": 1e9}[rm[2]]
	diluted := float64(n*1000*8) / life
	if rate > 8.01e6 || rate <= diluted {
		t.Errorf("hop 0 mean rate %.0f bit/s: want at most the link's 8 Mbit/s and above the lifetime-diluted %.0f", rate, diluted)
	}
}
