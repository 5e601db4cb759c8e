package studies

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"cclab/metrics"
	"cclab/report"
)

// The fair-queueing study's report section (docs/studies/fair-queueing.md):
// the CSFQ paper's Tables 1-3 and Figures 6-7 as tables, one row per
// discipline. Flow numbers follow experiments/fair-queueing.yaml: flow 1 is
// the UDP (or ON/OFF, or measured, or TCP in "layered") flow, the rest the
// TCP (or layered) flows.

// fqPacket is the study's packet size, bytes (1000, as the paper's).
const fqPacket = 1000

// fqDisciplines names the queue specs of the study by the paper's names.
func fqDiscipline(q string) string {
	name, _, _ := strings.Cut(q, ":")
	if name == "droptail" {
		return "FIFO"
	}
	return strings.ToUpper(name)
}

// othersStat is, over g's runs, the mean of the per-run mean and standard
// deviation of metric across the flows numbered from first on (scaled),
// and the mean number of such flows that have the metric.
func othersStat(g *report.Group, first int64, metric string, scale float64) (mean, sd, n float64) {
	runs := 0
	for _, r := range g.Runs {
		var xs []float64
		for _, f := range r.Flows {
			if f.ID < first {
				continue
			}
			if v, ok := r.Value(metrics.ScopeFlow, f.ID, metric); ok {
				xs = append(xs, v*scale)
			}
		}
		n += float64(len(xs))
		if len(xs) == 0 {
			continue
		}
		s := metrics.Summarize(xs)
		mean += s.Mean
		if !math.IsNaN(s.SD) {
			sd += s.SD
		}
		runs++
	}
	if len(g.Runs) > 0 {
		n /= float64(len(g.Runs))
	}
	if runs == 0 {
		return math.NaN(), math.NaN(), n
	}
	return mean / float64(runs), sd / float64(runs), n
}

// meanOf is the mean over g's runs of a metric (NaN if none).
func meanOf(g *report.Group, scope metrics.Scope, id int64, metric string) float64 {
	s := g.Summary(scope, id, metric)
	if s.N == 0 {
		return math.NaN()
	}
	return s.Mean
}

func fnum(format string, v float64) string {
	if math.IsNaN(v) {
		return "–"
	}
	return fmt.Sprintf(format, v)
}

// fqRows calls row for each group of case c, in point order.
func fqRows(d *report.ReportData, c string, row func(g *report.Group) []string) [][]string {
	var rows [][]string
	for _, g := range d.Groups {
		if len(g.Runs) > 0 && g.Param("case") == c {
			rows = append(rows, append([]string{fqDiscipline(g.Param("topology.bottleneck.queue")), g.Backend}, row(g)...))
		}
	}
	return rows
}

