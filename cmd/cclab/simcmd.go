package main

import (
	"cclab/internal/cli"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
	"sort"
	"strings"
	"time"

	"cclab/sim"
)

func init() {
	register("sim", "run a dumbbell or chain in the discrete-event simulator", runSim)
}

// applyScenarioFile sets every flag named in the JSON object in file that
// was not given on the command line.
func applyScenarioFile(fs *flag.FlagSet, file string) error {
	b, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("%s: %v", file, err)
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names) // deterministic order of Set calls
	for _, k := range names {
		if k == "scenario" || fs.Lookup(k) == nil {
			return fmt.Errorf("%s: unknown flag %q", file, k)
		}
		if given[k] {
			continue
		}
		if err := fs.Set(k, fmt.Sprint(m[k])); err != nil {
			return fmt.Errorf("%s: %s: %v", file, k, err)
		}
	}
	return nil
}

func runSim(args []string) int {
	fs := flag.NewFlagSet("cclab sim", flag.ContinueOnError)
	var sc sim.Scenario
	var cc, rtts, out, series string
	var jsonOut, benchScale bool
	var seed uint64
	sc.Rate = 20e6
	fs.StringVar(&sc.Topology, "topology", "dumbbell", "dumbbell or chain")
	fs.IntVar(&sc.Flows, "flows", 1, "stream flows (dumbbell), end-to-end flows (chain)")
	fs.StringVar(&cc, "cc", "reno", "controller spec per flow, ';'-separated and cycled, e.g. 'reno;dca:x=2'")
	fs.StringVar(&sc.Recovery, "recovery", "", "loss recovery strategy (transport default: newreno)")
	fs.Var(cli.Rate(&sc.Rate), "rate", "bottleneck rate, e.g. 20Mbit")
	fs.DurationVar(&sc.RTT, "rtt", 40*time.Millisecond, "base RTT (dumbbell: every flow; chain: end-to-end flows)")
	fs.StringVar(&rtts, "rtts", "", "dumbbell: per-flow base RTTs, comma-separated and cycled (overrides -rtt)")
	fs.StringVar(&sc.Buffer, "buffer", "1bdp", "bottleneck buffer: 1bdp, 0.5bdp, 20p or 30kB (BDP = rate × smallest base RTT)")
	fs.StringVar(&sc.Queue, "queue", "droptail", "queue discipline spec without limit, e.g. red:min=5,max=15,maxp=0.1")
	fs.DurationVar(&sc.Duration, "duration", 20*time.Second, "simulated time")
	fs.DurationVar(&sc.Warmup, "warmup", -1, "excluded from summaries (default: a quarter of -duration)")
	fs.Uint64Var(&seed, "seed", 1, "scenario seed")
	fs.IntVar(&sc.Hops, "hops", 2, "chain: bottleneck hops")
	fs.IntVar(&sc.Cross, "cross", 0, "chain: cross-traffic flows per hop")
	fs.StringVar(&sc.Traffic, "traffic", "greedy", "stream generator for the flows (docs/traffic.md), e.g. onoff:on=exp(1s),off=exp(1s)")
	fs.StringVar(&sc.CrossSpec, "cross-traffic", "", "chain: generator for cross flows (default: -traffic)")
	fs.StringVar(&sc.UDP, "udp", "cbr:rate=1Mbit", "datagram generator for background UDP flows")
	fs.IntVar(&sc.UDPFlows, "udp-flows", 0, "number of background UDP flows (end to end)")
	fs.IntVar(&sc.MaxDatagram, "mss", 0, "transport UDP payload size, bytes (default 1200)")
	fs.Var(cli.Rate(&sc.AccessRate), "access-rate", "access link rate (0: unlimited)")
	var revUnlimited bool
	fs.Var(cli.Rate(&sc.ReverseRate), "rev-rate", "dumbbell: reverse bottleneck rate (default: -rate)")
	fs.BoolVar(&revUnlimited, "rev-unlimited", false, "dumbbell: unlimited reverse bottleneck (as cmd/bottleneck without -rev-rate)")
	fs.DurationVar(&sc.Stagger, "stagger", time.Second, "flows start at random offsets in [0, stagger)")
	fs.BoolVar(&sc.UntilDone, "until-done", false, "stop as soon as every stream flow has finished (e.g. -traffic greedy:10MB), at most -duration")
	fs.BoolVar(&sc.ECN, "ecn", false, "flows negotiate ECN (use with a marking queue, e.g. -queue red:min=5,max=15,maxp=0.1,ecn)")
	fs.BoolVar(&sc.PayloadOnly, "payload-only", false, "count only UDP payload as packet size on links, like cmd/bottleneck -overhead 0 (default: payload + 28 bytes IPv4/UDP header, as cmd/bottleneck counts by default)")
	fs.BoolVar(&sc.Hash, "hash", false, "print a hash of the full event trace (determinism check)")
	fs.DurationVar(&sc.Interval, "interval", 0, "time-series interval (with -series)")
	fs.StringVar(&series, "series", "", "write per-flow and per-link time series as CSV to this file (default interval 100ms)")
	fs.StringVar(&sc.QlogDir, "qlog", "", "write one qlog (JSON-SEQ) per stream flow into this directory")
	fs.BoolVar(&jsonOut, "J", false, "print the summary as JSON")
	fs.StringVar(&out, "o", "", "write the summary to this file instead of stdout")
	fs.BoolVar(&benchScale, "bench-scale", false, "run the scale benchmark (2-hop chain, 2,000 ON/OFF flows + UDP, 500 s) and print speed figures")
	var cpuprofile, scenario string
	fs.StringVar(&cpuprofile, "cpuprofile", "", "write a CPU profile to this file")
	fs.StringVar(&scenario, "scenario", "", "JSON file of flag values, e.g. {\"topology\": \"chain\", \"rate\": \"20Mbit\"}; command-line flags override it")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if scenario != "" {
		if err := applyScenarioFile(fs, scenario); err != nil {
			fmt.Fprintln(os.Stderr, "cclab sim:", err)
			return 2
		}
	}
	if cpuprofile != "" {
		f, err := os.Create(cpuprofile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "cclab sim:", err)
			return 1
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, "cclab sim:", err)
			return 1
		}
		defer pprof.StopCPUProfile()
	}
	if benchScale {
		return runScale(fs)
	}
	sc.Seed = seed
	if revUnlimited {
		sc.ReverseRate = -1
	}
	for _, c := range strings.Split(cc, ";") {
		if c = strings.TrimSpace(c); c != "" {
			sc.CC = append(sc.CC, c)
		}
	}
	if rtts != "" {
		for _, s := range strings.Split(rtts, ",") {
			d, err := time.ParseDuration(strings.TrimSpace(s))
			if err != nil {
				fmt.Fprintf(os.Stderr, "cclab sim: -rtts %q: %v\n", s, err)
				return 2
			}
			sc.RTTs = append(sc.RTTs, d)
		}
	}
	if sc.Warmup < 0 {
		sc.Warmup = sc.Duration / 4
	}
	if series != "" && sc.Interval == 0 {
		sc.Interval = 100 * time.Millisecond
	}
	if sc.QlogDir != "" {
		if err := os.MkdirAll(sc.QlogDir, 0o755); err != nil {
			fmt.Fprintln(os.Stderr, "cclab sim:", err)
			return 1
		}
	}
	run, err := sc.Build()
	if err != nil {
		fmt.Fprintln(os.Stderr, "cclab sim:", err)
		return 2
	}
	if err := run.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "cclab sim:", err)
		return 1
	}
	sum := run.Summary()
	w := os.Stdout
	if out != "" {
		f, err := os.Create(out)
		if err != nil {
			fmt.Fprintln(os.Stderr, "cclab sim:", err)
			return 1
		}
		defer f.Close()
		w = f
	}
	if jsonOut {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		if err := enc.Encode(sum); err != nil {
			fmt.Fprintln(os.Stderr, "cclab sim:", err)
			return 1
		}
	} else {
		sum.WriteText(w)
	}
	if series != "" && run.Series != nil {
		f, err := os.Create(series)
		if err != nil {
			fmt.Fprintln(os.Stderr, "cclab sim:", err)
			return 1
		}
		defer f.Close()
		if err := run.Series.WriteCSV(f); err != nil {
			fmt.Fprintln(os.Stderr, "cclab sim:", err)
			return 1
		}
	}
	return 0
}
