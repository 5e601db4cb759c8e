package studies

import (
	"fmt"
	"math"
	"strings"

	"cclab/metrics"
	"cclab/report"
)

// The "Reproduction" table that opens every study section: each number of
// the publication the experiment file lists (scenario.Published, with its
// source), cclab's value with its 95 % interval per backend, and whether it
// lies inside the publication's interval or stated spread.

// measured is cclab's value of a published quantity on one backend.
type measured struct {
	Backend string
	S       metrics.Summary // mean and 95 % interval over the seeds
}

// valueFunc computes cclab's value of the published quantity id, one entry
// per backend with results; none if the study does not compute id.
type valueFunc func(d *report.ReportData, id string) []measured

// withReproduction puts the Reproduction table before the section's tables.
func withReproduction(sec report.Section, values valueFunc) report.Section {
	return func(d *report.ReportData) (string, []report.Table, []report.Figure, error) {
		title, tables, figs, err := sec(d)
		if t, ok := reproductionTable(d, values); ok {
			tables = append([]report.Table{t}, tables...)
		}
		return title, tables, figs, err
	}
}

// reproductionTable lists the experiment's published numbers beside cclab's.
func reproductionTable(d *report.ReportData, values valueFunc) (report.Table, bool) {
	if d.Exp == nil || d.Exp.Base == nil || len(d.Exp.Base.Published) == 0 {
		return report.Table{}, false
	}
	t := report.Table{Title: "Reproduction: the publication's numbers and cclab's",
		Caption: "Each number the study targets, as published (experiment file, key published, with its source), the publication's interval " +
			"or stated spread, and cclab's value per backend: mean over the seeds with its 95 % confidence interval. Inside: cclab's mean lies " +
			"in the publication's interval (or spread); \"–\" where the publication states none.",
		Head: []string{"quantity", "published", "interval or spread", "source", "backend", "n", "cclab", "inside"}}
	for _, p := range d.Exp.Base.Published {
		lo, hi := p.Range()
		pub, spread := fmtPub(p.Value, p.Unit), "–"
		if !math.IsNaN(lo) {
			spread = "[" + fmtPub(lo, p.Unit) + ", " + fmtPub(hi, p.Unit) + "]"
			if p.Tolerance > 0 {
				spread += fmt.Sprintf(" (±%g %%)", p.Tolerance*100)
			}
		}
		ms := values(d, p.ID)
		if len(ms) == 0 {
			t.Rows = append(t.Rows, []string{p.What, pub, spread, p.Source, "–", "0", "not run", "–"})
			continue
		}
		for _, m := range ms {
			cell, inside := "–", "–"
			if m.S.N > 0 {
				cell = fmtPub(m.S.Mean, p.Unit)
				if !math.IsNaN(m.S.CI) {
					cell += " [" + fmtPub(m.S.Mean-m.S.CI, p.Unit) + ", " + fmtPub(m.S.Mean+m.S.CI, p.Unit) + "]"
				}
				if !math.IsNaN(lo) {
					inside = "no"
					if m.S.Mean >= lo && m.S.Mean <= hi {
						inside = "yes"
					}
				}
			}
			t.Rows = append(t.Rows, []string{p.What, pub, spread, p.Source, m.Backend, fmt.Sprint(m.S.N), cell, inside})
		}
	}
	return t, true
}

// fmtPub formats a published or measured value in its unit.
func fmtPub(v float64, unit string) string {
	if unit == "%" {
		return fmt.Sprintf("%+.1f %%", v)
	}
	return fmt.Sprintf("%.3g", v)
}

