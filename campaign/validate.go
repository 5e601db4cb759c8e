package campaign

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"cclab/eval"
	"cclab/metrics"
	"cclab/scenario"
	"cclab/store"
)

// The closed loop (docs/campaigns.md, "Validate"): each measured path's
// profile replayed for every variant measured on it, and the replay's
// goodput, retransmissions and RTT held against the measurement.

// ValidateTolerance is the relative difference within which a replay
// predicts a measurement: |predicted/measured − 1| ≤ 25 %.
const ValidateTolerance = 0.25

// ValidateSeeds is the least number of seeds each path and variant is
// replayed with: the replay's mean is then the model's expectation, not
// a second sample as small as the measurement's (a campaign of 2 rounds
// replayed with 2 seeds put the noise of both into the ratio).
const ValidateSeeds = 10

// ValidationName is the replay experiment's name in the results store:
// "<campaign>-validate". Its scenario source names the campaign and its
// spec digest; its runs are found by the points of ValidationExperiment.
func ValidationName(sp *Spec) string { return sp.Name + "-validate" }

// ValidationExperiment is the replay of the campaign's measured paths on the
// given backends (sim, live; nil: sim): the profile scenario
// (WriteProfileScenario) with seeds 1, 2, ... up to the measured rounds
// or ValidateSeeds, whichever is more (at most scenario.MaxRuns), with the
// campaign's transfer size or duration. A campaign simulated with those
// seeds (a test over known paths) is replayed run for run.
func ValidationExperiment(sp *Spec, profiles []PathProfile, backends []string) (*scenario.Experiment, error) {
	rp := replay{name: ValidationName(sp), backends: backends, header: "# Replay of campaign %s (spec digest %s): cclab campaign validate.\n"}
	for r := 1; r <= min(max(sp.Schedule.Rounds, ValidateSeeds), scenario.MaxRuns); r++ {
		rp.seeds = append(rp.seeds, uint64(r))
	}
	return replayExperiment(sp, profiles, rp)
}

// replayExperiment writes the replay scenario (writeScenario) and parses
// it.
func replayExperiment(sp *Spec, profiles []PathProfile, rp replay) (*scenario.Experiment, error) {
	var b bytes.Buffer
	if err := writeScenario(&b, sp, profiles, rp); err != nil {
		return nil, err
	}
	exp, err := scenario.ParseScenario(ValidationName(sp)+".yaml", b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("campaign %s: the replay scenario: %w", sp.Name, err)
	}
	return exp, nil
}

// OverlapExperiment is ValidationExperiment with the campaign's own
// transfers as cross traffic (docs/campaigns.md, "Overlapping
// transfers"): one case per measured transfer (overlapCases), named
// "<variant>#<seq>", on its path's topology, replaying it with the done
// transfers that overlapped it and competed with it (Overlaps), each of
// its own variant and size, at their start offsets. With the live backend
// among backends no flow gets a round trip of its own (the relay has one
// access delay for all flows), on either backend.
func OverlapExperiment(sp *Spec, profiles []PathProfile, rows []Row, backends []string) (*scenario.Experiment, error) {
	cases := overlapCases(sp, profiles, rows)
	if slices.Contains(backends, scenario.BackendLive) {
		// The relay folds one access delay into its first hop for all
		// flows (backend/live): every backend replays the same
		// network, so no flow has a round trip of its own.
		for _, c := range cases {
			for i := range c.flows {
				c.flows[i].rtt = 0
			}
		}
	}
	return replayExperiment(sp, profiles, replay{name: ValidationName(sp), backends: backends, seeds: []uint64{1}, cases: cases,
		header: "# Replay of campaign %s (spec digest %s) with its overlapping transfers: cclab campaign validate.\n"})
}

// ValidateOptions configure Validate.
type ValidateOptions struct {
	Store    store.Store
	Runners  map[string]eval.Runner // by backend (eval.SweepOptions.Runners)
	Backends []string               // sim and/or live; nil: sim
	Progress func(eval.ProgressEvent)
	Log      io.Writer
	// IncludeHostLimited compares the replay with every measured transfer,
	// host-limited ones too (Compare).
	IncludeHostLimited bool
	// Alone replays each path alone (ValidationExperiment) instead of
	// each transfer with the campaign's transfers that overlapped it
	// (OverlapExperiment).
	Alone bool
}

