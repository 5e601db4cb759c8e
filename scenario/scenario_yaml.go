package scenario

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"time"

	"cclab/internal/units"
	"cclab/transport"
)

// YAML writes the scenario as a scenario file (docs/scenarios.md) that
// ParseScenario reads back into an equal scenario: every field is written
// explicitly, rates and durations exactly. `cclab sim -emit-scenario` uses
// it to show the scenario its flags describe.
func (s Scenario) YAML() []byte {
	var b bytes.Buffer
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("name: %s\n", quote(s.Name))
	if s.Description != "" {
		w("description: %s\n", quote(s.Description))
	}
	w("duration: %s\n", dur(s.Duration))
	if s.Warmup > 0 {
		w("warmup: %s\n", dur(s.Warmup))
	}
	var seeds []string
	for _, x := range s.Seeds {
		seeds = append(seeds, strconv.FormatUint(x, 10))
	}
	w("seeds: [%s]\n", strings.Join(seeds, ", "))
	if s.LiveRuns > 0 {
		w("live_runs: %d\n", s.LiveRuns)
	}
	w("interval: %s\n", dur(s.Interval))
	w("backends: [%s]\n", strings.Join(s.Backends, ", "))
	if s.UntilDone {
		w("until_done: true\n")
	}
	if s.EpochThreshold > 0 {
		w("epoch_threshold: %s\n", strconv.FormatFloat(s.EpochThreshold, 'g', -1, 64))
	}
	t := s.Topology
	w("topology:\n  kind: %s\n", t.Kind)
	if t.Kind == KindDumbbell && len(t.Hops) == 1 {
		w("  bottleneck:\n")
		writeHop(w, "    ", t.Hops[0])
	} else {
		w("  hops:\n")
		for _, h := range t.Hops {
			w("    -\n")
			writeHop(w, "      ", h)
		}
	}
	if t.Access != (Access{}) {
		w("  access:\n")
		w("    rate: %s\n", rate(t.Access.Rate))
		w("    delay: %s\n", dur(t.Access.Delay))
		if t.Access.Queue != "" {
			w("    queue: %s\n", quote(t.Access.Queue))
		}
	}
	if t.MTU > 0 {
		w("  mtu: %dB\n", t.MTU)
	}
	if t.PayloadOnly {
		w("  payload_only: true\n")
	}
	w("flows:\n")
	for _, f := range s.Flows {
		writeFlow(w, f)
	}
	if len(s.Baseline) > 0 {
		w("baseline:\n")
		for _, p := range s.Baseline {
			w("  %s: %s\n", p.Axis, quote(p.Value))
		}
	}
	return b.Bytes()
}

// writeHop writes a hop's fields at indent.
func writeHop(w func(string, ...any), indent string, h Hop) {
	w("%srate: %s\n", indent, rate(h.Rate))
	w("%sdelay: %s\n", indent, dur(h.Delay))
	w("%squeue: %s\n", indent, quote(h.Queue))
	if h.Loss != "" {
		w("%sloss: %s\n", indent, quote(h.Loss))
	}
	if h.Trace != "" {
		w("%strace: %s\n", indent, quote(h.Trace))
	}
	if h.Jitter > 0 {
		w("%sjitter: %s\n", indent, dur(h.Jitter))
	}
	if h.Reorder {
		w("%sreorder: true\n", indent)
	}
	if h.RevLoss != "" {
		w("%srev_loss: %s\n", indent, quote(h.RevLoss))
	}
	switch {
	case h.RevRate < 0:
		w("%srev_rate: unlimited\n", indent)
	case h.RevRate > 0:
		w("%srev_rate: %s\n", indent, rate(h.RevRate))
	}
	if len(h.Cross) > 0 {
		w("%scross:\n", indent)
		for _, c := range h.Cross {
			w("%s  - {traffic: %s, dir: %s}\n", indent, quote(c.Traffic), c.Dir)
		}
	}
}

// writeFlow writes one flow group as an item of the flows list.
func writeFlow(w func(string, ...any), f Flow) {
	w("  - name: %s\n", quote(f.Name))
	w("    count: %d\n", f.Count)
	w("    mode: %s\n", f.Mode)
	if f.Stack != "" {
		w("    stack: %s\n", f.Stack)
	}
	if f.Mode != ModeUDP {
		w("    cc: %s\n", quote(f.CC))
		if f.Recovery != "" {
			w("    recovery: %s\n", quote(f.Recovery))
		}
	}
	w("    traffic: %s\n", quote(f.Traffic))
	w("    start: %s\n", dur(f.Start))
	if f.Stop > 0 {
		w("    stop: %s\n", dur(f.Stop))
	}
	if f.Datagram > 0 {
		w("    datagram: %dB\n", f.Datagram)
	}
	if f.Path != nil {
		w("    path: %d-%d\n", f.Path[0], f.Path[1])
	}
	if f.AccessDelay != nil {
		w("    access_delay: %s\n", dur(*f.AccessDelay))
	}
	if f.Stagger > 0 {
		w("    stagger: %s\n", dur(f.Stagger))
	}
	if f.ECN {
		w("    ecn: true\n")
	}
	if f.MinRTO > 0 {
		w("    min_rto: %s\n", dur(f.MinRTO))
	}
	if f.AckEvery > 0 {
		w("    ack_every: %d\n", f.AckEvery)
	}
	if f.DelayedAck == transport.NoDelayedAck {
		w("    delayed_ack: 0s\n")
	} else if f.DelayedAck > 0 {
		w("    delayed_ack: %s\n", dur(f.DelayedAck))
	}
	if f.RecvWindow > 0 {
		w("    recv_window: %dB\n", f.RecvWindow)
	}
}

// quote returns s as a YAML double-quoted scalar.
func quote(s string) string { return strconv.Quote(s) }

// dur formats a duration so that units.ParseDuration reads it back exactly.
func dur(d time.Duration) string {
	if d == 0 {
		return "0s"
	}
	return d.String()
}

// rate formats a rate so that units.ParseRate reads it back exactly.
func rate(r float64) string {
	if s := units.FormatRate(r); mustRate(s) == r {
		return s
	}
	return strconv.FormatFloat(r, 'g', -1, 64) + "bit"
}

func mustRate(s string) float64 {
	v, err := units.ParseRate(s)
	if err != nil {
		return -1
	}
	return v
}
