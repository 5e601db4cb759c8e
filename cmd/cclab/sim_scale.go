package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	simrun "cclab/backend/sim"
	"cclab/internal/cli"
	"cclab/internal/rusage"
	"cclab/metrics"
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
		UDP:      fmt.Sprintf(scaleUDP, 2e6),
		UDPFlows: 10,
		Stagger:  time.Second,
		CC:       []string{"reno"},
	}
}

// scaleUDP is the scale benchmark's UDP generator with its ON rate, bits/s,
// to fill in.
const scaleUDP = "udponoff:rate=%.0fbit,size=1000,on=exp(1s),off=exp(4s)"

// runScale runs ScaleScenario (with -duration, -seed, -rate, -cc, -traffic
// overriding it if given) through the plan and the simulator's runner, as
// any scenario, and prints wall time, events/s, peak memory and the
// speed-up over real time; with hash, also the run's trace hash (which
// costs time: compare speed figures of runs without it). With -scale-flows
// it runs scaleSweep instead.
func runScale(fs *flag.FlagSet, hash bool, sizes string) int {
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
	if sizes != "" {
		return scaleSweep(sc, sizes)
	}
	r, err := scaleRun(sc, hash)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cclab sim -bench-scale:", err)
		return r.code
	}
	p, res, s := r.plan, r.res, r.sim
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
	ev := r.events
	fmt.Printf("build %.2fs, run wall %.2fs, process CPU %.2fs (all threads, GC included), events %d\n",
		r.build.Seconds(), r.wall.Seconds(), r.cpu.Seconds(), ev)
	fmt.Printf("events/s %.0f (wall) %.0f (CPU); speed-up over real time %.1fx (wall) %.1fx (CPU)\n",
		float64(ev)/r.wall.Seconds(), float64(ev)/r.cpu.Seconds(), sc.Duration.Seconds()/r.wall.Seconds(), sc.Duration.Seconds()/r.cpu.Seconds())
	fmt.Printf("CPU per event %.0f ns; heap per flow %.1f KiB idle (built, before any flow starts), %.1f KiB at the peak\n",
		r.nsPerEvent(), r.idlePerFlow()/1024, r.peakPerFlow()/1024)
	fmt.Printf("peak heap in use %.1f MiB, max RSS %.1f MiB, GOMAXPROCS %d\n",
		float64(r.peak)/(1<<20), float64(r.rss)/(1<<20), runtime.GOMAXPROCS(0))
	if hash {
		h, n := s.TraceHash()
		fmt.Printf("trace hash %s (%d events)\n", h, n)
	}
	return 0
}

// scaleResult is one scale run's figures.
type scaleResult struct {
	plan        *plan.Plan
	sim         *simrun.Sim
	res         metrics.RunResult
	code        int           // exit code if the run failed
	build, wall time.Duration // building the run; running it
	cpu         time.Duration // the process's CPU time while running (all threads, GC included)
	events      uint64
	stale       uint64 // timer events that called no handler (sim.Engine.TimerEvents), of events
	idle        uint64 // heap in use after building, before any event, less the heap before
	peak        uint64 // peak heap in use while running (sampled every 100 ms)
	rss         int64  // the process's max RSS so far
	flows       int
}

func (r scaleResult) nsPerEvent() float64  { return float64(r.cpu.Nanoseconds()) / float64(r.events) }
func (r scaleResult) idlePerFlow() float64 { return float64(r.idle) / float64(r.flows) }
func (r scaleResult) peakPerFlow() float64 { return float64(r.peak) / float64(r.flows) }

