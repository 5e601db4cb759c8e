// Command ns3cmp runs the same single-path scenarios in cclab's simulator and
// in ns-3 (backend/ns3) at matched settings and prints the goodput and
// retransmission ratios per point (docs/ns3.md), or, with -bench, the CPU
// time of both on a dumbbell of many flows.
package main

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"cclab/backend/ns3"
	simrun "cclab/backend/sim"
	"cclab/internal/rusage"
	"cclab/metrics"
	"cclab/plan"
	"cclab/scenario"
	"cclab/transport"
)

// Stack is one controller and recovery pairing, matched on both sides.
type Stack struct {
	Label    string // row label
	CC       string // cclab controller spec (mapped to ns-3 by backend/ns3)
	Recovery string // cclab recovery spec (mapped to ns-3 by backend/ns3)
	// SimRecovery, if set, replaces Recovery on cclab's side only: a
	// cclab option ns-3 cannot express but whose effect its model has
	// (docs/compat.md says which, and why).
	SimRecovery string
}

// Path is the bottleneck of a point.
type Path struct {
	Rate  string // e.g. "16Mbit"
	Delay string // one way, e.g. "7.5ms"
	Queue string // e.g. "droptail:20p"
}

// Settings are the matched transport settings of every flow.
type Settings struct {
	MSS        int           // segment payload, bytes
	MinRTO     time.Duration // RTO floor
	AckEvery   int           // segments per delayed ACK
	DelayedAck time.Duration // delayed-ACK timer
	// TCPHandshake runs cclab's handshake at TCP's sizes (scenario flow
	// field tcp_handshake: the Initial unpadded, a pure ACK before the
	// data), so that flows starting together reach the bottleneck as
	// ns-3's do.
	TCPHandshake bool
	// AckFirst has cclab's receiver acknowledge the first data segment at
	// once (scenario flow field ack_first), as ns-3's always does
	// (tcp-socket-base.cc:2404-2406; docs/compat.md "ns-3's first ACK").
	AckFirst bool
}

// MatchedSettings are the matched settings: ns-3's defaults
// (DelAckCount 2, DelAckTimeout 200 ms, MinRto 1 s, the first data segment
// acknowledged at once) with 1448-byte segments, as TCP's MSS with
// timestamps on a 1500-byte MTU. The handshake is chosen per point
// (PointSettings). AckFirst since 2026-12-07 23:30 UTC (-ackfirst=false
// runs the receiver as before).
var MatchedSettings = Settings{MSS: 1448, MinRTO: time.Second, AckEvery: 2, DelayedAck: 200 * time.Millisecond, AckFirst: true}

// Handshake is how cclab's side runs its handshake (-handshake): "auto"
// (the default since 2026-12-07 20:30 UTC) at TCP's sizes (tcp_handshake)
// at points of several flows, where it decides how flows starting together
// reach the bottleneck (docs/compat.md "Handshake timing"), and padded, as
// cclab's default, at single-flow points, whose figures stay those measured
// before; "tcp" or "padded" at every point.
var Handshake = "auto"

// PointSettings returns MatchedSettings for a point of the given number of
// flows, with the handshake Handshake chooses.
func PointSettings(flows int) Settings {
	s := MatchedSettings
	s.TCPHandshake = Handshake == "tcp" || Handshake == "auto" && flows > 1
	return s
}

// DefaultStacks are the stacks of the matched grid, each at the cclab
// settings that match ns-3 3.37 (docs/compat.md).
const DefaultStacks = "newreno=" + MatchedNewRenoCC + "/" + MatchedNewReno + ";" +
	"newreno-prr=" + MatchedNewRenoCC + "/" + MatchedPRR + ";" +
	"reno=" + MatchedLinuxRenoCC + "/" + MatchedLinuxRenoPRR + ";" +
	"cubic=" + MatchedCubicCC + "/" + MatchedCubicPRR + ";" +
	"vegas=" + MatchedVegasCC + "/" + MatchedPRR + ";bbr=bbr:rtorestore=false,ns3exit=true,ns3probertt=true/prr:partialrxt"

// MatchedNewRenoCC is the controller that matches ns-3 3.37's TcpNewReno
// (docs/compat.md): growth per ACK, one segment per ACK in slow start, and
// only on ACKs that move the cumulative point (TcpSocketBase::ProcessAck).
const MatchedNewRenoCC = "newreno:ca=acks,abc=1,grow=cum"