// Validate replays the campaign's measured paths (ValidationExperiment)
// into the results store through eval.Sweep (runs already stored are kept)
// and returns the comparisons with the measurement.
func Validate(ctx context.Context, sp *Spec, rows []Row, opt ValidateOptions) ([]Comparison, eval.SweepStats, error) {
	profiles := Profiles(sp, rows)
	exp, err := OverlapExperiment(sp, profiles, rows, opt.Backends)
	if opt.Alone {
		exp, err = ValidationExperiment(sp, profiles, opt.Backends)
	}
	if err != nil {
		return nil, eval.SweepStats{}, err
	}
	stats, err := eval.Sweep(ctx, exp, eval.SweepOptions{Store: opt.Store, Runners: opt.Runners, Backends: opt.Backends,
		Progress: opt.Progress, Log: opt.Log})
	if err != nil {
		return nil, stats, err
	}
	vs, err := opt.Store.Versions(ctx, exp.Name)
	if err != nil {
		return nil, stats, err
	}
	for _, v := range vs {
		if v.Seq == stats.Version {
			runs, err := opt.Store.Runs(ctx, exp.Name, v.ID)
			return Compare(sp, rows, profiles, runs, opt.IncludeHostLimited), stats, err
		}
	}
	return nil, stats, fmt.Errorf("%s: version v%d not stored", exp.Name, stats.Version)
}

// StoredComparisons compares the measurement with the replay runs of the
// newest stored version of the campaign's replay experiment (the last
// validate; none: nil), for the campaign report, without the host-limited
// transfers (Compare).
func StoredComparisons(ctx context.Context, st store.Store, sp *Spec, rows []Row) ([]Comparison, error) {
	vs, err := st.Versions(ctx, ValidationName(sp))
	if err != nil || len(vs) == 0 {
		return nil, err
	}
	runs, err := st.Runs(ctx, ValidationName(sp), vs[0].ID)
	if err != nil {
		return nil, err
	}
	return Compare(sp, rows, Profiles(sp, rows), runs, false), nil
}

// Comparison is one path and variant replayed on one backend against what
// the campaign measured on that path.
type Comparison struct {
	Path     string  // the profile's topology name
	Pair     Pair    // the measured direction
	LossRate float64 // the path's measured loss (PathProfile.LossRate)
	Variant  string
	Backend  string
	// Goodput (bit/s), Retransmissions (packets per transfer) and RTT
	// (the sender's mean smoothed RTT, s).
	Goodput, Retransmissions, RTT MetricComparison
	// Transfers counts the measured transfers of the path and variant
	// (done); Excluded of them were host-limited and left out of the
	// comparison, for the reasons in Exclusions ("sender cpu_busy 2,
	// receiver timer_late 1"; a transfer can have several).
	Transfers, Excluded int
	Exclusions          string
	// Overlaps says the replay modelled the campaign's overlapping
	// transfers (OverlapExperiment), not the path alone; Overlapped of
	// the compared transfers had at least one.
	Overlaps   bool
	Overlapped int
}

// HostLimitedOnly reports whether every measured transfer was host-limited
// and left out: the cell is not compared (neither within nor a miss).
func (c Comparison) HostLimitedOnly() bool { return c.Transfers > 0 && c.Excluded == c.Transfers }

// Metrics returns the three comparisons in table order.
func (c Comparison) Metrics() []MetricComparison {
	return []MetricComparison{c.Goodput, c.Retransmissions, c.RTT}
}

// MetricComparison is one metric measured and predicted: each side's mean
// with its 95 % interval (metrics.SummarizeIn over the transfers and over
// the replay's seeds), the ratio of the means predicted/measured, the
// ratio's range from the intervals' ends (predicted low / measured high to
// predicted high / measured low; NaN without both intervals), and whether
// the ratio is within ValidateTolerance of 1.
type MetricComparison struct {
	Name, Unit          string
	Measured, Predicted metrics.Summary
	Ratio               float64
	RatioLo, RatioHi    float64
	Within              bool
}

