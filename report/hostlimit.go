package report

import (
	"fmt"
	"sort"
	"strings"

	"cclab/scenario"
	"cclab/store"
)

// Run notes of the host-limited mark (the live backend's NoteHostLimited
// and NoteHostReason; docs/metrics.md, "Host-limited runs").
const (
	noteHostLimited = "host_limited"
	noteHostReason  = "host_limited_"
)

// HostLimited reports whether a run was marked host-limited.
func HostLimited(r *store.RunRecord) bool { return r.Notes[noteHostLimited] == 1 }

// hostLimitedBanner describes the host-limited live runs for the report's
// banner: how many of how many, the reasons, and whether the sim/live
// comparison kept them; "" when there are none.
func (d *ReportData) hostLimitedBanner() string {
	n, live := 0, 0
	reasons := map[string]int{}
	for _, g := range d.Groups {
		if g.Backend != scenario.BackendLive {
			continue
		}
		for i := range g.Runs {
			live++
			if !HostLimited(&g.Runs[i]) {
				continue
			}
			n++
			for k, v := range g.Runs[i].Notes {
				if code, ok := strings.CutPrefix(k, noteHostReason); ok && v == 1 {
					reasons[code]++
				}
			}
		}
	}
	if n == 0 {
		return ""
	}
	var rs []string
	for code, k := range reasons {
		rs = append(rs, fmt.Sprintf("%s in %d", code, k))
	}
	sort.Strings(rs)
	kept := "They are left out of the simulator-vs-live comparison (cclab report -include-host-limited keeps them)."
	if d.Options.IncludeHostLimited {
		kept = "They are kept in the simulator-vs-live comparison (-include-host-limited)."
	}
	return fmt.Sprintf("%d of %d live runs were limited by the host, not the network (%s; see Run conditions and docs/metrics.md, "+
		"\"Host-limited runs\"): their results measure the machine. %s", n, live, strings.Join(rs, ", "), kept)
}

// withoutHostLimited returns g without its host-limited runs, unless the
// options keep them; nil if none is left.
func (d *ReportData) withoutHostLimited(g *Group) *Group {
	if g == nil || d.Options.IncludeHostLimited {
		return g
	}
	c := *g
	c.Runs = nil
	for i := range g.Runs {
		if !HostLimited(&g.Runs[i]) {
			c.Runs = append(c.Runs, g.Runs[i])
		}
	}
	if len(c.Runs) == 0 {
		return nil
	}
	return &c
}
