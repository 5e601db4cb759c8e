package metrics

import (
	"reflect"
	"strings"
	"testing"

	"cclab/event"
	"cclab/scenario"
)

// TestPacketTrace: the Collector keeps the traced flow's sent packets (new
// and retransmitted), declared losses and timeouts in the trace window,
// times from the run's origin, and nothing of other flows, other kinds or
// outside the window (before the measurement window too).
func TestPacketTrace(t *testing.T) {
	info, _ := syntheticRun()
	info.Start = at(1) // the measurement window starts after the trace's
	info.Trace = &TraceWindow{Flow: 1, Origin: at(0), From: at(0.5), To: at(1.6)}
	ev := []event.Event{
		{Time: at(0.4), Kind: event.PacketSent, Flow: 1, Seq: 1},                                   // before the window
		{Time: at(0.5), Kind: event.PacketSent, Flow: 1, Seq: 2},                                   // its first instant
		{Time: at(0.6), Kind: event.PacketSent, Flow: 2, Seq: 9},                                   // another flow
		{Time: at(0.7), Kind: event.PacketAcked, Flow: 1, Seq: 2},                                  // not traced
		{Time: at(0.8), Kind: event.PacketLost, Flow: 1, Seq: 2},                                   // loss
		{Time: at(1.0), Kind: event.PacketSent, Flow: 1, Seq: 2, Reason: event.SentRetransmission}, // retransmission
		{Time: at(1.1), Kind: event.Drop, Flow: 1, Link: 0, Seq: 77},                               // a link's drop: not traced
		{Time: at(1.6), Kind: event.RTO, Flow: 1, Seq: 3},                                          // its last instant
		{Time: at(1.7), Kind: event.PacketSent, Flow: 1, Seq: 4},                                   // after
	}
	m := Compute(info, ev)
	want := []TracePoint{{0.5, TraceSent, 2}, {0.8, TraceLost, 2}, {1.0, TraceResent, 2}, {1.6, TraceTimeout, 3}}
	if !reflect.DeepEqual(m.Trace, want) || m.TraceFlow != 1 {
		t.Errorf("trace: got flow %d %v, want flow 1 %v", m.TraceFlow, m.Trace, want)
	}
	info.Trace = nil
	if m := Compute(info, ev); m.Trace != nil || m.TraceFlow != 0 {
		t.Errorf("no trace key: got flow %d %v, want none", m.TraceFlow, m.Trace)
	}
}

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