// NewMetricComparison compares measured and predicted values of a metric.
// Two zero means (no retransmissions on either side) are a ratio of 1.
func NewMetricComparison(name, unit string, measured, predicted []float64) MetricComparison {
	m := MetricComparison{Name: name, Unit: unit, Measured: metrics.SummarizeIn(measured, metrics.NonNegative),
		Predicted: metrics.SummarizeIn(predicted, metrics.NonNegative), Ratio: math.NaN(), RatioLo: math.NaN(), RatioHi: math.NaN()}
	switch {
	case m.Measured.N == 0 || m.Predicted.N == 0:
		return m
	case m.Measured.Mean == 0 && m.Predicted.Mean == 0:
		m.Ratio = 1
	case m.Measured.Mean > 0:
		m.Ratio = m.Predicted.Mean / m.Measured.Mean
	default:
		m.Ratio = math.Inf(1)
	}
	if m.Measured.Low > 0 && !math.IsNaN(m.Predicted.Low) {
		m.RatioLo, m.RatioHi = m.Predicted.Low/m.Measured.High, m.Predicted.High/m.Measured.Low
	}
	m.Within = math.Abs(m.Ratio-1) <= ValidateTolerance
	return m
}

// TransferGoodput is a replayed flow's goodput as an agent measures a
// transfer's (bytes delivered × 8 over the time from the first data to the
// sender's receipt of the receiver's report, sent at the last delivery):
// total_delivered × 8 / (fct + min_rtt / 2) for a sized flow that
// completed, else mean_throughput (a timed transfer: its duration). vals
// are the flow's summary metrics by name.
func TransferGoodput(vals map[string]float64) float64 {
	fct, ok := vals["fct"]
	if !ok || fct <= 0 {
		return vals["mean_throughput"]
	}
	return vals["total_delivered"] * 8 / (fct + vals["min_rtt"]/2)
}

// replayFlow is one replay run's flow values.
type replayFlow struct{ goodput, retx, rtt float64 }

// replayRun is one replay run's measured flow: of the transfer of plan
// sequence number seq (its OverlapExperiment case), or of the path (seq
// -1: ValidationExperiment).
type replayRun struct {
	seq        int
	overlapped bool
	replayFlow
}