func fairQueueingReport(d *report.ReportData) (string, []report.Table, []report.Figure, error) {
	var tables []report.Table
	add := func(t report.Table) {
		if len(t.Rows) > 0 {
			tables = append(tables, t)
		}
	}
	pkts := 1.0 / fqPacket // bytes -> packets
	add(report.Table{Title: "Table 3: 1 UDP flow at the link rate and 19 TCP flows",
		Caption: "10 Mbit/s with a 100 ms propagation delay (RTT 204 ms), 64-packet buffer: the TCP flows' mean delivered packets and their standard deviation across the 19 flows, " +
			"the UDP flow's throughput and share (the fair share is 1/20 = 5 %).",
		Head: []string{"discipline", "backend", "TCP mean (packets)", "TCP std (packets)", "UDP throughput", "UDP share"},
		Rows: fqRows(d, "udp-tcp", func(g *report.Group) []string {
			m, sd, _ := othersStat(g, 2, "total_delivered", pkts)
			return []string{fnum("%.0f", m), fnum("%.0f", sd), report.SummaryCell("bit/s", g.Summary(metrics.ScopeFlow, 1, "mean_throughput")),
				report.ShareCell(g.FlowShares(1))}
		})})
	add(report.Table{Title: "Table 1: an ON/OFF source and 19 TCP flows",
		Caption: "The ON/OFF source (exponential ON 100 ms and OFF 1900 ms, 10 Mbit/s while ON): packets it sent, had delivered and lost at the link.",
		Head:    []string{"discipline", "backend", "sent", "delivered", "dropped", "TCP mean (packets)"},
		Rows: fqRows(d, "onoff", func(g *report.Group) []string {
			m, _, _ := othersStat(g, 2, "total_delivered", pkts)
			return []string{fnum("%.0f", meanOf(g, metrics.ScopeFlow, 1, "total_packets_sent")), fnum("%.0f", meanOf(g, metrics.ScopeFlow, 1, "total_delivered")*pkts),
				fnum("%.0f", meanOf(g, metrics.ScopeFlow, 1, "total_link_drops")), fnum("%.0f", m)}
		})})
	add(report.Table{Title: "Table 2: 60 short TCP transfers next to a UDP flow at the link rate",
		Caption: "Each transfer is 20 packets (20 000 bytes); the mean and standard deviation of the transfer times of those that completed. " +
			"The run lasts until every transfer has completed, at most its duration: transfers still running then are censored (not in the " +
			"mean; their time is at least what remained of the run), and \"completed of 60\" says how many finished.",
		Head: []string{"discipline", "backend", "mean transfer time", "std", "completed of 60"},
		Rows: fqRows(d, "short-tcp", func(g *report.Group) []string {
			m, sd, n := othersStat(g, 2, "fct", 1)
			return []string{fnum("%.3f s", m), fnum("%.3f s", sd), fnum("%.1f", n)}
		})})
	for _, kind := range []string{"udp", "tcp"} {
		t := report.Table{Title: "Figure 6: normalized throughput of a " + strings.ToUpper(kind) + " flow across K congested links",
			Caption: "Each link (10 Mbit/s) also carries 10 UDP flows of 2 Mbit/s of its own; the flow's throughput over its fair share " +
				"C/11 (payload of 1000-byte packets with 28 bytes of header): 1 is fair.",
			Head: []string{"K"}}
		var cols []string
		vals := map[string]map[string]string{}
		for _, g := range d.Groups {
			c := g.Param("case")
			pre := "multihop-" + kind + "-"
			if len(g.Runs) == 0 || !strings.HasPrefix(c, pre) {
				continue
			}
			disc := fqDiscipline(strings.TrimPrefix(c, pre)+":") + " (" + g.Backend + ")"
			if strings.TrimPrefix(c, pre) == "fifo" {
				disc = "FIFO (" + g.Backend + ")"
			}
			if vals[disc] == nil {
				vals[disc] = map[string]string{}
				cols = append(cols, disc)
			}
			k := strings.TrimPrefix(g.Param("topology"), strings.TrimPrefix(c, pre)+"-k")
			fair := 10e6 / 11 * fqPacket / (fqPacket + 28)
			vals[disc][k] = fnum("%.2f", meanOf(g, metrics.ScopeFlow, 1, "mean_throughput")/fair)
		}
		t.Head = append(t.Head, cols...)
		for k := 1; k <= 5; k++ {
			row := []string{strconv.Itoa(k)}
			for _, c := range cols {
				v := vals[c][strconv.Itoa(k)]
				if v == "" {
					v = "–"
				}
				row = append(row, v)
			}
			t.Rows = append(t.Rows, row)
		}
		if len(cols) > 0 {
			add(t)
		}
	}
	var figs []report.Figure
	for _, kind := range []string{"udp", "tcp"} {
		pre := "multihop-" + kind + "-"
		for _, be := range d.Backends {
			lines := caseLines(d, pre, be, func(g *report.Group) string { return fqDiscipline(strings.TrimPrefix(g.Param("case"), pre) + ":") },
				func(g *report.Group) float64 {
					k, err := strconv.Atoi(g.Param("topology")[strings.LastIndex(g.Param("topology"), "-k")+2:])
					if err != nil {
						return math.NaN()
					}
					return float64(k)
				},
				func(g *report.Group) float64 {
					return meanOf(g, metrics.ScopeFlow, 1, "mean_throughput") / (10e6 / 11 * fqPacket / (fqPacket + 28))
				})
			f, ok, err := studyLineFigure("Figure 6: normalized throughput of a "+strings.ToUpper(kind)+" flow vs congested links ("+be+")",
				"Throughput over the fair share C/11 of the flow crossing K congested links (the table above).",
				"congested links K", "normalized throughput", lines)
			if err != nil {
				return "", nil, nil, err
			}
			if ok {
				figs = append(figs, f)
			}
		}
	}
	add(report.Table{Title: "Figure 7: one TCP and three layered (RLM-style) flows on a 4 Mbit/s link",
		Caption: "Mean receiving rate of each flow over the run (7 layers of 2^(i+4) kbit/s, i = 1..7); the rates over 1 s intervals are the time series below.",
		Head:    []string{"discipline", "backend", "TCP", "layered 1", "layered 2", "layered 3"},
		Rows: fqRows(d, "layered", func(g *report.Group) []string {
			var row []string
			for id := int64(1); id <= 4; id++ {
				row = append(row, report.SummaryCell("bit/s", g.Summary(metrics.ScopeFlow, id, "mean_throughput")))
			}
			return row
		})})
	return "The fair-queueing study (Stoica, Shenker, Zhang, SIGCOMM 1998; docs/studies/fair-queueing.md)", tables, figs, nil
}
