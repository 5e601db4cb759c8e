package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"time"

	simrun "cclab/backend/sim"
	"cclab/internal/cli"
	"cclab/metrics"
	"cclab/perf"
	"cclab/plan"
	"cclab/scenario"
	"cclab/transport"
)

func init() {
	register("sim", "run a dumbbell, a chain or a scenario file in the discrete-event simulator", runSim)
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

// isYAML says whether a -scenario file is a scenario file (YAML, as cclab
// run takes) rather than a JSON object of flag values.
func isYAML(file string) bool {
	ext := strings.ToLower(filepath.Ext(file))
	return ext == ".yaml" || ext == ".yml"
}

// simFlags are the flags that describe the network and traffic (the
// scenario.Simple fields); with a YAML scenario they are refused.
var simFlags = map[string]bool{"topology": true, "flows": true, "cc": true, "recovery": true, "rate": true, "rtt": true,
	"rtts": true, "buffer": true, "queue": true, "duration": true, "warmup": true, "hops": true, "cross": true,
	"traffic": true, "cross-traffic": true, "udp": true, "udp-flows": true, "mss": true, "access-rate": true,
	"rev-rate": true, "rev-unlimited": true, "stagger": true, "until-done": true, "ecn": true, "min-rto": true, "ack-every": true, "delayed-ack": true, "recv-window": true, "payload-only": true,
	"interval": true}

// simArgs are cclab sim's flag values: the scenario.Simple fields and the
// run's options.
type simArgs struct {
	fs                                                                *flag.FlagSet
	sc                                                                scenario.Simple
	recv                                                              transport.Config
	cc, rtts, out, series, scenarioFile, emit, cpuprofile, memprofile string
	qlogDir, scaleFlows                                               string
	jsonOut, benchScale, hash, revUnlimited                           bool
	seed                                                              uint64
	point                                                             int
}

func runSim(args []string) int {
	a := newSimArgs()
	if code, ok := cli.Parse(a.fs, args); !ok {
		return code
	}
	scn, code := a.scenario()
	if code != 0 {
		return code
	}
	if a.emit != "" {
		return emitScenario(scn, a.emit)
	}
	stop, code := startProfiles(a.cpuprofile, a.memprofile)
	if code != 0 {
		return code
	}
	defer stop()
	if a.benchScale {
		return runScale(a.fs, a.hash, a.scaleFlows)
	}
	return a.run(scn)
}

// newSimArgs defines cclab sim's flags.
func newSimArgs() *simArgs {
	a := &simArgs{fs: flag.NewFlagSet("cclab sim", flag.ContinueOnError)}
	fs, sc := a.fs, &a.sc
	sc.Rate = 20e6
	fs.StringVar(&sc.Topology, "topology", "dumbbell", "dumbbell or chain")
	fs.IntVar(&sc.Flows, "flows", 1, "stream flows (dumbbell), end-to-end flows (chain)")
	fs.StringVar(&a.cc, "cc", transport.DefaultCC, "controller spec per flow, ';'-separated and cycled, e.g. 'reno;dca:x=2'")
	fs.StringVar(&sc.Recovery, "recovery", "", "loss recovery strategy (default: "+transport.DefaultRecovery+")")
	fs.Var(cli.Rate(&sc.Rate), "rate", "bottleneck rate, e.g. 20Mbit")
	fs.DurationVar(&sc.RTT, "rtt", 40*time.Millisecond, "base RTT (dumbbell: every flow; chain: end-to-end flows)")
	fs.StringVar(&a.rtts, "rtts", "", "dumbbell: per-flow base RTTs, comma-separated and cycled (overrides -rtt)")
	fs.StringVar(&sc.Buffer, "buffer", "1bdp", "bottleneck buffer: 1bdp, 0.5bdp, 20p or 30kB (BDP = rate × smallest base RTT)")
	fs.StringVar(&sc.Queue, "queue", "droptail", "queue discipline spec without limit, e.g. red:min=5,max=15,maxp=0.1")
	fs.DurationVar(&sc.Duration, "duration", 20*time.Second, "simulated time")
	fs.DurationVar(&sc.Warmup, "warmup", -1, "excluded from the metrics (default: a quarter of -duration)")
	fs.Uint64Var(&a.seed, "seed", 1, "scenario seed")
	fs.IntVar(&sc.Hops, "hops", 2, "chain: bottleneck hops")
	fs.IntVar(&sc.Cross, "cross", 0, "chain: cross-traffic flows per hop")
	fs.StringVar(&sc.Traffic, "traffic", "greedy", "stream generator for the flows (docs/traffic.md), e.g. onoff:on=exp(1s),off=exp(1s)")
	fs.StringVar(&sc.CrossSpec, "cross-traffic", "", "chain: generator for cross flows (default: -traffic)")
	fs.StringVar(&sc.UDP, "udp", "cbr:rate=1Mbit", "datagram generator for background UDP flows")
	fs.IntVar(&sc.UDPFlows, "udp-flows", 0, "number of background UDP flows (end to end)")
	fs.IntVar(&sc.MaxDatagram, "mss", 0, "transport UDP payload size, bytes (default 1200)")
	fs.Var(cli.Rate(&sc.AccessRate), "access-rate", "access link rate (0: unlimited)")
	fs.Var(cli.Rate(&sc.ReverseRate), "rev-rate", "dumbbell: reverse bottleneck rate (default: -rate)")
	fs.BoolVar(&a.revUnlimited, "rev-unlimited", false, "dumbbell: unlimited reverse bottleneck (as cmd/bottleneck without -rev-rate)")
	fs.DurationVar(&sc.Stagger, "stagger", time.Second, "flows start at random offsets in [0, stagger)")
	fs.BoolVar(&sc.UntilDone, "until-done", false, "stop as soon as every stream flow has finished (e.g. -traffic greedy:10MB), at most -duration")
	fs.DurationVar(&sc.MinRTO, "min-rto", 0, "stream flows' minimum retransmission timeout, e.g. 1s as RFC 6298 (default: transport's 200ms, as Linux)")
	perf.ReceiveFlags(fs, &a.recv, "recv-window", transport.DefaultMaxDatagram)
	fs.BoolVar(&sc.ECN, "ecn", false, "flows negotiate ECN (use with a marking queue, e.g. -queue red:min=5,max=15,maxp=0.1,ecn)")
	fs.BoolVar(&sc.PayloadOnly, "payload-only", false, "count only UDP payload as packet size on links, like cmd/bottleneck -overhead 0 (default: payload + 28 bytes IPv4/UDP header, as cmd/bottleneck counts by default)")
	fs.BoolVar(&a.hash, "hash", false, "print a hash of the full event trace (determinism check)")
	fs.DurationVar(&sc.Interval, "interval", 0, "time-series interval (default 100ms)")
	fs.StringVar(&a.series, "series", "", "write every flow's and link's time series as CSV to this file")
	fs.StringVar(&a.qlogDir, "qlog", "", "write one qlog (JSON-SEQ) per stream flow into this directory")
	fs.BoolVar(&a.jsonOut, "J", false, "print the result as JSON")
	fs.StringVar(&a.out, "o", "", "write the result to this file instead of stdout")
	fs.BoolVar(&a.benchScale, "bench-scale", false, "run the scale benchmark (2-hop chain, 2,000 ON/OFF flows + UDP, 500 s) and print speed figures")
	fs.StringVar(&a.scaleFlows, "scale-flows", "", "with -bench-scale: run it at each of these flow counts (e.g. 100,1000,10000) with a fixed share per flow and print CPU per event and heap per flow")
	fs.StringVar(&a.cpuprofile, "cpuprofile", "", "write a CPU profile to this file")
	fs.StringVar(&a.memprofile, "memprofile", "", "write an allocation profile (every allocation since the start) to this file at the end")
	fs.StringVar(&a.scenarioFile, "scenario", "", "a scenario file (.yaml, as cclab run takes; one point) or a JSON file of flag values, e.g. {\"topology\": \"chain\", \"rate\": \"20Mbit\"} (command-line flags override it)")
	fs.IntVar(&a.point, "point", 0, "with a swept YAML scenario: the point to run (0-based)")
	fs.StringVar(&a.emit, "emit-scenario", "", "write the scenario the flags describe as a YAML scenario file (\"-\": stdout) and exit")
	return a
}

// scenario is the scenario to run: a point of a YAML scenario file, or the
// one the flags (and a JSON file of flag values) describe; code is non-zero
// when it is refused.
func (a *simArgs) scenario() (scenario.Scenario, int) {
	given := map[string]bool{}
	a.fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if a.scenarioFile != "" && isYAML(a.scenarioFile) {
		for name := range given {
			if simFlags[name] {
				fmt.Fprintf(os.Stderr, "cclab sim: -%s: the network and flows come from the scenario file %s; change them there\n", name, a.scenarioFile)
				return scenario.Scenario{}, 2
			}
		}
		exp, err := scenario.LoadScenarioFile(a.scenarioFile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "cclab sim:", err)
			return scenario.Scenario{}, 2
		}
		if a.point < 0 || a.point >= len(exp.Points) {
			fmt.Fprintf(os.Stderr, "cclab sim: -point %d: the scenario has %d point(s) (0..%d)\n", a.point, len(exp.Points), len(exp.Points)-1)
			return scenario.Scenario{}, 2
		}
		scn := exp.Points[a.point].Scenario
		if !given["seed"] {
			a.seed = scn.Seeds[0]
		}
		scn.Seeds = []uint64{a.seed}
		return scn, 0
	}
	if a.scenarioFile != "" {
		if err := applyScenarioFile(a.fs, a.scenarioFile); err != nil {
			fmt.Fprintln(os.Stderr, "cclab sim:", err)
			return scenario.Scenario{}, 2
		}
	}
	a.sc.AckEvery, a.sc.DelayedAck, a.sc.RecvWindow = a.recv.AckEvery, a.recv.DelayedAck, a.recv.RecvWindow
	scn, err := simpleScenario(a.sc, a.cc, a.rtts, a.seed, a.revUnlimited)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cclab sim:", err)
		return scenario.Scenario{}, 2
	}
	return scn, 0
}

