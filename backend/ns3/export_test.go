package ns3_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"cclab/backend/ns3"
	"cclab/experiments"
	"cclab/link"
	"cclab/plan"
	"cclab/scenario"
)

func planOf(t *testing.T, src string) *plan.Plan {
	t.Helper()
	exp, err := scenario.ParseScenario("t.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.New(exp.Points[0].Scenario, 7)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestExportDumbbell checks the plan file of a dumbbell: the run, both
// directions of the hop with their queue and loss, and a flow's ns-3 types
// and socket attributes.
func TestExportDumbbell(t *testing.T) {
	p := planOf(t, `name: d
duration: 4s
topology:
  kind: dumbbell
  bottleneck: {rate: 16Mbit, delay: 7.5ms, queue: droptail:20p, loss: 0.01}
flows:
  - {name: a, cc: "cubic:linux=true,friendly=false,ss=ns3,acks=ns3,ca=ns3,rtoflight,rtoalways", recovery: "prr:flight=pipe,bound=ns3,partialrxt,exitgrow,rtomark,rxtpipe", datagram: 1483B, min_rto: 1s, ack_every: 2, delayed_ack: 200ms}
  - {name: b, cc: "newreno:ca=acks,abc=1,grow=cum", recovery: "newreno:atrecover", traffic: "onoff:on=exp(1s),off=exp(1s)"}
`)
	out, err := ns3.Export(p)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 5 {
		t.Fatalf("got %d records, want run, 2 hops, 2 flows:\n%s", len(lines), out)
	}
	for i, want := range [][]string{
		{"run ", "duration=4 ", "seed=7 ", "routers=2"},
		{"hop ", "dir=0 ", "rate=16000000 ", "delay=0.0075 ", "qtype=device ", "qlimit=20p", "loss=bernoulli", "p=0.01"},
		{"hop ", "dir=1 ", "qtype=device "},
		{"flow id=1 ", "cc=ns3::TcpCubic ", "cc.HyStart=false", "cc.Beta=0.7", "rec=ns3::TcpPrrRecovery", "rec.ReductionBound=SSRB",
			"s.Sack=true", "s.SegmentSize=1448 ", "s.MinRto=1000000000ns", "r.DelAckCount=2 ", "r.DelAckTimeout=200000000ns",
			"s.InitialCwnd=10 ", "xfer=0/-1/0"},
		{"flow id=2 ", "cc=ns3::TcpNewReno ", "rec=ns3::TcpClassicRecovery", "s.Sack=false", "xfer="},
	} {
		for _, w := range want {
			if !strings.Contains(lines[i]+" ", w) {
				t.Errorf("record %d lacks %q:\n%s", i, w, lines[i])
			}
		}
	}
	if strings.Contains(lines[2], "loss=") {
		t.Errorf("reverse hop has loss: %s", lines[2])
	}
	// The ON/OFF flow's periods are drawn ahead: several, each with a time.
	xf := lines[4][strings.Index(lines[4], "xfer=")+5:]
	if n := strings.Count(xf, ","); n < 1 || strings.Contains(xf, "/-1/") {
		t.Errorf("onoff transfers %q: want several timed ON periods", xf)
	}
}

// TestExportHashed checks that a hashed loss stage reaches ns-3 with the key
// the simulator's link derives from the run's seed and the hop's stream.
func TestExportHashed(t *testing.T) {
	p := planOf(t, `name: h
duration: 2s
topology:
  kind: dumbbell
  bottleneck: {rate: 10Mbit, delay: 10ms, queue: droptail:20p, loss: "hashed:p=0.02"}
flows: [{name: a, cc: "newreno:ca=acks,abc=1,grow=cum", recovery: "newreno:atrecover"}]
`)
	out, err := ns3.Export(p)
	if err != nil {
		t.Fatal(err)
	}
	h := &p.Hops[plan.Fwd][0]
	want := fmt.Sprintf("loss=hashed p=0.02 key=%d", link.HashedKey(7, h.Stream))
	if h.Stream != "link/"+h.Name || !strings.Contains(string(out), want) {
		t.Errorf("hop %s (stream %q): plan file lacks %q:\n%s", h.Name, h.Stream, want, out)
	}
}

// TestExportQueues checks the RED and CoDel mappings.
func TestExportQueues(t *testing.T) {
	for _, tc := range []struct{ queue, want string }{
		{"red:min=5,max=15,maxp=0.1,limit=60p", "qtype=ns3::RedQueueDisc q.MinTh=5 q.MaxTh=15 q.LInterm=10 q.QW=0.002 q.MaxSize=60p"},
		{"codel:target=5ms,interval=100ms", "qtype=ns3::CoDelQueueDisc q.Target=5000000ns q.Interval=100000000ns q.MaxSize=1000p"},
		{"droptail:30000b", "qtype=device qlimit=30000B"},
	} {
		p := planOf(t, `name: q
duration: 2s
topology:
  kind: dumbbell
  bottleneck: {rate: 10Mbit, delay: 10ms, queue: "`+tc.queue+`"}
flows: [{name: a, cc: "newreno:ca=acks,abc=1,grow=cum", recovery: "newreno:atrecover"}]
`)
		out, err := ns3.Export(p)
		if err != nil {
			t.Fatalf("%s: %v", tc.queue, err)
		}
		if !strings.Contains(string(out), tc.want) {
			t.Errorf("%s: plan file lacks %q:\n%s", tc.queue, tc.want, out)
		}
	}
}

// TestExportUnsupported checks that every feature ns-3 cannot express is
// refused with an error naming it.
func TestExportUnsupported(t *testing.T) {
	base := func(bottleneck, flow string) string {
		return `name: u
duration: 2s
topology:
  kind: dumbbell
  bottleneck: {rate: 10Mbit, delay: 10ms, queue: droptail:20p` + bottleneck + `}
flows: [{name: a` + flow + `}]
`
	}
	for _, tc := range []struct{ name, src, feature string }{
		{"default recovery", base("", `, cc: "newreno:ca=acks,abc=1,grow=cum"`), "recovery rack"},
		{"cubic friendly", base("", `, cc: "cubic:linux=true", recovery: "prr:flight=pipe,bound=ns3,partialrxt"`), "friendly=true"},
		{"cubic rfc", base("", `, cc: "cubic:friendly=false", recovery: "prr:flight=pipe,bound=ns3,partialrxt"`), "linux=false"},
		{"cubic slow start", base("", `, cc: "cubic:linux=true,friendly=false,acks=ns3,ca=ns3,rtoflight,rtoalways", recovery: "prr:flight=pipe,bound=ns3,partialrxt"`), "ss=rfc"},
		{"cubic acks", base("", `, cc: "cubic:linux=true,friendly=false,ss=ns3,ca=ns3,rtoflight,rtoalways", recovery: "prr:flight=pipe,bound=ns3,partialrxt"`), "acks=rfc"},
		{"cubic counting", base("", `, cc: "cubic:linux=true,friendly=false,ss=ns3,acks=ns3,rtoflight,rtoalways", recovery: "prr:flight=pipe,bound=ns3,partialrxt"`), "ca=linux"},
		{"cubic timeout in recovery", base("", `, cc: "cubic:linux=true,friendly=false,ss=ns3,acks=ns3,ca=ns3,rtoalways", recovery: "prr:flight=pipe,bound=ns3,partialrxt"`), "rtoflight=false"},
		{"cubic repeated timeouts", base("", `, cc: "cubic:linux=true,friendly=false,ss=ns3,acks=ns3,ca=ns3,rtoflight", recovery: "prr:flight=pipe,bound=ns3,partialrxt"`), "rtoalways=false"},
		{"flightsize", base("", `, cc: "newreno:ca=acks,abc=1,grow=cum", recovery: prr`), "flight=flightsize"},
		{"reno mix", base("", `, cc: "reno:ca=acks", recovery: prr`), "ca=acks with abc=2"},
		{"lostretx", base("", `, cc: "reno:halve=cwnd,grow=cum", recovery: "prr:lostretx"`), "lostretx"},
		{"rfc ssrb", base("", `, cc: "newreno:ca=acks,abc=1,grow=cum", recovery: "prr:flight=pipe,partialrxt"`), "bound=ssrb"},
		{"bbr restore", base("", `, cc: bbr, recovery: "prr:partialrxt"`), "rtorestore=true"},
		{"bbr restore at exit", base("", `, cc: "bbr:rtorestore=false,ns3probertt=true", recovery: "prr:partialrxt"`), "ns3exit=false"},
		{"bbr probertt marks", base("", `, cc: "bbr:rtorestore=false,ns3exit=true", recovery: "prr:partialrxt"`), "ns3probertt=false"},
		{"vegas with ACK samples", base("", `, cc: "vegas", recovery: "prr:flight=pipe,bound=ns3,partialrxt"`), "ns3=false"},
		{"no partialrxt", base("", `, cc: "newreno:ca=acks,abc=1,grow=cum", recovery: "prr:flight=pipe,bound=ns3"`), "without partialrxt"},
		{"newreno rfc recover", base("", `, cc: "newreno:ca=acks,abc=1,grow=cum", recovery: newreno`), "without atrecover"},
		{"dca", base("", `, cc: dca, recovery: prr`), "cc dca"},
		{"linux reno halving the flight", base("", `, cc: "reno:grow=cum", recovery: "prr:flight=pipe,bound=ns3,partialrxt"`), "halve=flight"},
		{"newreno halving cwnd", base("", `, cc: "newreno:ca=acks,abc=1,grow=cum,halve=cwnd", recovery: "prr:flight=pipe,bound=ns3,partialrxt"`), "halve=cwnd"},
		{"growth on SACKs", base("", `, cc: "newreno:ca=acks,abc=1", recovery: "prr:flight=pipe,bound=ns3,partialrxt"`), "grow=delivered"},
		{"linux reno growth on SACKs", base("", `, cc: "reno:halve=cwnd", recovery: "prr:flight=pipe,bound=ns3,partialrxt"`), "grow=delivered"},
		{"jitter", base(", jitter: 1ms", `, cc: reno, recovery: prr`), "jitter"},
		{"fq", base("", `, cc: reno, recovery: prr`), ""},
		{"getime", base(`, loss: "getime:good=1s,bad=20ms"`, `, cc: reno, recovery: prr`), "loss getime"},
		{"hashed behind red", strings.Replace(base(`, loss: "hashed:p=0.01"`, `, cc: "reno:halve=cwnd,grow=cum", recovery: "prr:flight=pipe,bound=ns3,partialrxt"`), "droptail:20p", `"red:min=5,max=15,maxp=0.1"`, 1), "hashed loss with a queue disc"},
		{"ecn", base("", `, cc: "reno:halve=cwnd,grow=cum", recovery: "prr:flight=pipe,bound=ns3,partialrxt", ecn: true`), "ecn"},
		{"pmtud", base("", `, cc: "reno:halve=cwnd,grow=cum", recovery: "prr:flight=pipe,bound=ns3,partialrxt", pmtud: true`), "pmtud"},
		{"web", base("", `, cc: "reno:halve=cwnd,grow=cum", recovery: "prr:flight=pipe,bound=ns3,partialrxt", traffic: "web:size=pareto(10kB/1.5),think=exp(1s)"`), "traffic web"},
	} {
		if tc.feature == "" {
			continue
		}
		p := planOf(t, tc.src)
		_, err := ns3.Export(p)
		var u *ns3.Unsupported
		if !errors.As(err, &u) || !strings.Contains(err.Error(), tc.feature) {
			t.Errorf("%s: got %v, want an Unsupported error naming %q", tc.name, err, tc.feature)
		}
	}
}

// TestParse checks the reading of cclab-ns3's output.
func TestParse(t *testing.T) {
	res, err := ns3.Parse(strings.NewReader(`F 1.000000 1 1000000 14480 7240 0.017500 3 1 0 700
L 1.000000 0 5 2 1 690 1036380
F 2.000000 1 3000000 14480 7240 0.017500 4 1 0 2100
`))
	if err != nil {
		t.Fatal(err)
	}
	f := res.Flows[1]
	if len(f) != 2 || f[1].Delivered != 3000000 || f[1].SRTT != 17500*time.Microsecond || f[0].Retransmits != 3 {
		t.Errorf("flows: %+v", f)
	}
	if l := res.Links[0]; len(l) != 1 || l[0].QueueLen != 5 || l[0].LossDrops != 1 || l[0].TxBytes != 1036380 {
		t.Errorf("links: %+v", l)
	}
	if got, want := res.Goodput(1, time.Second, 2*time.Second), 16e6; got != want {
		t.Errorf("goodput 1-2 s: got %v, want %v", got, want)
	}
	if _, err := ns3.Parse(strings.NewReader("X 1 2\n")); err == nil {
		t.Error("unknown record accepted")
	}
}

// TestCollect checks that the series reach metrics.Collector: goodput from
// the delivered bytes, retransmissions, RTOs and recoveries from the
// counters, and the bottleneck's drops.
func TestCollect(t *testing.T) {
	p := planOf(t, `name: c
duration: 2s
warmup: 0s
interval: 1s
topology:
  kind: dumbbell
  bottleneck: {rate: 16Mbit, delay: 7.5ms, queue: droptail:20p}
flows: [{name: a, cc: "newreno:ca=acks,abc=1,grow=cum", recovery: "newreno:atrecover"}]
`)
	res, err := ns3.Parse(strings.NewReader(`F 1.000000 1 1000000 14480 7240 0.017500 3 1 0 700
L 1.000000 0 5 2 1 690 1036380
F 2.000000 1 3000000 14480 7240 0.017500 5 2 1 2100
L 2.000000 0 5 4 1 2070 3109140
`))
	if err != nil {
		t.Fatal(err)
	}
	m := ns3.Collect(p, res).Metrics
	if len(m.Flows) != 1 {
		t.Fatalf("flows: %+v", m.Flows)
	}
	v := m.Flows[0].Values
	for _, c := range []struct {
		name string
		want float64
	}{{"total_retransmissions", 5}, {"total_rtos", 1}, {"mean_throughput", 12e6}} {
		if got := v[c.name]; got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
}

// TestExportConformance checks that every point of the built-in
// conformance experiments (full and quick) that runs on ns-3 exports: the
// matched settings they use are the ones this backend accepts.
func TestExportConformance(t *testing.T) {
	for _, name := range []string{"conformance", "conformance-quick"} {
		src, ok := experiments.Source(name)
		if !ok {
			t.Fatalf("experiment %s: not built in", name)
		}
		exp, err := scenario.ParseScenario(name+".yaml", src)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for i, pt := range exp.Points {
			if !slices.Contains(pt.Scenario.Backends, scenario.BackendNS3) {
				continue
			}
			p, err := plan.New(pt.Scenario, 1)
			if err != nil {
				t.Fatalf("%s point %d: %v", name, i, err)
			}
			if _, err := ns3.Export(p); err != nil {
				t.Errorf("%s point %d: %v", name, i, err)
			}
			n++
		}
		if n == 0 {
			t.Errorf("%s: got no ns-3 points, want some", name)
		}
	}
}
