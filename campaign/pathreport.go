package campaign

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"math"
	"strconv"

	"cclab/internal/qlog"
	"cclab/metrics"
	"cclab/report"
)

// The campaign report's per-path part (docs/campaigns.md, "Report"): every
// path on its own, never averaged with paths of another kind.

// pathVariant is one path's transfers of one variant.
type pathVariant struct {
	pair    Pair
	kind    string // the path's group (PathGroup)
	variant string
	done    []Row
	failed  int
}

// byPathVariant groups the campaign's finished transfers by path and
// variant, in the spec's pair and variant order.
func byPathVariant(sp *Spec, rows []Row) []*pathVariant {
	type key struct {
		p Pair
		v string
	}
	m := map[key]*pathVariant{}
	for _, r := range final(sp, rows) {
		k := key{Pair{r.From, r.To}, r.Variant}
		pv := m[k]
		if pv == nil {
			pv = &pathVariant{pair: k.p, kind: PathGroup(r.FromGroup, r.ToGroup), variant: r.Variant}
			if _, ok := sp.Via[k.p]; ok {
				pv.kind += KindRelay
			}
			m[k] = pv
		}
		if r.Status == StatusDone {
			pv.done = append(pv.done, r)
		} else {
			pv.failed++
		}
	}
	var out []*pathVariant
	for _, p := range sp.Pairs {
		for _, v := range sp.Variants {
			if pv := m[key{p, v.Name}]; pv != nil {
				out = append(out, pv)
			}
		}
	}
	return out
}

func (pv *pathVariant) values(f func(Row) float64) []float64 {
	var xs []float64
	for _, r := range pv.done {
		xs = append(xs, f(r))
	}
	return xs
}

// pathTable is one row per path and variant: transfers, goodput,
// retransmissions and mean SRTT each with its 95 % interval, min RTT.
func pathTable(pvs []*pathVariant) report.Table {
	t := report.Table{Title: "Per path and variant",
		Caption: "Each measured path (from->to) and variant on its own; nothing is averaged across paths. Mean ± 95 % Student's t " +
			"half-width over the path's done transfers, or [low, high]† a percentile bootstrap interval where t would leave the " +
			"metric's domain. Goodput: bytes delivered × 8 / transfer time; retransmissions: retransmitted data packets per transfer; " +
			"RTT: the sender's mean smoothed RTT; min RTT: the smallest RTT sample of the path's transfers.",
		Head: []string{"path", "kind", "variant", "done", "failed", "goodput", "retransmissions", "mean SRTT", "min RTT"}}
	for _, pv := range pvs {
		nn := metrics.NonNegative
		minRTT := math.Inf(1)
		for _, r := range pv.done {
			if r.MinRTTms > 0 {
				minRTT = min(minRTT, r.MinRTTms/1e3)
			}
		}
		if math.IsInf(minRTT, 1) {
			minRTT = math.NaN()
		}
		t.Rows = append(t.Rows, []string{pv.pair.String(), pv.kind, pv.variant, strconv.Itoa(len(pv.done)), strconv.Itoa(pv.failed),
			report.SummaryCell("bit/s", metrics.SummarizeIn(pv.values(func(r Row) float64 { return r.GoodputBps }), nn)),
			report.SummaryCell("packet", metrics.SummarizeIn(pv.values(func(r Row) float64 { return float64(r.Retransmits) }), nn)),
			report.SummaryCell("s", metrics.SummarizeIn(pv.values(func(r Row) float64 { return r.MeanSRTTms / 1e3 }), nn)),
			report.FormatValue("s", minRTT)})
	}
	return t
}

// validationTable is the replay against the measurement (Compare), one row
// per path, variant and backend.
func validationTable(cs []Comparison) report.Table {
	t := report.Table{Title: "Replay against measurement (cclab campaign validate)",
		Caption: "Each path's profile replayed for every variant measured on it (the newest stored run of the experiment " +
			"<campaign>-validate; at least 10 seeds per path and variant). Measured and predicted: mean [95 % interval]; ratio: predicted / " +
			"measured of the means, with its range from the intervals' ends; ok when within ±25 %. Transfers their sender or receiver " +
			"marked host-limited are left out (counted in the last column); a cell with all of them host-limited is not compared. " +
			"The " + ReplayText(cs) + ".",
		Head: []string{"path", "variant", "backend", "goodput measured", "predicted", "ratio", "retransmissions measured", "predicted", "ratio",
			"RTT measured", "predicted", "ratio", "host-limited, left out"}}
	for _, c := range cs {
		row := []string{c.Pair.String(), c.Variant, report.BackendName(c.Backend)}
		for _, m := range c.Metrics() {
			row = append(row, SummaryText(m.Unit, m.Measured), SummaryText(m.Unit, m.Predicted), c.RatioText(m))
		}
		row = append(row, ExcludedText(c))
		t.Rows = append(t.Rows, row)
	}
	return t
}

