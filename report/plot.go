package report

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"cclab/metrics"
	"cclab/scenario"
)

// palette holds line colours (Okabe–Ito, readable by colour-blind readers).
var palette = []color.Color{
	color.RGBA{0, 114, 178, 255},   // blue
	color.RGBA{213, 94, 0, 255},    // vermillion
	color.RGBA{0, 158, 115, 255},   // bluish green
	color.RGBA{204, 121, 167, 255}, // reddish purple
	color.RGBA{230, 159, 0, 255},   // orange
	color.RGBA{86, 180, 233, 255},  // sky blue
	color.RGBA{0, 0, 0, 255},       // black
	color.RGBA{240, 228, 66, 255},  // yellow
}

func ColorAt(i int) color.Color { return palette[i%len(palette)] }

// svgOf renders p as an SVG document without the XML prolog, for inlining.
func SvgOf(p *plot.Plot, w, h vg.Length) (string, error) {
	wt, err := p.WriterTo(w, h, "svg")
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	if _, err := wt.WriteTo(&b); err != nil {
		return "", err
	}
	s := b.String()
	if i := strings.Index(s, "<svg"); i > 0 {
		s = s[i:]
	}
	return s, nil
}

func NewPlot(title, xlabel, ylabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xlabel
	p.Y.Label.Text = ylabel
	p.Y.Tick.Marker = shortTicks{}
	p.Add(plotter.NewGrid())
	p.Legend.Top = true
	p.Legend.Left = false
	return p
}

type XyErr struct {
	plotter.XYs
	plotter.YErrors
}

// panel is one time-series panel: lines, bands (a median over runs with
// its spread), and optional marks (e.g. losses) drawn as crosses at the
// bottom of the panel.
type panel struct {
	Title, YLabel string
	Lines         []tsLine
	Bands         []bandLine
	Marks         []float64 // x positions (s) of marks
	MarkLabel     string
}

// bandLine is a median line over runs with a shaded band from the runs'
// minimum to their maximum at each time.
type bandLine struct {
	Label          string
	Color          int
	Dashed         bool
	T, Med, Lo, Hi []float64
	Runs           int     // runs it summarizes
	Scale          float64 // multiply values (unit conversion); 0 means 1
}

type tsLine struct {
	Label string
	Color int
	T, V  []float64
	Scale float64 // multiply values (unit conversion); 0 means 1
}

// timeSeriesSVG renders panels stacked vertically, sharing the time axis.
func timeSeriesSVG(panels []panel) (string, error) {
	var svgs []string
	for _, pn := range panels {
		p := NewPlot(pn.Title, "time (s)", pn.YLabel)
		ymax := 0.0
		for _, l := range pn.Lines {
			sc := l.Scale
			if sc == 0 {
				sc = 1
			}
			pts := make(plotter.XYs, 0, len(l.T))
			for i := range l.T {
				pts = append(pts, plotter.XY{X: l.T[i], Y: l.V[i] * sc})
				ymax = math.Max(ymax, l.V[i]*sc)
			}
			if len(pts) == 0 {
				continue
			}
			ln, err := plotter.NewLine(pts)
			if err != nil {
				return "", err
			}
			ln.Color = ColorAt(l.Color)
			ln.Width = vg.Points(1.2)
			p.Add(ln)
			if l.Label != "" && len(pn.Lines) > 1 {
				p.Legend.Add(l.Label, ln)
			}
		}
		for _, b := range pn.Bands {
			top, err := addBand(p, b)
			if err != nil {
				return "", err
			}
			ymax = math.Max(ymax, top)
		}
		if len(pn.Marks) > 0 {
			pts := make(plotter.XYs, 0, len(pn.Marks))
			for _, t := range pn.Marks {
				pts = append(pts, plotter.XY{X: t, Y: 0})
			}
			s, err := plotter.NewScatter(pts)
			if err != nil {
				return "", err
			}
			s.Shape = draw.CrossGlyph{}
			s.Color = color.RGBA{200, 0, 0, 255}
			s.Radius = vg.Points(3)
			p.Add(s)
			p.Legend.Add(pn.MarkLabel, s)
		}
		p.Y.Min = 0
		if ymax > 0 {
			p.Y.Max = ymax * 1.1
		}
		p.X.Tick.Marker = stepTicks{N: 10}
		s, err := SvgOf(p, 16*vg.Centimeter, 5.5*vg.Centimeter)
		if err != nil {
			return "", err
		}
		svgs = append(svgs, s)
	}
	return strings.Join(svgs, "\n"), nil
}

