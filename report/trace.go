package report

import (
	"html/template"
	"image/color"
	"math"
	"strconv"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"cclab/metrics"
)

// traceFigures draws the packet trace (Store.Trace) of the first run
// (lowest seed) of each group of case c that has one, one figure per
// backend: sequence number against time, with the losses the sender
// declared and its retransmission timeouts marked.
func (d *ReportData) TraceFigures(c, title, caption string) ([]Figure, error) {
	if d.Trace == nil {
		return nil, nil
	}
	var figs []Figure
	for _, g := range d.Groups {
		if len(g.Runs) == 0 || g.Param("case") != c {
			continue
		}
		r := g.Runs[0]
		flow, pts, err := d.Trace(r.ID)
		if err != nil {
			return nil, err
		}
		if len(pts) == 0 {
			continue
		}
		svg, err := traceSVG(pts)
		if err != nil {
			return nil, err
		}
		figs = append(figs, Figure{Title: title + " (" + g.Backend + ", flow " + strconv.Itoa(int(flow)) + ", seed " + strconv.FormatUint(r.Seed, 10) + ")",
			Caption: caption, Panels: []template.HTML{template.HTML(svg)}})
	}
	return figs, nil
}

// traceSVG plots a packet trace: each packet sent (a dot; retransmissions
// in a second colour) at its sequence number, relative to the smallest in
// the trace, against time; declared losses as crosses and timeouts as
// triangles with a dashed vertical line.
func traceSVG(pts []metrics.TracePoint) (string, error) {
	base := uint64(math.MaxUint64)
	for _, p := range pts {
		base = min(base, p.Seq)
	}
	byKind := map[string]plotter.XYs{}
	for _, p := range pts {
		byKind[p.Kind] = append(byKind[p.Kind], plotter.XY{X: p.T, Y: float64(p.Seq - base)})
	}
	ylabel := "sequence number"
	if base > 0 {
		ylabel += " − " + strconv.FormatUint(base, 10)
	}
	p := NewPlot("", "time (s)", ylabel)
	for _, k := range []struct {
		kind, label string
		color       int
		shape       draw.GlyphDrawer
		radius      vg.Length
	}{
		{metrics.TraceSent, "sent", 0, draw.CircleGlyph{}, vg.Points(0.8)},
		{metrics.TraceResent, "retransmitted", 2, draw.CircleGlyph{}, vg.Points(1.2)},
		{metrics.TraceLost, "declared lost", 1, draw.CrossGlyph{}, vg.Points(3)},
		{metrics.TraceTimeout, "timeout", 6, draw.TriangleGlyph{}, vg.Points(4)},
	} {
		xy := byKind[k.kind]
		if len(xy) == 0 {
			continue
		}
		s, err := plotter.NewScatter(xy)
		if err != nil {
			return "", err
		}
		s.Color, s.Shape, s.Radius = ColorAt(k.color), k.shape, k.radius
		p.Add(s)
		p.Legend.Add(k.label+" ("+strconv.Itoa(len(xy))+")", s)
		if k.kind == metrics.TraceTimeout {
			for _, pt := range xy {
				ln, err := plotter.NewLine(plotter.XYs{{X: pt.X, Y: 0}, {X: pt.X, Y: pt.Y}})
				if err != nil {
					return "", err
				}
				ln.Color, ln.Dashes = color.Gray{Y: 90}, []vg.Length{vg.Points(3), vg.Points(2)}
				p.Add(ln)
			}
		}
	}
	p.Legend.Left, p.Legend.Top = true, true
	return SvgOf(p, 6*vg.Inch, 3.5*vg.Inch)
}
