package sim

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cclab/clock"
	"cclab/traffic"
)

// TestParkingLot: in a 2-hop chain with one greedy Reno flow per hop of cross
// traffic, every hop is saturated and the end-to-end flow (two congested
// hops, twice the RTT) gets less than each cross flow (Floyd 1991, the
// parking-lot unfairness against multiple-congested-gateway connections).
func TestParkingLot(t *testing.T) {
	sc := Scenario{Topology: "chain", Hops: 2, Flows: 1, Cross: 1, Rate: 10e6, RTT: 60 * time.Millisecond,
		Buffer: "1bdp", Duration: 40 * time.Second, Warmup: 10 * time.Second, Seed: 1}
	_, s := run(t, sc)
	if len(s.Flows) != 3 {
		t.Fatalf("flows got %d, want 3 (1 end-to-end + 2 cross)", len(s.Flows))
	}
	for _, l := range s.Links[:2] {
		if l.Utilization < 0.95 {
			t.Errorf("hop %s utilization got %.3f, want >= 0.95", l.Name, l.Utilization)
		}
	}
	e2e := s.Flows[0].Throughput
	for _, c := range s.Flows[1:] {
		if e2e >= c.Throughput {
			t.Errorf("end-to-end goodput %.0f >= cross flow %s goodput %.0f, want less", e2e, c.Name, c.Throughput)
		}
	}
	if s.Flows[0].MinRTTms < 60 || s.Flows[1].MinRTTms > 40 {
		t.Errorf("min RTTs got e2e %.1f ms, cross %.1f ms, want >= 60 and about 30", s.Flows[0].MinRTTms, s.Flows[1].MinRTTms)
	}
}

// TestRTTUnfairness: with per-flow access delays, the Reno flow with the
// shorter RTT gets the larger share (window growth of one MSS per RTT).
func TestRTTUnfairness(t *testing.T) {
	sc := Scenario{Flows: 2, RTTs: []time.Duration{20 * time.Millisecond, 100 * time.Millisecond}, Rate: 10e6,
		Buffer: "1bdp", Duration: 40 * time.Second, Warmup: 10 * time.Second, Seed: 1}
	_, s := run(t, sc)
	if s.Flows[0].BaseRTTms != 20 || s.Flows[1].BaseRTTms != 100 {
		t.Fatalf("base RTTs got %v and %v, want 20 and 100", s.Flows[0].BaseRTTms, s.Flows[1].BaseRTTms)
	}
	if s.Flows[0].Throughput <= 1.5*s.Flows[1].Throughput {
		t.Errorf("goodputs got %.0f (20 ms) and %.0f (100 ms), want the short-RTT flow well ahead", s.Flows[0].Throughput, s.Flows[1].Throughput)
	}
}

func TestSeriesAndQlog(t *testing.T) {
	dir := t.TempDir()
	// SACK recovery repairs the slow-start overshoot within about an RTT, so
	// the link is busy from the first second on (NewReno, which ignores
	// SACK, repairs one hole per RTT and leaves the link idle longer).
	sc := Scenario{Flows: 2, Rate: 10e6, RTT: 40 * time.Millisecond, Duration: 5 * time.Second, Seed: 1,
		Interval: 100 * time.Millisecond, QlogDir: dir, Recovery: "sack"}
	r, s := run(t, sc)
	if r.Series == nil || len(r.Series.Flows) != 2 || len(r.Series.Links) != 2 {
		t.Fatalf("series missing: %+v", r.Series)
	}
	if n := len(r.Series.Links[0]); n != 50 {
		t.Errorf("link samples got %d, want 50 (5 s / 100 ms)", n)
	}
	var sum float64
	for _, p := range r.Series.Flows[0][10:] {
		sum += p.Throughput
		if p.Cwnd <= 0 || p.SRTT < 40 {
			t.Errorf("flow sample %+v: want cwnd > 0 and srtt >= 40 ms", p)
			break
		}
	}
	// The mean of the per-interval goodputs over t in [1 s, 5 s] is the flow's goodput over that time.
	if mean := sum / 40; mean < 0.5*s.Flows[0].Throughput || mean > 1.5*s.Flows[0].Throughput {
		t.Errorf("series goodput mean %.0f, summary %.0f: inconsistent", mean, s.Flows[0].Throughput)
	}
	for i, p := range r.Series.Links[0][10:] {
		if p.Utilization < 0.5 || p.Utilization > 1.02 || p.QueueLen > 41 {
			t.Errorf("link sample %d %+v: want utilization in (0.5, 1.02] (busy time is credited at service completion), queue <= 1 BDP (41 packets of 1228 bytes)", i, p)
			break
		}
	}
	var buf bytes.Buffer
	if err := r.Series.WriteCSV(&buf); err != nil || strings.Count(buf.String(), "\n") != 1+2*50+2*50 {
		t.Errorf("CSV: err %v, %d lines, want 201", err, strings.Count(buf.String(), "\n"))
	}
	for _, name := range []string{"flow0.qlog", "flow1.qlog"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(b, []byte{0x1e}) || !bytes.Contains(b, []byte("recovery:metrics_updated")) {
			t.Errorf("%s: not a JSON-SEQ qlog with metrics_updated (%d bytes)", name, len(b))
		}
	}
}