// pathFigures draws per path the goodput CDF of each variant and, from the
// first stored sender qlog of each variant, its congestion window and
// smoothed RTT over time.
func pathFigures(sp *Spec, pvs []*pathVariant) ([]report.Figure, error) {
	var figs []report.Figure
	for _, p := range sp.Pairs {
		var curves []report.CDFCurve
		var cwnd, srtt []report.SeriesLine
		for i, v := range sp.Variants {
			for _, pv := range pvs {
				if pv.pair != p || pv.variant != v.Name || len(pv.done) == 0 {
					continue
				}
				curves = append(curves, report.CDFCurve{Label: v.Name, Color: i, Values: pv.values(func(r Row) float64 { return r.GoodputBps })})
				for _, r := range pv.done {
					if r.SenderQlog == "" {
						continue
					}
					t, c, s := qlogSeries([]byte(r.SenderQlog))
					cwnd = append(cwnd, report.SeriesLine{Label: v.Name, Color: i, T: t, V: c, Scale: 1e-3})
					srtt = append(srtt, report.SeriesLine{Label: v.Name, Color: i, T: t, V: s, Scale: 1e3})
					break
				}
			}
		}
		if len(curves) == 0 {
			continue
		}
		cdf, err := report.CDFSVG("goodput: "+p.String(), "goodput (Mbit/s)", "fraction of transfers ≤ x", 1e-6, curves)
		if err != nil {
			return nil, err
		}
		panels := []template.HTML{template.HTML(cdf)}
		caption := "The distribution of the path's transfers' goodput, a curve per variant."
		if len(cwnd) > 0 {
			ts, err := report.SeriesSVG([]report.SeriesPanel{{Title: "congestion window: " + p.String(), YLabel: "cwnd (kB)", Lines: cwnd},
				{Title: "smoothed RTT: " + p.String(), YLabel: "SRTT (ms)", Lines: srtt}})
			if err != nil {
				return nil, err
			}
			panels = append(panels, template.HTML(ts))
			caption += " Below it, each variant's first stored transfer with a sender qlog (transfer.qlog: true): the congestion " +
				"window and smoothed RTT after each recovery:metrics_updated record, over the time since the transfer's start."
		}
		figs = append(figs, report.Figure{Title: "Path " + p.String(), Caption: caption, Panels: panels})
	}
	return figs, nil
}

// maxSeriesPoints bounds the points drawn per qlog series.
const maxSeriesPoints = 400

// qlogSeries reads the congestion window (bytes) and smoothed RTT (s) of a
// sender qlog's recovery:metrics_updated records over time (s); at most
// maxSeriesPoints, evenly thinned. Malformed records are skipped.
func qlogSeries(trace []byte) (t, cwnd, srtt []float64) {
	var lastCwnd, lastSRTT float64
	for _, rec := range bytes.Split(trace, []byte{qlog.RecordSeparator}) {
		var r struct {
			Time float64 `json:"time"` // ms
			Name string  `json:"name"`
			Data struct {
				Cwnd *float64 `json:"congestion_window"`
				SRTT *float64 `json:"smoothed_rtt"` // ms
			} `json:"data"`
		}
		if len(bytes.TrimSpace(rec)) == 0 || json.Unmarshal(rec, &r) != nil || r.Name != "recovery:metrics_updated" {
			continue
		}
		if r.Data.Cwnd != nil {
			lastCwnd = *r.Data.Cwnd
		}
		if r.Data.SRTT != nil {
			lastSRTT = *r.Data.SRTT / 1e3
		}
		t, cwnd, srtt = append(t, r.Time/1e3), append(cwnd, lastCwnd), append(srtt, lastSRTT)
	}
	if n := len(t); n > maxSeriesPoints {
		var tt, cc, ss []float64
		for i := 0; i < n; i += (n + maxSeriesPoints - 1) / maxSeriesPoints {
			tt, cc, ss = append(tt, t[i]), append(cc, cwnd[i]), append(ss, srtt[i])
		}
		t, cwnd, srtt = tt, cc, ss
	}
	return t, cwnd, srtt
}

// pathSections is the campaign report's per-path tables (with the replay's
// when cs is not empty) and figures.
func pathSections(sp *Spec, rows []Row, cs []Comparison) ([]report.Table, []report.Figure, error) {
	pvs := byPathVariant(sp, rows)
	tables := []report.Table{pathTable(pvs)}
	if len(cs) > 0 {
		tables = append(tables, validationTable(cs))
	}
	figs, err := pathFigures(sp, pvs)
	if err != nil {
		return nil, nil, fmt.Errorf("campaign %s: plots: %w", sp.Name, err)
	}
	return tables, figs, nil
}
