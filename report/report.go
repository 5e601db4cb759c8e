// Package report writes an experiment's HTML report from the store
// (docs/eval.md): tables, plots, figures, packet traces and model curves;
// studies add their own sections (Section, package report/studies).
package report

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"cclab/metrics"
	"cclab/scenario"
	"cclab/store"
)

// Group is the completed runs of one point on one backend.
type Group struct {
	Point   int
	Params  []scenario.Param
	Label   string
	Backend string
	Runs    []store.RunRecord // by seed
}

// Values returns the metric of every run of g (NaN where absent), in seed order.
func (g *Group) Values(scope metrics.Scope, id int64, metric string) []float64 {
	out := make([]float64, len(g.Runs))
	for i := range g.Runs {
		out[i], _ = g.Runs[i].Value(scope, id, metric)
	}
	return out
}

// bySeed returns the metric by seed.
func (g *Group) BySeed(scope metrics.Scope, id int64, metric string) map[uint64]float64 {
	out := map[uint64]float64{}
	for i := range g.Runs {
		if v, ok := g.Runs[i].Value(scope, id, metric); ok {
			out[g.Runs[i].Seed] = v
		}
	}
	return out
}

func (g *Group) Param(axis string) string {
	for _, p := range g.Params {
		if p.Axis == axis {
			return p.Value
		}
	}
	return ""
}

// ReportData is an experiment's results grouped for a report.
type ReportData struct {
	Experiment string
	Version    *store.VersionRecord  // the version reported on; nil for a store without versions
	Versions   []store.VersionRecord // every version of the experiment, newest first
	Source     string                // scenario YAML of the version ("" if it was not kept)
	Exp        *scenario.Experiment  // parsed scenario; nil if it no longer parses
	Axes       []scenario.Axis
	Baseline   []scenario.Param
	Groups     []*Group          // by point, then backend
	Failed     []store.RunRecord // runs whose last attempt failed
	Backends   []string          // backends with results
	Options    Options
	// trace loads a run's packet trace (Store.Trace) for the study
	// sections; nil: none (set while the report is rendered).
	Trace func(run int64) (int64, []metrics.TracePoint, error)
}

// LoadReport reads the runs of an experiment's version from the store and
// groups them: version is a sequence number (VersionRecord.Seq), 0 for the
// newest (last run) version. Runs of other versions are never included.
func LoadReport(ctx context.Context, st store.Store, experiment string, version int) (*ReportData, error) {
	exps, err := st.Experiments(ctx)
	if err != nil {
		return nil, err
	}
	d := &ReportData{Experiment: experiment}
	found := false
	for _, e := range exps {
		if e.Name == experiment {
			d.Source, found = e.Scenario, true
		}
	}
	if !found {
		var names []string
		for _, e := range exps {
			names = append(names, e.Name)
		}
		return nil, fmt.Errorf("no experiment %q in the store (stored: %s)", experiment, strings.Join(names, ", "))
	}
	if d.Versions, err = st.Versions(ctx, experiment); err != nil {
		return nil, err
	}
	for i := range d.Versions {
		if (version == 0 && i == 0) || d.Versions[i].Seq == version {
			d.Version = &d.Versions[i]
		}
	}
	if d.Version == nil && (version != 0 || len(d.Versions) > 0) {
		var have []string
		for _, v := range d.Versions {
			have = append(have, v.Label())
		}
		return nil, fmt.Errorf("experiment %q has no version v%d (stored: %s)", experiment, version, strings.Join(have, ", "))
	}
	var vid int64
	if d.Version != nil {
		vid, d.Source = d.Version.ID, d.Version.Scenario
	}
	if d.Source != "" {
		if exp, err := scenario.ParseScenario(experiment+".yaml", []byte(d.Source)); err == nil {
			d.Exp, d.Axes = exp, exp.Axes
			d.Baseline = exp.Base.Baseline
		}
	}
	runs, err := st.Runs(ctx, experiment, vid)
	if err != nil {
		return nil, err
	}
	idx := map[string]*Group{}
	for _, r := range runs {
		if r.Status != store.StatusDone {
			d.Failed = append(d.Failed, r)
			continue
		}
		k := strconv.Itoa(r.Point) + "/" + r.Backend
		g := idx[k]
		if g == nil {
			g = &Group{Point: r.Point, Params: r.Params, Backend: r.Backend, Label: scenario.Point{Params: r.Params}.Label(d.Axes)}
			idx[k] = g
			d.Groups = append(d.Groups, g)
			if !slices.Contains(d.Backends, r.Backend) {
				d.Backends = append(d.Backends, r.Backend)
			}
		}
		g.Runs = append(g.Runs, r)
	}
	// Axes from the stored params when the scenario no longer parses.
	if d.Axes == nil && len(d.Groups) > 0 {
		for _, p := range d.Groups[0].Params {
			a := scenario.Axis{Path: p.Axis, Short: scenario.ShortName(p.Axis)}
			for _, g := range d.Groups {
				if v := g.Param(p.Axis); !slices.Contains(a.Values, v) {
					a.Values = append(a.Values, v)
				}
			}
			d.Axes = append(d.Axes, a)
		}
	}
	sort.SliceStable(d.Groups, func(i, j int) bool {
		if d.Groups[i].Point != d.Groups[j].Point {
			return d.Groups[i].Point < d.Groups[j].Point
		}
		return d.Groups[i].Backend > d.Groups[j].Backend // sim before live
	})
	sort.Sort(sort.Reverse(sort.StringSlice(d.Backends)))
	return d, nil
}

