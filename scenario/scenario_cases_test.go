package scenario

import (
	"strings"
	"testing"
)

const casesSrc = `name: cases-test
duration: 10s
runs: 3
defs:
  reno: &reno {name: m, cc: reno}
topologies:
  a: {kind: dumbbell, bottleneck: {rate: 10Mbit, delay: 5ms}}
  b:
    kind: chain
    hops:
      - {rate: 10Mbit, delay: 5ms, background: [{count: 2, traffic: greedy, window: 8KiB}]}
      - {rate: 20Mbit, delay: 5ms}
topology: a
flows: [*reno]
baseline: {cc: reno}
cases:
  - name: one
    topology: [a, b]
    flows: [{name: m, cc: [reno, dca]}]
  - name: two
    runs: 2
    flows: [*reno, {name: n, cc: [reno, "dca:reduction=0.25"]}]
  - name: three
`

// TestScenarioCases checks a scenario with cases: each case is the document
// with the case's fields in place, the points are the cases' grids in order
// with case=<name> first, the axes are the case axis and the union of the
// cases' axes, and each case keeps its own seeds.
func TestScenarioCases(t *testing.T) {
	exp, err := ParseScenario("cases.yaml", []byte(casesSrc))
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, p := range exp.Points {
		labels = append(labels, p.Label(exp.Axes))
	}
	want := []string{
		"case=one topology=a cc=reno", "case=one topology=a cc=dca", "case=one topology=b cc=reno", "case=one topology=b cc=dca",
		"case=two cc=reno", "case=two cc=dca:reduction=0.25", "case=three",
	}
	if strings.Join(labels, "|") != strings.Join(want, "|") {
		t.Errorf("points:\n got %q\nwant %q", labels, want)
	}
	var axes []string
	for _, a := range exp.Axes {
		axes = append(axes, a.Path+"="+strings.Join(a.Values, ","))
	}
	if got, want := strings.Join(axes, " "), "case=one,two,three topology=a,b flows[0].cc=reno,dca flows[1].cc=reno,dca:reduction=0.25"; got != want {
		t.Errorf("axes: got %q, want %q", got, want)
	}
	b := exp.Points[2].Scenario
	if b.Case != "one" || b.Topology.Kind != KindChain || len(b.Topology.Hops[0].Background) != 1 ||
		b.Topology.Hops[0].Background[0].Name != "bg0" || b.Topology.Hops[0].Background[0].Window != 8192 {
		t.Errorf("case one, topology b: got %+v", b)
	}
	if got := len(exp.Points[4].Scenario.Seeds); got != 2 {
		t.Errorf("case two: got %d seeds, want 2", got)
	}
	if got := len(exp.Points[6].Scenario.Seeds); got != 3 {
		t.Errorf("case three: got %d seeds, want the document's 3", got)
	}
	if exp.Points[0].Hash() == exp.Points[6].Hash() {
		t.Errorf("points of two cases with the same configuration share a hash")
	}
}

// TestScenarioCaseErrors checks the errors of cases, named topologies and
// the new flow fields, each at its line.
func TestScenarioCaseErrors(t *testing.T) {
	base := "name: x\nduration: 1s\ntopology: {kind: dumbbell, bottleneck: {rate: 1Mbit}}\nflows: [{cc: reno}]\n"
	for _, tc := range []struct {
		name, src, want string
	}{
		{"unnamed case", base + "cases: [{runs: 2}]\n", `cases.yaml:5:9: field cases[0].name: missing required field "name"`},
		{"twice", base + "cases: [{name: a}, {name: a}]\n", `cases[1].name: case "a" given twice`},
		{"case sets topologies", base + "cases: [{name: a, topologies: {}}]\n", "a case cannot set topologies"},
		{"unknown topology", strings.Replace(base, "topology: {kind: dumbbell, bottleneck: {rate: 1Mbit}}",
			"topologies: {t: {kind: dumbbell, bottleneck: {rate: 1Mbit}}}\ntopology: [t, u]", 1),
			`field topology: no topology named "u" in topologies (defined: t)`},
		{"rtt and access delay", strings.Replace(base, "{cc: reno}", "{cc: reno, rtt: 50ms, access_delay: 1ms}", 1),
			"give either rtt or access_delay"},
		{"small window", strings.Replace(base, "{cc: reno}", "{cc: reno, window: 1000B}", 1), "must hold at least two datagrams"},
		{"pmtud of raw datagrams", strings.Replace(base, "{cc: reno}", "{mode: udp, traffic: \"cbr:rate=1Mbit\", pmtud: true}", 1), "no window, alt_cc, alt_share, ack_every, delayed_ack, recv_window, ack_first, pmtud or tcp_handshake"},
		{"ack_first of raw datagrams", strings.Replace(base, "{cc: reno}", "{mode: udp, traffic: \"cbr:rate=1Mbit\", ack_first: true}", 1), "recv_window, ack_first, pmtud"},
		{"ack_first in datagram mode", strings.Replace(base, "{cc: reno}", "{cc: ccid2, traffic: \"cbr:rate=1Mbit\", ack_first: true}", 1), "ack_first is a stream receiver's setting"},
		{"tcp_handshake of raw datagrams", strings.Replace(base, "{cc: reno}", "{mode: udp, traffic: \"cbr:rate=1Mbit\", tcp_handshake: true}", 1), "pmtud or tcp_handshake"},
		{"tcp_handshake in datagram mode", strings.Replace(base, "{cc: reno}", "{cc: ccid2, traffic: \"cbr:rate=1Mbit\", tcp_handshake: true}", 1), "tcp_handshake is a stream handshake's setting: mode datagram"},
		{"background path", strings.Replace(base, "rate: 1Mbit}", "rate: 1Mbit, background: [{path: 0}]}", 1),
			"a background group crosses its hop only"},
		{"share", strings.Replace(base, "{cc: reno}", "{cc: reno, alt_cc: dca, alt_share: 1.5}", 1), `"1.5" is not a share in [0, 1]`},
		{"share without cc", strings.Replace(base, "{cc: reno}", "{cc: reno, alt_share: 0.5}", 1), "alt_share needs alt_cc"},
		{"study", base + "study: tcp\n", `"tcp" is not allowed (allowed: dca, dccp-tcp, fair-queueing, eth-bulk)`},
	} {
		_, err := ParseScenario("cases.yaml", []byte(tc.src))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
}