// formatValue formats v in a metric's unit for tables.
func FormatValue(unit string, v float64) string {
	if math.IsNaN(v) {
		return "–"
	}
	switch unit {
	case "bit/s":
		return fmt.Sprintf("%.3f Mbit/s", v/1e6)
	case "s":
		return fmt.Sprintf("%.2f ms", v*1e3)
	case "bit/s^2":
		return fmt.Sprintf("%.3g", v)
	case "1":
		if math.Abs(v) < 10 && v != math.Trunc(v) {
			return fmt.Sprintf("%.4f", v)
		}
	}
	if v == math.Trunc(v) && math.Abs(v) < 1e12 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.4g", v)
}

// scaleFor returns a multiplier and unit label for plotting a metric.
func scaleFor(unit string) (float64, string) {
	switch unit {
	case "bit/s":
		return 1e-6, "Mbit/s"
	case "s":
		return 1e3, "ms"
	case "byte":
		return 1e-3, "kB"
	}
	return 1, unit
}

// cdfCurve is one empirical distribution.
type cdfCurve struct {
	Label  string
	Color  int
	Dashed bool
	Values []float64 // unsorted samples
}

// maxCDFPoints bounds the points drawn per distribution.
const maxCDFPoints = 200

// cdfSVG plots empirical CDFs of the curves' samples (multiplied by scale).
func cdfSVG(title, xlabel string, scale float64, curves []cdfCurve) (string, error) {
	return cdfSVGOf(title, xlabel, "fraction of intervals ≤ x", scale, curves)
}

func cdfSVGOf(title, xlabel, ylabel string, scale float64, curves []cdfCurve) (string, error) {
	p := NewPlot(title, xlabel, ylabel)
	p.Legend.Top = false
	p.Legend.Left = false
	p.Legend.TextStyle.Font.Size = vg.Points(8)
	p.Y.Min, p.Y.Max = 0, 1
	legend := map[string]bool{}
	for _, c := range curves {
		xs := make([]float64, 0, len(c.Values))
		for _, v := range c.Values {
			if !math.IsNaN(v) {
				xs = append(xs, v*scale)
			}
		}
		if len(xs) == 0 {
			continue
		}
		sort.Float64s(xs)
		n := len(xs)
		step := 1
		if n > maxCDFPoints {
			step = n / maxCDFPoints
		}
		var pts plotter.XYs
		for i := 0; i < n; i += step {
			pts = append(pts, plotter.XY{X: xs[i], Y: float64(i+1) / float64(n)})
		}
		pts = append(pts, plotter.XY{X: xs[n-1], Y: 1})
		l, err := plotter.NewLine(pts)
		if err != nil {
			return "", err
		}
		l.Color = ColorAt(c.Color)
		l.Width = vg.Points(1.3)
		if c.Dashed {
			l.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		}
		p.Add(l)
		if !legend[c.Label] {
			legend[c.Label] = true
			p.Legend.Add(c.Label, l)
		}
	}
	return SvgOf(p, 11*vg.Centimeter, 8*vg.Centimeter)
}

// Kinds of x axis (xScale.Kind).
const (
	xNominal = "nominal" // categories, equally spaced
	xLinear  = "linear"  // numbers on a linear axis
	xLog     = "log"     // a geometric sweep on a logarithmic axis
)

// xScale places a swept axis's values on a plot's x axis.
type xScale struct {
	Axis     scenario.Axis
	Kind     string
	Pos      map[string]float64 // plotted position of each value
	Ticks    []plot.Tick
	Min, Max float64
	ZeroAt   float64 // log axis: where the value 0 is drawn; NaN if the sweep has no 0
}