// MatchedLinuxRenoCC is the controller that matches ns-3 3.37's
// TcpLinuxReno with MatchedLinuxRenoPRR (docs/compat.md): byte counting,
// ssthresh = max(cwnd/2, 2 SMSS) as TcpLinuxReno::GetSsThresh, growth only
// on ACKs that move the cumulative point.
const MatchedLinuxRenoCC = "reno:halve=cwnd,grow=cum"

// MatchedLinuxRenoPRR is MatchedPRR with exitgrow: the ACK that ends
// recovery grows the window from ssthresh, as ns-3's ProcessAck does; with
// TcpLinuxReno's byte counting that ACK's cumulative advance adds whole
// segments (docs/compat.md).
const MatchedLinuxRenoPRR = MatchedPRR + ",exitgrow"

// MatchedCubicCC is the controller that matches ns-3 3.37's TcpCubic with
// MatchedCubicPRR (docs/compat.md): Linux's arithmetic without the
// Reno-friendly region, TcpCubic's slow start (ss=ns3) and counting
// (ca=ns3), growth by ProcessAck's cumulative segments (acks=ns3), and at
// every timeout ssthresh = 0.7 of the cwnd PRR set (rtoflight, rtoalways).
const MatchedCubicCC = "cubic:linux=true,friendly=false,ss=ns3,acks=ns3,ca=ns3,rtoflight,rtoalways"

// MatchedCubicPRR is MatchedPRR with the rest of ns-3 3.37's TcpSocketBase
// and TcpTxBuffer that CUBIC needs (docs/compat.md): growth on the ACK that
// ends recovery (exitgrow), losses marked during a timeout's recovery
// (rtomark), SACKed retransmissions kept in pipe until the cumulative
// ACK covers them (rxtpipe), and TcpPrrRecovery's own accounting, its
// uint32_t arithmetic and DeliveredData once per DoRecovery call
// (ns3acct; since 2026-12-07 23:40 UTC, with AckFirst: docs/compat.md
// "CUBIC four flows: the blow-ups traced to the start-up").
const MatchedCubicPRR = MatchedPRR + ",exitgrow,rtomark,rxtpipe,ns3acct"

// MatchedVegasCC is the controller that matches ns-3 3.37's TcpVegas
// (docs/compat.md): the smoothed RTT as every sample, whole-segment diff,
// per-ACK slow start, TcpNewReno's step in a round with few samples,
// GetSsThresh's one segment less, and no Vegas in CA_LOSS (ns3); that
// smoothed RTT as ns-3 computes it, from millisecond timestamps with its
// sampling rules (ns3rtt); Vegas off in CA_DISORDER and a new round at
// every return to CA_OPEN (ns3open). Since 2026-12-07 evening (issue #25:
// 16 seeds x 30 s within 0.955-1.066 of ns-3 at 0-5 % loss).
const MatchedVegasCC = "vegas:ns3=true,ns3rtt=true,ns3open=true"

// MatchedNewReno is the recovery that matches ns-3 3.37's TcpClassicRecovery
// without SACK (docs/compat.md): duplicate ACKs at exactly one past recover
// start a new recovery.
const MatchedNewReno = "newreno:atrecover"

// MatchedPRR is the recovery that matches ns-3 3.37's TcpPrrRecovery with
// SACK (docs/compat.md): ssthresh from the pipe, ns-3's SSRB variant, a
// retransmission on every partial ACK. Not rtohold: ns-3 3.37's
// ReTxTimeout clears the retransmitted flags before it tests the head, so it
// recomputes ssthresh at every timeout (docs/recovery.md).
const MatchedPRR = "prr:flight=pipe,bound=ns3,partialrxt"

// Scenario returns the scenario text of one point.
func Scenario(path Path, loss string, flows int, st Stack, set Settings, dur, warmup time.Duration) string {
	return fmt.Sprintf(`name: ns3cmp
duration: %s
warmup: %s
interval: 100ms
topology:
  kind: dumbbell
  bottleneck: {rate: %s, delay: %s, queue: %q, loss: %q}
flows:
  - {name: bulk, count: %d, traffic: greedy, cc: %q, recovery: %q, datagram: %dB, min_rto: %s, ack_every: %d, delayed_ack: %s, stagger: 0s, tcp_handshake: %v, ack_first: %v}
`, dur, warmup, path.Rate, path.Delay, path.Queue, loss, flows, st.CC, st.Recovery,
		transport.DatagramFor(set.MSS), set.MinRTO, set.AckEvery, set.DelayedAck, set.TCPHandshake, set.AckFirst)
}