// xAxis picks the swept parameter for the x axis: the first axis whose
// values are all numbers and that has several, else the first axis.
func (d *ReportData) xAxis() (scenario.Axis, bool) {
	for _, a := range d.Axes {
		if len(a.Values) < 2 {
			continue
		}
		numeric := true
		for _, v := range a.Values {
			if _, err := strconv.ParseFloat(v, 64); err != nil {
				numeric = false
			}
		}
		if numeric {
			return a, true
		}
	}
	for _, a := range d.Axes {
		if len(a.Values) > 1 {
			return a, true
		}
	}
	return scenario.Axis{}, false
}

// lineKey labels a group by its parameters other than the x axis.
func lineKey(g *Group, x scenario.Axis, axes []scenario.Axis) string {
	var parts []string
	for _, p := range g.Params {
		if p.Axis == x.Path {
			continue
		}
		parts = append(parts, scenario.AxisShort(axes, p.Axis)+"="+p.Value)
	}
	if len(parts) == 0 {
		return "all"
	}
	return strings.Join(parts, " ")
}

// figure is one plot, or a set of small multiples (Panels) sharing a
// legend and a caption.
type Figure struct {
	Title   string
	Caption string
	SVG     template.HTML   // one plot
	Panels  []template.HTML // small multiples
	Legend  template.HTML   // key shown above the panels
	Files   []string        // its plots as files beside the report (figfiles.go)
	names   []string        // its panels' names for their files (none: numbered)
}

type Table struct {
	Title   string
	Caption string
	Head    []string
	Rows    [][]string
}

// versionLine is one version of the experiment in the report's header.
type versionLine struct {
	Label, When, Note string
	Points, Runs      int
	This              bool
}

type reportPage struct {
	Title       string
	Description string
	Generated   string
	Version     string // cclab's version writing the report
	ExpVersion  string // "v2"
	ExpHash     string // the version's hash, shortened
	Newest      bool   // the version reported on is the newest
	Versions    []versionLine
	Source      string
	Settings    string
	Runs        int
	Failed      int
	HostLimited string // the banner: which runs were host-limited, "" if none
	Backends    string
	Axes        []scenario.Axis
	Ranking     []Table
	StudyTitle  string   // the study's section (Scenario.Study), laid out as the publication's tables and figures
	Study       []Table  // its tables
	StudyFigs   []Figure // its figures
	Figures     []Figure
	FigNote     string // what the comparison figures share
	Delay       []Figure
	CDFs        []Figure
	Tables      []Table
	Series      []seriesFigure
	FailedRows  [][]string
	Files       []string
	Summary     string     // the opening paragraph (summary)
	TOC         []tocEntry // the sections present, in order, with their anchors
}

// tocEntry is one line of the table of contents: a section's anchor and title.
type tocEntry struct{ ID, Title string }

// bottleneckOf returns the ID of the run's bottleneck link (the link whose
// info starts with "bottleneck", else the first link), or -1.
func bottleneckOf(r *store.RunRecord) int64 {
	for _, l := range r.Links {
		if strings.HasPrefix(l.Info, "bottleneck") {
			return l.ID
		}
	}
	if len(r.Links) > 0 {
		return r.Links[0].ID
	}
	return -1
}

