package scenario

import (
	"math"
	"strings"
	"testing"
)

// TestPublished checks the published list: values, interval, tolerance and
// their ranges, and clear errors for bad entries.
func TestPublished(t *testing.T) {
	base := "name: p\nduration: 1s\ntopology: {kind: dumbbell, bottleneck: {rate: 10Mbit, delay: 5ms}}\nflows: [{cc: reno}]\n"
	exp, err := ParseScenario("p.yaml", []byte(base+`published:
  - {id: a, what: A, value: -37, interval: [-42, -31], unit: "%", source: S}
  - {id: b, what: B, value: 0.5, tolerance: 0.25, source: S}
  - {id: c, what: C, value: 0.93, source: S}
`))
	if err != nil {
		t.Fatal(err)
	}
	p := exp.Base.Published
	if len(p) != 3 || p[0].ID != "a" || p[0].Value != -37 || p[0].Unit != "%" || p[1].Tolerance != 0.25 || p[2].Source != "S" {
		t.Fatalf("published: got %+v", p)
	}
	for i, want := range [][2]float64{{-42, -31}, {0.375, 0.625}, {math.NaN(), math.NaN()}} {
		lo, hi := p[i].Range()
		same := func(a, b float64) bool { return a == b || (math.IsNaN(a) && math.IsNaN(b)) || math.Abs(a-b) < 1e-12 }
		if !same(lo, want[0]) || !same(hi, want[1]) {
			t.Errorf("%s: range got [%v, %v], want [%v, %v]", p[i].ID, lo, hi, want[0], want[1])
		}
	}
	for _, tc := range []struct{ entry, want string }{
		{"{what: A, value: 1, source: S}", "id"},
		{"{id: a, what: A, value: x, source: S}", "not a finite number"},
		{"{id: a, what: A, value: 1, interval: [1], source: S}", "[low, high]"},
		{"{id: a, what: A, value: 1, interval: [2, 1], source: S}", "above high"},
		{"{id: a, what: A, value: 1, tolerance: 1.5, source: S}", "strictly between 0 and 1"},
		{"{id: a, what: A, value: 1, interval: [0, 2], tolerance: 0.1, source: S}", "either interval or tolerance"},
		{"{id: a, what: A, value: 1, source: S, page: 3}", "page"},
	} {
		_, err := ParseScenario("p.yaml", []byte(base+"published: ["+tc.entry+"]\n"))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error naming %q", tc.entry, err, tc.want)
		}
	}
}
