package campaign

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
)

// StatusCounts are transfers by state.
type StatusCounts struct {
	Done    int // finished
	Failed  int // every allowed attempt failed (1 + schedule.retries)
	Pending int // not started, or failed with attempts left
}

// StatusLine is the state of one pair and variant over all rounds.
type StatusLine struct {
	Pair    Pair
	Variant string
	StatusCounts
	Attempts int            // failed attempts stored
	Causes   map[string]int // failed attempts by cause
}

// Summarize counts the plan's transfers per pair and variant from the
// stored rows of the spec's digest, in the spec's pair and variant order.
func Summarize(s *Spec, rows []Row) ([]StatusLine, error) {
	digest := s.Digest()
	done := map[int]bool{}
	failed := map[int]int{}
	causes := map[int]map[string]int{}
	for _, r := range rows {
		if r.Digest != digest {
			return nil, fmt.Errorf("campaign %s: row %s has spec digest %s, the spec's is %s", s.Name, r.ID, r.Digest, digest)
		}
		if r.Status == StatusDone {
			done[r.Seq] = true
			continue
		}
		failed[r.Seq]++
		if causes[r.Seq] == nil {
			causes[r.Seq] = map[string]int{}
		}
		causes[r.Seq][r.Cause]++
	}
	type key struct {
		p Pair
		v string
	}
	lines := map[key]*StatusLine{}
	var order []key // the spec's pairs, each with the spec's variants
	for _, p := range s.Pairs {
		for _, v := range s.Variants {
			k := key{p, v.Name}
			lines[k] = &StatusLine{Pair: p, Variant: v.Name, Causes: map[string]int{}}
			order = append(order, k)
		}
	}
	for _, it := range s.Plan() {
		l := lines[key{it.Pair, it.Variant.Name}]
		switch {
		case done[it.Seq]:
			l.Done++
		case failed[it.Seq] >= 1+s.Schedule.Retries:
			l.Failed++
		default:
			l.Pending++
		}
		l.Attempts += failed[it.Seq]
		for c, n := range causes[it.Seq] {
			l.Causes[c] += n
		}
	}
	out := make([]StatusLine, 0, len(order))
	for _, k := range order {
		out = append(out, *lines[k])
	}
	return out, nil
}

// WriteStatus writes the status table: one line per pair and variant with
// done, failed and pending transfers and the failed attempts by cause,
// then the totals.
func WriteStatus(w io.Writer, lines []StatusLine) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "path\tvariant\tdone\tfailed\tpending\tfailed attempts by cause")
	for _, l := range lines {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\n", l.Pair, l.Variant, l.Done, l.Failed, l.Pending, causeList(l.Causes, "-"))
	}
	tot, all := Totals(lines)
	fmt.Fprintf(tw, "total\t\t%d\t%d\t%d\t%s\n", tot.Done, tot.Failed, tot.Pending, causeList(all, "-"))
	return tw.Flush()
}

// Totals sums status lines: the transfers by state and the failed
// attempts by cause.
func Totals(lines []StatusLine) (StatusCounts, map[string]int) {
	var tot StatusCounts
	causes := map[string]int{}
	for _, l := range lines {
		tot.Done += l.Done
		tot.Failed += l.Failed
		tot.Pending += l.Pending
		for c, n := range l.Causes {
			causes[c] += n
		}
	}
	return tot, causes
}

// causeList writes counts by cause as "CAUSE N, ..." in the causes'
// order, or none for an empty map.
func causeList(m map[string]int, none string) string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	var parts []string
	for _, k := range ks {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	if len(parts) == 0 {
		return none
	}
	return strings.Join(parts, ", ")
}
