package sim

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"cclab/clock"
	"cclab/internal/docgen"
	"cclab/traffic"
	"cclab/transport"
)

// shareConfig is one CCID2-vs-Reno run over a 10 Mbit/s DropTail dumbbell.
type shareConfig struct {
	BufferPkts int           // bottleneck DropTail limit, packets
	Delay      time.Duration // bottleneck one-way propagation delay (base RTT = 2x)
	CCIDFirst  bool          // the CCID2 flow starts first (else Reno does)
	Gap        time.Duration // the second flow starts this much later
	Duration   time.Duration // total simulated time
	Warmup     time.Duration // excluded from the throughput, counted from the second flow's start
	Seed       uint64
}

// shareResult holds the goodputs, bits/s, over two windows: Early (the
// Warmup right after the second flow starts, while the incumbent holds the
// queue) and Late (from then to the end).
type shareResult struct {
	Early, Late struct{ Reno, CCID2 float64 }
	CCIDLost    uint64 // CCID2 packets the sender declared lost
}

func share(ccid, reno float64) float64 { return ccid / (reno + ccid) }

// runShare runs one CCID2 flow (s0->r0) and one Reno flow (s1->r1), both
// greedy with 1200-byte datagrams, over a 10 Mbit/s bottleneck.
func runShare(t testing.TB, c shareConfig) shareResult {
	e := NewEngine()
	db, err := NewDumbbell(e, DumbbellConfig{Flows: 2, Rate: 10e6, Delay: c.Delay,
		Queue: fmt.Sprintf("droptail:%dp", c.BufferPkts)}, Options{Seed: c.Seed})
	if err != nil {
		t.Fatal(err)
	}
	s := New(db.Net, nil)
	d := NewDgram(s)
	t0 := clock.Start
	ccidStart, renoStart := t0, t0.Add(c.Gap)
	if !c.CCIDFirst {
		ccidStart, renoStart = renoStart, ccidStart
	}
	cf := d.AddFlow("ccid2", db.Senders[0], db.Receivers[0], transport.DgramConfig{CC: "ccid2"}, ccidStart)
	// The Reno flow recovers with newreno, the sender without SACK the
	// table was designed with (an earlier default; with the
	// default prr:lostretx the incumbent's early advantage shows at 10 of
	// the 16 points instead of 15).
	rf := s.AddTCPFlow("reno", db.Senders[1], db.Receivers[1], traffic.NewGreedy(traffic.GreedyConfig{}),
		transport.Config{CC: "reno", Recovery: "newreno"}, renoStart)
	var res shareResult
	e.RunUntilTime(t0.Add(c.Gap))
	cb, rb := cf.Meter.Bytes, renoBytes(rf)
	e.RunUntilTime(t0.Add(c.Gap + c.Warmup))
	secs := c.Warmup.Seconds()
	res.Early.Reno, res.Early.CCID2 = float64(renoBytes(rf)-rb)*8/secs, float64(cf.Meter.Bytes-cb)*8/secs
	cb, rb = cf.Meter.Bytes, renoBytes(rf)
	e.RunUntilTime(t0.Add(c.Duration))
	secs = c.Duration.Seconds() - (c.Gap + c.Warmup).Seconds()
	res.Late.Reno, res.Late.CCID2 = float64(renoBytes(rf)-rb)*8/secs, float64(cf.Meter.Bytes-cb)*8/secs
	if cf.Conn != nil {
		res.CCIDLost = cf.Conn.Stats().Lost
	}
	return res
}

func renoBytes(f *TCPFlow) uint64 {
	if f.Conn() == nil {
		return 0
	}
	return f.Conn().Stats().BytesAcked
}

// shareGrid is the sweep of the acceptance table: buffers of 5-40 packets,
// one-way delays of 5-40 ms, each flow first in turn.
var (
	shareBuffers = []int{5, 10, 20, 40}
	shareDelays  = []time.Duration{5 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond, 40 * time.Millisecond}
)