// emitScenario writes scn as YAML to the file emit ("-": stdout).
func emitScenario(scn scenario.Scenario, emit string) int {
	w := os.Stdout
	if emit != "-" {
		f, err := os.Create(emit)
		if err != nil {
			fmt.Fprintln(os.Stderr, "cclab sim:", err)
			return 1
		}
		defer f.Close()
		w = f
	}
	if _, err := w.Write(scn.YAML()); err != nil {
		fmt.Fprintln(os.Stderr, "cclab sim:", err)
		return 1
	}
	return 0
}

// startProfiles starts the CPU profile and the allocation profile the
// flags ask for; stop writes them.
func startProfiles(cpuprofile, memprofile string) (stop func(), code int) {
	var stops []func()
	stop = func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	if cpuprofile != "" {
		f, err := os.Create(cpuprofile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "cclab sim:", err)
			return nil, 1
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			fmt.Fprintln(os.Stderr, "cclab sim:", err)
			return nil, 1
		}
		stops = append(stops, func() { pprof.StopCPUProfile(); f.Close() })
	}
	if memprofile != "" {
		runtime.MemProfileRate = 64 << 10
		stops = append(stops, func() {
			runtime.GC() // the profile holds the allocations up to the last collection: count them all
			f, err := os.Create(memprofile)
			if err == nil {
				err = pprof.Lookup("allocs").WriteTo(f, 0)
				f.Close()
			}
			if err != nil {
				fmt.Fprintln(os.Stderr, "cclab sim: -memprofile:", err)
			}
		})
	}
	return stop, 0
}