// Outcome is one backend's figures for one run, summed over its flows.
type Outcome struct {
	Goodput     float64 // bits/s over the measurement window
	Retransmits float64 // packets
	RTOs        float64
	CPU         time.Duration
}

// Point builds the plan of one scenario text and seed.
func Point(text string, seed uint64) (*plan.Plan, error) {
	exp, err := scenario.ParseScenario("ns3cmp.yaml", []byte(text))
	if err != nil {
		return nil, err
	}
	return plan.New(exp.Points[0].Scenario, seed)
}

// traceDir, if set (-trace), receives the per-event traces of every run.
var traceDir string

// RunSim runs a plan in cclab's simulator; with -trace, its flows' qlogs go
// to traceDir/sim-<seed>/.
func RunSim(ctx context.Context, p *plan.Plan) (Outcome, error) {
	start := cpuNow()
	var opt simrun.Options
	if traceDir != "" {
		opt.QlogDir = filepath.Join(traceDir, fmt.Sprintf("sim-%d", p.Seed))
		if err := os.MkdirAll(opt.QlogDir, 0o755); err != nil {
			return Outcome{}, err
		}
	}
	s, err := simrun.Build(p, opt)
	if err != nil {
		return Outcome{}, err
	}
	res, err := s.Run(ctx)
	if err != nil {
		return Outcome{}, err
	}
	var o Outcome
	for _, f := range res.Metrics.Flows {
		o.Goodput += f.Values["mean_throughput"]
		o.Retransmits += f.Values["total_retransmissions"]
		o.RTOs += f.Values["total_rtos"]
	}
	o.CPU = cpuNow() - start
	return o, nil
}

// RunNS3 runs a plan in ns-3; with -trace, its sender events go to
// traceDir/ns3-<seed>.txt (the program's CCLAB_NS3_TRACE, docs/ns3.md).
func RunNS3(ctx context.Context, p *plan.Plan) (Outcome, error) {
	if cacheDir != "" && traceDir == "" {
		return cachedNS3(ctx, p)
	}
	return runNS3(ctx, p)
}

// verbose (-v) prints every seed's figures.
var verbose bool

// paired (-paired) runs every loss probability as hashed loss, the same
// packets dropped in both simulators, and reports per-seed paired ratios.
var paired bool

// PairedLoss is the hashed loss spec (link.HashedConfig) for a -loss value:
// a probability P or "bernoulli:p=P" becomes "hashed:p=P"; "0" and other
// specs are returned as they are.
func PairedLoss(loss string) string {
	if p, err := strconv.ParseFloat(loss, 64); err == nil {
		if p == 0 {
			return loss
		}
		return "hashed:p=" + loss
	}
	if rest, ok := strings.CutPrefix(loss, "bernoulli:"); ok {
		return "hashed:" + rest
	}
	return loss
}

// cacheDir, if set (-ns3cache), keeps ns-3's outcome of every plan and seed
// so that comparing several cclab stacks against the same ns-3 mapping runs
// ns-3 once.
var cacheDir string

// cachedNS3 is runNS3 through cacheDir, keyed by the program's input
// (ns3.Export: the plan as ns-3 runs it, seed included), so that cclab
// options ns-3 does not see share one entry.
func cachedNS3(ctx context.Context, p *plan.Plan) (Outcome, error) {
	key, err := ns3.Export(p)
	if err != nil {
		return runNS3(ctx, p)
	}
	file := filepath.Join(cacheDir, fmt.Sprintf("%x.json", sha256.Sum256(key)))
	var o Outcome
	if b, err := os.ReadFile(file); err == nil && json.Unmarshal(b, &o) == nil {
		return o, nil
	}
	o, err = runNS3(ctx, p)
	if err != nil {
		return o, err
	}
	if b, err := json.Marshal(o); err == nil {
		if err := os.MkdirAll(cacheDir, 0o755); err != nil {
			return o, err
		}
		if err := os.WriteFile(file, b, 0o644); err != nil {
			return o, err
		}
	}
	return o, nil
}