// TestCCID2RenoShare runs the CCID2-vs-Reno grid and prints the table (go
// test -run TestCCID2RenoShare -v ./sim/). It checks what the ns-2 studies
// of DCCP report, without fixing numbers: the two share the link (it stays
// busy, neither starves), and the split is not a constant of the
// algorithms: it moves with the buffer size and with which flow starts
// first.
func TestCCID2RenoShare(t *testing.T) {
	buffers, delays := shareBuffers, shareDelays
	dur := 60 * time.Second
	if testing.Short() {
		buffers, delays, dur = []int{5, 40}, []time.Duration{20 * time.Millisecond}, 40*time.Second
	}
	var tab strings.Builder
	fmt.Fprintf(&tab, "%-6s %-6s %-6s | %-28s | %-28s\n", "", "", "", "first 10 s after 2nd start", "to the end")
	fmt.Fprintf(&tab, "%-6s %-6s %-6s | %8s %8s %8s | %8s %8s %8s\n", "buffer", "delay", "first", "reno", "ccid2", "ccid2_sh", "reno", "ccid2", "ccid2_sh")
	type key struct{ b, d, o int }
	early, late := map[key]float64{}, map[key]float64{}
	for _, b := range buffers {
		for di, dl := range delays {
			for o, first := range []bool{false, true} {
				r := runShare(t, shareConfig{BufferPkts: b, Delay: dl, CCIDFirst: first, Gap: 10 * time.Second,
					Duration: dur, Warmup: 10 * time.Second, Seed: 1})
				name := "reno"
				if first {
					name = "ccid2"
				}
				k := key{b, di, o}
				early[k], late[k] = share(r.Early.CCID2, r.Early.Reno), share(r.Late.CCID2, r.Late.Reno)
				fmt.Fprintf(&tab, "%-6d %-6v %-6s | %8.2f %8.2f %8.3f | %8.2f %8.2f %8.3f\n", b, dl, name,
					r.Early.Reno/1e6, r.Early.CCID2/1e6, early[k], r.Late.Reno/1e6, r.Late.CCID2/1e6, late[k])
				// The link stays busy (small buffers cost some utilization
				// with Reno-like sawtooths, hence the loose bound) and
				// neither flow is shut out in the long run.
				if tot := r.Late.Reno + r.Late.CCID2; tot < 0.6*10e6 || tot > 10e6 {
					t.Errorf("buffer %d delay %v %s first: total goodput %.2f Mbit/s, want 6..10", b, dl, name, tot/1e6)
				}
				if sh := late[k]; sh < 0.05 || sh > 0.95 {
					t.Errorf("buffer %d delay %v %s first: CCID2 share %.3f: one flow starved", b, dl, name, sh)
				}
			}
		}
	}
	t.Logf("CCID2 vs Reno over 10 Mbit/s DropTail, Mbit/s (second flow starts at 10 s):\n%s", tab.String())
	// Start order: right after the second flow starts, CCID2's share is
	// larger when CCID2 is the incumbent than when Reno is, at most grid
	// points (the incumbent holds the queue and a large window).
	n, wins := 0, 0
	maxOrder, bufSpread := 0.0, 0.0
	for di := range delays {
		for _, b := range buffers {
			n++
			if early[key{b, di, 1}] > early[key{b, di, 0}] {
				wins++
			}
			maxOrder = math.Max(maxOrder, math.Abs(early[key{b, di, 1}]-early[key{b, di, 0}]))
		}
		for o := 0; o < 2; o++ {
			lo, hi := 1.0, 0.0
			for _, b := range buffers {
				lo, hi = math.Min(lo, early[key{b, di, o}]), math.Max(hi, early[key{b, di, o}])
			}
			bufSpread = math.Max(bufSpread, hi-lo)
		}
	}
	summary := fmt.Sprintf("incumbent advantage at %d of %d points (largest %.3f); largest change with the buffer %.3f", wins, n, maxOrder, bufSpread)
	t.Log(summary)
	if !testing.Short() {
		docgen.Check(t, "../docs/dccp.md", "ccid2-reno-share", tab.String()+summary)
	}
	if 4*wins < 3*n {
		t.Errorf("CCID2's early share is larger as incumbent at only %d of %d points, want >= 3/4 (start-order dependence)", wins, n)
	}
	// (Two buffers at one delay, the -short subset, are too few points for
	// this check; it runs on the full grid.)
	if !testing.Short() && bufSpread < 0.05 {
		t.Errorf("CCID2's early share changes by at most %.3f across buffers %v, want > 0.05 (buffer dependence)", bufSpread, buffers)
	}
}