// run simulates scn and writes its result (and the series, with -series).
func (a *simArgs) run(scn scenario.Scenario) int {
	if a.qlogDir != "" {
		if err := os.MkdirAll(a.qlogDir, 0o755); err != nil {
			fmt.Fprintln(os.Stderr, "cclab sim:", err)
			return 1
		}
	}
	p, err := plan.New(scn, a.seed)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cclab sim:", err)
		return 2
	}
	s, err := simrun.Build(p, simrun.Options{Hash: a.hash, QlogDir: a.qlogDir, NoSeries: a.series == ""})
	if err != nil {
		fmt.Fprintln(os.Stderr, "cclab sim:", err)
		return 2
	}
	res, err := s.Run(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, "cclab sim:", err)
		return 1
	}
	sum := newSimOutput(p, res)
	if sum.Window <= 0 {
		fmt.Fprintf(os.Stderr, "cclab sim: the run ended after %.3g s, within the %.3g s warm-up: nothing was measured (use a shorter -warmup)\n",
			sum.Duration, sum.Warmup)
		return 1
	}
	sum.TraceHash, sum.HashedEvents = s.TraceHash()
	if err := a.write(sum, res.Metrics); err != nil {
		fmt.Fprintln(os.Stderr, "cclab sim:", err)
		return 1
	}
	return 0
}