// newXScale chooses how to draw axis a: a logarithmic axis when its values
// are a geometric sweep (geometric), a linear one for other numbers, equally
// spaced categories otherwise.
func newXScale(a scenario.Axis) xScale {
	s := xScale{Axis: a, Kind: xNominal, Pos: map[string]float64{}, ZeroAt: math.NaN()}
	nums := make([]float64, len(a.Values))
	numeric := len(a.Values) > 0
	for i, v := range a.Values {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			numeric = false
			break
		}
		nums[i] = f
	}
	switch {
	case !numeric:
		for i, v := range a.Values {
			s.Pos[v] = float64(i)
			s.Ticks = append(s.Ticks, plot.Tick{Value: float64(i), Label: v})
		}
		s.Min, s.Max = -0.3, float64(len(a.Values)-1)+0.3
	case geometric(nums):
		s.Kind = xLog
		lo, hi := math.Inf(1), 0.0
		for _, f := range nums {
			if f > 0 {
				lo, hi = math.Min(lo, f), math.Max(hi, f)
			}
		}
		nonzero := 0
		for _, f := range nums {
			if f > 0 {
				nonzero++
			}
		}
		// The mean ratio of neighbouring values, at least 2: one step left
		// of the smallest value is where 0 goes.
		step := math.Max(2, math.Pow(hi/lo, 1/float64(nonzero-1)))
		few := len(a.Values) <= 5
		for i, v := range a.Values {
			f := nums[i]
			pos := f
			label := v
			if f == 0 {
				pos = lo / step
				s.ZeroAt = pos
			} else if !few && !decade(f) {
				label = "" // minor tick: label the decades (and 0) only
			}
			s.Pos[v] = pos
			s.Ticks = append(s.Ticks, plot.Tick{Value: pos, Label: label})
		}
		left := lo
		if !math.IsNaN(s.ZeroAt) {
			left = s.ZeroAt
		}
		s.Min, s.Max = left/1.4, hi*1.4
	default:
		s.Kind = xLinear
		lo, hi := math.Inf(1), math.Inf(-1)
		for i, v := range a.Values {
			s.Pos[v] = nums[i]
			s.Ticks = append(s.Ticks, plot.Tick{Value: nums[i], Label: v})
			lo, hi = math.Min(lo, nums[i]), math.Max(hi, nums[i])
		}
		pad := 0.05 * (hi - lo)
		if pad == 0 {
			pad = 1
		}
		s.Min, s.Max = lo-pad, hi+pad
	}
	return s
}

// decade reports whether f is a power of ten.
func decade(f float64) bool {
	e := math.Round(math.Log10(f))
	return math.Abs(f/math.Pow(10, e)-1) < 1e-9
}

// geometric reports whether a numeric sweep is geometric: at least three
// positive values (plus at most one 0) spanning a factor of 10 or more, whose
// logarithms are more evenly spaced than the values themselves (1, 2, 5, 10,
// 20, 50 … is; 10, 20, 30 … is not).
func geometric(nums []float64) bool {
	var pos []float64
	zeros := 0
	for _, f := range nums {
		switch {
		case f < 0:
			return false
		case f == 0:
			zeros++
		default:
			pos = append(pos, f)
		}
	}
	if zeros > 1 || len(pos) < 3 {
		return false
	}
	sort.Float64s(pos)
	if pos[len(pos)-1]/pos[0] < 10 {
		return false
	}
	var lin, lg []float64
	for i := 1; i < len(pos); i++ {
		lin = append(lin, pos[i]-pos[i-1])
		lg = append(lg, math.Log(pos[i]/pos[i-1]))
	}
	return spread(lg) < spread(lin)
}

// spread is the coefficient of variation of xs.
func spread(xs []float64) float64 {
	s := metrics.Summarize(xs)
	if s.Mean == 0 {
		return math.Inf(1)
	}
	return s.SD / s.Mean
}

// label returns the axis label: the axis's name, with the scale when
// logarithmic.
func (s xScale) label() string {
	if s.Kind == xLog {
		l := s.Axis.Short + " (log scale"
		if !math.IsNaN(s.ZeroAt) {
			l += "; 0 drawn at the left"
		}
		return l + ")"
	}
	return s.Axis.Short
}

// apply sets p's x axis to s.
func (s xScale) apply(p *plot.Plot) {
	p.X.Label.Text = s.label()
	p.X.Min, p.X.Max = s.Min, s.Max
	if s.Kind == xLog {
		p.X.Scale = plot.LogScale{}
	}
	p.X.Tick.Marker = plot.ConstantTicks(s.Ticks)
}

// panelCurve is one line of a small-multiple panel, with its interval.
type panelCurve struct {
	Label     string
	Color     int
	Dashed    bool // live: dashed line and square marks
	X, Y      []float64
	Low, High []float64 // interval ends; NaN: no interval
}

