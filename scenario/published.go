package scenario

import (
	"math"
	"strconv"

	"go.yaml.in/yaml/v3"
)

// Published is one number a study's publication reports, with its source:
// the report's "Reproduction" section puts cclab's value beside it
// (report/studies). A study's report knows which IDs it computes.
type Published struct {
	// ID names the quantity for the study's report, e.g.
	// "t8-1/emory/throughput" (docs/studies/*.md list each study's IDs).
	ID string `json:"id"`
	// What describes it for the reader.
	What string `json:"what"`
	// Value is the published number, in Unit.
	Value float64 `json:"value"`
	// Interval is the publication's interval [low, high] around Value, if
	// it gives one (nil otherwise).
	Interval []float64 `json:"interval,omitempty"`
	// Tolerance is a stated relative spread instead of an interval: cclab's
	// value agrees when within Value·(1 ± Tolerance).
	Tolerance float64 `json:"tolerance,omitempty"`
	// Unit is the unit of Value and Interval, e.g. "%" or "1".
	Unit string `json:"unit,omitempty"`
	// Source cites where the number is printed (paper, table).
	Source string `json:"source"`
}

// Range returns the publication's interval, or Value·(1 ± Tolerance), or
// (NaN, NaN) when the publication states no spread.
func (p Published) Range() (lo, hi float64) {
	switch {
	case len(p.Interval) == 2:
		return p.Interval[0], p.Interval[1]
	case p.Tolerance > 0:
		a, b := p.Value*(1-p.Tolerance), p.Value*(1+p.Tolerance)
		return math.Min(a, b), math.Max(a, b)
	}
	return math.NaN(), math.NaN()
}

// published decodes one entry of the scenario's published list.
func (d *decoder) published(n *yaml.Node, path string, _ int) (Published, error) {
	var p Published
	num := func(n *yaml.Node, path string) (float64, error) {
		v, at, err := d.value(n, path)
		if err != nil {
			return 0, err
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return 0, d.errAt(at, path, "%q is not a finite number", v)
		}
		return f, nil
	}
	err := d.mapping(n, path, map[string]fieldFn{
		"id":     func(n *yaml.Node, p2 string) (err error) { p.ID, err = d.str(n, p2); return },
		"what":   func(n *yaml.Node, p2 string) (err error) { p.What, err = d.str(n, p2); return },
		"unit":   func(n *yaml.Node, p2 string) (err error) { p.Unit, err = d.str(n, p2); return },
		"source": func(n *yaml.Node, p2 string) (err error) { p.Source, err = d.str(n, p2); return },
		"value":  func(n *yaml.Node, p2 string) (err error) { p.Value, err = num(n, p2); return },
		"tolerance": func(n *yaml.Node, p2 string) (err error) {
			if p.Tolerance, err = num(n, p2); err == nil && !(p.Tolerance > 0 && p.Tolerance < 1) {
				err = d.errAt(n, p2, "%v: must be a fraction strictly between 0 and 1", p.Tolerance)
			}
			return
		},
		"interval": func(n *yaml.Node, p2 string) error {
			items, err := d.list(n, p2, "interval")
			if err != nil {
				return err
			}
			if len(items) != 2 {
				return d.errAt(n, p2, "an interval is [low, high]: got %d numbers", len(items))
			}
			for i, it := range items {
				v, err := num(it, p2+"["+strconv.Itoa(i)+"]")
				if err != nil {
					return err
				}
				p.Interval = append(p.Interval, v)
			}
			if p.Interval[0] > p.Interval[1] {
				return d.errAt(n, p2, "low %v above high %v", p.Interval[0], p.Interval[1])
			}
			return nil
		},
	}, "id", "what", "value", "source")
	if err == nil && len(p.Interval) == 2 && p.Tolerance > 0 {
		err = d.errAt(n, path, "give either interval or tolerance, not both")
	}
	return p, err
}