func runNS3(ctx context.Context, p *plan.Plan) (Outcome, error) {
	if traceDir != "" {
		if err := os.Setenv("CCLAB_NS3_TRACE", filepath.Join(traceDir, fmt.Sprintf("ns3-%d.txt", p.Seed))); err != nil {
			return Outcome{}, err
		}
		defer os.Unsetenv("CCLAB_NS3_TRACE")
	}
	res, err := ns3.Run(ctx, p)
	if err != nil {
		return Outcome{}, err
	}
	o := Outcome{CPU: res.CPU}
	for id, s := range res.Flows {
		o.Goodput += res.Goodput(id, p.Warmup, p.Duration)
		first, _ := ns3.At(s, p.Warmup, func(x ns3.FlowSample) time.Duration { return x.T })
		last := s[len(s)-1]
		if p.Warmup <= 0 {
			first = ns3.FlowSample{}
		}
		o.Retransmits += float64(last.Retransmits - first.Retransmits)
		o.RTOs += float64(last.RTOs - first.RTOs)
	}
	return o, nil
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "ns3cmp:", err)
		os.Exit(1)
	}
}

func run() error {
	stacks := flag.String("stacks", DefaultStacks,
		"stacks to compare, LABEL=CC/RECOVERY[/SIMRECOVERY] separated by ';' (cclab specs, mapped to ns-3 by backend/ns3; SIMRECOVERY replaces RECOVERY on cclab's side)")
	losses := flag.String("loss", "0,0.005,0.01,0.02,0.05", "bottleneck random loss probabilities, comma-separated")
	rate := flag.String("rate", "16Mbit", "bottleneck rate")
	delay := flag.String("delay", "7.5ms", "bottleneck one-way delay (the RTT is twice it)")
	queue := flag.String("queue", "droptail:20p", "bottleneck queue")
	flows := flag.Int("flows", 1, "bulk flows")
	seeds := flag.Int("seeds", 3, "seeds per point")
	dur := flag.Duration("duration", 15*time.Second, "run length")
	warmup := flag.Duration("warmup", 0, "excluded from the figures")
	flag.StringVar(&traceDir, "trace", "", "write per-event traces of every run to this directory (cclab's qlog per seed, ns-3's sender events per seed; use with one stack and one loss)")
	flag.BoolVar(&paired, "paired", false, "both simulators drop the same packets: each -loss probability P runs as link loss hashed:p=P, and the median ratio is the median of the per-seed ratios (docs/ns3.md)")
	flag.BoolVar(&verbose, "v", false, "print every seed's figures (sim / ns3)")
	flag.StringVar(&cacheDir, "ns3cache", "", "keep ns-3's outcome per plan and seed in this directory and reuse it (not with -trace)")
	flag.StringVar(&Handshake, "handshake", Handshake, "cclab's handshake: auto (TCP's sizes, tcp_handshake, with several flows; padded with one), tcp or padded")
	flag.BoolVar(&MatchedSettings.AckFirst, "ackfirst", MatchedSettings.AckFirst, "cclab's receiver acknowledges the first data segment at once, as ns-3's (ack_first)")
	bench := flag.String("bench", "", "instead: CPU time of both simulators on a dumbbell of each of these flow counts (e.g. 10,100,1000), one seed")
	flag.Parse()
	switch Handshake {
	case "auto", "tcp", "padded":
	default:
		return fmt.Errorf("-handshake %q: want auto, tcp or padded", Handshake)
	}
	ctx := context.Background()
	path := Path{*rate, *delay, *queue}
	if *bench != "" {
		return benchmark(ctx, path, *bench, *dur)
	}
	var sts []Stack
	for _, s := range strings.Split(*stacks, ";") {
		label, rest, ok1 := strings.Cut(s, "=")
		parts := strings.Split(rest, "/")
		if !ok1 || len(parts) < 2 || len(parts) > 3 {
			return fmt.Errorf("-stacks: %q: want LABEL=CC/RECOVERY[/SIMRECOVERY]", s)
		}
		st := Stack{Label: label, CC: parts[0], Recovery: parts[1]}
		if len(parts) == 3 {
			st.SimRecovery = parts[2]
		}
		sts = append(sts, st)
	}
	fmt.Printf("path %s/%s one way/%s, %d flow(s), %v, warm-up %v, %d seeds; mss %d, min RTO %v, ACK every %d / %v, first ACK at once %v, TCP handshake %v\n",
		*rate, *delay, *queue, *flows, *dur, *warmup, *seeds, MatchedSettings.MSS, MatchedSettings.MinRTO,
		MatchedSettings.AckEvery, MatchedSettings.DelayedAck, MatchedSettings.AckFirst, PointSettings(*flows).TCPHandshake)
	medianCol := "median ratio [95 % bootstrap]"
	if paired {
		medianCol = "paired median ratio [95 % bootstrap] (seeds within 1 %)"
	}
	fmt.Println("| stack | loss | sim goodput | ns3 goodput | ratio (min–max) | " + medianCol + " | sim retx | ns3 retx | retx ratio | sim/ns3 RTOs |")
	fmt.Println("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
	for _, st := range sts {
		for _, loss := range strings.Split(*losses, ",") {
			if paired {
				loss = PairedLoss(loss)
			}
			if err := comparePoint(ctx, path, loss, *flows, st, *seeds, *dur, *warmup); err != nil {
				return err
			}
		}
	}
	return nil
}

// Compare runs one point on both backends over seeds 1..seeds and returns
// the mean outcomes and the range of the per-seed goodput ratios. simText,
// if not empty, is the scenario cclab's simulator runs instead of text.
func Compare(ctx context.Context, text, simText string, seeds int) (sim, ref Outcome, lo, hi float64, err error) {
	c, err := CompareSeeds(ctx, text, simText, seeds)
	return c.Sim, c.Ref, c.Lo, c.Hi, err
}

// Comparison is one point's figures over its seeds: the mean outcomes, the
// range of the per-seed goodput ratios and every seed's goodput on each side
// (bits/s, seed i at index i-1).
type Comparison struct {
	Sim, Ref               Outcome
	Lo, Hi                 float64
	SimGoodput, RefGoodput []float64
}

// MedianRatio is the ratio of the seeds' median goodputs sim/ns3 with its
// 95 % percentile bootstrap interval (metrics.MedianRatio: the two sides'
// seeds resampled independently, as their random losses are independent
// draws).
func (c Comparison) MedianRatio() (ratio, lo, hi float64) {
	return metrics.MedianRatio(c.SimGoodput, c.RefGoodput, metrics.Confidence)
}

// CompareSeeds is Compare with every seed's goodput kept.
func CompareSeeds(ctx context.Context, text, simText string, seeds int) (Comparison, error) {
	var c Comparison
	c.Lo, c.Hi = math.Inf(1), 0
	simText = cmp.Or(simText, text)
	for seed := 1; seed <= seeds; seed++ {
		p, err := Point(text, uint64(seed))
		if err != nil {
			return c, err
		}
		ps, err := Point(simText, uint64(seed))
		if err != nil {
			return c, err
		}
		a, err := RunSim(ctx, ps)
		if err != nil {
			return c, err
		}
		b, err := RunNS3(ctx, p)
		if err != nil {
			return c, err
		}
		if verbose {
			fmt.Printf("seed %d: goodput %.2f / %.2f Mbit/s, retx %.0f / %.0f, RTOs %.0f / %.0f\n", seed,
				a.Goodput/1e6, b.Goodput/1e6, a.Retransmits, b.Retransmits, a.RTOs, b.RTOs)
		}
		if b.Goodput > 0 {
			r := a.Goodput / b.Goodput
			c.Lo, c.Hi = min(c.Lo, r), max(c.Hi, r)
		}
		c.SimGoodput, c.RefGoodput = append(c.SimGoodput, a.Goodput), append(c.RefGoodput, b.Goodput)
		n := float64(seeds)
		c.Sim.Goodput += a.Goodput / n
		c.Ref.Goodput += b.Goodput / n
		c.Sim.Retransmits += a.Retransmits / n
		c.Ref.Retransmits += b.Retransmits / n
		c.Sim.RTOs += a.RTOs / n
		c.Ref.RTOs += b.RTOs / n
	}
	return c, nil
}

// Texts returns the scenario of a point for ns-3 (text) and, if the stack
// gives cclab's side its own recovery, the scenario for cclab's simulator
// (simText; empty otherwise).
func Texts(path Path, loss string, flows int, st Stack, dur, warmup time.Duration) (text, simText string) {
	text = Scenario(path, loss, flows, st, PointSettings(flows), dur, warmup)
	if st.SimRecovery != "" {
		s := st
		s.Recovery = st.SimRecovery
		simText = Scenario(path, loss, flows, s, PointSettings(flows), dur, warmup)
	}
	return text, simText
}

func comparePoint(ctx context.Context, path Path, loss string, flows int, st Stack, seeds int, dur, warmup time.Duration) error {
	text, simText := Texts(path, loss, flows, st, dur, warmup)
	c, err := CompareSeeds(ctx, text, simText, seeds)
	if err != nil {
		return err
	}
	sim, ref, lo, hi := c.Sim, c.Ref, c.Lo, c.Hi
	mr, mlo, mhi := c.MedianRatio()
	within := ""
	if paired {
		mr, mlo, mhi = metrics.PairedMedianRatio(c.SimGoodput, c.RefGoodput, metrics.Confidence)
		n := 0
		for i, g := range c.SimGoodput {
			if math.Abs(g/c.RefGoodput[i]-1) <= 0.01 {
				n++
			}
		}
		within = fmt.Sprintf(" (%d/%d)", n, len(c.SimGoodput))
	}
	mark := ""
	if r := sim.Goodput / ref.Goodput; r < 0.9 || r > 1.1 {
		mark = " **"
	}
	fmt.Printf("| %s | %s | %.2f | %.2f | %.3f (%.3f–%.3f)%s | %.3f [%.3f–%.3f]%s | %.1f | %.1f | %.2f | %.1f / %.1f |\n", st.Label, loss,
		sim.Goodput/1e6, ref.Goodput/1e6, sim.Goodput/ref.Goodput, lo, hi, mark, mr, mlo, mhi, within, sim.Retransmits, ref.Retransmits,
		(sim.Retransmits+1)/(ref.Retransmits+1), sim.RTOs, ref.RTOs)
	return nil
}

// cpuNow is the process's CPU time so far (0 where unknown).
func cpuNow() time.Duration {
	d, _ := rusage.CPU()
	return d
}

// benchmark runs a dumbbell of n bulk CUBIC flows (SACK, PRR) for dur in
// both simulators, one after the other for each n, and prints their CPU
// times and the ratio ns-3 / cclab.
func benchmark(ctx context.Context, path Path, counts string, dur time.Duration) error {
	st := Stack{"cubic", MatchedCubicCC, MatchedCubicPRR, ""}
	fmt.Printf("dumbbell %s/%s/%s, %v, CUBIC + PRR bulk flows, seed 1\n", path.Rate, path.Delay, path.Queue, dur)
	fmt.Println("| flows | cclab sim CPU | ns-3 CPU | ns-3 / cclab | goodput sim / ns-3 |")
	fmt.Println("| --- | --- | --- | --- | --- |")
	// A first short run, not counted, so that one-time start-up costs of
	// the process (runtime, tables) are not charged to the first row.
	if p, err := Point(Scenario(path, "0", 1, st, PointSettings(1), time.Second, 0), 1); err == nil {
		if _, err := RunSim(ctx, p); err != nil {
			return err
		}
	}
	for _, c := range strings.Split(counts, ",") {
		var n int
		if _, err := fmt.Sscan(c, &n); err != nil || n < 1 {
			return fmt.Errorf("-bench: %q is not a flow count", c)
		}
		text, simText := Texts(path, "0", n, st, dur, 0)
		p, err := Point(text, 1)
		if err != nil {
			return err
		}
		ps, err := Point(cmp.Or(simText, text), 1)
		if err != nil {
			return err
		}
		a, err := RunSim(ctx, ps)
		if err != nil {
			return err
		}
		b, err := RunNS3(ctx, p)
		if err != nil {
			return err
		}
		fmt.Printf("| %d | %.2f s | %.2f s | %.1f | %.1f / %.1f Mbit/s |\n", n, a.CPU.Seconds(), b.CPU.Seconds(),
			b.CPU.Seconds()/a.CPU.Seconds(), a.Goodput/1e6, b.Goodput/1e6)
	}
	return nil
}
