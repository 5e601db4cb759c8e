package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"time"

	simrun "cclab/backend/sim"
	"cclab/internal/cli"
	"cclab/internal/rusage"
	"cclab/plan"
	"cclab/scenario"
)

// ScaleScenario is the scale benchmark: a two-bottleneck chain
// carrying 2,000 ON/OFF stream flows (1,000 end to end, 500 cross flows per
// hop) plus UDP ON/OFF background, for 500 simulated seconds — the size of
// the classic ns-2 studies (2,200 ON/OFF TCP flows over 500 s).
func ScaleScenario() scenario.Simple {
	return scenario.Simple{
		Name:     "bench-scale",
		Topology: scenario.KindChain,
		Hops:     2,
		Flows:    1000,
		Cross:    500,
		Rate:     45e6,
		RTT:      80 * time.Millisecond,
		Buffer:   "1bdp",
		Duration: 500 * time.Second,
		Warmup:   50 * time.Second,
		Seed:     1,
		Traffic:  "onoff:size=pareto(48kB/1.2),off=exp(15s)",
		UDP:      "udponoff:rate=2Mbit,size=1000,on=exp(1s),off=exp(4s)",
		UDPFlows: 10,
		Stagger:  time.Second,
		CC:       []string{"reno"},
	}
}

// runScale runs ScaleScenario (with -duration, -seed, -rate, -cc, -traffic
// overriding it if given) through the plan and the simulator's runner, as
// any scenario, and prints wall time, events/s, peak memory and the
// speed-up over real time; with hash, also the run's trace hash (which
// costs time: compare speed figures of runs without it).
func runScale(fs *flag.FlagSet, hash bool) int {
	sc := ScaleScenario()
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "duration":
			sc.Duration, _ = time.ParseDuration(f.Value.String())
			sc.Warmup = sc.Duration / 10
		case "seed":
			fmt.Sscan(f.Value.String(), &sc.Seed)
		case "traffic":
			sc.Traffic = f.Value.String()
		case "rate":
			sc.Rate = *f.Value.(cli.Value[float64]).P
		case "flows":
			fmt.Sscan(f.Value.String(), &sc.Flows)
		case "cross":
			fmt.Sscan(f.Value.String(), &sc.Cross)
		}
	})
	runtime.GC()
	t0 := time.Now()
	scn, err := sc.Scenario()
	if err != nil {
		fmt.Fprintln(os.Stderr, "cclab sim -bench-scale:", err)
		return 2
	}
	p, err := plan.New(scn, sc.Seed)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cclab sim -bench-scale:", err)
		return 2
	}
	s, err := simrun.Build(p, simrun.Options{NoSeries: true, Hash: hash})
	if err != nil {
		fmt.Fprintln(os.Stderr, "cclab sim -bench-scale:", err)
		return 2
	}
	build := time.Since(t0)
	var peak uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { // sample the Go heap every 100 ms for the peak
		defer close(done)
		var ms runtime.MemStats
		tk := time.NewTicker(100 * time.Millisecond)
		defer tk.Stop()
		for {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
			select {
			case <-stop:
				return
			case <-tk.C:
			}
		}
	}()
	t1 := time.Now()
	c1, _ := rusage.CPU()
	res, err := s.Run(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	wall := time.Since(t1)
	c2, _ := rusage.CPU()
	cpu := c2 - c1
	rss, _ := rusage.MaxRSS()
	close(stop)
	<-done
	ev := s.E.Fired()
	fmt.Printf("scale: chain hops=%d rate=%.0fMbit rtt=%v, %d flows (%d stream: %s; %d UDP: %s), %v simulated, seed %d\n",
		sc.Hops, sc.Rate/1e6, sc.RTT, len(p.Flows), len(p.Flows)-sc.UDPFlows, sc.Traffic, sc.UDPFlows, sc.UDP, sc.Duration, sc.Seed)
	n := res.Notes
	fmt.Printf("transfers started %.0f, completed %.0f (streams verified end to end %.0f, mismatched %.0f); events scheduled in the past: %d\n",
		n[simrun.NoteTransfers], n[simrun.NoteCompleted], n[simrun.NoteVerified], n[simrun.NoteMismatched], s.E.Late())
	for _, h := range p.Hops[plan.Fwd] {
		for _, l := range res.Metrics.Links {
			if l.ID == int64(h.ID) {
				v := l.Values
				fmt.Printf("link %s: util %.3f, drops %.0f (%.2f%%), mean queue delay %.2f ms, oscillations %.0f\n",
					l.Name, v["utilization"], v["total_drops"], 100*v["drop_rate"], 1e3*v["mean_queue_delay"], v["total_queue_oscillations"])
			}
		}
	}
	fmt.Printf("build %.2fs, run wall %.2fs, process CPU %.2fs (all threads, GC included), events %d\n",
		build.Seconds(), wall.Seconds(), cpu.Seconds(), ev)
	fmt.Printf("events/s %.0f (wall) %.0f (CPU); speed-up over real time %.1fx (wall) %.1fx (CPU)\n",
		float64(ev)/wall.Seconds(), float64(ev)/cpu.Seconds(), sc.Duration.Seconds()/wall.Seconds(), sc.Duration.Seconds()/cpu.Seconds())
	fmt.Printf("peak heap in use %.1f MiB, max RSS %.1f MiB, GOMAXPROCS %d\n",
		float64(peak)/(1<<20), float64(rss)/(1<<20), runtime.GOMAXPROCS(0))
	if hash {
		h, n := s.TraceHash()
		fmt.Printf("trace hash %s (%d events)\n", h, n)
	}
	return 0
}