// heapInUse returns the heap in use after a collection.
func heapInUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// scaleRun builds and runs sc, measuring the build, the idle heap per flow
// (after building: every host, link, endpoint and collector in place, no
// connection yet), the run's CPU time and its peak heap.
func scaleRun(sc scenario.Simple, hash bool) (scaleResult, error) {
	r := scaleResult{code: 2}
	base := heapInUse()
	t0 := time.Now()
	scn, err := sc.Scenario()
	if err != nil {
		return r, err
	}
	if r.plan, err = plan.New(scn, sc.Seed); err != nil {
		return r, err
	}
	if r.sim, err = simrun.Build(r.plan, simrun.Options{NoSeries: true, Hash: hash}); err != nil {
		return r, err
	}
	r.build = time.Since(t0)
	r.flows = len(r.plan.Flows)
	if h := heapInUse(); h > base {
		r.idle = h - base
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { // sample the Go heap every 100 ms for the peak
		defer close(done)
		var ms runtime.MemStats
		tk := time.NewTicker(100 * time.Millisecond)
		defer tk.Stop()
		for {
			runtime.ReadMemStats(&ms)
			r.peak = max(r.peak, ms.HeapInuse-min(ms.HeapInuse, base))
			select {
			case <-stop:
				return
			case <-tk.C:
			}
		}
	}()
	t1 := time.Now()
	c1, _ := rusage.CPU()
	r.res, err = r.sim.Run(context.Background())
	r.wall = time.Since(t1)
	c2, _ := rusage.CPU()
	close(stop)
	<-done
	if err != nil {
		r.code = 1
		return r, err
	}
	r.cpu = c2 - c1
	r.rss, _ = rusage.MaxRSS()
	r.events = r.sim.E.Fired()
	r.stale, _ = r.sim.E.TimerEvents()
	return r, nil
}

// scaleSweep runs the scale scenario at each of the comma-separated flow
// counts with a fixed share of the bottleneck per flow (the benchmark's:
// 45 Mbit/s for its 1,500 stream flows per hop), one after the other in
// this process, and prints CPU per event and heap per flow for each, and
// their ratios to the first size's, and the share of events that were stale
// timer events (sim.Engine.TimerEvents); with the idle heap per flow, the idle
// heap added per flow since the first size (the slope, without the run's
// fixed part: engine, pool, collector, plan). A size n has n/2-10 end-to-end flows,
// n/4 cross flows per hop and the 10 UDP flows (n in all, 2 hops), whose
// ON rate scales with the link's. Every
// size simulates -duration, so each flow fires about as many events at
// every size (its start-up, first connections included); a size is run
// largest/n times over (its CPU and events summed) so that each size fires
// about as many events in all.
func scaleSweep(sc scenario.Simple, sizes string) int {
	var ns []int
	for _, f := range strings.Split(sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 40 || n > scenario.MaxFlows || n%4 != 0 {
			fmt.Fprintf(os.Stderr, "cclab sim -scale-flows: %q: want flow counts, multiples of 4 from 40 to %d, comma-separated\n", f, scenario.MaxFlows)
			return 2
		}
		ns = append(ns, n)
	}
	base := ScaleScenario()
	share := sc.Rate / float64(base.Flows+base.Cross) // per stream flow on a hop
	fmt.Printf("scale sweep: chain hops=%d, %.1f kbit/s per stream flow per hop, %v simulated per run, seed %d, GOMAXPROCS %d\n",
		sc.Hops, share/1e3, sc.Duration, sc.Seed, runtime.GOMAXPROCS(0))
	fmt.Println("flows  runs  events     CPU s   CPU ns/event  ×first  idle KiB/flow  (added per flow)  peak KiB/flow  stale %")
	largest := slices.Max(ns)
	var first scaleResult
	for i, n := range ns {
		sc.Flows, sc.Cross, sc.UDPFlows = n/2-10, n/4, 10
		sc.Rate = share * float64(sc.Flows+sc.Cross)
		sc.UDP = fmt.Sprintf(scaleUDP, 2e6*sc.Rate/base.Rate) // the UDP flows' share of the link as in the benchmark
		runs := (largest + n - 1) / n
		var sum scaleResult
		for k := range runs {
			r, err := scaleRun(sc, false)
			if err != nil {
				fmt.Fprintln(os.Stderr, "cclab sim -scale-flows:", err)
				return r.code
			}
			if k == 0 {
				sum = r
				sum.sim, sum.res = nil, metrics.RunResult{} // let the next run reuse the memory
			} else {
				sum.cpu += r.cpu
				sum.events += r.events
				sum.stale += r.stale
			}
		}
		if i == 0 {
			first = sum
		}
		added := "-"
		if sum.flows != first.flows { // the idle heap's growth per flow added since the first size: without the run's fixed part
			added = fmt.Sprintf("%.1f", (float64(sum.idle)-float64(first.idle))/float64(sum.flows-first.flows)/1024)
		}
		fmt.Printf("%5d  %4d  %9d  %6.2f  %12.0f  %6.2f  %13.1f  %16s  %13.1f  %7.2f\n", n, runs, sum.events, sum.cpu.Seconds(), sum.nsPerEvent(),
			sum.nsPerEvent()/first.nsPerEvent(), sum.idlePerFlow()/1024, added, sum.peakPerFlow()/1024, 100*float64(sum.stale)/float64(sum.events))
	}
	return 0
}
