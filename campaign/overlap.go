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

// Route returns the links a pair's data crosses, as the spec declares the
// network, one description for every replay backend: the sender's access
// link up ("up HOST"), then the relay's link for a pair via a relay
// ("relay NAME"; a relay forwards to one host, so its pairs cross it in
// one direction) or, between groups, the link from the sender's group to
// the receiver's ("groups A>B"), then the receiver's access link down
// ("down HOST").
func (s *Spec) Route(p Pair) []string {
	mid := s.Bottlenecks(p)
	if len(mid) == 2 { // inside a group: the access links
		return mid
	}
	return []string{"up " + p.From, mid[0], "down " + p.To}
}

// Bottlenecks returns the links of a pair's Route that can be its
// bottleneck: the relay's link, or between groups the groups' link (the
// access links of a wide-area path are taken to be faster), or inside a
// group (or between hosts without groups) both access links.
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

// Competes reports whether the data of pair o cross a link that can be
// pair t's bottleneck (o's Route meets t's Bottlenecks): a transfer of o
// running at the same time competes with t's there. Not symmetric: a
// wide-area transfer from a host competes with a transfer inside the
// host's group at the host's access link, but not the other way round.
func (s *Spec) Competes(t, o Pair) bool {
	route := s.Route(o)
	for _, b := range s.Bottlenecks(t) {
		if slices.Contains(route, b) {
			return true
		}
	}
	return false
}

// Overlap is a measured transfer and the campaign's other done transfers
// that ran while it ran and competed with it (Spec.Competes).
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
// its own and that competed with it (Spec.Competes). A transfer without
// a start time overlaps nothing. Failed attempts are not counted: how
// much they sent is not stored.
func Overlaps(sp *Spec, rows []Row) []Overlap {
	var done []Row
	for _, r := range final(sp, rows) {
		if r.Status == StatusDone {
			done = append(done, r)
		}
	}
	out := make([]Overlap, len(done))
	byStart := make([]int, 0, len(done)) // indexes of the transfers with a start, by start
	for i, r := range done {
		out[i].Row = r
		if !r.Start.IsZero() {
			byStart = append(byStart, i)
		}
	}
	slices.SortStableFunc(byStart, func(a, b int) int { return done[a].Start.Compare(done[b].Start) })
	for k, i := range byStart {
		r := done[i]
		// The later-started transfers that started before r ended:
		// each overlaps r, and r it.
		for _, j := range byStart[k+1:] {
			q := done[j]
			if !q.Start.Before(transferEnd(r)) {
				break
			}
			if !r.Start.Before(transferEnd(q)) { // q took no time
				continue
			}
			if sp.Competes(Pair{r.From, r.To}, Pair{q.From, q.To}) {
				out[i].With = append(out[i].With, q)
			}
			if sp.Competes(Pair{q.From, q.To}, Pair{r.From, r.To}) {
				out[j].With = append(out[j].With, r)
			}
		}
	}
	for i := range out {
		slices.SortStableFunc(out[i].With, func(a, b Row) int { return a.Start.Compare(b.Start) })
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
// starting at start, with a round-trip propagation delay of rtt (0: the
// case's path's).
type overlapFlow struct {
	name    string
	variant Variant
	start   time.Duration
	rtt     time.Duration
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
// replayed run for run. An overlapping transfer is replayed on the case's
// path (its rate, queue and loss) with its own path's min RTT where that
// is longer (a wide-area transfer at a host's access link); a shorter one
// cannot be had there and is the case's path's.
func overlapCases(sp *Spec, profiles []PathProfile, rows []Row) []replayCase {
	minRTT := map[Pair]time.Duration{}
	for _, pp := range profiles {
		minRTT[pp.Pair] = roundDelay(pp.MinRTT)
	}
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
				base := 2 * roundDelay(pp.MinRTT/2) // the topology's round trip (writeScenario)
				for j, w := range o.With {
					f := overlapFlow{name: fmt.Sprintf("with%d-%s", j+1, w.Variant), variant: variants[w.Variant], start: w.Start.Sub(first)}
					if rtt := minRTT[Pair{w.From, w.To}]; rtt > base {
						f.rtt = rtt
					}
					c.flows = append(c.flows, f)
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
		if f.rtt > 0 {
			stop += ", rtt: " + f.rtt.String()
		}
		fmt.Fprintf(b, "      - {name: %s, cc: %s, recovery: %s, traffic: %s%s, start: %s%s}\n", strconv.Quote(f.name), strconv.Quote(f.variant.CC),
			strconv.Quote(f.variant.Recovery), strconv.Quote(traffic), size, f.start.Round(time.Microsecond), stop)
	}
}