// AggregateRow is one metric of one point and backend summarized over seeds.
type AggregateRow struct {
	Point   int              `json:"point"`
	Params  []scenario.Param `json:"params"`
	Backend string           `json:"backend"`
	Scope   metrics.Scope    `json:"scope"`
	ScopeID int64            `json:"scope_id"`
	Metric  string           `json:"metric"`
	Unit    string           `json:"unit"`
	N       int              `json:"n"`
	Mean    float64          `json:"mean"`
	SD      float64          `json:"sd"`
	CI95    float64          `json:"ci95"` // half-width of the t interval; NaN (null in JSON) when n < 2
	// CILow and CIHigh bound the reported 95 % interval (the t interval, or
	// the bootstrap interval where it would leave the metric's domain:
	// CIMethod); NaN when n < 2.
	CILow    float64 `json:"ci_low"`
	CIHigh   float64 `json:"ci_high"`
	CIMethod string  `json:"ci_method"`
}

// Aggregate summarizes every metric of every group over its seeds.
func (d *ReportData) Aggregate() []AggregateRow {
	var out []AggregateRow
	for _, g := range d.Groups {
		type key struct {
			scope  metrics.Scope
			id     int64
			metric string
		}
		var keys []key
		seen := map[key]bool{}
		for _, r := range g.Runs {
			for _, s := range r.Summaries {
				k := key{s.Scope, s.ScopeID, s.Metric}
				if !seen[k] {
					seen[k] = true
					keys = append(keys, k)
				}
			}
		}
		for _, k := range keys {
			s := g.Summary(k.scope, k.id, k.metric)
			out = append(out, AggregateRow{Point: g.Point, Params: g.Params, Backend: g.Backend, Scope: k.scope, ScopeID: k.id,
				Metric: k.metric, Unit: metrics.UnitOf(k.scope, k.metric), N: s.N, Mean: s.Mean, SD: s.SD, CI95: s.CI,
				CILow: s.Low, CIHigh: s.High, CIMethod: s.Method})
		}
	}
	return out
}

// jsonFloat writes NaN as null.
type jsonFloat float64

func (f jsonFloat) MarshalJSON() ([]byte, error) {
	if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
		return []byte("null"), nil
	}
	return json.Marshal(float64(f))
}

