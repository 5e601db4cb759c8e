package eval

import (
	"fmt"
	"strconv"
)

// A study (Scenario.Study) adds a section to the report laid out as the
// publication presents its results: its tables (and figures) built from the
// experiment's cases. studyReports maps a study to its section.
var studyReports = map[string]func(d *ReportData) (title string, tables []table, figs []figure, err error){
	StudyDCA:          dcaReport,
	StudyDCCPTCP:      dccpTCPReport,
	StudyFairQueueing: fairQueueingReport,
}

// studyParam renames one swept axis in a study table.
type studyParam struct{ Axis, Head string }

// studyColumn is one measured column of a study table: a metric of a flow
// (or of the network, ID 0), or with Share a flow's share of the aggregate
// throughput.
type studyColumn struct {
	Head   string
	Scope  Scope
	ID     int64
	Metric string
	Share  bool
}

// flowCol, shareCol and netCol build the usual columns.
func flowCol(head string, id int64) studyColumn {
	return studyColumn{Head: head, Scope: ScopeFlow, ID: id, Metric: "mean_throughput"}
}
func shareCol(head string, id int64) studyColumn {
	return studyColumn{Head: head, Scope: ScopeFlow, ID: id, Share: true}
}
func netCol(head, metric string) studyColumn {
	return studyColumn{Head: head, Scope: ScopeNetwork, Metric: metric}
}

// flowShares returns flow id's share of the aggregate throughput in every
// run of g that measured both.
func (g *Group) flowShares(id int64) []float64 {
	var shares []float64
	for _, r := range g.Runs {
		tp, ok1 := r.Value(ScopeFlow, id, "mean_throughput")
		agg, ok2 := r.Value(ScopeNetwork, 0, "agg_throughput")
		if ok1 && ok2 && agg > 0 {
			shares = append(shares, tp/agg)
		}
	}
	return shares
}

// shareCell formats the mean of shares as a percentage.
func shareCell(shares []float64) string {
	if len(shares) == 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f %%", 100*Summarize(shares).Mean)
}

// caseTable is one table of a study: a row per point of case caseName and
// backend (in point order), its swept parameters under the study's names,
// then the columns (mean ± 95 % CI over the seeds).
func (d *ReportData) caseTable(caseName, title, caption string, params []studyParam, cols []studyColumn) (table, bool) {
	t := table{Title: title, Caption: caption}
	for _, p := range params {
		t.Head = append(t.Head, p.Head)
	}
	t.Head = append(t.Head, "backend", "n")
	for _, c := range cols {
		t.Head = append(t.Head, c.Head)
	}
	for _, g := range d.Groups {
		if len(g.Runs) == 0 || g.param("case") != caseName {
			continue
		}
		var row []string
		for _, p := range params {
			row = append(row, g.param(p.Axis))
		}
		row = append(row, g.Backend, strconv.Itoa(len(g.Runs)))
		for _, c := range cols {
			if c.Share {
				row = append(row, shareCell(g.flowShares(c.ID)))
				continue
			}
			row = append(row, summaryCell(UnitOf(c.Scope, c.Metric), g.summary(c.Scope, c.ID, c.Metric)))
		}
		t.Rows = append(t.Rows, row)
	}
	return t, len(t.Rows) > 0
}

// caseTables builds the tables that have rows.
func (d *ReportData) caseTables(specs []caseTableSpec) []table {
	var out []table
	for _, s := range specs {
		if t, ok := d.caseTable(s.Case, s.Title, s.Caption, s.Params, s.Cols); ok {
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