// Compare pairs the measured transfers (done rows) of each path and
// variant with the replay runs (one version's: ValidationExperiment's
// points, by their topology and case parameters), per backend, in the
// profiles' and the spec's variant order. Transfers that their sender or
// receiver marked host-limited (docs/metrics.md, "Host-limited runs") are
// left out and counted, unless includeHostLimited: a replay of the network
// cannot contain the host's stalls. Runs of OverlapExperiment's cases
// (a transfer replayed with its overlaps) count for their transfer's path
// and variant, those of a transfer left out are left out too.
func Compare(sp *Spec, rows []Row, profiles []PathProfile, runs []store.RunRecord, includeHostLimited bool) []Comparison {
	type key struct{ path, variant, backend string }
	cases := map[string]replayCase{}
	predicted := map[key][]replayRun{}
	for i := range runs {
		r := &runs[i]
		if r.Status != store.StatusDone || len(r.Flows) == 0 {
			continue
		}
		var kk key
		for _, pr := range r.Params {
			switch pr.Axis {
			case "topology":
				kk.path = pr.Value
			case scenario.CaseAxis:
				kk.variant = pr.Value
			}
		}
		kk.backend = r.Backend
		seq, overlapped := -1, false
		if strings.Contains(kk.variant, "#") {
			if len(cases) == 0 {
				for _, c := range overlapCases(sp, profiles, rows) {
					cases[c.name] = c
				}
			}
			c, ok := cases[kk.variant]
			if !ok {
				continue // a transfer no longer in the campaign's rows
			}
			kk.path, kk.variant, seq, overlapped = c.path, c.variant, c.seq, c.overlapped()
		}
		if kk.path == "" && len(profiles) == 1 { // one topology: no axis
			kk.path = profiles[0].Name
		}
		if kk.variant == "" && len(sp.Variants) == 1 {
			kk.variant = sp.Variants[0].Name
		}
		id := r.Flows[0].ID
		val := func(m string) float64 { v, _ := r.Value(metrics.ScopeFlow, id, m); return v }
		vals := map[string]float64{}
		for _, m := range []string{"fct", "min_rtt", "total_delivered", "mean_throughput"} {
			if v, ok := r.Value(metrics.ScopeFlow, id, m); ok {
				vals[m] = v
			}
		}
		predicted[kk] = append(predicted[kk], replayRun{seq, overlapped, replayFlow{TransferGoodput(vals), val("total_retransmissions"), val("mean_srtt")}})
	}
	measured := map[key][]replayFlow{}
	type exclusions struct {
		transfers, excluded int
		reasons             map[string]int
		left                map[int]bool // plan sequence numbers left out
	}
	excluded := map[key]*exclusions{}
	for _, r := range final(sp, rows) {
		if r.Status != StatusDone {
			continue
		}
		k := key{r.From + "->" + r.To, r.Variant, ""}
		ex := excluded[k]
		if ex == nil {
			ex = &exclusions{reasons: map[string]int{}, left: map[int]bool{}}
			excluded[k] = ex
		}
		ex.transfers++
		if why := transferHostLimits(r); len(why) > 0 && !includeHostLimited {
			ex.excluded++
			ex.left[r.Seq] = true
			for _, w := range why {
				ex.reasons[w]++
			}
			continue
		}
		measured[k] = append(measured[k], replayFlow{r.GoodputBps, float64(r.Retransmits), r.MeanSRTTms / 1e3})
	}
	var out []Comparison
	for _, pp := range profiles {
		for _, v := range sp.Variants {
			mk := key{pp.Pair.String(), v.Name, ""}
			meas, ex := measured[mk], excluded[mk]
			for _, be := range []string{scenario.BackendSim, scenario.BackendLive} {
				var pred []replayFlow
				overlaps, overlapped := false, map[int]bool{}
				for _, r := range predicted[key{pp.Name, v.Name, be}] {
					if ex != nil && ex.left[r.seq] {
						continue
					}
					pred = append(pred, r.replayFlow)
					overlaps = overlaps || r.seq >= 0
					if r.overlapped {
						overlapped[r.seq] = true
					}
				}
				if ex == nil || ex.transfers == 0 || len(pred) == 0 {
					continue
				}
				col := func(fs []replayFlow, f func(replayFlow) float64) []float64 {
					var xs []float64
					for _, x := range fs {
						xs = append(xs, f(x))
					}
					return xs
				}
				out = append(out, Comparison{Path: pp.Name, Pair: pp.Pair, LossRate: pp.LossRate, Variant: v.Name, Backend: be,
					Goodput: NewMetricComparison("goodput", "bit/s", col(meas, func(x replayFlow) float64 { return x.goodput }),
						col(pred, func(x replayFlow) float64 { return x.goodput })),
					Retransmissions: NewMetricComparison("retransmissions", "packet", col(meas, func(x replayFlow) float64 { return x.retx }),
						col(pred, func(x replayFlow) float64 { return x.retx })),
					RTT: NewMetricComparison("RTT", "s", col(meas, func(x replayFlow) float64 { return x.rtt }),
						col(pred, func(x replayFlow) float64 { return x.rtt })),
					Transfers: ex.transfers, Excluded: ex.excluded, Exclusions: exclusionText(ex.reasons), Overlaps: overlaps, Overlapped: len(overlapped)})
			}
		}
	}
	return out
}

