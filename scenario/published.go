package scenario

import (
	"math"

	"go.yaml.in/yaml/v3"
)

// Published is one number a study's publication reports, with its source:
// the report's "Reproduction" section puts cclab's value beside it
// (report/studies). A study's report knows which IDs it computes.
type Published struct {
	ID        string    `json:"id" scenario:"text,required" doc:"names the quantity for the study's report, e.g. t8-1/emory/throughput (docs/studies/*.md list each study's ids); an unknown id shows \"not run\""`
	What      string    `json:"what" scenario:"text,required" doc:"describes it for the reader"`
	Value     float64   `json:"value" scenario:"number,required" doc:"the published number, in unit"`
	Interval  []float64 `json:"interval,omitempty" scenario:"range" doc:"the publication's interval around value, if it gives one"`
	Tolerance float64   `json:"tolerance,omitempty" scenario:"tolerance" doc:"a stated relative spread instead of an interval: cclab's value agrees within value·(1 ± tolerance)"`
	Unit      string    `json:"unit,omitempty" scenario:"text" doc:"the unit of value and interval, e.g. % or 1"`
	Source    string    `json:"source" scenario:"text,required" doc:"where the number is printed (paper, table)"`
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
	_, err := d.fields(n, path, &p, nil)
	if err == nil && len(p.Interval) == 2 && p.Tolerance > 0 {
		err = d.errAt(n, path, "give either interval or tolerance, not both")
	}
	return p, err
}
