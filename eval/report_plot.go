package eval

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
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

func colorAt(i int) color.Color { return palette[i%len(palette)] }

// curve is one line of a comparison plot: y (with CI half-widths) at x.
type curve struct {
	Label  string
	Color  int  // palette index
	Dashed bool // live runs are dashed, sim solid
	X, Y   []float64
	CI     []float64 // NaN: no error bar
}

// svgOf renders p as an SVG document without the XML prolog, for inlining.
func svgOf(p *plot.Plot, w, h vg.Length) (string, error) {
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

func newPlot(title, xlabel, ylabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xlabel
	p.Y.Label.Text = ylabel
	p.Add(plotter.NewGrid())
	p.Legend.Top = true
	p.Legend.Left = false
	return p
}

type xyErr struct {
	plotter.XYs
	plotter.YErrors
}

// comparisonSVG plots curves over nominal x positions labelled ticks.
func comparisonSVG(title, xlabel, ylabel string, ticks []string, curves []curve) (string, error) {
	p := newPlot(title, xlabel, ylabel)
	if len(ticks) > 0 {
		p.NominalX(ticks...)
		// Room on the right for the legend, so it covers no data.
		p.X.Min = -0.3
		p.X.Max = float64(len(ticks)-1) + 0.3 + 0.5*float64(len(ticks))
	}
	p.Legend.TextStyle.Font.Size = vg.Points(9)
	legend := map[string]bool{}
	for _, c := range curves {
		var pts plotter.XYs
		var errs plotter.YErrors
		for i := range c.X {
			if math.IsNaN(c.Y[i]) {
				continue
			}
			pts = append(pts, plotter.XY{X: c.X[i], Y: c.Y[i]})
			e := 0.0
			if i < len(c.CI) && !math.IsNaN(c.CI[i]) {
				e = c.CI[i]
			}
			errs = append(errs, struct{ Low, High float64 }{e, e})
		}
		if len(pts) == 0 {
			continue
		}
		l, s, err := plotter.NewLinePoints(pts)
		if err != nil {
			return "", err
		}
		l.Color, s.Color = colorAt(c.Color), colorAt(c.Color)
		l.Width = vg.Points(1.5)
		if c.Dashed {
			l.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
			s.Shape = draw.BoxGlyph{}
		} else {
			s.Shape = draw.CircleGlyph{}
		}
		s.Radius = vg.Points(2.5)
		eb, err := plotter.NewYErrorBars(xyErr{pts, errs})
		if err != nil {
			return "", err
		}
		eb.Color = colorAt(c.Color)
		p.Add(l, s, eb)
		if !legend[c.Label] {
			legend[c.Label] = true
			p.Legend.Add(c.Label, l, s)
		}
	}
	return svgOf(p, 18*vg.Centimeter, 10*vg.Centimeter)
}

// panel is one time-series panel: lines, and optional marks (e.g. losses)
// drawn as crosses at the bottom of the panel.
type panel struct {
	Title, YLabel string
	Lines         []tsLine
	Marks         []float64 // x positions (s) of marks
	MarkLabel     string
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
		p := newPlot(pn.Title, "time (s)", pn.YLabel)
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
			ln.Color = colorAt(l.Color)
			ln.Width = vg.Points(1.2)
			p.Add(ln)
			if l.Label != "" && len(pn.Lines) > 1 {
				p.Legend.Add(l.Label, ln)
			}
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
		s, err := svgOf(p, 16*vg.Centimeter, 5.5*vg.Centimeter)
		if err != nil {
			return "", err
		}
		svgs = append(svgs, s)
	}
	return strings.Join(svgs, "\n"), nil
}

// formatValue formats v in a metric's unit for tables.
func formatValue(unit string, v float64) string {
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
	p := newPlot(title, xlabel, "fraction of intervals ≤ x")
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
		l.Color = colorAt(c.Color)
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
	return svgOf(p, 16*vg.Centimeter, 9*vg.Centimeter)
}
