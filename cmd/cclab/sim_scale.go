package main

import (
	"cclab/internal/cli"
	"flag"
	"fmt"
	"os"
	"runtime"
	"time"

	"cclab/sim"
)

// ScaleScenario is the scale benchmark (issue #4): a two-bottleneck chain
// carrying 2,000 ON/OFF stream flows (1,000 end to end, 500 cross flows per
// hop) plus UDP ON/OFF background, for 500 simulated seconds — the size of
// the classic ns-2 studies (2,200 ON/OFF TCP flows over 500 s).
func ScaleScenario() sim.Scenario {
	return sim.Scenario{
		Topology: "chain",
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
// overriding it if given) and prints wall time, events/s, peak memory and the
// speed-up over real time.
func runScale(fs *flag.FlagSet) int {
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
	run, err := sc.Build()
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
	t1, c1 := time.Now(), cpuTime()
	if err := run.Run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	wall, cpu := time.Since(t1), cpuTime()-c1
	close(stop)
	<-done
	sum := run.Summary()
	ev := run.Sim.E.Fired()
	nflows := len(run.Sim.TCP)
	fmt.Printf("scale: chain hops=%d rate=%.0fMbit rtt=%v, %d stream flows (%s), %d UDP flows (%s), %v simulated, seed %d\n",
		sc.Hops, sc.Rate/1e6, sc.RTT, nflows, sc.Traffic, sc.UDPFlows, sc.UDP, sc.Duration, sc.Seed)
	var transfers, completed int
	for _, f := range run.Sim.TCP {
		transfers += f.Stats.Transfers
		completed += f.Stats.Completed
	}
	fmt.Printf("transfers started %d, completed %d (streams verified end to end %d, mismatched %d); events scheduled in the past: %d\n",
		transfers, completed, sum.Verified, sum.Mismatched, run.Sim.E.Late())
	for _, l := range sum.Links[:sc.Hops] {
		fmt.Printf("link %s: util %.3f, drops %d (%.2f%%), mean queue delay %.2f ms\n",
			l.Name, l.Utilization, l.Drops, 100*l.DropRate, l.MeanQDelayms)
	}
	fmt.Printf("build %.2fs, run wall %.2fs, process CPU %.2fs (all threads, GC included), events %d\n",
		build.Seconds(), wall.Seconds(), cpu.Seconds(), ev)
	fmt.Printf("events/s %.0f (wall) %.0f (CPU); speed-up over real time %.1fx (wall) %.1fx (CPU)\n",
		float64(ev)/wall.Seconds(), float64(ev)/cpu.Seconds(), sc.Duration.Seconds()/wall.Seconds(), sc.Duration.Seconds()/cpu.Seconds())
	fmt.Printf("peak heap in use %.1f MiB, max RSS %.1f MiB, GOMAXPROCS %d\n",
		float64(peak)/(1<<20), maxRSS()/(1<<20), runtime.GOMAXPROCS(0))
	return 0
}