// write writes the result to -o (or stdout), as text or JSON, and the
// series to -series.
func (a *simArgs) write(sum simOutput, m metrics.Metrics) error {
	w := io.Writer(os.Stdout)
	if a.out != "" {
		f, err := os.Create(a.out)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	if a.jsonOut {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		if err := enc.Encode(sum); err != nil {
			return err
		}
	} else {
		sum.writeText(w)
	}
	if a.series == "" {
		return nil
	}
	f, err := os.Create(a.series)
	if err != nil {
		return err
	}
	defer f.Close()
	return writeSeriesCSV(f, m)
}

// simpleScenario turns the flag values into a scenario.
func simpleScenario(sc scenario.Simple, cc, rtts string, seed uint64, revUnlimited bool) (scenario.Scenario, error) {
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
				return scenario.Scenario{}, fmt.Errorf("-rtts %q: %v", s, err)
			}
			sc.RTTs = append(sc.RTTs, d)
		}
	}
	if sc.Warmup < 0 {
		sc.Warmup = sc.Duration / 4
		if sc.UntilDone {
			sc.Warmup = 0 // the run ends with the transfers: measure them whole
		}
	}
	return sc.Scenario()
}

// simOutput is cclab sim's result: the run's metrics as eval computes them
// for every backend (docs/metrics.md), with the flows' and links'
// descriptions, the run's notes and the trace hash.
type simOutput struct {
	Scenario     string             `json:"scenario"`
	Seed         uint64             `json:"seed"`
	Duration     float64            `json:"duration_s"` // simulated time, s
	Warmup       float64            `json:"warmup_s"`   // excluded from the metrics, s
	Window       float64            `json:"window_s"`   // the measurement window, s
	Flows        []scopeOutput      `json:"flows"`
	Links        []scopeOutput      `json:"links"`
	Network      map[string]float64 `json:"network"`
	Notes        map[string]float64 `json:"notes"`
	TraceHash    string             `json:"trace_hash,omitempty"`
	HashedEvents uint64             `json:"hashed_events,omitempty"`
}

type scopeOutput struct {
	ID      int64              `json:"id"`
	Name    string             `json:"name"`
	Info    string             `json:"info"`
	Metrics map[string]float64 `json:"metrics"`
}

func newSimOutput(p *plan.Plan, res metrics.RunResult) simOutput {
	m := res.Metrics
	start := res.Info.Start.Add(-p.Warmup)
	o := simOutput{Scenario: p.Scenario, Seed: p.Seed, Duration: m.End.Sub(start).Seconds(), Warmup: p.Warmup.Seconds(),
		Window: m.End.Sub(m.Start).Seconds(), Network: m.Network.Values, Notes: res.Notes}
	info := func(recs []metrics.ScopeRecord, id int64) string {
		for _, r := range recs {
			if r.ID == id {
				return r.Info
			}
		}
		return ""
	}
	for _, f := range m.Flows {
		o.Flows = append(o.Flows, scopeOutput{ID: f.ID, Name: f.Name, Info: info(res.Flows, f.ID), Metrics: f.Values})
	}
	for _, l := range m.Links {
		o.Links = append(o.Links, scopeOutput{ID: l.ID, Name: l.Name, Info: info(res.Links, l.ID), Metrics: l.Values})
	}
	return o
}

