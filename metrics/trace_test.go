package metrics

import (
	"reflect"
	"strings"
	"testing"

	"cclab/scenario"
)

// TestTraceKey: the scenario key trace is decoded and checked against the
// flows and the run's length, with errors naming the field.
func TestTraceKey(t *testing.T) {
	base := "name: x\nduration: 20s\ntopology: {kind: dumbbell, bottleneck: {rate: 10Mbit}}\nflows: [{cc: reno}, {cc: reno, count: 2}]\n"
	for _, tc := range []struct {
		trace string
		want  *scenario.TraceSpec
		err   []string
	}{
		{"{flow: 3, from: 5s, to: 15s}", &scenario.TraceSpec{Flow: 3, From: 5e9, To: 15e9}, nil},
		{"{flow: 1, to: 1s}", &scenario.TraceSpec{Flow: 1, To: 1e9}, nil},
		{"{flow: 4, to: 15s}", nil, []string{"trace", "flow 4 does not exist", "1..3"}},
		{"{flow: 0, to: 15s}", nil, []string{"trace.flow", "below the minimum 1"}},
		{"{flow: 1, from: 5s, to: 5s}", nil, []string{"trace.to", "must be after from"}},
		{"{flow: 1, from: 20s, to: 30s}", nil, []string{"trace", "not before the end of the run"}},
		{"{flow: 1}", nil, []string{"trace", "to"}},
		{"{flow: 1, to: 2s, every: 1}", nil, []string{"trace.every", "unknown field"}},
	} {
		exp, err := scenario.ParseScenario("x.yaml", []byte(base+"trace: "+tc.trace+"\n"))
		if tc.err != nil {
			for _, s := range tc.err {
				if err == nil || !strings.Contains(err.Error(), s) {
					t.Errorf("trace %s: got error %v, want one containing %q", tc.trace, err, s)
				}
			}
			continue
		}
		if err != nil {
			t.Errorf("trace %s: %v", tc.trace, err)
			continue
		}
		if got := exp.Points[0].Scenario.Trace; !reflect.DeepEqual(got, tc.want) {
			t.Errorf("trace %s: got %+v, want %+v", tc.trace, got, tc.want)
		}
	}
}