// TestLayeredOverBottleneck: a layered source sharing a 1 Mbit/s bottleneck
// joins layers until it sees loss and settles below the capacity.
func TestLayeredOverBottleneck(t *testing.T) {
	e := NewEngine()
	db, err := NewDumbbell(e, DumbbellConfig{Flows: 1, Rate: 1e6, Delay: 20 * time.Millisecond, Queue: "droptail:20p"}, Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	s := New(db.Net, nil)
	g, err := traffic.New("layered:layers=6,base=64kbit,factor=2,join=2s,detect=1s", traffic.Env{Rand: traffic.Stream(1, "l")})
	if err != nil {
		t.Fatal(err)
	}
	l := g.(*traffic.Layered)
	s.AddUDPFlow("layered", db.Senders[0], db.Receivers[0], 7000, l, clock.Start)
	maxLevel := 0
	for range 600 {
		e.RunFor(time.Second)
		maxLevel = max(maxLevel, l.Level())
	}
	// Cumulative rates: 64, 192, 448, 960, 1984 kbit/s; the 5th layer overloads the link.
	if maxLevel < 4 {
		t.Errorf("highest level got %d, want >= 4 (960 kbit/s fits)", maxLevel)
	}
	if l.Level() > 4 {
		t.Errorf("final level got %d (%.0f bit/s), want <= 4 on a 1 Mbit/s link", l.Level(), l.Rate())
	}
	if s.UDP[0].Stats.Lost == 0 {
		t.Errorf("no loss seen: join experiments never failed")
	}
}

// TestECN: with ECN-capable flows and a marking RED queue the bottleneck
// marks instead of dropping (after the slow-start overshoot, which overflows
// RED's maximum threshold), and the senders react to the echoes.
func TestECN(t *testing.T) {
	sc := Scenario{Flows: 4, Rate: 20e6, RTT: 40 * time.Millisecond, Queue: "red:min=5,max=15,maxp=0.1,ecn",
		Buffer: "1bdp", ECN: true, Duration: 20 * time.Second, Warmup: 5 * time.Second, Seed: 1}
	_, s := run(t, sc)
	if s.Links[0].Marks == 0 || s.Links[0].Drops != 0 {
		t.Errorf("bottleneck marks %d drops %d, want marks > 0 and no drops", s.Links[0].Marks, s.Links[0].Drops)
	}
	for _, f := range s.Flows {
		if f.Signals == 0 || f.Retransmits != 0 {
			t.Errorf("%s: congestion signals %d retransmits %d, want signals > 0 and no retransmissions", f.Name, f.Signals, f.Retransmits)
		}
	}
	if s.Links[0].MeanQDelayms > 10 {
		t.Errorf("mean queueing delay %.1f ms, want RED to keep it near its thresholds (< 10 ms)", s.Links[0].MeanQDelayms)
	}
}

// TestUntilDone: N-byte transfers end the run early; each completion time is
// at least the transfer's serialization time at the bottleneck plus the
// handshake and one RTT.
func TestUntilDone(t *testing.T) {
	sc := Scenario{Flows: 2, Rate: 10e6, RTT: 40 * time.Millisecond, Traffic: "greedy:1MB", UntilDone: true,
		Duration: 60 * time.Second, Seed: 1}
	r, s := run(t, sc)
	if !r.Sim.AllFinished() || s.Duration >= 60 {
		t.Fatalf("finished %v after %.1f s, want all done before 60 s", r.Sim.AllFinished(), s.Duration)
	}
	for _, f := range s.Flows {
		min := 1e6*8/10e6 + 0.08
		if f.Completed != 1 || f.MeanFCTs < min || f.MeanFCTs > s.Duration {
			t.Errorf("%s: completed %d, FCT %.3f s; want 1 transfer, FCT in [%.2f, %.2f] s", f.Name, f.Completed, f.MeanFCTs, min, s.Duration)
		}
	}
}