// writeText prints the result as tables; "-" marks a metric the scope does
// not have (e.g. the srtt of a raw UDP flow).
func (o simOutput) writeText(w io.Writer) {
	fmt.Fprintf(w, "%s: seed %d, %.1f s simulated, metrics over %.1f s after a %.1f s warm-up, %.0f events\n",
		o.Scenario, o.Seed, o.Duration, o.Window, o.Warmup, o.Notes[simrun.NoteEvents])
	if len(o.Flows) > 0 {
		fmt.Fprintf(w, "%-10s %-30s %13s %9s %9s %9s %10s %7s %7s %7s %5s\n",
			"flow", "", "goodput", "srtt", "minrtt", "qdelay", "cwnd", "retx", "loss%", "decl%", "rto")
		for _, f := range o.Flows {
			v := f.Metrics
			fmt.Fprintf(w, "%-10s %-30s %13s %9s %9s %9s %10s %7s %7s %7s %5s\n", f.Name, trimInfo(f.Info),
				num(v, "mean_throughput", 1e-6, "%.3fMbit"), num(v, "mean_srtt", 1e3, "%.1fms"), num(v, "min_rtt", 1e3, "%.1fms"),
				num(v, "mean_qdelay_est", 1e3, "%.1fms"), num(v, "mean_cwnd", 1, "%.0f"), num(v, "total_retransmissions", 1, "%.0f"),
				num(v, "loss_rate", 100, "%.3f"), num(v, "declared_loss_rate", 100, "%.3f"), num(v, "total_rtos", 1, "%.0f"))
		}
	}
	for _, l := range o.Links {
		v := l.Metrics
		fmt.Fprintf(w, "link %-12s util %s drops %s (%s%%) marks %s qdelay %s qlen mean %s max %s oscillations %s  %s\n",
			l.Name, num(v, "utilization", 1, "%.4f"), num(v, "total_drops", 1, "%.0f"), num(v, "drop_rate", 100, "%.3f"),
			num(v, "total_marks", 1, "%.0f"), num(v, "mean_queue_delay", 1e3, "%.2fms"), num(v, "mean_queue_len", 1, "%.1f"),
			num(v, "max_queue_len", 1, "%.0f"), num(v, "total_queue_oscillations", 1, "%.0f"), l.Info)
	}
	n := o.Network
	fmt.Fprintf(w, "network: goodput %s, utilization %s, Jain's index %s; transfers verified %.0f, mismatched %.0f\n",
		num(n, "agg_throughput", 1e-6, "%.3f Mbit/s"), num(n, "bw_utilization", 1, "%.4f"), num(n, "jain_fairness", 1, "%.4f"),
		o.Notes[simrun.NoteVerified], o.Notes[simrun.NoteMismatched])
	if o.TraceHash != "" {
		fmt.Fprintf(w, "trace hash %s (%d events)\n", o.TraceHash, o.HashedEvents)
	}
}

// num formats metric name of v scaled by scale, or "-" if v lacks it.
func num(v map[string]float64, name string, scale float64, format string) string {
	x, ok := v[name]
	if !ok {
		return "-"
	}
	return fmt.Sprintf(format, x*scale)
}

// trimInfo shortens a flow description for the table: no mode=stream, no traffic=greedy.
func trimInfo(s string) string {
	s = strings.Replace(s, "mode=stream ", "", 1)
	s = strings.Replace(s, " traffic=greedy", "", 1)
	return s
}

// writeSeriesCSV writes every time series in long format through
// encoding/csv: t_s,scope,id,name,series,unit,value.
func writeSeriesCSV(w io.Writer, m metrics.Metrics) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"t_s", "scope", "id", "name", "series", "unit", "value"})
	put := func(r metrics.Result) {
		for _, s := range r.Series {
			for i := range s.T {
				cw.Write([]string{strconv.FormatFloat(s.T[i], 'f', -1, 64), string(r.Scope), strconv.FormatInt(r.ID, 10),
					r.Name, s.Name, s.Unit, strconv.FormatFloat(s.V[i], 'g', -1, 64)})
			}
		}
	}
	for _, f := range m.Flows {
		put(f)
	}
	for _, l := range m.Links {
		put(l)
	}
	cw.Flush()
	return cw.Error()
}
