package report

import (
	"fmt"
	"strconv"
	"strings"
)

// summary is the report's opening paragraph: what ran, and per backend the
// ranking's first line by utilization and the line with the best power
// score (throughput against delay), read in a minute.
func (p *reportPage) summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d completed runs", p.Runs)
	if p.Backends != "" {
		fmt.Fprintf(&b, " on %s", p.Backends)
	}
	if p.Failed > 0 {
		fmt.Fprintf(&b, ", %d failed (listed under Failed runs)", p.Failed)
	}
	b.WriteString(".")
	for _, t := range p.Ranking {
		if len(t.Rows) == 0 || len(t.Head) < 5 {
			continue
		}
		_, backend, _ := strings.Cut(t.Title, ": ")
		top := t.Rows[0]
		fmt.Fprintf(&b, " %s: %s has the highest mean utilization (%s, p95 RTT %s)", capitalize(backend), top[1], top[2], top[3])
		bestRow, best := -1, -1.0
		for i, r := range t.Rows {
			if v, err := strconv.ParseFloat(r[4], 64); err == nil && v > best {
				bestRow, best = i, v
			}
		}
		if bestRow >= 0 && bestRow != 0 {
			fmt.Fprintf(&b, "; %s the best throughput for its delay (power score %s against %s)", t.Rows[bestRow][1], t.Rows[bestRow][4], top[4])
		} else if bestRow == 0 {
			b.WriteString(", and also the best throughput for its delay")
		}
		b.WriteString(".")
	}
	if len(p.Ranking) == 0 {
		b.WriteString(" No ranking: the sweep has no axis to rank lines over.")
	}
	return b.String()
}

// toc lists the sections the page has, in the page's order.
func (p *reportPage) toc() []tocEntry {
	var e []tocEntry
	add := func(ok bool, id, title string) {
		if ok {
			e = append(e, tocEntry{id, title})
		}
	}
	add(len(p.Ranking) > 0, "ranking", "Ranking")
	add(p.StudyTitle != "", "study", p.StudyTitle)
	add(len(p.Figures) > 0, "comparison", "Comparison across the sweep")
	add(len(p.Delay) > 0, "delay", "Throughput and delay")
	for i, t := range p.Tables {
		add(true, "table-"+strconv.Itoa(i), t.Title)
	}
	add(len(p.CDFs) > 0, "distributions", "Distributions")
	add(len(p.Series) > 0, "series", "Time series")
	add(len(p.FailedRows) > 0, "failed", "Failed runs")
	add(true, "scenario", "Scenario")
	return e
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
