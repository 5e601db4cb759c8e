package simrun

import (
	"context"
	"testing"
	"time"

	"cclab/event"
	"cclab/internal/rusage"
	"cclab/metrics"
	"cclab/scenario"
)

// BenchmarkCollectorRecord replays the measured events of a simulated run
// (a two-hop chain of 200 ON/OFF flows, 100 cross flows per hop and 10 UDP
// ON/OFF flows, 30 s; recorded once through Options.Sink) into a fresh
// metrics.Collector per iteration, as the simulator's sinks feed it: the
// metrics' cost per event (ns/event) and their allocations per event
// (allocs/event: the accumulators of each flow and link, none per event in
// steady state). With and without time series. Besides the wall-clock
// ns/event it reports the process's CPU time per event (cpu-ns/event: on a
// loaded machine, the figure to compare).
func BenchmarkCollectorRecord(b *testing.B) {
	var log event.Log
	r := build(b, scenario.Simple{Topology: scenario.KindChain, Hops: 2, Flows: 200, Cross: 100, Rate: 45e6, RTT: 80 * time.Millisecond,
		Duration: 30 * time.Second, Warmup: 3 * time.Second, Seed: 1, Traffic: "onoff:size=pareto(48kB/1.2),off=exp(15s)",
		UDP: "udponoff:rate=2Mbit,size=1000,on=exp(1s),off=exp(4s)", UDPFlows: 10, Stagger: time.Second, CC: []string{"reno"}},
		Options{Sink: &log, NoSeries: true})
	if _, err := r.Run(context.Background()); err != nil {
		b.Fatal(err)
	}
	info := r.Plan.RunInfo(r.start)
	for _, series := range []bool{false, true} {
		name := "summary"
		if series {
			name = "series"
		}
		b.Run(name, func(b *testing.B) {
			info.NoSeries = !series
			b.ReportAllocs()
			cpu0, _ := rusage.CPU()
			for b.Loop() {
				c := metrics.NewCollector(info)
				for i := range log.Events {
					c.Record(&log.Events[i])
				}
			}
			cpu1, ok := rusage.CPU()
			n := float64(b.N) * float64(len(log.Events))
			if ok {
				b.ReportMetric(float64((cpu1-cpu0).Nanoseconds())/n, "cpu-ns/event")
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/event")
			b.ReportMetric(float64(len(log.Events)), "events/op")
		})
	}
}