// modelCurve is a reference line (a throughput model).
type modelCurve struct {
	Label  string
	X, Y   []float64
	Dashes []vg.Length
	Color  color.Color
}

// panelSpec is one panel of a small-multiple figure.
type panelSpec struct {
	Title, YLabel string
	X             xScale
	YMin, YMax    float64
	Curves        []panelCurve
	Models        []modelCurve
}

// panel sizes of small multiples.
const (
	panelW = 8.6 * vg.Centimeter
	panelH = 6.4 * vg.Centimeter
)

// panelSVG draws one small-multiple panel.
func panelSVG(ps panelSpec) (string, error) {
	p := NewPlot(ps.Title, "", ps.YLabel)
	p.Title.TextStyle.Font.Size = vg.Points(10)
	p.X.Label.TextStyle.Font.Size = vg.Points(9)
	p.Y.Label.TextStyle.Font.Size = vg.Points(9)
	ps.X.apply(p)
	p.Y.Min, p.Y.Max = ps.YMin, ps.YMax
	for _, m := range ps.Models {
		var pts plotter.XYs
		for i := range m.X {
			if !math.IsNaN(m.Y[i]) {
				pts = append(pts, plotter.XY{X: m.X[i], Y: m.Y[i]})
			}
		}
		if len(pts) < 2 {
			continue
		}
		l, err := plotter.NewLine(pts)
		if err != nil {
			return "", err
		}
		l.Color, l.Width, l.Dashes = m.Color, vg.Points(1.2), m.Dashes
		p.Add(l)
	}
	for _, c := range ps.Curves {
		var pts plotter.XYs
		var errs plotter.YErrors
		for i := range c.X {
			if math.IsNaN(c.Y[i]) {
				continue
			}
			pts = append(pts, plotter.XY{X: c.X[i], Y: c.Y[i]})
			lo, hi := 0.0, 0.0
			if i < len(c.Low) && !math.IsNaN(c.Low[i]) && !math.IsNaN(c.High[i]) {
				lo, hi = c.Y[i]-c.Low[i], c.High[i]-c.Y[i]
			}
			errs = append(errs, struct{ Low, High float64 }{lo, hi})
		}
		if len(pts) == 0 {
			continue
		}
		l, s, err := plotter.NewLinePoints(pts)
		if err != nil {
			return "", err
		}
		l.Color, s.Color = ColorAt(c.Color), ColorAt(c.Color)
		l.Width = vg.Points(1.4)
		s.Shape, s.Radius = draw.CircleGlyph{}, vg.Points(2.3)
		if c.Dashed {
			l.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
			s.Shape = draw.BoxGlyph{}
		}
		eb, err := plotter.NewYErrorBars(XyErr{pts, errs})
		if err != nil {
			return "", err
		}
		eb.Color = ColorAt(c.Color)
		p.Add(l, s, eb)
	}
	return SvgOf(p, panelW, panelH)
}

// scatterPoint is one point of a throughput–delay panel.
type scatterPoint struct {
	X, Y  float64
	Color int
	Box   bool   // live: square
	Label string // the mean's label; "" for a run's point
}

// invertedScale draws an axis right to left (Pantheon's delay axis: better,
// lower delay, to the right).
type invertedScale struct{}

// Normalize maps x in [min, max] to [1, 0].
func (invertedScale) Normalize(min, max, x float64) float64 { return (max - x) / (max - min) }