func writeAggregate(dir string, rows []AggregateRow) error {
	f, err := os.Create(filepath.Join(dir, "aggregate.csv"))
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	w.Write([]string{"point", "params", "backend", "scope", "scope_id", "metric", "unit", "n", "mean", "sd", "ci95", "ci_low", "ci_high", "ci_method"})
	num := func(v float64) string {
		if math.IsNaN(v) {
			return ""
		}
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	type jrow struct {
		AggregateRow
		Mean   jsonFloat `json:"mean"`
		SD     jsonFloat `json:"sd"`
		CI95   jsonFloat `json:"ci95"`
		CILow  jsonFloat `json:"ci_low"`
		CIHigh jsonFloat `json:"ci_high"`
	}
	var js []jrow
	for _, r := range rows {
		w.Write([]string{strconv.Itoa(r.Point), scenario.ParamsString(r.Params), r.Backend, string(r.Scope), strconv.FormatInt(r.ScopeID, 10),
			r.Metric, r.Unit, strconv.Itoa(r.N), num(r.Mean), num(r.SD), num(r.CI95), num(r.CILow), num(r.CIHigh), r.CIMethod})
		js = append(js, jrow{r, jsonFloat(r.Mean), jsonFloat(r.SD), jsonFloat(r.CI95), jsonFloat(r.CILow), jsonFloat(r.CIHigh)})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	b, err := json.MarshalIndent(js, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "aggregate.json"), b, 0o644)
}

// StudySection renders a study's own section of the report (Scenario.Study
// names the study): its title, tables and figures.
type Section func(d *ReportData) (title string, tables []Table, figs []Figure, err error)

// WriteReport writes the report of the experiment's newest version into
// outDir/<experiment>/ (WriteVersionReport).
func WriteReport(ctx context.Context, st store.Store, experiment, outDir string, studies map[string]Section) (string, error) {
	return WriteVersionReport(ctx, st, experiment, 0, outDir, studies)
}

// WriteVersionReport writes the report of one version of the experiment
// (VersionRecord.Seq; 0: the newest) into outDir/<experiment>/ for the
// newest and outDir/<experiment>/v<seq>/ for another: index.html (offline:
// inline SVG, no scripts or external resources), runs.json and runs.csv
// (every run's summaries), aggregate.json and aggregate.csv (summaries over
// seeds), with the section studies[Scenario.Study] if there is one. It
// returns the HTML file's path.
func WriteVersionReport(ctx context.Context, st store.Store, experiment string, version int, outDir string, studies map[string]Section) (string, error) {
	return WriteVersionReportWith(ctx, st, experiment, version, outDir, studies, Options{})
}

// Options are a report's choices beyond the data.
type Options struct {
	// IncludeHostLimited keeps host-limited live runs (run note
	// host_limited = 1, docs/metrics.md "Host-limited runs") in the
	// simulator-vs-live comparison; by default they are left out of it
	// (a starved host is not evidence about the model) and the report
	// opens with a banner counting them either way.
	IncludeHostLimited bool
}

// WriteVersionReportWith is WriteVersionReport with options.
func WriteVersionReportWith(ctx context.Context, st store.Store, experiment string, version int, outDir string, studies map[string]Section, opt Options) (string, error) {
	d, err := LoadReport(ctx, st, experiment, version)
	if err != nil {
		return "", err
	}
	d.Options = opt
	dir := filepath.Join(outDir, experiment)
	var vid int64
	if d.Version != nil {
		vid = d.Version.ID
		if version != 0 {
			dir = filepath.Join(dir, d.Version.Label())
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	for name, export := range map[string]func(context.Context, store.Store, string, int64, io.Writer) error{
		"runs.json": store.ExportJSON,
		"runs.csv":  store.ExportCSV,
	} {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			return "", err
		}
		if err := export(ctx, st, experiment, vid, f); err != nil {
			f.Close()
			return "", err
		}
		if err := f.Close(); err != nil {
			return "", err
		}
	}
	if err := writeAggregate(dir, d.Aggregate()); err != nil {
		return "", err
	}
	page := reportPage{Title: experiment, Generated: time.Now().UTC().Format("2006-01-02 15:04 UTC"), Version: store.Version,
		Source: d.Source, Failed: len(d.Failed), Backends: strings.Join(d.Backends, ", "), Axes: d.Axes,
		Settings: d.settingsText(), Files: []string{"runs.json", "runs.csv", "aggregate.json", "aggregate.csv"}, HostLimited: d.hostLimitedBanner()}
	if d.Exp != nil {
		page.Description = d.Exp.Base.Description
	}
	if d.Version != nil {
		page.ExpVersion, page.ExpHash, page.Newest = d.Version.Label(), d.Version.Hash[:12], d.Version.ID == d.Versions[0].ID
		for _, v := range d.Versions {
			page.Versions = append(page.Versions, versionLine{Label: v.Label(), When: v.LastUsed, Note: v.Note, Points: len(v.Points),
				Runs: v.Done, This: v.ID == d.Version.ID})
		}
	}
	for _, g := range d.Groups {
		page.Runs += len(g.Runs)
	}
	page.Ranking = d.rankingTables()
	if d.Exp != nil {
		d.Trace = func(run int64) (int64, []metrics.TracePoint, error) { return st.Trace(ctx, run) }
		if sr, ok := studies[d.Exp.Base.Study]; ok {
			if page.StudyTitle, page.Study, page.StudyFigs, err = sr(d); err != nil {
				return "", err
			}
		}
	}
	if page.Figures, page.FigNote, err = d.comparisonFigures(); err != nil {
		return "", err
	}
	if f, ok, err := d.delayThroughputFigure(); err != nil {
		return "", err
	} else if ok {
		page.Delay = append(page.Delay, f)
	}
	sc := newSeriesCache(ctx, st)
	if page.CDFs, err = d.cdfFigures(sc); err != nil {
		return "", err
	}
	page.Tables = append(page.Tables, d.summaryTable())
	for _, f := range []func() (Table, bool){d.perFlowTable, d.simLiveTable, d.simNS3Table, d.kernelTable, d.baselineTable, d.conditionsTable, d.provenanceTable} {
		if t, ok := f(); ok {
			page.Tables = append(page.Tables, t)
		}
	}
	if page.Series, err = d.seriesFigures(sc); err != nil {
		return "", err
	}
	for _, r := range d.Failed {
		page.FailedRows = append(page.FailedRows, []string{scenario.Point{Params: r.Params}.Label(d.Axes), r.Backend, strconv.FormatUint(r.Seed, 10), r.Error})
	}
	page.Summary, page.TOC = page.summary(), page.toc()
	if err := page.writeFigureFiles(dir); err != nil {
		return "", err
	}
	path := filepath.Join(dir, "index.html")
	f, err := os.Create(path)
	if err != nil {
		return "", err
	}
	if err := ReportTemplate.Execute(f, page); err != nil {
		f.Close()
		return "", err
	}
	return path, f.Close()
}

var ReportTemplate = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>cclab report: {{.Title}}</title>
{{template "style"}}
</head>
<body>
<h1>cclab report: {{.Title}}{{if .ExpVersion}} <small>{{.ExpVersion}}</small>{{end}}</h1>
{{if .Description}}<p>{{.Description}}</p>{{end}}
<p class="meta">{{.Runs}} completed runs on {{if .Backends}}{{.Backends}}{{else}}no backend{{end}}{{if .Failed}}, {{.Failed}} failed{{end}}.
Generated {{.Generated}} by cclab {{.Version}}.
Data: {{range $i, $f := .Files}}{{if $i}}, {{end}}<a href="{{$f}}">{{$f}}</a>{{end}}.</p>
{{if .HostLimited}}<p class="banner" id="host-limited"><b>Host-limited live runs.</b> {{.HostLimited}}</p>{{end}}
{{if .ExpVersion}}<p class="meta">Experiment version {{.ExpVersion}} (points hash {{.ExpHash}}){{if .Newest}}, the newest{{else}}, not the newest{{end}}:
only runs of exactly these points (same resolved scenario, same cclab build) are shown.
{{if gt (len .Versions) 1}}Versions in the database (cclab list; cclab report -experiment {{.Title}} -exp-version N):
{{range $i, $v := .Versions}}{{if $i}}; {{end}}{{if $v.This}}<b>{{$v.Label}}</b>{{else}}{{$v.Label}}{{end}} ({{$v.Points}} points, {{$v.Runs}} runs, last run {{$v.When}}{{if $v.Note}}; {{$v.Note}}{{end}}){{end}}.{{end}}</p>{{end}}
{{if .Axes}}<p>Swept: {{range $i, $a := .Axes}}{{if $i}}; {{end}}<code>{{$a.Path}}</code> ∈ { {{- range $j, $v := $a.Values}}{{if $j}}, {{end}}{{$v}}{{end}} }{{end}}.</p>{{end}}
<p class="summary" id="summary"><b>Summary.</b> {{.Summary}}</p>
<nav id="contents"><b>Contents:</b> {{range $i, $e := .TOC}}{{if $i}} · {{end}}<a href="#{{$e.ID}}">{{$e.Title}}</a>{{end}}</nav>

{{if .Ranking}}<h2 id="ranking">Ranking</h2>
{{range .Ranking}}<h3>{{.Title}}</h3>
<p class="meta">{{.Caption}}</p>
<table class="ranking">
<thead><tr>{{range .Head}}<th>{{.}}</th>{{end}}</tr></thead>
<tbody>{{range .Rows}}
<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>{{end}}
</tbody>
</table>
{{end}}{{end}}

{{if .StudyTitle}}<h2 id="study">{{.StudyTitle}}</h2>
{{range .Study}}<h3>{{.Title}}</h3>
{{template "table" .}}
{{end}}{{range .StudyFigs}}<figure>
<h3>{{.Title}}</h3>
<div class="grid">{{range .Panels}}<div>{{.}}</div>{{end}}</div>
<figcaption>{{.Caption}}</figcaption>
{{template "files" .Files}}
</figure>
{{end}}{{end}}

{{if .Figures}}<h2 id="comparison">Comparison across the sweep</h2>
<p class="meta">{{.FigNote}}</p>
{{range .Figures}}<figure>
<h3>{{.Title}}</h3>
{{if .Legend}}<div class="legend">{{.Legend}}</div>{{end}}
{{if .Panels}}<div class="grid">{{range .Panels}}<div>{{.}}</div>{{end}}</div>{{else}}{{.SVG}}{{end}}
<figcaption>{{.Caption}}</figcaption>
{{template "files" .Files}}
</figure>
{{end}}{{end}}

{{if .Delay}}<h2 id="delay">Throughput and delay</h2>
{{range .Delay}}<figure>
<h3>{{.Title}}</h3>
<div class="grid">{{range .Panels}}<div>{{.}}</div>{{end}}</div>
<figcaption>{{.Caption}}</figcaption>
{{template "files" .Files}}
</figure>
{{end}}{{end}}

{{range $i, $t := .Tables}}<h2 id="table-{{$i}}">{{$t.Title}}</h2>
{{template "table" .}}
{{end}}

{{if .CDFs}}<h2 id="distributions">Distributions</h2>
{{range .CDFs}}<details>
<summary>{{.Title}}</summary>
<figure>
{{if .Panels}}<div class="grid">{{range .Panels}}<div>{{.}}</div>{{end}}</div>{{else}}{{.SVG}}{{end}}
<figcaption>{{.Caption}}</figcaption>
{{template "files" .Files}}
</figure>
</details>
{{end}}{{end}}

{{if .Series}}<h2 id="series">Time series</h2>
<p class="meta">Every run of each point, the backends overlaid on one panel per metric: throughput at the receiver, congestion window and
smoothed RTT per flow, and the bottleneck's queue length. Each line is the median over a backend's runs (seeds) at each sample time,
the shaded band spans their minimum to their maximum; simulator solid, live dashed.</p>
{{range .Series}}<details>
<summary>{{.Label}} — {{.Runs}}</summary>
<figure>
{{.SVG}}
{{template "files" .Files}}
</figure>
</details>
{{end}}{{end}}

{{if .FailedRows}}<h2 id="failed">Failed runs</h2>
<table><thead><tr><th>point</th><th>backend</th><th>seed</th><th>error</th></tr></thead><tbody>
{{range .FailedRows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>
{{end}}</tbody></table>{{end}}

<h2 id="scenario">Scenario</h2>
{{if .Source}}<pre>{{.Source}}</pre>{{else}}<p class="meta">The scenario source of this version was not kept (runs migrated from schema 1).</p>{{end}}
{{if .Settings}}<details>
<summary>Resolved settings (the first run's; the others differ only in the swept parameters, backend and seed)</summary>
<pre>{{.Settings}}</pre>
</details>{{end}}
</body>
</html>
{{define "style"}}<style>
body { font-family: sans-serif; margin: 2em auto; max-width: 86em; padding: 0 1em; color: #222; }
h1 { font-size: 1.6em; } h2 { font-size: 1.3em; margin-top: 2em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; margin: 1em 0; font-size: 0.85em; display: block; overflow-x: auto; max-width: 100%; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.5em; text-align: right; }
th { background: #f0f0f0; } td:first-child, th:first-child { text-align: left; }
.banner { background: #fff3cd; border: 1px solid #e0b000; padding: 0.5em 1em; }
table.ranking td:nth-child(2) { text-align: left; font-weight: bold; }
figure { margin: 1.5em 0; } figcaption { font-size: 0.85em; color: #555; max-width: 60em; }
.grid { display: flex; flex-wrap: wrap; gap: 0.3em; }
.grid > div { flex: 0 0 auto; }
.legend { font-size: 0.85em; margin: 0.3em 0; }
.key { margin-right: 1.5em; white-space: nowrap; } .key svg { vertical-align: middle; }
pre { background: #f7f7f7; padding: 0.8em; overflow-x: auto; font-size: 0.85em; }
details { margin: 0.5em 0; } summary { cursor: pointer; }
.meta { color: #555; font-size: 0.9em; }
</style>{{end}}
{{define "files"}}{{if .}}<p class="meta">As files: {{range $i, $f := .}}{{if $i}}, {{end}}<a href="{{$f}}">{{$f}}</a>{{end}}</p>{{end}}{{end}}
{{define "table"}}<p class="meta">{{.Caption}}</p>
<table>
<thead><tr>{{range .Head}}<th>{{.}}</th>{{end}}</tr></thead>
<tbody>{{range .Rows}}
<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>{{end}}
</tbody>
</table>
{{end}}`))