// TestCCID2Fairness: two CCID2 flows, the second starting 10 s later,
// converge to a fair share: Jain's index over the last 20 s >= 0.95.
func TestCCID2Fairness(t *testing.T) {
	var doc strings.Builder
	for _, dl := range []time.Duration{10 * time.Millisecond, 30 * time.Millisecond} {
		e := NewEngine()
		// Buffer of one BDP at the 60 ms RTT (10 Mbit/s x 60 ms / 1228 B).
		db, err := NewDumbbell(e, DumbbellConfig{Flows: 2, Rate: 10e6, Delay: dl, Queue: "droptail:61p"}, Options{Seed: 2})
		if err != nil {
			t.Fatal(err)
		}
		s := New(db.Net, nil)
		d := NewDgram(s)
		t0 := clock.Start
		a := d.AddFlow("a", db.Senders[0], db.Receivers[0], transport.DgramConfig{}, t0)
		b := d.AddFlow("b", db.Senders[1], db.Receivers[1], transport.DgramConfig{}, t0.Add(10*time.Second))
		e.RunUntilTime(t0.Add(40 * time.Second))
		ab, bb := a.Meter.Bytes, b.Meter.Bytes
		e.RunUntilTime(t0.Add(60 * time.Second))
		x := []float64{float64(a.Meter.Bytes-ab) * 8 / 20, float64(b.Meter.Bytes-bb) * 8 / 20}
		j := jain(x)
		line := fmt.Sprintf("delay %v: goodputs %.2f and %.2f Mbit/s, Jain %.4f, Ack Ratios %d %d", dl, x[0]/1e6, x[1]/1e6, j,
			a.Conn.Stats().AckRatio, b.Conn.Stats().AckRatio)
		t.Log(line)
		doc.WriteString(line + "\n")
		if j < 0.95 {
			t.Errorf("delay %v: Jain's index %.4f, want >= 0.95", dl, j)
		}
		if x[0]+x[1] < 0.85*10e6 {
			t.Errorf("delay %v: total %.2f Mbit/s, want >= 8.5", dl, (x[0]+x[1])/1e6)
		}
	}
	docgen.Check(t, "../docs/dccp.md", "ccid2-fairness", doc.String())
}

// TestCCID2VsUncontrolledSim: over the same bottleneck an uncontrolled
// flow at 8 Mbit/s keeps its rate while a CCID2 flow yields.
func TestCCID2VsUncontrolledSim(t *testing.T) {
	e := NewEngine()
	db, err := NewDumbbell(e, DumbbellConfig{Flows: 2, Rate: 10e6, Delay: 20 * time.Millisecond, Queue: "droptail:40p"}, Options{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	s := New(db.Net, nil)
	d := NewDgram(s)
	t0 := clock.Start
	c := d.AddFlow("ccid2", db.Senders[0], db.Receivers[0], transport.DgramConfig{}, t0)
	u := d.AddFlow("udp", db.Senders[1], db.Receivers[1], transport.DgramConfig{CC: "none", Rate: 8e6}, t0.Add(5*time.Second))
	e.RunUntilTime(t0.Add(5 * time.Second))
	alone := float64(c.Meter.Bytes) * 8 / 5
	e.RunUntilTime(t0.Add(10 * time.Second))
	cb, ub, us := c.Meter.Bytes, u.Meter.Bytes, u.Conn.Stats().BytesSent
	e.RunUntilTime(t0.Add(30 * time.Second))
	cr, ur, usr := float64(c.Meter.Bytes-cb)*8/20, float64(u.Meter.Bytes-ub)*8/20, float64(u.Conn.Stats().BytesSent-us)*8/20
	line := fmt.Sprintf("ccid2 alone %.2f Mbit/s; with UDP: ccid2 %.2f, udp sent %.2f delivered %.2f Mbit/s", alone/1e6, cr/1e6, usr/1e6, ur/1e6)
	t.Log(line)
	docgen.Check(t, "../docs/dccp.md", "ccid2-vs-uncontrolled", line)
	if usr < 0.98*8e6 || usr > 1.02*8e6 {
		t.Errorf("uncontrolled flow sent %.2f Mbit/s, want its 8", usr/1e6)
	}
	if cr > 0.5*alone {
		t.Errorf("CCID2 kept %.2f of its %.2f Mbit/s next to 8 Mbit/s of UDP, want it to yield", cr/1e6, alone/1e6)
	}
}

// jain returns Jain's fairness index (Σx)²/(n·Σx²) of xs.
func jain(xs []float64) float64 {
	var s, s2 float64
	for _, x := range xs {
		s += x
		s2 += x * x
	}
	if s2 == 0 {
		return 1
	}
	return s * s / (float64(len(xs)) * s2)
}