// dcaValue computes the DCA study's quantities: "t8-1/<model>/throughput"
// and "t8-1/<model>/loss", the percent change of the measured flow's mean
// goodput and mean loss rate over the paired seeds, DCA (the first non-Reno
// controller of case single) against Reno, on the simulator, with the
// delta-method interval (metrics.Change.OfMeans). Not the mean of the
// per-seed changes (Table 8-1's columns): in short runs a seed whose Reno
// run saw few losses gives a large per-seed change, and their mean is biased
// upward (the quick form's Emory loss: +4.9 % per seed against −4.6 % of the
// means, docs/studies/dca.md).
func dcaValue(d *report.ReportData, id string) []measured {
	parts := strings.Split(id, "/")
	if len(parts) != 3 || parts[0] != "t8-1" {
		return nil
	}
	metric := map[string]string{"throughput": "mean_throughput", "loss": "loss_rate"}[parts[2]]
	if metric == "" {
		return nil
	}
	var base, v *report.Group
	for _, cc := range axisValues(d, DCACaseSingle, "cc") {
		g := dcaGroup(d, DCACaseSingle, map[string]string{"topology": parts[1], "cc": cc})
		if isReno(cc) {
			base = g
		} else if v == nil {
			v = g
		}
	}
	if base == nil || v == nil {
		return nil
	}
	c := pairedChange(d, base, v, metrics.ScopeFlow, 1, metric)
	return []measured{{Backend: v.Backend, S: c.OfMeans}}
}

// fqValue computes the fair-queueing study's quantities
// "t3/<discipline>/tcp-vs-drr": in case udp-tcp, the TCP flows' mean
// delivered packets under the discipline (fifo, red, fred, drr, csfq)
// relative to DRR's on the same seed and backend.
func fqValue(d *report.ReportData, id string) []measured {
	parts := strings.Split(id, "/")
	if len(parts) != 3 || parts[0] != "t3" || parts[2] != "tcp-vs-drr" {
		return nil
	}
	tcpMean := func(g *report.Group) map[uint64]float64 {
		out := map[uint64]float64{}
		for _, r := range g.Runs {
			var xs []float64
			for _, f := range r.Flows {
				if v, ok := r.Value(metrics.ScopeFlow, f.ID, "total_delivered"); ok && f.ID >= 2 {
					xs = append(xs, v)
				}
			}
			if len(xs) > 0 {
				out[r.Seed] = metrics.Summarize(xs).Mean
			}
		}
		return out
	}
	var out []measured
	for _, be := range d.Backends {
		var drr, q *report.Group
		for _, g := range d.Groups {
			if g.Backend != be || g.Param("case") != "udp-tcp" || len(g.Runs) == 0 {
				continue
			}
			name := strings.ToLower(fqDiscipline(g.Param("topology.bottleneck.queue")))
			if name == "drr" {
				drr = g
			}
			if name == parts[1] {
				q = g
			}
		}
		if drr == nil || q == nil {
			continue
		}
		base, v := tcpMean(drr), tcpMean(q)
		var ratios []float64
		for seed, x := range v {
			if b, ok := base[seed]; ok && b > 0 {
				ratios = append(ratios, x/b)
			}
		}
		if len(ratios) > 0 {
			out = append(out, measured{Backend: be, S: metrics.Summarize(ratios)})
		}
	}
	return out
}

// dccpValue computes the DCCP study's "<case>/<cc>/utilization": the
// network's bandwidth utilization in the point of the case whose DCCP
// controller (flows[1].cc) is cc, per backend.
func dccpValue(d *report.ReportData, id string) []measured {
	parts := strings.Split(id, "/")
	if len(parts) != 3 || parts[2] != "utilization" {
		return nil
	}
	var out []measured
	for _, g := range d.Groups {
		if len(g.Runs) > 0 && g.Param("case") == parts[0] && g.Param("flows[1].cc") == parts[1] {
			out = append(out, measured{Backend: g.Backend, S: g.Summary(metrics.ScopeNetwork, 0, "bw_utilization")})
		}
	}
	return out
}

// noValues is the value function of a study whose published findings are
// qualitative (answered in its own tables).
func noValues(*report.ReportData, string) []measured { return nil }
