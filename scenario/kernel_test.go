package scenario

import (
	"strings"
	"testing"
	"time"
)

// kernelFlowSrc is a scenario with one kernel flow whose extra fields are
// inserted at %s.
const kernelFlowSrc = `name: k
duration: 5s
backends: [live]
topology: {kind: dumbbell, bottleneck: {rate: 20Mbit, delay: 20ms}}
flows:
  - name: bulk
    stack: kernel
`

// TestKernelFlowErrors checks that every setting kernel TCP cannot express
// is an error naming the field and what is allowed.
func TestKernelFlowErrors(t *testing.T) {
	tests := []struct {
		name, extra, field string
		contain            []string
	}{
		{"bad stack", "", "flows[0].stack", []string{"linux", "allowed", "cclab", "kernel"}},
		{"cc parameter", "    cc: \"cubic:beta=0.5\"\n", "flows[0].cc", []string{"cubic:beta", "iw, linux=true, friendly=true, hystart=true"}},
		{"cc linux=false", "    cc: \"cubic:linux=false\"\n", "flows[0].cc", []string{"tcp_cubic.c", "linux=true"}},
		{"bad iw", "    cc: \"reno:iw=0\"\n", "flows[0].cc", []string{"initcwnd", "1..16384"}},
		{"pmtud", "    pmtud: true\n", "flows[0].pmtud", []string{"finds its segment size itself"}},
		{"recovery", "    recovery: prr\n", "flows[0].recovery", []string{"rack", "newreno"}},
		{"window", "    window: 64KiB\n", "flows[0].window", []string{"leave window out"}},
		{"recv_window", "    recv_window: 64KiB\n", "flows[0].recv_window", []string{"tcp_rmem"}},
		{"ack_every", "    ack_every: 4\n", "flows[0].ack_every", []string{"(2)", "(1)"}},
		{"delayed_ack", "    delayed_ack: 200ms\n", "flows[0].delayed_ack", []string{"40ms", "quickack"}},
		{"ack_first", "    ack_first: true\n", "flows[0].ack_first", []string{"quick-ACK mode", "leave ack_first out"}},
		{"traffic", "    traffic: \"onoff:on=1s,off=1s\"\n", "flows[0].traffic", []string{"greedy"}},
		{"mode", "    mode: datagram\n    cc: ccid2\n", "flows[0].mode", []string{"stream"}},
		{"datagram", "    datagram: 100B\n", "flows[0].datagram", []string{"88"}},
	}
	for _, tc := range tests {
		src := kernelFlowSrc + tc.extra
		if tc.name == "bad stack" {
			src = strings.Replace(src, "stack: kernel", "stack: linux", 1)
		}
		_, err := ParseScenario("k.yaml", []byte(src))
		if err == nil {
			t.Errorf("%s: got no error", tc.name)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, "field "+tc.field+":") {
			t.Errorf("%s: got %q, want field %s named", tc.name, msg, tc.field)
		}
		for _, s := range tc.contain {
			if !strings.Contains(msg, s) {
				t.Errorf("%s: got %q, want it to contain %q", tc.name, msg, s)
			}
		}
	}
	for _, bad := range []struct{ name, src, contain string }{
		{"sim backend", strings.Replace(kernelFlowSrc, "[live]", "[sim, live]", 1), "live backend only"},
		{"partial path", strings.Replace(kernelFlowSrc, "bottleneck: {rate: 20Mbit, delay: 20ms}", "hops: [{rate: 20Mbit}, {rate: 10Mbit}]", 1) +
			"    path: [1, 1]\n", "cross every hop"},
		{"differing SACK", kernelFlowSrc + "  - {name: other, stack: kernel, recovery: newreno}\n", "give every kernel flow the same"},
	} {
		src := strings.Replace(bad.src, "kind: dumbbell, hops", "kind: chain, hops", 1)
		if _, err := ParseScenario("k.yaml", []byte(src)); err == nil || !strings.Contains(err.Error(), bad.contain) {
			t.Errorf("%s: got %v, want an error containing %q", bad.name, err, bad.contain)
		}
	}
}

// TestKernelSettings checks the mapping of a kernel flow's fields to the
// kernel's mechanisms.
func TestKernelSettings(t *testing.T) {
	src := kernelFlowSrc + "    cc: \"cubic:iw=4,linux=true\"\n    recovery: newreno\n    datagram: 1483B\n    min_rto: 1s\n    ack_every: 1\n    ecn: true\n"
	exp, err := ParseScenario("k.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	f := exp.Points[0].Scenario.Flows[0]
	got, fe := f.Kernel()
	want := KernelSettings{CC: "cubic", IW: 4, SACK: false, MSS: 1448, MinRTO: time.Second, QuickAck: true, ECN: true}
	if fe.Field != "" || got != want {
		t.Errorf("Kernel(): got %+v, %v; want %+v", got, fe, want)
	}
	if f.Stack != StackKernel {
		t.Errorf("Stack: got %q, want %q", f.Stack, StackKernel)
	}
	// The emitted YAML reads back to the same flow.
	back, err := ParseScenario("k2.yaml", []byte(exp.Points[0].Scenario.YAML()))
	if err != nil {
		t.Fatal(err)
	}
	if g := back.Points[0].Scenario.Flows[0]; g.Stack != f.Stack {
		t.Errorf("YAML round trip: stack %q, want %q", g.Stack, f.Stack)
	}
}

// TestKernelRecovery checks which recovery values a kernel flow takes and
// whether they turn SACK on.
func TestKernelRecovery(t *testing.T) {
	for _, tc := range []struct {
		recovery string
		sack     bool
		ok       bool
	}{
		{"", true, true},
		{"rack", true, true},
		{KernelRACK, true, true},
		{"rack:echo=cum", true, true},
		{"newreno", false, true},
		{"rack:echo=all,tlp=false", false, false},
		{"prr", false, false},
	} {
		f := Flow{Stack: StackKernel, CC: "reno", Recovery: tc.recovery, Mode: ModeStream, Traffic: "greedy"}
		got, fe := f.Kernel()
		if ok := fe.Field == ""; ok != tc.ok || (ok && got.SACK != tc.sack) {
			t.Errorf("recovery %q: SACK %v, error %v; want SACK %v, accepted %v", tc.recovery, got.SACK, fe, tc.sack, tc.ok)
		}
	}
}
