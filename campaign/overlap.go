package campaign

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The campaign as its own cross traffic (docs/campaigns.md, "Overlapping
// transfers"): a measured transfer that shared its bottleneck with other
// transfers of the campaign is replayed with them, at their offsets, in
// the same simulated network.

// Bottlenecks returns the links a pair's data crosses that can be its
// bottleneck, as the spec declares the network, one description for every
// replay backend: a pair via a relay crosses the relay's link ("relay
// NAME"; a relay forwards to one host, so its pairs share one direction);
// a pair between groups the link from the sender's group to the
// receiver's ("groups A>B"); a pair inside a group (or between hosts
// without groups) the sender's access link up ("up HOST") and the
// receiver's down ("down HOST"). Two pairs share a bottleneck when their
// lists meet (SharedBottleneck).
func (s *Spec) Bottlenecks(p Pair) []string {
	if r, ok := s.RelayOf(p); ok {
		return []string{"relay " + r.Name}
	}
	from, to := s.Host(p.From).Group, s.Host(p.To).Group
	if PathGroup(from, to) == GroupInter {
		return []string{"groups " + from + ">" + to}
	}
	return []string{"up " + p.From, "down " + p.To}
}

// SharedBottleneck reports whether the data of two pairs cross a common
// bottleneck (Bottlenecks).
func (s *Spec) SharedBottleneck(p, q Pair) bool {
	qs := s.Bottlenecks(q)
	for _, b := range s.Bottlenecks(p) {
		if slices.Contains(qs, b) {
			return true
		}
	}
	return false
}

// Overlap is a measured transfer and the campaign's other done transfers
// that ran while it ran on a bottleneck it crossed too.
type Overlap struct {
	Row  Row
	With []Row // in start order
}

// transferEnd is when a transfer ended: its start (the sender's wall
// clock at its start) plus its transfer time.
func transferEnd(r Row) time.Time {
	return r.Start.Add(time.Duration(r.Seconds * float64(time.Second)))
}

// Overlaps returns each done transfer (final, in plan order) with the
// done transfers whose time span ([Start, Start + Seconds]) intersected
// its own on a shared bottleneck (SharedBottleneck). A transfer without
// a start time overlaps nothing. Failed attempts are not counted: how
// much they sent is not stored.
func Overlaps(sp *Spec, rows []Row) []Overlap {
	var done []Row
	for _, r := range final(sp, rows) {
		if r.Status == StatusDone {
			done = append(done, r)
		}
	}
	out := make([]Overlap, 0, len(done))
	for i, r := range done {
		o := Overlap{Row: r}
		for j, q := range done {
			if i == j || r.Start.IsZero() || q.Start.IsZero() || !q.Start.Before(transferEnd(r)) || !r.Start.Before(transferEnd(q)) ||
				!sp.SharedBottleneck(Pair{r.From, r.To}, Pair{q.From, q.To}) {
				continue
			}
			o.With = append(o.With, q)
		}
		slices.SortStableFunc(o.With, func(a, b Row) int { return a.Start.Compare(b.Start) })
		out = append(out, o)
	}
	return out
}

// replayCase is one measured transfer's replay when the overlapping
// transfers are modelled: a case of the replay experiment on the
// transfer's path (path: its profile's topology name) with its own seeds,
// its flows the transfer's and its overlaps' (the measured one first),
// each at its start offset from the earliest of them.
type replayCase struct {
	name    string // "<variant>#<seq>"
	path    string
	variant string
	seq     int
	seeds   []uint64
	flows   []overlapFlow
}

// overlapFlow is one flow of a replayCase: a transfer of the variant
// starting at start.
type overlapFlow struct {
	name    string
	variant Variant
	start   time.Duration
}

// replayCaseName names a transfer's case: its variant and plan sequence
// number (variant names have no '#').
func replayCaseName(variant string, seq int) string { return variant + "#" + strconv.Itoa(seq) }

// overlapCases returns the replay cases of every done transfer on the
// profiled paths, per path and variant in the profiles' and the spec's
// order: a cell of n transfers gets ceil(ValidateSeeds/n) seeds per
// transfer, distinct across the cell (the i-th transfer's from i·k+1), so
// that the cell is replayed at least ValidateSeeds times as when each
// path is replayed alone, and a campaign simulated with seed = round is
// replayed run for run.
func overlapCases(sp *Spec, profiles []PathProfile, rows []Row) []replayCase {
	type cell struct {
		pair    Pair
		variant string
	}
	byCell := map[cell][]Overlap{}
	for _, o := range Overlaps(sp, rows) {
		k := cell{Pair{o.Row.From, o.Row.To}, o.Row.Variant}
		byCell[k] = append(byCell[k], o)
	}
	variants := map[string]Variant{}
	for _, v := range sp.Variants {
		variants[v.Name] = v
	}
	var out []replayCase
	for _, pp := range profiles {
		for _, v := range sp.Variants {
			os := byCell[cell{pp.Pair, v.Name}]
			k := (ValidateSeeds + len(os) - 1) / max(len(os), 1)
			for i, o := range os {
				c := replayCase{name: replayCaseName(v.Name, o.Row.Seq), path: pp.Name, variant: v.Name, seq: o.Row.Seq}
				for s := range k {
					c.seeds = append(c.seeds, uint64(i*k+s+1))
				}
				first := o.Row.Start
				for _, w := range o.With {
					if w.Start.Before(first) {
						first = w.Start
					}
				}
				c.flows = append(c.flows, overlapFlow{name: v.Name, variant: v, start: o.Row.Start.Sub(first)})
				for j, w := range o.With {
					c.flows = append(c.flows, overlapFlow{name: fmt.Sprintf("with%d-%s", j+1, w.Variant), variant: variants[w.Variant], start: w.Start.Sub(first)})
				}
				out = append(out, c)
			}
		}
	}
	return out
}

// overlapped reports whether the case replays other transfers beside the
// measured one.
func (c replayCase) overlapped() bool { return len(c.flows) > 1 }

// writeCase writes the case into a replay scenario: its topology, seeds,
// duration (dur after the last flow's start) and flows (traffic and size
// as every replay flow's; a timed transfer stops dur after its start).
func (c replayCase) writeCase(b *strings.Builder, dur time.Duration, traffic, size string, timed bool) {
	last := time.Duration(0)
	for _, f := range c.flows {
		last = max(last, f.start)
	}
	fmt.Fprintf(b, "  - name: %s\n    topology: %s\n    seeds: %s\n    duration: %s\n    flows:\n", strconv.Quote(c.name), strconv.Quote(c.path),
		strings.ReplaceAll(fmt.Sprint(c.seeds), " ", ", "), (dur + last).Round(time.Millisecond))
	for _, f := range c.flows {
		stop := ""
		if timed {
			stop = ", stop: " + (f.start + dur).String()
		}
		fmt.Fprintf(b, "      - {name: %s, cc: %s, recovery: %s, traffic: %s%s, start: %s%s}\n", strconv.Quote(f.name), strconv.Quote(f.variant.CC),
			strconv.Quote(f.variant.Recovery), strconv.Quote(traffic), size, f.start.Round(time.Microsecond), stop)
	}
}
