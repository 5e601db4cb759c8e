package main

import (
	"bytes"
	"encoding/csv"
	"testing"

	"cclab/metrics"
)

// TestSeriesCSVParses: cclab sim's time-series CSV goes through
// encoding/csv, so a name with a comma or a quote stays one field and every
// row has the header's columns.
func TestSeriesCSVParses(t *testing.T) {
	name := `bulk, "one"`
	m := metrics.Metrics{Flows: []metrics.Result{{Scope: metrics.ScopeFlow, ID: 1, Name: name,
		Series: []metrics.Series{{Name: "throughput", Unit: "bit/s", T: []float64{0, 0.1}, V: []float64{1e6, 2e6}}}}}}
	var buf bytes.Buffer
	if err := writeSeriesCSV(&buf, m); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatalf("the CSV does not parse: %v\n%s", err, buf.String())
	}
	if len(recs) != 3 {
		t.Fatalf("rows: got %d, want header + 2", len(recs))
	}
	for _, rec := range recs[1:] {
		if len(rec) != len(recs[0]) || rec[3] != name || rec[4] != "throughput" {
			t.Errorf("row %q: want %d fields with name %q", rec, len(recs[0]), name)
		}
	}
}
