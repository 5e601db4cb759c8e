// Package studies holds the report sections of the studies that reproduce a
// publication (DCA, fair queueing, ETH bulk transfers, DCCP vs TCP), laid out
// as the publication presents its results.
package studies

import (
	"html/template"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"cclab/metrics"
	"cclab/report"
	"cclab/scenario"
)

// A study (Scenario.Study) adds a section to the report laid out as the
// publication presents its results: its tables (and figures) built from the
// experiment's cases. StudySections maps a study to its section.
// Each section opens with the Reproduction table (reproduce.go).
var Sections = map[string]report.Section{
	scenario.StudyDCA:          withReproduction(dcaReport, dcaValue),
	scenario.StudyDCCPTCP:      withReproduction(dccpTCPReport, dccpValue),
	scenario.StudyFairQueueing: withReproduction(fairQueueingReport, fqValue),
	scenario.StudyETH:          withReproduction(ethReport, noValues),
}

// studyParam renames one swept axis in a study table.
type studyParam struct{ Axis, Head string }

// studyColumn is one measured column of a study table: a metric of a flow
// (or of the network, ID 0), or with Share a flow's share of the aggregate
// throughput.
type studyColumn struct {
	Head   string
	Scope  metrics.Scope
	ID     int64
	Metric string
	Share  bool
}

// flowCol, shareCol and netCol build the usual columns.
func flowCol(head string, id int64) studyColumn {
	return studyColumn{Head: head, Scope: metrics.ScopeFlow, ID: id, Metric: "mean_throughput"}
}
func shareCol(head string, id int64) studyColumn {
	return studyColumn{Head: head, Scope: metrics.ScopeFlow, ID: id, Share: true}
}
func netCol(head, metric string) studyColumn {
	return studyColumn{Head: head, Scope: metrics.ScopeNetwork, Metric: metric}
}

// caseTable is one table of a study: a row per point of case caseName and
// backend (in point order), its swept parameters under the study's names,
// then the columns (mean ± 95 % CI over the seeds).
func caseTable(d *report.ReportData, caseName, title, caption string, params []studyParam, cols []studyColumn) (report.Table, bool) {
	t := report.Table{Title: title, Caption: caption}
	for _, p := range params {
		t.Head = append(t.Head, p.Head)
	}
	t.Head = append(t.Head, "backend", "n")
	for _, c := range cols {
		t.Head = append(t.Head, c.Head)
	}
	for _, g := range d.Groups {
		if len(g.Runs) == 0 || g.Param("case") != caseName {
			continue
		}
		var row []string
		for _, p := range params {
			row = append(row, g.Param(p.Axis))
		}
		row = append(row, g.Backend, strconv.Itoa(len(g.Runs)))
		for _, c := range cols {
			if c.Share {
				row = append(row, report.ShareCell(g.FlowShares(c.ID)))
				continue
			}
			row = append(row, report.SummaryCell(metrics.UnitOf(c.Scope, c.Metric), g.Summary(c.Scope, c.ID, c.Metric)))
		}
		t.Rows = append(t.Rows, row)
	}
	return t, len(t.Rows) > 0
}

// caseTables builds the tables that have rows.
func caseTables(d *report.ReportData, specs []caseTableSpec) []report.Table {
	var out []report.Table
	for _, s := range specs {
		if t, ok := caseTable(d, s.Case, s.Title, s.Caption, s.Params, s.Cols); ok {
			out = append(out, t)
		}
	}
	return out
}

// caseTableSpec describes one caseTable.
type caseTableSpec struct {
	Case, Title, Caption string
	Params               []studyParam
	Cols                 []studyColumn
}

// studyLine is one line of a study figure: y against x, in point order.
type studyLine struct {
	Label string
	X, Y  []float64
}

// studyLineFigure draws lines with markers on one panel (a study figure
// such as throughput against delay); lines without points are left out.
func studyLineFigure(title, caption, xlabel, ylabel string, lines []studyLine) (report.Figure, bool, error) {
	p := report.NewPlot("", xlabel, ylabel)
	n := 0
	for i, l := range lines {
		if len(l.X) == 0 {
			continue
		}
		xy := make(plotter.XYs, len(l.X))
		for j := range l.X {
			xy[j].X, xy[j].Y = l.X[j], l.Y[j]
		}
		ln, pts, err := plotter.NewLinePoints(xy)
		if err != nil {
			return report.Figure{}, false, err
		}
		ln.Color, pts.Color = report.ColorAt(i), report.ColorAt(i)
		p.Add(ln, pts)
		p.Legend.Add(l.Label, ln, pts)
		n++
	}
	if n == 0 {
		return report.Figure{}, false, nil
	}
	svg, err := report.SvgOf(p, 6*vg.Inch, 3.5*vg.Inch)
	if err != nil {
		return report.Figure{}, false, err
	}
	return report.Figure{Title: title, Caption: caption, Panels: []template.HTML{template.HTML(svg)}}, true, nil
}

// caseLines collects, over the groups of cases with the prefix casePrefix
// (one backend), one line per key(g) with x(g) and y(g), dropping points
// where x or y is NaN; lines keep their first-seen order.
func caseLines(d *report.ReportData, casePrefix, backend string, key func(*report.Group) string, x, y func(*report.Group) float64) []studyLine {
	var out []studyLine
	idx := map[string]int{}
	for _, g := range d.Groups {
		if len(g.Runs) == 0 || g.Backend != backend || !strings.HasPrefix(g.Param("case"), casePrefix) {
			continue
		}
		xv, yv := x(g), y(g)
		if math.IsNaN(xv) || math.IsNaN(yv) {
			continue
		}
		k := key(g)
		i, ok := idx[k]
		if !ok {
			i = len(out)
			idx[k] = i
			out = append(out, studyLine{Label: k})
		}
		out[i].X = append(out[i].X, xv)
		out[i].Y = append(out[i].Y, yv)
	}
	return out
}
