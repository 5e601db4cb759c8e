package report

// Plot helpers for reports outside this package (the campaign report).

// CDFCurve is one distribution of CDFSVG: a label, a palette index, dashed
// or not, and its unsorted samples.
type CDFCurve = cdfCurve

// CDFSVG plots the empirical CDFs of the curves' samples (multiplied by
// scale), y labelled ylabel ("fraction of transfers ≤ x").
func CDFSVG(title, xlabel, ylabel string, scale float64, curves []CDFCurve) (string, error) {
	return cdfSVGOf(title, xlabel, ylabel, scale, curves)
}

// SeriesPanel is one panel of SeriesSVG: title, y label and lines.
type SeriesPanel = panel

// SeriesLine is one line of a SeriesPanel: label, palette index, times (s),
// values and a scale the values are multiplied by (0: 1).
type SeriesLine = tsLine

// SeriesSVG renders time-series panels stacked, sharing the time axis.
func SeriesSVG(panels []SeriesPanel) (string, error) { return timeSeriesSVG(panels) }