// scatterSVG draws runs (small, pale) and means (large, labelled) on a
// throughput–delay panel with the delay axis reversed.
func scatterSVG(title, xlabel, ylabel string, xmin, xmax, ymin, ymax float64, runs, means []scatterPoint) (string, error) {
	p := NewPlot(title, xlabel, ylabel)
	p.Title.TextStyle.Font.Size = vg.Points(10)
	p.X.Label.TextStyle.Font.Size = vg.Points(9)
	p.Y.Label.TextStyle.Font.Size = vg.Points(9)
	p.X.Scale = invertedScale{}
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = xmin, xmax, ymin, ymax
	add := func(pts []scatterPoint, radius vg.Length, alpha uint8) error {
		for _, pt := range pts {
			s, err := plotter.NewScatter(plotter.XYs{{X: pt.X, Y: pt.Y}})
			if err != nil {
				return err
			}
			r, g, b, _ := ColorAt(pt.Color).RGBA()
			s.Color = color.NRGBA{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8), alpha}
			s.Radius = radius
			s.Shape = draw.CircleGlyph{}
			if pt.Box {
				s.Shape = draw.BoxGlyph{}
			}
			p.Add(s)
		}
		return nil
	}
	if err := add(runs, vg.Points(2), 110); err != nil {
		return "", err
	}
	if err := add(means, vg.Points(4), 255); err != nil {
		return "", err
	}
	var xys plotter.XYs
	var labels []string
	var colors []int
	for _, m := range means {
		if m.Label != "" {
			xys = append(xys, plotter.XY{X: m.X, Y: m.Y})
			labels = append(labels, m.Label)
			colors = append(colors, m.Color)
		}
	}
	if len(xys) > 0 {
		l, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: labels})
		if err != nil {
			return "", err
		}
		for i := range l.TextStyle {
			l.TextStyle[i].Font.Size = vg.Points(7.5)
			l.TextStyle[i].Color = ColorAt(colors[i])
		}
		l.Offset = vg.Point{X: vg.Points(5), Y: vg.Points(2)}
		p.Add(l)
	}
	return SvgOf(p, panelW, panelH)
}

// shortTicks are gonum/plot's default ticks labelled without trailing
// zeros ("25", not "25.00").
type shortTicks struct{}

// Ticks returns the default ticks between min and max, relabelled.
func (shortTicks) Ticks(min, max float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(min, max)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = strconv.FormatFloat(ts[i].Value, 'g', 6, 64)
		}
	}
	return ts
}

// addBand draws a band (translucent, between its minimum and maximum) and
// its median line on p, with a legend entry when labelled; it returns the
// largest value drawn.
func addBand(p *plot.Plot, b bandLine) (float64, error) {
	sc := b.Scale
	if sc == 0 {
		sc = 1
	}
	if len(b.T) == 0 {
		return 0, nil
	}
	top := 0.0
	poly := make(plotter.XYs, 0, 2*len(b.T))
	med := make(plotter.XYs, 0, len(b.T))
	for i := range b.T {
		poly = append(poly, plotter.XY{X: b.T[i], Y: b.Hi[i] * sc})
		med = append(med, plotter.XY{X: b.T[i], Y: b.Med[i] * sc})
		top = math.Max(top, b.Hi[i]*sc)
	}
	for i := len(b.T) - 1; i >= 0; i-- {
		poly = append(poly, plotter.XY{X: b.T[i], Y: b.Lo[i] * sc})
	}
	c := color.RGBAModel.Convert(ColorAt(b.Color)).(color.RGBA)
	if b.Runs > 1 {
		pg, err := plotter.NewPolygon(poly)
		if err != nil {
			return 0, err
		}
		pg.Color = color.NRGBA{c.R, c.G, c.B, 50}
		pg.LineStyle.Width = 0
		p.Add(pg)
	}
	ln, err := plotter.NewLine(med)
	if err != nil {
		return 0, err
	}
	ln.Color, ln.Width = c, vg.Points(1.3)
	if b.Dashed {
		ln.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
	}
	p.Add(ln)
	if b.Label != "" {
		p.Legend.Add(fmt.Sprintf("%s (median of %d)", b.Label, b.Runs), ln)
	}
	return top, nil
}

// stepTicks are about N major ticks at a round step (1, 2 or 5 × 10^k),
// every one labelled: a time axis readable at a glance (gonum's default
// ticks give as few as two labels).
type stepTicks struct{ N int }

// Ticks returns the ticks between min and max.
func (t stepTicks) Ticks(min, max float64) []plot.Tick {
	if !(max > min) || t.N < 2 {
		return plot.DefaultTicks{}.Ticks(min, max)
	}
	raw := (max - min) / float64(t.N)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := 10 * mag
	for _, m := range []float64{1, 2, 5} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	var ts []plot.Tick
	for v := math.Ceil(min/step) * step; v <= max+step*1e-9; v += step {
		v = math.Round(v/step) * step
		ts = append(ts, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', 6, 64)})
		if minor := v + step/2; minor < max {
			ts = append(ts, plot.Tick{Value: minor})
		}
	}
	return ts
}