// WriteComparisons writes the comparisons as a text table, one line per
// path, variant and backend: each metric measured and predicted with their
// intervals, the ratio with "ok" when within ±25 % ("host-limited: not
// compared" when every transfer was host-limited), and the host-limited
// transfers left out (ExcludedText); a first line says how the paths were
// replayed (ReplayText).
func WriteComparisons(w io.Writer, cs []Comparison) error {
	var b strings.Builder
	b.WriteString(ReplayText(cs) + "\n")
	fmt.Fprintf(&b, "%-28s %-14s %-4s %-36s %-36s %-26s %-30s %s\n", "path", "variant", "be", "goodput measured", "goodput predicted", "ratio",
		"retransmissions / RTT ratio", "host-limited, left out")
	for _, c := range cs {
		fmt.Fprintf(&b, "%-28s %-14s %-4s %-36s %-36s %-26s %-30s %s\n", c.Path, c.Variant, c.Backend,
			SummaryText(c.Goodput.Unit, c.Goodput.Measured), SummaryText(c.Goodput.Unit, c.Goodput.Predicted), c.RatioText(c.Goodput),
			c.RatioText(c.Retransmissions)+" / "+c.RatioText(c.RTT), ExcludedText(c))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// ReplayText says how the comparisons' replay was run: each transfer with
// the campaign's transfers that overlapped it, with how many of the
// compared transfers had any, or each path alone.
func ReplayText(cs []Comparison) string {
	n, over := 0, 0
	for _, c := range cs {
		if !c.Overlaps {
			return "replay: each path alone, without the campaign's overlapping transfers (cclab campaign validate -alone)"
		}
		n += c.Transfers - c.Excluded
		over += c.Overlapped
	}
	return fmt.Sprintf("replay: each transfer with the campaign's transfers that overlapped it at its bottleneck (%d of %d compared transfers had one; -alone: each path alone)", over, n)
}

// SummaryText is "mean [low, high]" with the metric's unit scaled (bit/s
// in Mbit/s, s in ms), or just the mean without an interval.
func SummaryText(unit string, s metrics.Summary) string {
	scale, u := displayUnit(unit)
	if s.N == 0 {
		return "-"
	}
	if math.IsNaN(s.Low) {
		return fmt.Sprintf("%.3g %s (n=%d)", s.Mean/scale, u, s.N)
	}
	return fmt.Sprintf("%.3g [%.3g, %.3g] %s", s.Mean/scale, s.Low/scale, s.High/scale, u)
}

// displayUnit is the scale and unit a metric's values are written in
// (bit/s in Mbit/s, s in ms).
func displayUnit(unit string) (scale float64, u string) {
	switch unit {
	case "bit/s":
		return 1e6, "Mbit/s"
	case "s":
		return 1e-3, "ms"
	case "packet":
		return 1, "pkts"
	}
	return 1, unit
}

// NotCompared is a cell's ratio when every measured transfer was
// host-limited and left out.
const NotCompared = "host-limited: not compared"

// RatioText is RatioText(m), or NotCompared when the cell's transfers
// were all host-limited.
func (c Comparison) RatioText(m MetricComparison) string {
	if c.HostLimitedOnly() {
		return NotCompared
	}
	return RatioText(m)
}

// ExcludedText is "E of N: reasons" for the host-limited transfers left
// out of the cell, "-" for none.
func ExcludedText(c Comparison) string {
	if c.Excluded == 0 {
		return "-"
	}
	return fmt.Sprintf("%d of %d: %s", c.Excluded, c.Transfers, c.Exclusions)
}

// RatioText is "ratio [lo, hi] ok" (or "off" outside ±25 %). With nothing
// measured and something predicted there is no ratio: "n/a (+D unit)",
// the absolute difference.
func RatioText(m MetricComparison) string {
	if math.IsNaN(m.Ratio) {
		return "-"
	}
	if math.IsInf(m.Ratio, 1) {
		scale, u := displayUnit(m.Unit)
		return fmt.Sprintf("n/a (+%.3g %s)", m.Predicted.Mean/scale, u)
	}
	verdict := "off"
	if m.Within {
		verdict = "ok"
	}
	if math.IsNaN(m.RatioLo) {
		return fmt.Sprintf("%.2f %s", m.Ratio, verdict)
	}
	return fmt.Sprintf("%.2f [%.2f, %.2f] %s", m.Ratio, m.RatioLo, m.RatioHi, verdict)
}
